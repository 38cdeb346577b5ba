//! Host operations on one pane: reads, input, process info, agent reports and metadata,
//! and the attach (session protocol) operations.

use std::sync::Arc;
use std::time::Instant;

use nagi_schema::pane::{
    PaneClearAgentAuthorityParams, PaneInfo, PaneProcessInfo, PaneReadResult,
    PaneReleaseAgentParams, PaneReportAgentParams, PaneReportAgentSessionParams,
    PaneReportMetadataParams, ReadFormat, ReadSource, WorkspaceInfo,
};
use nagi_schema::pane_events::{
    PaneAgentStatusChangedEvent, PaneEventData, PaneSubscriptionEnvelope,
};
use nagi_schema::session_protocol::{SessionLeft, SessionRole, SessionScrollStep};

use super::attach::SessionMembership;
use super::attach_direct::DirectOutput;
use super::core::{InputWritten, PaneCore, lock, wants_ansi};
use super::error::PaneError;
use super::host::PaneHost;
use super::keys::parse_key_combos;

async fn write_blocking(core: Arc<PaneCore>, bytes: Vec<u8>) -> Result<(), PaneError> {
    let pane_id = core.identity.pane_id.clone();
    tokio::task::spawn_blocking(move || core.write_input(&bytes))
        .await
        .map_err(|error| PaneError::PaneIo {
            pane_id,
            message: format!("input task failed: {error}"),
        })?
}

impl PaneHost {
    /// `pane.read`.
    pub fn read(
        &self,
        pane_id: &str,
        source: ReadSource,
        lines: Option<u32>,
        format: ReadFormat,
        strip_ansi: bool,
    ) -> Result<PaneReadResult, PaneError> {
        self.pane_core(pane_id)?
            .read(source, lines, wants_ansi(format, strip_ansi))
    }

    /// `pane.send_text`: writes the text as it is.
    pub async fn send_text(&self, pane_id: &str, text: &str) -> Result<(), PaneError> {
        let core = self.pane_core(pane_id)?;
        write_blocking(core, text.as_bytes().to_vec()).await
    }

    /// `pane.send_keys`: every combo is checked before anything is written.
    pub async fn send_keys(&self, pane_id: &str, keys: &[String]) -> Result<(), PaneError> {
        let core = self.pane_core(pane_id)?;
        let combos = parse_key_combos(keys)?;
        let bytes = core.encode_keys(&combos);
        write_blocking(core, bytes).await
    }

    /// `pane.send_input`: `text` then `keys`, checked first, written in one go.
    pub async fn send_input(
        &self,
        pane_id: &str,
        text: Option<&str>,
        keys: &[String],
    ) -> Result<(), PaneError> {
        let core = self.pane_core(pane_id)?;
        if text.is_none_or(str::is_empty) && keys.is_empty() {
            return Err(PaneError::invalid("pane.send_input needs text or keys"));
        }
        let combos = parse_key_combos(keys)?;
        let mut bytes = text.unwrap_or_default().as_bytes().to_vec();
        bytes.extend(core.encode_keys(&combos));
        write_blocking(core, bytes).await
    }

    /// Names (or, with `None`, forgets) the process that works for the pane outside its
    /// terminal: a run's provider, shown by `pane.process_info` as an agent process.
    pub fn set_agent_process(&self, pane_id: &str, pid: Option<u32>) -> Result<(), PaneError> {
        lock(&self.pane_core(pane_id)?.meta).agent_pid = pid;
        Ok(())
    }

    /// `pane.process_info` (the focused pane when `pane_id` is absent).
    pub fn process_info(&self, pane_id: Option<&str>) -> Result<PaneProcessInfo, PaneError> {
        Ok(self.pane_or_focused(pane_id)?.process_info())
    }

    fn announce_agent_status(&self, core: &PaneCore) {
        let info = core.info();
        self.events.emit(PaneEventData::PaneAgentStatusChanged {
            pane_id: info.pane_id.clone(),
            workspace_id: info.workspace_id.clone(),
            agent_status: info.agent_status,
            agent: info.agent.clone(),
            display_agent: info.display_agent.clone(),
            title: info.title.clone(),
            state_labels: info.state_labels.clone(),
        });
        self.events
            .emit_subscription_event(PaneSubscriptionEnvelope::AgentStatusChanged(
                PaneAgentStatusChangedEvent {
                    pane_id: info.pane_id.clone(),
                    workspace_id: info.workspace_id.clone(),
                    agent_status: info.agent_status,
                    agent: info.agent.clone(),
                    display_agent: info.display_agent.clone(),
                    title: info.title.clone(),
                    state_labels: info.state_labels.clone(),
                },
            ));
        self.events.emit(PaneEventData::PaneUpdated { pane: info });
    }

    /// `pane.report_agent`.
    pub fn report_agent(&self, params: &PaneReportAgentParams) -> Result<(), PaneError> {
        let core = self.pane_core(&params.pane_id)?;
        let changed = lock(&core.meta).metadata.report_agent(
            &params.source,
            &params.agent,
            params.state,
            params.message.as_deref(),
            params.agent_session_id.as_deref(),
            params.agent_session_path.as_deref(),
            params.seq,
        )?;
        core.bump_revision();
        if changed {
            self.announce_agent_status(&core);
        }
        Ok(())
    }

    /// `pane.report_agent_session`.
    pub fn report_agent_session(
        &self,
        params: &PaneReportAgentSessionParams,
    ) -> Result<(), PaneError> {
        let core = self.pane_core(&params.pane_id)?;
        lock(&core.meta).metadata.report_agent_session(
            &params.source,
            &params.agent,
            params.agent_session_id.as_deref(),
            params.agent_session_path.as_deref(),
            params.seq,
        )?;
        core.bump_revision();
        Ok(())
    }

    /// `pane.report_metadata`.
    pub fn report_metadata(&self, params: &PaneReportMetadataParams) -> Result<(), PaneError> {
        let core = self.pane_core(&params.pane_id)?;
        let changed = lock(&core.meta)
            .metadata
            .report_metadata(params, Instant::now())?;
        if changed {
            core.bump_revision();
            core.emit_updated();
        }
        self.metadata_changed.notify_one();
        Ok(())
    }

    /// `workspace.report_metadata`.
    pub fn report_workspace_metadata(
        &self,
        workspace_id: &str,
        source: &str,
        tokens: &std::collections::BTreeMap<String, Option<String>>,
        ttl_ms: Option<u64>,
        seq: Option<u64>,
    ) -> Result<WorkspaceInfo, PaneError> {
        let (changed, info) = {
            let mut registry = self.registry();
            let index = registry.workspace_index(workspace_id)?;
            let changed = registry.workspaces[index].metadata.report(
                source,
                tokens,
                ttl_ms,
                seq,
                Instant::now(),
            )?;
            (changed, registry.workspace_info(index))
        };
        if changed {
            self.events.emit(PaneEventData::WorkspaceMetadataUpdated {
                workspace: info.clone(),
            });
        }
        self.metadata_changed.notify_one();
        Ok(info)
    }

    /// `pane.clear_agent_authority`.
    pub fn clear_agent_authority(
        &self,
        params: &PaneClearAgentAuthorityParams,
    ) -> Result<(), PaneError> {
        let core = self.pane_core(&params.pane_id)?;
        if lock(&core.meta)
            .metadata
            .clear_agent_authority(params.source.as_deref(), params.seq)?
        {
            core.bump_revision();
        }
        Ok(())
    }

    /// `pane.release_agent`.
    pub fn release_agent(&self, params: &PaneReleaseAgentParams) -> Result<(), PaneError> {
        let core = self.pane_core(&params.pane_id)?;
        let changed =
            lock(&core.meta)
                .metadata
                .release_agent(&params.source, &params.agent, params.seq)?;
        core.bump_revision();
        if changed {
            self.announce_agent_status(&core);
        }
        Ok(())
    }

    /// `pane.current`: the caller's pane, or the focused one.
    pub fn current_pane(&self, caller_pane_id: Option<&str>) -> Result<PaneInfo, PaneError> {
        Ok(self.pane_or_focused(caller_pane_id)?.info())
    }

    /// `join_session`. `client_id` names the connection (unique per client).
    pub fn session_join(
        &self,
        session_id: &str,
        role: SessionRole,
        replay_from: Option<u64>,
        client_id: &str,
    ) -> Result<SessionMembership, PaneError> {
        Ok(self
            .pane_by_terminal(session_id)?
            .join_session(client_id, role, replay_from))
    }

    /// Serves `client_id`'s membership of a session on its terminal (a direct attach): the
    /// pane's output is written to `output` while nothing is queued for the member.
    pub fn session_direct_output(
        &self,
        session_id: &str,
        client_id: &str,
        output: Arc<DirectOutput>,
    ) -> Result<bool, PaneError> {
        let core = self.pane_by_terminal(session_id)?;
        Ok(lock(&core.session).set_direct_output(client_id, output))
    }

    /// `leave_session`; leaving a session one is not in is not an error.
    pub fn session_leave(
        &self,
        session_id: &str,
        client_id: &str,
    ) -> Result<SessionLeft, PaneError> {
        self.pane_by_terminal(session_id)?.leave_session(client_id);
        Ok(SessionLeft {
            session_id: session_id.to_string(),
        })
    }

    /// `session_input` (controller only). A key typed at the live screen is written right
    /// here when the terminal takes it at once (the common case, and what keeps the echo
    /// quick); otherwise the writing waits on a blocking thread.
    pub async fn session_input(
        &self,
        session_id: &str,
        client_id: &str,
        data: &str,
    ) -> Result<(), PaneError> {
        let core = self.pane_by_terminal(session_id)?;
        let bytes = data.as_bytes();
        let flush_only = match core.try_session_input(client_id, bytes) {
            Some(Ok(InputWritten::All)) => return Ok(()),
            Some(Ok(InputWritten::Backlogged)) => true,
            Some(Err(error)) => return Err(error),
            None => false,
        };
        let bytes = bytes.to_vec();
        let client_id = client_id.to_string();
        let pane_id = core.identity.pane_id.clone();
        tokio::task::spawn_blocking(move || {
            if flush_only {
                core.flush_input()
            } else {
                core.session_input(&client_id, &bytes)
            }
        })
        .await
        .map_err(|error| PaneError::PaneIo {
            pane_id,
            message: format!("input task failed: {error}"),
        })?
    }

    /// `session_resize` (controller only, at least 20x5).
    pub fn session_resize(
        &self,
        session_id: &str,
        client_id: &str,
        cols: u16,
        rows: u16,
    ) -> Result<(), PaneError> {
        self.pane_by_terminal(session_id)?
            .session_resize(client_id, cols, rows)
    }

    /// `session_input` on the calling thread, which may block while the pane's terminal
    /// takes no more input: for the thread that reads a direct attach's terminal, holding
    /// the pane's quiet reading in `reading` (or not).
    ///
    /// A write that must wait does so without the quiet reading, which goes back to the
    /// pane's own reader until the write is done: the program may read no more input until
    /// its output is read.
    ///
    /// After a key is typed, a thread without the quiet reading claims it: the claim it let
    /// go for a waiting write, or one that another key thread held until now (that of a
    /// controller who left while its thread had not yet seen the connection end).
    pub fn session_input_on_this_thread(
        &self,
        session_id: &str,
        client_id: &str,
        data: &str,
        reading: &mut Option<crate::quiet_reading::QuietReading>,
    ) -> Result<(), PaneError> {
        let core = self.pane_by_terminal(session_id)?;
        let bytes = data.as_bytes();
        let typed = match core.try_session_input(client_id, bytes) {
            Some(Ok(InputWritten::All)) => Ok(()),
            Some(Err(error)) => return Err(error),
            attempt => {
                *reading = None;
                if matches!(attempt, Some(Ok(InputWritten::Backlogged))) {
                    core.flush_input()
                } else {
                    core.session_input(client_id, bytes)
                }
            }
        };
        if typed.is_ok() && reading.is_none() {
            *reading = crate::quiet_reading::QuietReading::claim(core).unwrap_or(None);
        }
        typed
    }

    /// The quiet reading of the master of the pane behind `session_id`, for a direct
    /// controller's key thread (see `quiet_reading`); `None` when it cannot be had.
    pub fn claim_quiet_reading(
        &self,
        session_id: &str,
    ) -> Result<Option<crate::quiet_reading::QuietReading>, PaneError> {
        let core = self.pane_by_terminal(session_id)?;
        let pane_id = core.identity.pane_id.clone();
        crate::quiet_reading::QuietReading::claim(core).map_err(|error| PaneError::PaneIo {
            pane_id,
            message: format!("cannot wait on the pane's output: {error}"),
        })
    }

    /// `session_scroll` (controller only): moves the pane's view of its history.
    pub fn session_scroll(
        &self,
        session_id: &str,
        client_id: &str,
        step: SessionScrollStep,
    ) -> Result<(), PaneError> {
        self.pane_by_terminal(session_id)?
            .session_scroll(client_id, step)
    }

    /// Removes a client from every session, e.g. when its connection closed.
    pub fn leave_all_sessions(&self, client_id: &str) {
        let panes: Vec<Arc<PaneCore>> = self.registry().all_panes().cloned().collect();
        for pane in panes {
            pane.leave_session(client_id);
        }
    }
}
