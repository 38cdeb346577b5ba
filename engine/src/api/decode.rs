//! The pure decode step of one request line: UTF-8, the envelope, then the params of the
//! named method with that method's own unknown-field policy.
//!
//! Nothing here needs an engine, a socket or a store, so the whole step can be fuzzed
//! (`fuzz/fuzz_targets/request_decode.rs`) and unit-tested. The server calls
//! [`decode_request`] on every line, so the fuzzer exercises the very function the server
//! calls, and the dispatcher (`api::dispatch`) matches on the [`MethodParams`] it returns.
//! Pane-family params are decoded by the pane host's own rules (`nagi_pane::PaneRequest`):
//! unknown fields ignored, `null` taken as `{}`.
//!
//! The order in which a method name is looked up is: the engine's method table
//! (`ENGINE_METHODS`), the pane table (`PANE_METHODS`; methods it lists as not
//! implemented answer `feature_unavailable`), the worktree methods (`WORKTREE_METHODS`),
//! the other protocol methods nagi does not
//! offer ([`UNAVAILABLE_METHODS`], `feature_unavailable`), and finally `invalid_request`
//! for a method nobody knows.

use nagi_pane::PaneRequest;
use nagi_schema::envelope::{IdOnly, RawRequest, RequestId};
use nagi_schema::git_worktrees::{
    WorktreeCreateParams, WorktreeListParams, WorktreeOpenParams, WorktreeRemoveParams,
};
use nagi_schema::methods::{
    EventsSubscribeParams, EventsWaitParams, UNAVAILABLE_METHODS, find_engine_method,
};
use nagi_schema::mission::*;
use nagi_schema::pane_methods::find_pane_method;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::errors::EngineError;

/// A request line whose envelope and params decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedRequest {
    pub id: RequestId,
    pub method: String,
    pub params: MethodParams,
}

/// A request that was refused while decoding: the id to echo (the string `id` when it
/// could be salvaged from the line, else `""`) and the error to answer with.
#[derive(Debug, Clone)]
pub struct RejectedRequest {
    pub id: RequestId,
    pub error: EngineError,
}

/// The typed params of every method nagi answers, one variant per method: the one command
/// enum the server dispatches with a single `match` (`api::dispatch`).
#[derive(Debug, Clone, PartialEq)]
pub enum MethodParams {
    Ping(EmptyParams),
    ServerStop(EmptyParams),
    ServerReloadConfig(EmptyParams),
    MissionCreate(MissionCreateParams),
    MissionList(EmptyParams),
    MissionGet(MissionTarget),
    MissionConfigure(MissionConfigureParams),
    MissionStart(MissionStartParams),
    MissionRespond(MissionRespondParams),
    MissionClose(MissionTarget),
    MissionVerify(MissionVerifyParams),
    MissionDiff(nagi_schema::worktree::MissionDiffParams),
    MissionAbandon(MissionAbandonParams),
    MissionLand(nagi_schema::land::MissionLandParams),
    MissionSync(nagi_schema::land::MissionSyncParams),
    MissionProofGet(MissionTarget),
    MissionProofExport(nagi_schema::evidence_pack::MissionProofExportParams),
    MissionDelete(MissionTarget),
    MissionSend(nagi_schema::steer::MissionSendParams),
    MissionInterrupt(nagi_schema::steer::MissionSteerParams),
    MissionStop(nagi_schema::steer::MissionSteerParams),
    MissionSession(MissionTarget),
    MissionUsage(nagi_schema::usage::MissionUsageParams),
    NotificationShow(nagi_schema::notification::NotificationShowParams),
    MissionHandoffGet(nagi_schema::evidence_pack::MissionHandoffGetParams),
    MissionHandoffPreview(MissionHandoffPreviewParams),
    MissionHandoffStart(MissionHandoffStartParams),
    AttentionList(AttentionListParams),
    AttentionGet(AttentionTarget),
    EventsSubscribe(EventsSubscribeParams),
    EventsWait(EventsWaitParams),
    CockpitHello(nagi_schema::cockpit::CockpitHelloParams),
    CockpitPreview(nagi_schema::cockpit::CockpitPreviewParams),
    CockpitDecide(nagi_schema::cockpit::CockpitDecideParams),
    /// A workspace, tab, pane or session method, decoded by the pane host's own rules.
    Pane(PaneRequest),
    WorktreeList(WorktreeListParams),
    WorktreeCreate(WorktreeCreateParams),
    WorktreeOpen(WorktreeOpenParams),
    WorktreeRemove(WorktreeRemoveParams),
}

impl MethodParams {
    /// The params as a client would send them; `None` for params nobody reads.
    pub fn params_json(&self) -> Option<serde_json::Value> {
        use MethodParams as P;
        let value = match self {
            P::Ping(p) | P::ServerStop(p) | P::ServerReloadConfig(p) | P::MissionList(p) => {
                serde_json::to_value(p)
            }
            P::MissionCreate(p) => serde_json::to_value(p),
            P::MissionGet(p)
            | P::MissionClose(p)
            | P::MissionProofGet(p)
            | P::MissionDelete(p)
            | P::MissionSession(p) => serde_json::to_value(p),
            P::MissionConfigure(p) => serde_json::to_value(p),
            P::MissionStart(p) => serde_json::to_value(p),
            P::MissionRespond(p) => serde_json::to_value(p),
            P::MissionVerify(p) => serde_json::to_value(p),
            P::MissionDiff(p) => serde_json::to_value(p),
            P::MissionAbandon(p) => serde_json::to_value(p),
            P::MissionLand(p) => serde_json::to_value(p),
            P::MissionSync(p) => serde_json::to_value(p),
            P::MissionHandoffPreview(p) => serde_json::to_value(p),
            P::MissionProofExport(p) => serde_json::to_value(p),
            P::MissionSend(p) => serde_json::to_value(p),
            P::MissionUsage(p) => serde_json::to_value(p),
            P::NotificationShow(p) => serde_json::to_value(p),
            P::MissionInterrupt(p) | P::MissionStop(p) => serde_json::to_value(p),
            P::MissionHandoffGet(p) => serde_json::to_value(p),
            P::MissionHandoffStart(p) => serde_json::to_value(p),
            P::AttentionList(p) => serde_json::to_value(p),
            P::AttentionGet(p) => serde_json::to_value(p),
            P::EventsSubscribe(p) => serde_json::to_value(p),
            P::EventsWait(p) => serde_json::to_value(p),
            P::CockpitHello(p) => serde_json::to_value(p),
            P::CockpitPreview(p) => serde_json::to_value(p),
            P::CockpitDecide(p) => serde_json::to_value(p),
            P::Pane(request) => return request.params_json(),
            P::WorktreeList(p) => serde_json::to_value(p),
            P::WorktreeCreate(p) => serde_json::to_value(p),
            P::WorktreeOpen(p) => serde_json::to_value(p),
            P::WorktreeRemove(p) => serde_json::to_value(p),
        };
        Some(value.expect("decoded params always serialize"))
    }
}

/// Decodes engine-method params. A shape error is `invalid_request` (contract §1.2):
/// limits are checked later by the handlers, with domain codes. Unknown fields follow
/// the params type: types of methods whose policy is `Rejected` deny them.
pub fn decode_params<T: DeserializeOwned>(params: &RawValue) -> Result<T, EngineError> {
    // serde would read a struct from a JSON array too (`["m-1"]` as `{"mission_id":"m-1"}`);
    // the contract's params are always an object.
    if !params.get().trim_start().starts_with('{') {
        return Err(EngineError::InvalidRequest(
            "params must be a JSON object".to_string(),
        ));
    }
    serde_json::from_str(params.get())
        .map_err(|error| EngineError::InvalidRequest(error.to_string()))
}

/// Steps 1–2 of a request: the line must be UTF-8 and decode as the envelope (`id` a
/// string, `method`, raw `params`). Otherwise `invalid_request`, with the salvaged id.
pub fn decode_envelope(line: &[u8]) -> Result<RawRequest<'_>, RejectedRequest> {
    let Ok(text) = std::str::from_utf8(line) else {
        return Err(RejectedRequest {
            id: RequestId::unknown(),
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
        "ping" => decode_params(params).map(P::Ping),
        "server.stop" => decode_params(params).map(P::ServerStop),
        "server.reload_config" => decode_params(params).map(P::ServerReloadConfig),
        "mission.list" => decode_params(params).map(P::MissionList),
        "mission.create" => decode_params(params).map(P::MissionCreate),
        "mission.get" => decode_params(params).map(P::MissionGet),
        "mission.proof.get" => decode_params(params).map(P::MissionProofGet),
        "mission.close" => decode_params(params).map(P::MissionClose),
        "mission.configure" => decode_params(params).map(P::MissionConfigure),
        "mission.start" => decode_params(params).map(P::MissionStart),
        "mission.respond" => decode_params(params).map(P::MissionRespond),
        "mission.verify" => decode_params(params).map(P::MissionVerify),
        "mission.diff" => decode_params(params).map(P::MissionDiff),
        "mission.abandon" => decode_params(params).map(P::MissionAbandon),
        "mission.land" => decode_params(params).map(P::MissionLand),
        "mission.sync" => decode_params(params).map(P::MissionSync),
        "mission.handoff.preview" => decode_params(params).map(P::MissionHandoffPreview),
        "mission.proof.export" => decode_params(params).map(P::MissionProofExport),
        "mission.delete" => decode_params(params).map(P::MissionDelete),
        "mission.send" => decode_params(params).map(P::MissionSend),
        "mission.interrupt" => decode_params(params).map(P::MissionInterrupt),
        "mission.stop" => decode_params(params).map(P::MissionStop),
        "mission.session" => decode_params(params).map(P::MissionSession),
        "mission.usage" => decode_params(params).map(P::MissionUsage),
        "notification.show" => decode_params(params).map(P::NotificationShow),
        "mission.handoff.get" => decode_params(params).map(P::MissionHandoffGet),
        "mission.handoff.start" => decode_params(params).map(P::MissionHandoffStart),
        "attention.list" => decode_params(params).map(P::AttentionList),
        "attention.get" => decode_params(params).map(P::AttentionGet),
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
    find_pane_method(method)?;
    let value: serde_json::Value = match serde_json::from_str(params.get()) {
        Ok(value) => value,
        Err(error) => return Some(Err(EngineError::InvalidRequest(error.to_string()))),
    };
    let decoded = PaneRequest::decode(method, value)?;
    Some(decoded.map(MethodParams::Pane).map_err(EngineError::Pane))
}

/// The `worktree.*` params follow the pane family's rules: unknown fields ignored, `null`
/// taken as `{}`, and a shape error is `invalid_params`.
fn worktree_params(method: &str, params: &RawValue) -> Option<Result<MethodParams, EngineError>> {
    fn decode<T: DeserializeOwned>(method: &str, params: &RawValue) -> Result<T, EngineError> {
        let text = params.get().trim();
        let text = if text == "null" { "{}" } else { text };
        if !text.starts_with('{') {
            return Err(EngineError::InvalidParams(format!(
                "invalid params for {method}: params must be a JSON object"
            )));
        }
        serde_json::from_str(text).map_err(|error| {
            EngineError::InvalidParams(format!("invalid params for {method}: {error}"))
        })
    }
    use MethodParams as P;
    Some(match method {
        "worktree.list" => decode(method, params).map(P::WorktreeList),
        "worktree.create" => decode(method, params).map(P::WorktreeCreate),
        "worktree.open" => decode(method, params).map(P::WorktreeOpen),
        "worktree.remove" => decode(method, params).map(P::WorktreeRemove),
        _ => return None,
    })
}

/// Decodes the params of `method`, or says why the method cannot be answered.
pub fn decode_method_params(method: &str, params: &RawValue) -> Result<MethodParams, EngineError> {
    if let Some(decoded) = engine_params(method, params) {
        return decoded;
    }
    if let Some(decoded) = pane_params(method, params) {
        return decoded;
    }
    if let Some(decoded) = worktree_params(method, params) {
        return decoded;
    }
    if UNAVAILABLE_METHODS.contains(&method) {
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
