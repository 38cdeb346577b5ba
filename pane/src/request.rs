//! The typed pane-family request: one variant per method the pane host answers, decoded
//! once from the method name and its params. The server's request decoder calls
//! [`PaneRequest::decode`], so what the fuzzer decodes is what the dispatcher answers.

use nagi_schema::pane::*;
use nagi_schema::pane_methods::find_pane_method;
use serde::de::DeserializeOwned;

use crate::error::PaneError;

/// A decoded workspace, tab, pane or session request.
#[derive(Debug, Clone, PartialEq)]
pub enum PaneRequest {
    SessionSnapshot,
    WorkspaceCreate(WorkspaceCreateParams),
    WorkspaceList,
    WorkspaceGet(WorkspaceTarget),
    WorkspaceFocus(WorkspaceTarget),
    WorkspaceRename(WorkspaceRenameParams),
    WorkspaceMove(WorkspaceMoveParams),
    WorkspaceReportMetadata(WorkspaceReportMetadataParams),
    WorkspaceClose(WorkspaceTarget),
    TabCreate(TabCreateParams),
    TabList(TabListParams),
    TabGet(TabTarget),
    TabFocus(TabTarget),
    TabRename(TabRenameParams),
    TabMove(TabMoveParams),
    TabClose(TabTarget),
    PaneList(PaneListParams),
    PaneCurrent(PaneCurrentParams),
    PaneGet(PaneTarget),
    PaneFocus(PaneTarget),
    PaneRename(PaneRenameParams),
    PaneRead(PaneReadParams),
    PaneSendText(PaneSendTextParams),
    PaneSendKeys(PaneSendKeysParams),
    PaneSendInput(PaneSendInputParams),
    PaneWaitForOutput(PaneWaitForOutputParams),
    PaneProcessInfo(PaneProcessInfoParams),
    PaneReportAgent(PaneReportAgentParams),
    PaneReportAgentSession(PaneReportAgentSessionParams),
    PaneReportMetadata(PaneReportMetadataParams),
    PaneClearAgentAuthority(PaneClearAgentAuthorityParams),
    PaneReleaseAgent(PaneReleaseAgentParams),
    PaneClose(PaneTarget),
}

impl PaneRequest {
    /// Decodes `params` for `method`. `None` when the pane host does not know `method`;
    /// `feature_unavailable` for a method of the protocol that nagi does not offer. Params
    /// ignore unknown fields, and `null` is taken as `{}`.
    pub fn decode(
        method: &str,
        params: serde_json::Value,
    ) -> Option<Result<PaneRequest, PaneError>> {
        let spec = find_pane_method(method)?;
        if !spec.implemented {
            return Some(Err(PaneError::FeatureUnavailable {
                feature: format!("method {method}"),
            }));
        }
        Some(decode_offered(method, params))
    }

    /// The method name this request answers.
    pub fn method(&self) -> &'static str {
        use PaneRequest as R;
        match self {
            R::SessionSnapshot => "session.snapshot",
            R::WorkspaceCreate(_) => "workspace.create",
            R::WorkspaceList => "workspace.list",
            R::WorkspaceGet(_) => "workspace.get",
            R::WorkspaceFocus(_) => "workspace.focus",
            R::WorkspaceRename(_) => "workspace.rename",
            R::WorkspaceMove(_) => "workspace.move",
            R::WorkspaceReportMetadata(_) => "workspace.report_metadata",
            R::WorkspaceClose(_) => "workspace.close",
            R::TabCreate(_) => "tab.create",
            R::TabList(_) => "tab.list",
            R::TabGet(_) => "tab.get",
            R::TabFocus(_) => "tab.focus",
            R::TabRename(_) => "tab.rename",
            R::TabMove(_) => "tab.move",
            R::TabClose(_) => "tab.close",
            R::PaneList(_) => "pane.list",
            R::PaneCurrent(_) => "pane.current",
            R::PaneGet(_) => "pane.get",
            R::PaneFocus(_) => "pane.focus",
            R::PaneRename(_) => "pane.rename",
            R::PaneRead(_) => "pane.read",
            R::PaneSendText(_) => "pane.send_text",
            R::PaneSendKeys(_) => "pane.send_keys",
            R::PaneSendInput(_) => "pane.send_input",
            R::PaneWaitForOutput(_) => "pane.wait_for_output",
            R::PaneProcessInfo(_) => "pane.process_info",
            R::PaneReportAgent(_) => "pane.report_agent",
            R::PaneReportAgentSession(_) => "pane.report_agent_session",
            R::PaneReportMetadata(_) => "pane.report_metadata",
            R::PaneClearAgentAuthority(_) => "pane.clear_agent_authority",
            R::PaneReleaseAgent(_) => "pane.release_agent",
            R::PaneClose(_) => "pane.close",
        }
    }

    /// The params as a client would send them; `None` for methods whose params are never
    /// read (`session.snapshot`, `workspace.list`).
    pub fn params_json(&self) -> Option<serde_json::Value> {
        use PaneRequest as R;
        let value = match self {
            R::SessionSnapshot | R::WorkspaceList => return None,
            R::WorkspaceCreate(params) => serde_json::to_value(params),
            R::WorkspaceGet(params) => serde_json::to_value(params),
            R::WorkspaceFocus(params) => serde_json::to_value(params),
            R::WorkspaceRename(params) => serde_json::to_value(params),
            R::WorkspaceMove(params) => serde_json::to_value(params),
            R::WorkspaceReportMetadata(params) => serde_json::to_value(params),
            R::WorkspaceClose(params) => serde_json::to_value(params),
            R::TabCreate(params) => serde_json::to_value(params),
            R::TabList(params) => serde_json::to_value(params),
            R::TabGet(params) => serde_json::to_value(params),
            R::TabFocus(params) => serde_json::to_value(params),
            R::TabRename(params) => serde_json::to_value(params),
            R::TabMove(params) => serde_json::to_value(params),
            R::TabClose(params) => serde_json::to_value(params),
            R::PaneList(params) => serde_json::to_value(params),
            R::PaneCurrent(params) => serde_json::to_value(params),
            R::PaneGet(params) => serde_json::to_value(params),
            R::PaneFocus(params) => serde_json::to_value(params),
            R::PaneRename(params) => serde_json::to_value(params),
            R::PaneRead(params) => serde_json::to_value(params),
            R::PaneSendText(params) => serde_json::to_value(params),
            R::PaneSendKeys(params) => serde_json::to_value(params),
            R::PaneSendInput(params) => serde_json::to_value(params),
            R::PaneWaitForOutput(params) => serde_json::to_value(params),
            R::PaneProcessInfo(params) => serde_json::to_value(params),
            R::PaneReportAgent(params) => serde_json::to_value(params),
            R::PaneReportAgentSession(params) => serde_json::to_value(params),
            R::PaneReportMetadata(params) => serde_json::to_value(params),
            R::PaneClearAgentAuthority(params) => serde_json::to_value(params),
            R::PaneReleaseAgent(params) => serde_json::to_value(params),
            R::PaneClose(params) => serde_json::to_value(params),
        };
        Some(value.expect("pane params always serialize to JSON"))
    }
}

fn decode_offered(method: &str, params: serde_json::Value) -> Result<PaneRequest, PaneError> {
    use PaneRequest as R;
    Ok(match method {
        "session.snapshot" => R::SessionSnapshot,
        "workspace.create" => R::WorkspaceCreate(decode(method, params)?),
        "workspace.list" => R::WorkspaceList,
        "workspace.get" => R::WorkspaceGet(decode(method, params)?),
        "workspace.focus" => R::WorkspaceFocus(decode(method, params)?),
        "workspace.rename" => R::WorkspaceRename(decode(method, params)?),
        "workspace.move" => R::WorkspaceMove(decode(method, params)?),
        "workspace.report_metadata" => R::WorkspaceReportMetadata(decode(method, params)?),
        "workspace.close" => R::WorkspaceClose(decode(method, params)?),
        "tab.create" => R::TabCreate(decode(method, params)?),
        "tab.list" => R::TabList(decode(method, params)?),
        "tab.get" => R::TabGet(decode(method, params)?),
        "tab.focus" => R::TabFocus(decode(method, params)?),
        "tab.rename" => R::TabRename(decode(method, params)?),
        "tab.move" => R::TabMove(decode(method, params)?),
        "tab.close" => R::TabClose(decode(method, params)?),
        "pane.list" => R::PaneList(decode(method, params)?),
        "pane.current" => R::PaneCurrent(decode(method, params)?),
        "pane.get" => R::PaneGet(decode(method, params)?),
        "pane.focus" => R::PaneFocus(decode(method, params)?),
        "pane.rename" => R::PaneRename(decode(method, params)?),
        "pane.read" => R::PaneRead(decode(method, params)?),
        "pane.send_text" => R::PaneSendText(decode(method, params)?),
        "pane.send_keys" => R::PaneSendKeys(decode(method, params)?),
        "pane.send_input" => R::PaneSendInput(decode(method, params)?),
        "pane.wait_for_output" => R::PaneWaitForOutput(decode(method, params)?),
        "pane.process_info" => R::PaneProcessInfo(decode(method, params)?),
        "pane.report_agent" => R::PaneReportAgent(decode(method, params)?),
        "pane.report_agent_session" => R::PaneReportAgentSession(decode(method, params)?),
        "pane.report_metadata" => R::PaneReportMetadata(decode(method, params)?),
        "pane.clear_agent_authority" => R::PaneClearAgentAuthority(decode(method, params)?),
        "pane.release_agent" => R::PaneReleaseAgent(decode(method, params)?),
        "pane.close" => R::PaneClose(decode(method, params)?),
        other => {
            return Err(PaneError::FeatureUnavailable {
                feature: format!("method {other}"),
            });
        }
    })
}

fn decode<T: DeserializeOwned>(method: &str, params: serde_json::Value) -> Result<T, PaneError> {
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
