//! The pane host: the registry of workspaces (`w1`), tabs (`w1:t1`) and panes (`w1:p1`).
//!
//! Workspace numbers count up over the server's lifetime; tab and pane numbers count up
//! within their workspace. No number is reused. Each tab holds one pane (there are no
//! splits), so closing a tab's pane closes the tab, and closing a workspace's last tab
//! closes the workspace.
//!
//! Focus: one workspace is focused; each workspace has an active tab and each tab an
//! active pane. The focused pane is the active pane of the active tab of the focused
//! workspace. A new workspace or tab takes the focus when asked (`focus: true`) or when
//! nothing is focused.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nagi_schema::pane::{AgentStatus, PaneInfo, TabInfo, WorkspaceInfo, WorkspaceWorktreeInfo};
use nagi_schema::pane_events::PaneEventEnvelope;
use tokio::sync::{Notify, broadcast};

use super::core::PaneCore;
use super::error::PaneError;
use super::events::EventBus;
use super::metadata::WorkspaceMetadata;
use super::process::{self, OrphanReaper};
use super::watch::OutputWatches;

/// Settings of a pane host.
#[derive(Debug, Clone)]
pub struct PaneHostConfig {
    /// Exported to pane processes as `NAGI_SOCKET_PATH`.
    pub socket_path: Option<PathBuf>,
    /// Program of panes started without `command`; `$SHELL`, else `/bin/sh`, when absent.
    pub default_shell: Option<String>,
    /// Scrollback rows kept per pane.
    pub scrollback_lines: usize,
    /// Bytes of session frames kept per pane for replay to late joiners.
    pub ring_bytes: usize,
    /// A keyframe is recorded after this much output (0: only when someone joins).
    pub keyframe_interval_bytes: usize,
    /// Frames a session member may have queued before it is removed as lagging.
    pub observer_queue_capacity: usize,
    /// Size of new panes.
    pub initial_cols: u16,
    pub initial_rows: u16,
    /// How long closing a pane waits after SIGHUP/SIGTERM before SIGKILL.
    pub close_grace: Duration,
    /// Reported by `session.snapshot`.
    pub server_version: String,
    pub protocol_version: u32,
    /// A file that keeps the highest workspace number handed out, so that `w<n>` (and so
    /// every tab and pane id under it) names one workspace in a session's lifetime, across
    /// restarts: a restarted host goes on from there. `None`: numbers start at 1.
    pub workspace_number_file: Option<PathBuf>,
}

impl Default for PaneHostConfig {
    fn default() -> Self {
        PaneHostConfig {
            socket_path: None,
            default_shell: None,
            scrollback_lines: 10_000,
            ring_bytes: 1024 * 1024,
            keyframe_interval_bytes: 256 * 1024,
            observer_queue_capacity: 256,
            initial_cols: 120,
            initial_rows: 40,
            close_grace: Duration::from_millis(500),
            server_version: env!("CARGO_PKG_VERSION").to_string(),
            protocol_version: 16,
            workspace_number_file: None,
        }
    }
}

pub(crate) struct TabEntry {
    pub id: String,
    pub label: String,
    pub panes: Vec<Arc<PaneCore>>,
    pub active_pane: usize,
}

pub(crate) struct WorkspaceEntry {
    pub id: String,
    pub label: String,
    pub cwd: String,
    pub tabs: Vec<TabEntry>,
    pub active_tab: usize,
    pub next_tab: u64,
    pub next_pane: u64,
    pub metadata: WorkspaceMetadata,
    /// The Git checkout this workspace belongs to, when a worktree method (or a mission
    /// run) opened it.
    pub worktree: Option<WorkspaceWorktreeInfo>,
}

#[derive(Default)]
pub(crate) struct Registry {
    pub next_workspace: u64,
    pub workspaces: Vec<WorkspaceEntry>,
    pub focused_workspace: Option<String>,
}

/// The most urgent state first.
fn rollup(statuses: impl Iterator<Item = AgentStatus>) -> AgentStatus {
    let rank = |status: AgentStatus| match status {
        AgentStatus::Blocked => 0,
        AgentStatus::Working => 1,
        AgentStatus::Done => 2,
        AgentStatus::Idle => 3,
        AgentStatus::Unknown => 4,
    };
    statuses
        .min_by_key(|status| rank(*status))
        .unwrap_or(AgentStatus::Unknown)
}

impl Registry {
    pub fn workspace_index(&self, workspace_id: &str) -> Result<usize, PaneError> {
        self.workspaces
            .iter()
            .position(|workspace| workspace.id == workspace_id)
            .ok_or_else(|| PaneError::WorkspaceNotFound {
                workspace_id: workspace_id.to_string(),
            })
    }

    pub fn tab_position(&self, tab_id: &str) -> Result<(usize, usize), PaneError> {
        self.workspaces
            .iter()
            .enumerate()
            .find_map(|(workspace, entry)| {
                entry
                    .tabs
                    .iter()
                    .position(|tab| tab.id == tab_id)
                    .map(|tab| (workspace, tab))
            })
            .ok_or_else(|| PaneError::TabNotFound {
                tab_id: tab_id.to_string(),
            })
    }

    pub fn pane_position(&self, pane_id: &str) -> Result<(usize, usize, usize), PaneError> {
        for (workspace_index, workspace) in self.workspaces.iter().enumerate() {
            for (tab_index, tab) in workspace.tabs.iter().enumerate() {
                if let Some(pane_index) = tab
                    .panes
                    .iter()
                    .position(|pane| pane.identity.pane_id == pane_id)
                {
                    return Ok((workspace_index, tab_index, pane_index));
                }
            }
        }
        Err(PaneError::PaneNotFound {
            pane_id: pane_id.to_string(),
        })
    }

    pub fn pane(&self, pane_id: &str) -> Result<Arc<PaneCore>, PaneError> {
        let (workspace, tab, pane) = self.pane_position(pane_id)?;
        Ok(self.workspaces[workspace].tabs[tab].panes[pane].clone())
    }

    pub fn all_panes(&self) -> impl Iterator<Item = &Arc<PaneCore>> {
        self.workspaces
            .iter()
            .flat_map(|workspace| workspace.tabs.iter())
            .flat_map(|tab| tab.panes.iter())
    }

    pub fn focused_workspace_index(&self) -> Option<usize> {
        self.focused_workspace
            .as_deref()
            .and_then(|id| self.workspace_index(id).ok())
    }

    pub fn focused_pane(&self) -> Option<Arc<PaneCore>> {
        let workspace = &self.workspaces[self.focused_workspace_index()?];
        let tab = workspace.tabs.get(workspace.active_tab)?;
        tab.panes.get(tab.active_pane).cloned()
    }

    /// Sets each pane's `focused` flag from the focus path.
    pub fn refresh_focus_flags(&self) {
        let focused = self.focused_pane();
        for pane in self.all_panes() {
            let is_focused = focused
                .as_ref()
                .is_some_and(|focused| Arc::ptr_eq(focused, pane));
            pane.focused.store(is_focused, Ordering::Release);
        }
    }

    pub fn tab_info(&self, workspace_index: usize, tab_index: usize) -> TabInfo {
        let workspace = &self.workspaces[workspace_index];
        let tab = &workspace.tabs[tab_index];
        let workspace_focused = self.focused_workspace.as_deref() == Some(workspace.id.as_str());
        TabInfo {
            tab_id: tab.id.clone(),
            workspace_id: workspace.id.clone(),
            number: tab_index as u64 + 1,
            label: tab.label.clone(),
            focused: workspace_focused && workspace.active_tab == tab_index,
            pane_count: tab.panes.len() as u64,
            agent_status: rollup(
                tab.panes
                    .iter()
                    .map(|pane| pane.metadata_view().agent_status),
            ),
        }
    }

    pub fn workspace_info(&self, workspace_index: usize) -> WorkspaceInfo {
        let workspace = &self.workspaces[workspace_index];
        let panes = workspace.tabs.iter().flat_map(|tab| tab.panes.iter());
        WorkspaceInfo {
            workspace_id: workspace.id.clone(),
            number: workspace_index as u64 + 1,
            label: workspace.label.clone(),
            focused: self.focused_workspace.as_deref() == Some(workspace.id.as_str()),
            pane_count: panes.clone().count() as u64,
            tab_count: workspace.tabs.len() as u64,
            active_tab_id: workspace
                .tabs
                .get(workspace.active_tab)
                .map(|tab| tab.id.clone())
                .unwrap_or_default(),
            agent_status: rollup(panes.map(|pane| pane.metadata_view().agent_status)),
            tokens: workspace.metadata.tokens.snapshot(Instant::now()),
            worktree: workspace.worktree.clone(),
        }
    }
}

/// Everything that can be in a workspace or tab creation.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceCreate {
    pub label: Option<String>,
    /// Absolute directory; the user's home (or `/`) when absent.
    pub cwd: Option<String>,
    /// The argv of the root pane; the default shell when absent.
    pub command: Option<Vec<String>>,
    pub env: BTreeMap<String, String>,
    pub focus: bool,
    /// The worktree provenance of the new workspace.
    pub worktree: Option<WorkspaceWorktreeInfo>,
}

/// A tab in an existing workspace (the focused one when `workspace_id` is absent).
#[derive(Debug, Clone, Default)]
pub struct TabCreate {
    pub workspace_id: Option<String>,
    pub label: Option<String>,
    pub cwd: Option<String>,
    pub command: Option<Vec<String>>,
    pub env: BTreeMap<String, String>,
    pub focus: bool,
}

/// The pane host. Create it inside a tokio runtime (it starts background tasks there).
pub struct PaneHost {
    pub(crate) config: PaneHostConfig,
    pub(crate) events: Arc<EventBus>,
    pub(crate) registry: Mutex<Registry>,
    pub(crate) watches: Mutex<OutputWatches>,
    pub(crate) metadata_changed: Arc<Notify>,
    pub(crate) runtime: tokio::runtime::Handle,
    terminal_prefix: String,
    next_terminal: AtomicU64,
    pub(crate) shutting_down: AtomicBool,
    _reaper: OrphanReaper,
}

impl PaneHost {
    /// Creates the host, makes the process a child subreaper, and starts the orphan
    /// reaper and the metadata expiry task. Must be called inside a tokio runtime.
    pub fn new(config: PaneHostConfig) -> Arc<PaneHost> {
        if let Err(error) = process::become_child_subreaper() {
            tracing::warn!(
                "could not become a child subreaper: {error}; detached pane processes may escape pane close"
            );
        }
        let nonce: u32 = rand::random();
        let next_workspace = config
            .workspace_number_file
            .as_deref()
            .map_or(1, |file| read_workspace_number(file) + 1);
        let host = Arc::new(PaneHost {
            config,
            events: Arc::new(EventBus::new()),
            registry: Mutex::new(Registry {
                next_workspace,
                ..Registry::default()
            }),
            watches: Mutex::new(OutputWatches::default()),
            metadata_changed: Arc::new(Notify::new()),
            runtime: tokio::runtime::Handle::current(),
            terminal_prefix: format!("term_{nonce:08x}"),
            next_terminal: AtomicU64::new(1),
            shutting_down: AtomicBool::new(false),
            _reaper: OrphanReaper::start(Duration::from_millis(250)),
        });
        host.runtime.spawn(super::expiry::run_metadata_expiry(
            Arc::downgrade(&host),
            host.metadata_changed.clone(),
        ));
        host
    }

    pub fn config(&self) -> &PaneHostConfig {
        &self.config
    }

    pub(crate) fn registry(&self) -> MutexGuard<'_, Registry> {
        self.registry
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn next_terminal_id(&self) -> String {
        format!(
            "{}_{}",
            self.terminal_prefix,
            self.next_terminal.fetch_add(1, Ordering::Relaxed)
        )
    }

    pub(crate) fn ensure_running(&self) -> Result<(), PaneError> {
        if self.shutting_down.load(Ordering::Acquire) {
            Err(PaneError::ShuttingDown)
        } else {
            Ok(())
        }
    }

    /// Live events: pane, tab and workspace lifecycle and the subscription events.
    pub fn subscribe_events(&self) -> broadcast::Receiver<PaneEventEnvelope> {
        self.events.subscribe()
    }

    pub(crate) fn pane_core(&self, pane_id: &str) -> Result<Arc<PaneCore>, PaneError> {
        self.registry().pane(pane_id)
    }

    /// The pane with this id, or the focused pane when `None`.
    pub(crate) fn pane_or_focused(
        &self,
        pane_id: Option<&str>,
    ) -> Result<Arc<PaneCore>, PaneError> {
        let registry = self.registry();
        match pane_id {
            Some(pane_id) => registry.pane(pane_id),
            None => registry.focused_pane().ok_or(PaneError::NoFocusedPane),
        }
    }

    pub(crate) fn pane_by_terminal(&self, session_id: &str) -> Result<Arc<PaneCore>, PaneError> {
        self.registry()
            .all_panes()
            .find(|pane| pane.identity.terminal_id == session_id)
            .cloned()
            .ok_or_else(|| PaneError::SessionNotFound {
                session_id: session_id.to_string(),
            })
    }

    pub fn pane_info(&self, pane_id: &str) -> Result<PaneInfo, PaneError> {
        Ok(self.pane_core(pane_id)?.info())
    }

    pub fn focused_pane_info(&self) -> Result<PaneInfo, PaneError> {
        Ok(self.pane_or_focused(None)?.info())
    }

    /// Panes of one workspace, or all.
    pub fn list_panes(&self, workspace_id: Option<&str>) -> Result<Vec<PaneInfo>, PaneError> {
        let panes: Vec<Arc<PaneCore>> = {
            let registry = self.registry();
            match workspace_id {
                Some(workspace_id) => {
                    let index = registry.workspace_index(workspace_id)?;
                    registry.workspaces[index]
                        .tabs
                        .iter()
                        .flat_map(|tab| tab.panes.iter().cloned())
                        .collect()
                }
                None => registry.all_panes().cloned().collect(),
            }
        };
        Ok(panes.iter().map(|pane| pane.info()).collect())
    }

    pub fn workspace_info(&self, workspace_id: &str) -> Result<WorkspaceInfo, PaneError> {
        let registry = self.registry();
        let index = registry.workspace_index(workspace_id)?;
        Ok(registry.workspace_info(index))
    }

    pub fn list_workspaces(&self) -> Vec<WorkspaceInfo> {
        let registry = self.registry();
        (0..registry.workspaces.len())
            .map(|index| registry.workspace_info(index))
            .collect()
    }

    pub fn tab_info(&self, tab_id: &str) -> Result<TabInfo, PaneError> {
        let registry = self.registry();
        let (workspace, tab) = registry.tab_position(tab_id)?;
        Ok(registry.tab_info(workspace, tab))
    }

    /// Tabs of one workspace, or all.
    pub fn list_tabs(&self, workspace_id: Option<&str>) -> Result<Vec<TabInfo>, PaneError> {
        let registry = self.registry();
        let workspaces: Vec<usize> = match workspace_id {
            Some(workspace_id) => vec![registry.workspace_index(workspace_id)?],
            None => (0..registry.workspaces.len()).collect(),
        };
        Ok(workspaces
            .into_iter()
            .flat_map(|workspace| {
                (0..registry.workspaces[workspace].tabs.len()).map(move |tab| (workspace, tab))
            })
            .map(|(workspace, tab)| registry.tab_info(workspace, tab))
            .collect())
    }
}

/// The highest workspace number a previous host of this session handed out (0: none).
fn read_workspace_number(file: &std::path::Path) -> u64 {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0)
}

/// Records `number` as the highest workspace number handed out. Written to a temporary
/// file and renamed over the old one, so a crash leaves the old or the new number, never
/// a torn one; a failure is logged and the ids of this host stay unique regardless.
pub(crate) fn record_workspace_number(file: &std::path::Path, number: u64) {
    let temporary = file.with_extension("tmp");
    let written = std::fs::write(&temporary, format!("{number}\n"))
        .and_then(|()| std::fs::rename(&temporary, file));
    if let Err(error) = written {
        tracing::warn!(%error, file = %file.display(), "cannot record the workspace number; a restart may reuse ids");
    }
}
