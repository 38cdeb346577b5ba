//! The socket-method dispatcher of the pane host, and the session-protocol handler.

use std::sync::Arc;

use nagi_schema::pane::*;
use nagi_schema::session_protocol::{SessionClientMessage, SessionServerMessage};
use serde::de::DeserializeOwned;

use super::attach::SessionFrameReceiver;
use super::error::PaneError;
use super::host::{PaneHost, TabCreate, WorkspaceCreate};

fn decode<T: DeserializeOwned>(method: &str, params: serde_json::Value) -> Result<T, PaneError> {
    // `params` is required by the envelope; `null` is treated like `{}` for methods whose
    // fields are all optional, and rejected otherwise by the field checks.
    let params = if params.is_null() {
        serde_json::Value::Object(Default::default())
    } else {
        params
    };
    serde_json::from_value(params).map_err(|error| PaneError::ParamsDecode {
        method: method.to_string(),
        message: error.to_string(),
    })
}

/// Answers a workspace, tab, pane or session method. `None` when `method` is not one of
/// them; `Some(Err(FeatureUnavailable))` for methods of the protocol that nagi does not
/// offer (layouts, splits, zoom, graphics, plugins). The value is the `result` object,
/// including its `type`.
pub async fn dispatch(
    host: &Arc<PaneHost>,
    method: &str,
    params: serde_json::Value,
) -> Option<Result<serde_json::Value, PaneError>> {
    let spec = find_pane_method(method)?;
    if !spec.implemented {
        return Some(Err(PaneError::FeatureUnavailable {
            feature: format!("method {method}"),
        }));
    }
    let result = answer(host, method, params)
        .await
        .map(|result| serde_json::to_value(result).expect("pane results always serialize to JSON"));
    Some(result)
}

async fn answer(
    host: &Arc<PaneHost>,
    method: &str,
    params: serde_json::Value,
) -> Result<PaneMethodResult, PaneError> {
    use PaneMethodResult as Result_;
    Ok(match method {
        "session.snapshot" => Result_::SessionSnapshot {
            snapshot: host.snapshot(),
        },
        "workspace.create" => {
            let params: WorkspaceCreateParams = decode(method, params)?;
            let (workspace, tab, root_pane) = host.create_workspace(WorkspaceCreate {
                label: params.label,
                cwd: params.cwd,
                command: params.command,
                env: params.env,
                focus: params.focus,
            })?;
            Result_::WorkspaceCreated {
                workspace,
                tab,
                root_pane,
            }
        }
        "workspace.list" => Result_::WorkspaceList {
            workspaces: host.list_workspaces(),
        },
        "workspace.get" => {
            let params: WorkspaceTarget = decode(method, params)?;
            Result_::WorkspaceInfo {
                workspace: host.workspace_info(&params.workspace_id)?,
            }
        }
        "workspace.focus" => {
            let params: WorkspaceTarget = decode(method, params)?;
            Result_::WorkspaceInfo {
                workspace: host.focus_workspace(&params.workspace_id)?,
            }
        }
        "workspace.rename" => {
            let params: WorkspaceRenameParams = decode(method, params)?;
            Result_::WorkspaceInfo {
                workspace: host.rename_workspace(&params.workspace_id, &params.label)?,
            }
        }
        "workspace.move" => {
            let params: WorkspaceMoveParams = decode(method, params)?;
            Result_::WorkspaceList {
                workspaces: host.move_workspace(&params.workspace_id, params.insert_index)?,
            }
        }
        "workspace.report_metadata" => {
            let params: WorkspaceReportMetadataParams = decode(method, params)?;
            let workspace = host.report_workspace_metadata(
                &params.workspace_id,
                &params.source,
                &params.tokens,
                params.ttl_ms,
                params.seq,
            )?;
            Result_::WorkspaceInfo { workspace }
        }
        "workspace.close" => {
            let params: WorkspaceTarget = decode(method, params)?;
            host.close_workspace(&params.workspace_id).await?;
            Result_::Ok
        }
        "tab.create" => {
            let params: TabCreateParams = decode(method, params)?;
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
        "tab.list" => {
            let params: TabListParams = decode(method, params)?;
            Result_::TabList {
                tabs: host.list_tabs(params.workspace_id.as_deref())?,
            }
        }
        "tab.get" => {
            let params: TabTarget = decode(method, params)?;
            Result_::TabInfo {
                tab: host.tab_info(&params.tab_id)?,
            }
        }
        "tab.focus" => {
            let params: TabTarget = decode(method, params)?;
            Result_::TabInfo {
                tab: host.focus_tab(&params.tab_id)?,
            }
        }
        "tab.rename" => {
            let params: TabRenameParams = decode(method, params)?;
            Result_::TabInfo {
                tab: host.rename_tab(&params.tab_id, &params.label)?,
            }
        }
        "tab.move" => {
            let params: TabMoveParams = decode(method, params)?;
            Result_::TabList {
                tabs: host.move_tab(&params.tab_id, params.insert_index)?,
            }
        }
        "tab.close" => {
            let params: TabTarget = decode(method, params)?;
            host.close_tab(&params.tab_id).await?;
            Result_::Ok
        }
        "pane.list" => {
            let params: PaneListParams = decode(method, params)?;
            Result_::PaneList {
                panes: host.list_panes(params.workspace_id.as_deref())?,
            }
        }
        "pane.current" => {
            let params: PaneCurrentParams = decode(method, params)?;
            Result_::PaneCurrent {
                pane: host.current_pane(params.caller_pane_id.as_deref())?,
            }
        }
        "pane.get" => {
            let params: PaneTarget = decode(method, params)?;
            Result_::PaneInfo {
                pane: host.pane_info(&params.pane_id)?,
            }
        }
        "pane.focus" => {
            let params: PaneTarget = decode(method, params)?;
            Result_::PaneInfo {
                pane: host.focus_pane(&params.pane_id)?,
            }
        }
        "pane.rename" => {
            let params: PaneRenameParams = decode(method, params)?;
            Result_::PaneInfo {
                pane: host.rename_pane(&params.pane_id, params.label.as_deref())?,
            }
        }
        "pane.read" => {
            let params: PaneReadParams = decode(method, params)?;
            let read = host.read(
                &params.pane_id,
                params.source,
                params.lines,
                params.format,
                params.strip_ansi,
            )?;
            Result_::PaneRead { read }
        }
        "pane.send_text" => {
            let params: PaneSendTextParams = decode(method, params)?;
            host.send_text(&params.pane_id, &params.text).await?;
            Result_::Ok
        }
        "pane.send_keys" => {
            let params: PaneSendKeysParams = decode(method, params)?;
            host.send_keys(&params.pane_id, &params.keys).await?;
            Result_::Ok
        }
        "pane.send_input" => {
            let params: PaneSendInputParams = decode(method, params)?;
            host.send_input(&params.pane_id, params.text.as_deref(), &params.keys)
                .await?;
            Result_::Ok
        }
        "pane.wait_for_output" => {
            let params: PaneWaitForOutputParams = decode(method, params)?;
            host.wait_for_output(&params).await?
        }
        "pane.process_info" => {
            let params: PaneProcessInfoParams = decode(method, params)?;
            Result_::PaneProcessInfo {
                process_info: host.process_info(params.pane_id.as_deref())?,
            }
        }
        "pane.report_agent" => {
            host.report_agent(&decode(method, params)?)?;
            Result_::Ok
        }
        "pane.report_agent_session" => {
            host.report_agent_session(&decode(method, params)?)?;
            Result_::Ok
        }
        "pane.report_metadata" => {
            host.report_metadata(&decode(method, params)?)?;
            Result_::Ok
        }
        "pane.clear_agent_authority" => {
            host.clear_agent_authority(&decode(method, params)?)?;
            Result_::Ok
        }
        "pane.release_agent" => {
            host.release_agent(&decode(method, params)?)?;
            Result_::Ok
        }
        "pane.close" => {
            let params: PaneTarget = decode(method, params)?;
            host.close_pane(&params.pane_id).await?;
            Result_::Ok
        }
        other => {
            return Err(PaneError::FeatureUnavailable {
                feature: format!("method {other}"),
            });
        }
    })
}

/// The reply to one session-protocol message.
pub struct SessionReply {
    /// The line to send back (`session_joined`, `session_left` or `error`); `None` for
    /// accepted input and resize, which have no reply.
    pub message: Option<SessionServerMessage>,
    /// After `join_session`: the member's frames, to be written to the connection until
    /// the stream ends.
    pub frames: Option<SessionFrameReceiver>,
}

fn refusal(session_id: &str, error: PaneError) -> SessionReply {
    SessionReply {
        message: Some(SessionServerMessage::Error {
            session_id: Some(session_id.to_string()),
            code: error.code().to_string(),
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
    };
    outcome.unwrap_or_else(|error| refusal(&session_id, error))
}
