//! The pure decode step of one request line: UTF-8, the envelope, then the params of the
//! named method with that method's own unknown-field policy.
//!
//! Nothing here needs an engine, a socket or a store, so the whole step can be fuzzed
//! (`fuzz/fuzz_targets/request_decode.rs`) and unit-tested. The server decodes engine
//! params through [`decode_params`] (via `api::decode`), so the fuzzer exercises the very
//! function the server calls. Pane-family params are decoded the way the pane dispatcher
//! (`pane::dispatch`) decodes them: as a JSON value, `null` treated as `{}`.
//!
//! The order in which a method name is looked up is: the engine's method table
//! (`ENGINE_METHODS`), the pane table (`PANE_METHODS`; methods it lists as not
//! implemented answer `feature_unavailable`), the other protocol methods nagi does not
//! offer ([`super::UNAVAILABLE_METHODS`], `feature_unavailable`), and finally
//! `invalid_request` for a method nobody knows.

use nagi_schema::envelope::{IdOnly, RawRequest};
use nagi_schema::methods::{EventsSubscribeParams, EventsWaitParams, find_engine_method};
use nagi_schema::mission::*;
use nagi_schema::pane::*;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::errors::EngineError;

/// A request line whose envelope and params decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedRequest {
    pub id: String,
    pub method: String,
    pub params: MethodParams,
}

/// A request that was refused while decoding: the id to echo (the string `id` when it
/// could be salvaged from the line, else `""`) and the error to answer with.
#[derive(Debug, Clone)]
pub struct RejectedRequest {
    pub id: String,
    pub error: EngineError,
}

/// The typed params of every method nagi answers. Several methods share a params type;
/// the method name travels next to it in [`DecodedRequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum MethodParams {
    /// `ping`, `server.stop`, `mission.list`.
    Empty(EmptyParams),
    MissionCreate(MissionCreateParams),
    /// `mission.get`, `mission.proof.get`, `mission.close`.
    MissionTarget(MissionTarget),
    MissionConfigure(MissionConfigureParams),
    MissionStart(MissionStartParams),
    MissionRespond(MissionRespondParams),
    MissionVerify(MissionVerifyParams),
    MissionHandoffPreview(MissionHandoffPreviewParams),
    MissionHandoffStart(MissionHandoffStartParams),
    AttentionList(AttentionListParams),
    AttentionTarget(AttentionTarget),
    EventsSubscribe(EventsSubscribeParams),
    EventsWait(EventsWaitParams),
    CockpitHello(nagi_schema::cockpit::CockpitHelloParams),
    CockpitPreview(nagi_schema::cockpit::CockpitPreviewParams),
    CockpitDecide(nagi_schema::cockpit::CockpitDecideParams),
    /// `session.snapshot`, `workspace.list`: the pane dispatcher never reads their params.
    Unread,
    WorkspaceCreate(WorkspaceCreateParams),
    /// `workspace.get`, `workspace.focus`, `workspace.close`.
    WorkspaceTarget(WorkspaceTarget),
    WorkspaceRename(WorkspaceRenameParams),
    WorkspaceMove(WorkspaceMoveParams),
    WorkspaceReportMetadata(WorkspaceReportMetadataParams),
    TabCreate(TabCreateParams),
    TabList(TabListParams),
    /// `tab.get`, `tab.focus`, `tab.close`.
    TabTarget(TabTarget),
    TabRename(TabRenameParams),
    TabMove(TabMoveParams),
    PaneList(PaneListParams),
    PaneCurrent(PaneCurrentParams),
    /// `pane.get`, `pane.focus`, `pane.close`.
    PaneTarget(PaneTarget),
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
}

/// Decodes engine-method params. A shape error is `invalid_request` (MISSIONS.md §1.2):
/// limits are checked later by the handlers, with domain codes. Unknown fields follow
/// the params type: types of methods whose policy is `Rejected` deny them.
pub fn decode_params<T: DeserializeOwned>(params: &RawValue) -> Result<T, EngineError> {
    serde_json::from_str(params.get())
        .map_err(|error| EngineError::InvalidRequest(error.to_string()))
}

/// Decodes pane-method params as the pane dispatcher does: through a JSON value, with
/// `null` treated like `{}`. A shape error is `invalid_params` there.
fn decode_pane_params<T: DeserializeOwned>(
    method: &str,
    params: &RawValue,
) -> Result<T, EngineError> {
    let invalid = |message: String| {
        EngineError::InvalidParams(format!("invalid params for {method}: {message}"))
    };
    let value: serde_json::Value =
        serde_json::from_str(params.get()).map_err(|error| invalid(error.to_string()))?;
    let value = if value.is_null() {
        serde_json::Value::Object(Default::default())
    } else {
        value
    };
    serde_json::from_value(value).map_err(|error| invalid(error.to_string()))
}

/// Steps 1–2 of a request: the line must be UTF-8 and decode as the envelope (`id` a
/// string, `method`, raw `params`). Otherwise `invalid_request`, with the salvaged id.
pub fn decode_envelope(line: &[u8]) -> Result<RawRequest<'_>, RejectedRequest> {
    let Ok(text) = std::str::from_utf8(line) else {
        return Err(RejectedRequest {
            id: String::new(),
            error: EngineError::InvalidRequest("the request line is not valid UTF-8".into()),
        });
    };
    serde_json::from_str(text).map_err(|decode_error| RejectedRequest {
        id: IdOnly::salvage(text),
        error: EngineError::InvalidRequest(decode_error.to_string()),
    })
}

fn engine_params(method: &str, params: &RawValue) -> Option<Result<MethodParams, EngineError>> {
    use MethodParams as P;
    find_engine_method(method)?;
    let decoded = match method {
        "ping" | "server.stop" | "mission.list" => decode_params(params).map(P::Empty),
        "mission.create" => decode_params(params).map(P::MissionCreate),
        "mission.get" | "mission.proof.get" | "mission.close" => {
            decode_params(params).map(P::MissionTarget)
        }
        "mission.configure" => decode_params(params).map(P::MissionConfigure),
        "mission.start" => decode_params(params).map(P::MissionStart),
        "mission.respond" => decode_params(params).map(P::MissionRespond),
        "mission.verify" => decode_params(params).map(P::MissionVerify),
        "mission.handoff.preview" => decode_params(params).map(P::MissionHandoffPreview),
        "mission.handoff.start" => decode_params(params).map(P::MissionHandoffStart),
        "attention.list" => decode_params(params).map(P::AttentionList),
        "attention.get" => decode_params(params).map(P::AttentionTarget),
        "events.subscribe" => decode_params(params).map(P::EventsSubscribe),
        "events.wait" => decode_params(params).map(P::EventsWait),
        "cockpit.hello" => decode_params(params).map(P::CockpitHello),
        "cockpit.preview" => decode_params(params).map(P::CockpitPreview),
        "cockpit.decide" => decode_params(params).map(P::CockpitDecide),
        other => Err(EngineError::InvalidRequest(format!(
            "method {other:?} is in the method table but has no params decoder; this is a bug in nagi"
        ))),
    };
    Some(decoded)
}

fn pane_params(method: &str, params: &RawValue) -> Option<Result<MethodParams, EngineError>> {
    use MethodParams as P;
    let spec = find_pane_method(method)?;
    if !spec.implemented {
        return Some(Err(EngineError::FeatureUnavailable(format!(
            "method {method} is not available in nagi"
        ))));
    }
    let m = method;
    let decoded = match method {
        "session.snapshot" | "workspace.list" => Ok(P::Unread),
        "workspace.create" => decode_pane_params(m, params).map(P::WorkspaceCreate),
        "workspace.get" | "workspace.focus" | "workspace.close" => {
            decode_pane_params(m, params).map(P::WorkspaceTarget)
        }
        "workspace.rename" => decode_pane_params(m, params).map(P::WorkspaceRename),
        "workspace.move" => decode_pane_params(m, params).map(P::WorkspaceMove),
        "workspace.report_metadata" => {
            decode_pane_params(m, params).map(P::WorkspaceReportMetadata)
        }
        "tab.create" => decode_pane_params(m, params).map(P::TabCreate),
        "tab.list" => decode_pane_params(m, params).map(P::TabList),
        "tab.get" | "tab.focus" | "tab.close" => decode_pane_params(m, params).map(P::TabTarget),
        "tab.rename" => decode_pane_params(m, params).map(P::TabRename),
        "tab.move" => decode_pane_params(m, params).map(P::TabMove),
        "pane.list" => decode_pane_params(m, params).map(P::PaneList),
        "pane.current" => decode_pane_params(m, params).map(P::PaneCurrent),
        "pane.get" | "pane.focus" | "pane.close" => {
            decode_pane_params(m, params).map(P::PaneTarget)
        }
        "pane.rename" => decode_pane_params(m, params).map(P::PaneRename),
        "pane.read" => decode_pane_params(m, params).map(P::PaneRead),
        "pane.send_text" => decode_pane_params(m, params).map(P::PaneSendText),
        "pane.send_keys" => decode_pane_params(m, params).map(P::PaneSendKeys),
        "pane.send_input" => decode_pane_params(m, params).map(P::PaneSendInput),
        "pane.wait_for_output" => decode_pane_params(m, params).map(P::PaneWaitForOutput),
        "pane.process_info" => decode_pane_params(m, params).map(P::PaneProcessInfo),
        "pane.report_agent" => decode_pane_params(m, params).map(P::PaneReportAgent),
        "pane.report_agent_session" => decode_pane_params(m, params).map(P::PaneReportAgentSession),
        "pane.report_metadata" => decode_pane_params(m, params).map(P::PaneReportMetadata),
        "pane.clear_agent_authority" => {
            decode_pane_params(m, params).map(P::PaneClearAgentAuthority)
        }
        "pane.release_agent" => decode_pane_params(m, params).map(P::PaneReleaseAgent),
        other => Err(EngineError::FeatureUnavailable(format!(
            "method {other} is not available in nagi"
        ))),
    };
    Some(decoded)
}

/// Decodes the params of `method`, or says why the method cannot be answered.
pub fn decode_method_params(method: &str, params: &RawValue) -> Result<MethodParams, EngineError> {
    if let Some(decoded) = engine_params(method, params) {
        return decoded;
    }
    if let Some(decoded) = pane_params(method, params) {
        return decoded;
    }
    if super::UNAVAILABLE_METHODS.contains(&method) {
        return Err(EngineError::FeatureUnavailable(format!(
            "{method} is not offered by this nagi server"
        )));
    }
    Err(EngineError::InvalidRequest(format!(
        "unknown method {method:?}"
    )))
}

/// The whole pure decode of one request line. A params error keeps the request's id.
pub fn decode_request(line: &[u8]) -> Result<DecodedRequest, RejectedRequest> {
    let request = decode_envelope(line)?;
    match decode_method_params(&request.method, request.params) {
        Ok(params) => Ok(DecodedRequest {
            id: request.id,
            method: request.method,
            params,
        }),
        Err(error) => Err(RejectedRequest {
            id: request.id,
            error,
        }),
    }
}

#[cfg(test)]
mod tests;
