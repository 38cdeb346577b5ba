//! The socket-method dispatcher of the pane host, and the session-protocol handler.

use std::sync::Arc;

use nagi_schema::pane::*;
use nagi_schema::session_protocol::{SessionClientMessage, SessionServerMessage};

use super::attach::SessionFrameReceiver;
use super::error::PaneError;
use super::host::{PaneHost, TabCreate, WorkspaceCreate};
use super::request::PaneRequest;

/// Answers a workspace, tab, pane or session method. `None` when `method` is not one of
/// them; `Some(Err(FeatureUnavailable))` for methods of the protocol that nagi does not
/// offer (layouts, splits, zoom, graphics, plugins). The value is the `result` object,
/// including its `type`.
pub async fn dispatch(
    host: &Arc<PaneHost>,
    method: &str,
    params: serde_json::Value,
) -> Option<Result<serde_json::Value, PaneError>> {
    let request = match PaneRequest::decode(method, params)? {
        Ok(request) => request,
        Err(error) => return Some(Err(error)),
    };
    Some(answer(host, request).await)
}

/// Answers one decoded request; the value is the `result` object, including its `type`.
pub async fn answer(
    host: &Arc<PaneHost>,
    request: PaneRequest,
) -> Result<serde_json::Value, PaneError> {
    answer_typed(host, request)
        .await
        .map(|result| serde_json::to_value(result).expect("pane results always serialize to JSON"))
}

async fn answer_typed(
    host: &Arc<PaneHost>,
    request: PaneRequest,
) -> Result<PaneMethodResult, PaneError> {
    use PaneMethodResult as Result_;
    use PaneRequest as R;
    Ok(match request {
        R::SessionSnapshot => Result_::SessionSnapshot {
            snapshot: host.snapshot(),
        },
        R::WorkspaceCreate(params) => {
            let (workspace, tab, root_pane) = host.create_workspace(WorkspaceCreate {
                label: params.label,
                cwd: params.cwd,
                command: params.command,
                env: params.env,
                focus: params.focus,
                worktree: None,
            })?;
            Result_::WorkspaceCreated {
                workspace,
                tab,
                root_pane,
            }
        }
        R::WorkspaceList => Result_::WorkspaceList {
            workspaces: host.list_workspaces(),
        },
        R::WorkspaceGet(params) => Result_::WorkspaceInfo {
            workspace: host.workspace_info(&params.workspace_id)?,
        },
        R::WorkspaceFocus(params) => Result_::WorkspaceInfo {
            workspace: host.focus_workspace(&params.workspace_id)?,
        },
        R::WorkspaceRename(params) => Result_::WorkspaceInfo {
            workspace: host.rename_workspace(&params.workspace_id, &params.label)?,
        },
        R::WorkspaceMove(params) => Result_::WorkspaceList {
            workspaces: host.move_workspace(&params.workspace_id, params.insert_index)?,
        },
        R::WorkspaceReportMetadata(params) => {
            let workspace = host.report_workspace_metadata(
                &params.workspace_id,
                &params.source,
                &params.tokens,
                params.ttl_ms,
                params.seq,
            )?;
            Result_::WorkspaceInfo { workspace }
        }
        R::WorkspaceClose(params) => {
            host.close_workspace(&params.workspace_id).await?;
            Result_::Ok
        }
        R::TabCreate(params) => {
            let (tab, root_pane) = host.create_tab(TabCreate {
                workspace_id: params.workspace_id,
                label: params.label,
                cwd: params.cwd,
                command: params.command,
                env: params.env,
                focus: params.focus,
            })?;
            Result_::TabCreated { tab, root_pane }
        }
        R::TabList(params) => Result_::TabList {
            tabs: host.list_tabs(params.workspace_id.as_deref())?,
        },
        R::TabGet(params) => Result_::TabInfo {
            tab: host.tab_info(&params.tab_id)?,
        },
        R::TabFocus(params) => Result_::TabInfo {
            tab: host.focus_tab(&params.tab_id)?,
        },
        R::TabRename(params) => Result_::TabInfo {
            tab: host.rename_tab(&params.tab_id, &params.label)?,
        },
        R::TabMove(params) => Result_::TabList {
            tabs: host.move_tab(&params.tab_id, params.insert_index)?,
        },
        R::TabClose(params) => {
            host.close_tab(&params.tab_id).await?;
            Result_::Ok
        }
        R::PaneList(params) => Result_::PaneList {
            panes: host.list_panes(params.workspace_id.as_deref())?,
        },
        R::PaneCurrent(params) => Result_::PaneCurrent {
            pane: host.current_pane(params.caller_pane_id.as_deref())?,
        },
        R::PaneGet(params) => Result_::PaneInfo {
            pane: host.pane_info(&params.pane_id)?,
        },
        R::PaneFocus(params) => Result_::PaneInfo {
            pane: host.focus_pane(&params.pane_id)?,
        },
        R::PaneRename(params) => Result_::PaneInfo {
            pane: host.rename_pane(&params.pane_id, params.label.as_deref())?,
        },
        R::PaneRead(params) => {
            let read = host.read(
                &params.pane_id,
                params.source,
                params.lines,
                params.format,
                params.strip_ansi,
            )?;
            Result_::PaneRead { read }
        }
        R::PaneSendText(params) => {
            host.send_text(&params.pane_id, &params.text).await?;
            Result_::Ok
        }
        R::PaneSendKeys(params) => {
            host.send_keys(&params.pane_id, &params.keys).await?;
            Result_::Ok
        }
        R::PaneSendInput(params) => {
            host.send_input(&params.pane_id, params.text.as_deref(), &params.keys)
                .await?;
            Result_::Ok
        }
        R::PaneWaitForOutput(params) => host.wait_for_output(&params).await?,
        R::PaneProcessInfo(params) => Result_::PaneProcessInfo {
            process_info: host.process_info(params.pane_id.as_deref())?,
        },
        R::PaneReportAgent(params) => {
            host.report_agent(&params)?;
            Result_::Ok
        }
        R::PaneReportAgentSession(params) => {
            host.report_agent_session(&params)?;
            Result_::Ok
        }
        R::PaneReportMetadata(params) => {
            host.report_metadata(&params)?;
            Result_::Ok
        }
        R::PaneClearAgentAuthority(params) => {
            host.clear_agent_authority(&params)?;
            Result_::Ok
        }
        R::PaneReleaseAgent(params) => {
            host.release_agent(&params)?;
            Result_::Ok
        }
        R::PaneClose(params) => {
            host.close_pane(&params.pane_id).await?;
            Result_::Ok
        }
    })
}

/// The reply to one session-protocol message.
pub struct SessionReply {
    /// The line to send back (`session_joined`, `session_left` or `error`); `None` for
    /// accepted input, resizes and scrolls, which have no reply.
    pub message: Option<SessionServerMessage>,
    /// After `join_session`: the member's frames, to be written to the connection until
    /// the stream ends.
    pub frames: Option<SessionFrameReceiver>,
}

/// The `error` message a session message refused with `error` answers.
pub fn refusal(session_id: &str, error: PaneError) -> SessionReply {
    SessionReply {
        message: Some(SessionServerMessage::Error {
            session_id: Some(session_id.to_string()),
            code: error.code().as_str().to_string(),
            message: error.to_string(),
        }),
        frames: None,
    }
}

/// Handles one session-protocol message from `client_id` (a connection-unique id).
pub async fn handle_session_message(
    host: &Arc<PaneHost>,
    client_id: &str,
    message: SessionClientMessage,
) -> SessionReply {
    let session_id = message.session_id().to_string();
    let outcome = match message {
        SessionClientMessage::JoinSession {
            session_id,
            role,
            replay_from,
            ..
        } => host
            .session_join(&session_id, role, replay_from, client_id)
            .map(|membership| SessionReply {
                message: Some(SessionServerMessage::SessionJoined(membership.joined)),
                frames: Some(membership.frames),
            }),
        SessionClientMessage::LeaveSession { session_id } => host
            .session_leave(&session_id, client_id)
            .map(|left| SessionReply {
                message: Some(SessionServerMessage::SessionLeft(left)),
                frames: None,
            }),
        SessionClientMessage::SessionInput { session_id, data } => host
            .session_input(&session_id, client_id, &data)
            .await
            .map(|()| SessionReply {
                message: None,
                frames: None,
            }),
        SessionClientMessage::SessionResize {
            session_id,
            cols,
            rows,
        } => host
            .session_resize(&session_id, client_id, cols, rows)
            .map(|()| SessionReply {
                message: None,
                frames: None,
            }),
        SessionClientMessage::SessionScroll { session_id, scroll } => host
            .session_scroll(&session_id, client_id, scroll)
            .map(|()| SessionReply {
                message: None,
                frames: None,
            }),
    };
    outcome.unwrap_or_else(|error| refusal(&session_id, error))
}
