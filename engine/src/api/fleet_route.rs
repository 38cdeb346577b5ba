//! Fleet mode: a request for a mission pinned to another host is carried there through the
//! mission's workflow and answered with what that host answered (README "Fleet mode").
//!
//! The host that receives the request ([`route`]) decides only where the mission lives and,
//! for a consent, whether its own client may give one (its local rule,
//! `consent::peer`): a consent refused here never leaves this host. The mission's host
//! ([`serve_routed`]) decodes the params again by the method's own rules and serves them
//! as if its own client had asked, the consent's digest checked against what it would show
//! now (`cockpit::decide`). A routed request is served only where the mission is: it is
//! never routed a second time.

use std::sync::Arc;

use nagi_mission::MissionError;
use nagi_schema::cockpit::CockpitAction;
use nagi_schema::codes::ErrorCode;
use nagi_schema::fleet::{RoutedAnswer, RoutedRequest};
use nagi_schema::methods::{EventMatch, Subscription};

use super::decode::{MethodParams, decode_request};
use super::fleet_missions::is_not_found;
use super::{Peer, Reply};
use crate::consent::peer::{ConsentVerdict, RefusalReason};
use crate::engine::Engine;
use crate::errors::{EngineError, wire_error};

/// A method that acts on one mission, as routing sees it.
struct Target {
    method: &'static str,
    mission_id: String,
    /// Whether the method needs a client allowed to give consent (the cockpit's methods,
    /// and `mission.session`, which shows a native session id only to a person).
    needs_consent: bool,
}

fn target(method: &'static str, mission_id: &str) -> Option<Target> {
    Some(Target {
        method,
        mission_id: mission_id.to_string(),
        needs_consent: false,
    })
}

fn action_mission(action: &CockpitAction) -> Option<&str> {
    match action {
        CockpitAction::StartRun { mission_id, .. }
        | CockpitAction::Respond { mission_id, .. }
        | CockpitAction::ManualEvidence { mission_id, .. }
        | CockpitAction::HandoffStart { mission_id, .. }
        | CockpitAction::Land { mission_id, .. }
        | CockpitAction::Sync { mission_id, .. } => Some(mission_id),
        // An attention id is a fact of the host that raised it: a dismissal goes to the
        // host of the mission it names, and without one is this host's own.
        CockpitAction::DismissAttention { mission_id, .. } => mission_id.as_deref(),
    }
}

/// The mission a request acts on, for the methods a fleet routes. Methods not listed
/// answer from the receiving host: `mission.create`/`list`/`get` answer for the fleet
/// (`fleet_missions`), the rest are this host's own (its panes, worktrees, events,
/// attention items and artifacts).
fn routed_target(params: &MethodParams) -> Option<Target> {
    use MethodParams as P;
    match params {
        P::MissionConfigure(p) => target("mission.configure", &p.mission_id),
        P::MissionStart(p) => target("mission.start", &p.mission_id),
        P::MissionRespond(p) => target("mission.respond", &p.mission_id),
        P::MissionClose(p) => target("mission.close", &p.mission_id),
        P::MissionVerify(p) => target("mission.verify", &p.mission_id),
        P::MissionDiff(p) => target("mission.diff", &p.mission_id),
        P::MissionAbandon(p) => target("mission.abandon", &p.mission_id),
        P::MissionLand(p) => target("mission.land", &p.mission_id),
        P::MissionSync(p) => target("mission.sync", &p.mission_id),
        P::MissionProofGet(p) => target("mission.proof.get", &p.mission_id),
        P::MissionProofExport(p) => target("mission.proof.export", &p.mission_id),
        P::MissionDelete(p) => target("mission.delete", &p.mission_id),
        P::MissionSend(p) => target("mission.send", &p.mission_id),
        P::MissionInterrupt(p) => target("mission.interrupt", &p.mission_id),
        P::MissionStop(p) => target("mission.stop", &p.mission_id),
        P::MissionUsage(p) => target("mission.usage", p.mission_id.as_deref()?),
        P::MissionHandoffPreview(p) => target("mission.handoff.preview", &p.mission_id),
        P::MissionHandoffStart(p) => target("mission.handoff.start", &p.mission_id),
        P::AttentionList(p) => target("attention.list", p.mission_id.as_deref()?),
        P::AttentionGet(p) => target("attention.get", p.mission_id.as_deref()?),
        P::MissionSession(p) => Some(Target {
            needs_consent: true,
            ..target("mission.session", &p.mission_id)?
        }),
        P::CockpitPreview(p) => Some(Target {
            needs_consent: true,
            ..target("cockpit.preview", action_mission(&p.action)?)?
        }),
        P::CockpitDecide(p) => Some(Target {
            needs_consent: true,
            ..target("cockpit.decide", action_mission(&p.action)?)?
        }),
        _ => None,
    }
}

/// The missions an `events.subscribe` or `events.wait` names. Their events are streamed
/// by the host whose store holds them, so one pinned to another host is refused rather
/// than followed in silence.
fn followed_missions(params: &MethodParams) -> Vec<&str> {
    match params {
        MethodParams::EventsSubscribe(p) => p
            .subscriptions
            .iter()
            .filter_map(|subscription| match subscription {
                Subscription::Mission(mission) => mission.mission_id.as_deref(),
                Subscription::Pane(_) => None,
            })
            .collect(),
        MethodParams::EventsWait(p) => match &p.match_event {
            EventMatch::Mission(mission) => mission.mission_id.as_deref().into_iter().collect(),
            EventMatch::Pane(_) => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// In fleet mode, answers a request for a mission pinned to another host through that
/// host; `None` when this host serves it (a lone host, a method that is not routed, a
/// mission of this host's store, or one no workflow knows). Following the events of a
/// mission pinned to another host is refused (`followed_missions`).
pub async fn route(
    engine: &Arc<Engine>,
    params: &MethodParams,
    peer: Peer,
) -> Result<Option<Reply>, EngineError> {
    if let Some(ask) = relocation_ask(params)
        && let Some(reply) = relocate(engine, ask, peer).await?
    {
        return Ok(Some(reply));
    }
    let Some(fleet) = engine.fleet.get() else {
        return Ok(None);
    };
    for mission_id in followed_missions(params) {
        if served_elsewhere(engine, mission_id).await?
            && let Some(remote) = fleet.get(mission_id.to_string()).await?
            && remote.host != fleet.host()
        {
            let host = remote.host;
            return Err(EngineError::FeatureUnavailable(format!(
                "mission {mission_id} is on host {host}, and hosts do not relay each other's \
                 events: this host streams only its own missions' events. Follow them on \
                 host {host} (nagi events subscribe --host {host} --mission {mission_id}, \
                 through the socket [fleet.hosts.{host}] names), or poll mission.get here"
            )));
        }
    }
    let Some(target) = routed_target(params) else {
        return Ok(None);
    };
    if !served_elsewhere(engine, &target.mission_id).await? {
        return Ok(None);
    }
    let host = match fleet.get(target.mission_id.clone()).await? {
        Some(remote) if remote.host != fleet.host() => remote.host,
        _ => return Ok(None),
    };
    if target.needs_consent
        && let ConsentVerdict::Refused(reason) = peer.consent
    {
        return Err(MissionError::ConsentForbidden(format!(
            "consent refused on host {} before it was sent to host {host}: {reason}",
            fleet.host()
        ))
        .into());
    }
    let request = RoutedRequest {
        method: target.method.to_string(),
        params: params
            .params_json()
            .unwrap_or_else(|| serde_json::json!({})),
        origin_host: fleet.host().to_string(),
        origin_uid: peer.uid,
        consent_checked: peer.consent == ConsentVerdict::Allowed,
    };
    answered(&host, fleet.act(target.mission_id, request).await?)
}

fn answered(host: &str, answer: RoutedAnswer) -> Result<Option<Reply>, EngineError> {
    match answer {
        RoutedAnswer::Answered { result } => Ok(Some(Reply::Value(result))),
        RoutedAnswer::Refused { code, message } => Err(EngineError::Fleet {
            code: ErrorCode::from_wire(&code).unwrap_or(ErrorCode::MissionRuntimeError),
            message: format!("host {host}: {message}"),
        }),
    }
}

/// Whether a request for `mission_id` is another host's to serve: this host's store does
/// not hold the mission, or holds only the archived copy of one handed to another host
/// while this one was gone (`fleet_retire`).
async fn served_elsewhere(engine: &Arc<Engine>, mission_id: &str) -> Result<bool, EngineError> {
    match engine.missions.get_checked(mission_id) {
        Err(error) if is_not_found(&error) => Ok(true),
        Ok(mission) if super::fleet_missions::handed_away(&mission) => Ok(true),
        _ => Ok(false),
    }
}

/// A handoff preview or start that names a `host`.
struct RelocationAsk<'a> {
    mission_id: &'a str,
    host: &'a str,
    to: nagi_schema::mission::MissionProvider,
    start: Option<(u64, &'a str)>,
}

fn relocation_ask(params: &MethodParams) -> Option<RelocationAsk<'_>> {
    match params {
        MethodParams::MissionHandoffPreview(p) => Some(RelocationAsk {
            mission_id: &p.mission_id,
            host: p.host.as_deref()?,
            to: p.to,
            start: None,
        }),
        MethodParams::MissionHandoffStart(p) => Some(RelocationAsk {
            mission_id: &p.mission_id,
            host: p.host.as_deref()?,
            to: p.to,
            start: Some((p.generated_at_millis, &p.artifact_sha256)),
        }),
        _ => None,
    }
}

/// A handoff to another host: refused on a lone host and for a mission of this host (it
/// is in the fleet, so it hands off here); `None` when `host` is the mission's own host
/// (an ordinary handoff, routed as usual).
async fn relocate(
    engine: &Arc<Engine>,
    ask: RelocationAsk<'_>,
    peer: Peer,
) -> Result<Option<Reply>, EngineError> {
    let Some(fleet) = engine.fleet.get() else {
        return Err(EngineError::FeatureUnavailable(
            "`host` hands a mission to another host of a fleet, and this server is not in \
             fleet mode (nagi server --fleet ADDRESS --host NAME); nothing was done"
                .into(),
        ));
    };
    if let Err(fault) = nagi_schema::ids::check_id_text(ask.host) {
        return Err(EngineError::InvalidParams(fault.describe("host", ask.host)));
    }
    let here = !served_elsewhere(engine, ask.mission_id).await?;
    let pinned = if here {
        fleet.host().to_string()
    } else {
        match fleet.get(ask.mission_id.to_string()).await? {
            Some(remote) => remote.host,
            None => return Ok(None),
        }
    };
    if pinned == ask.host {
        return Ok(None);
    }
    if here {
        return Err(MissionError::InvalidHandoffState(format!(
            "mission {} is on this host ({pinned}), which is in the fleet: hand it off here, \
             without a host",
            ask.mission_id
        ))
        .into());
    }
    let request = nagi_schema::fleet::RelocationRequest {
        host: ask.host.to_string(),
        to: ask.to,
        generated_at_millis: ask.start.map(|(at, _)| at),
        artifact_sha256: ask.start.map(|(_, digest)| digest.to_string()),
        origin_host: fleet.host().to_string(),
        origin_uid: peer.uid,
    };
    answered(
        ask.host,
        fleet.relocate(ask.mission_id.to_string(), request).await?,
    )
}

/// Serves a request another host routed here (the fleet's `act_on_mission` activity):
/// its answer, or its refusal with the stable code.
pub async fn serve_routed(engine: &Arc<Engine>, request: RoutedRequest) -> RoutedAnswer {
    match serve(engine, request).await {
        Ok(result) => RoutedAnswer::Answered { result },
        Err(error) => {
            let (code, message) = wire_error(&error);
            RoutedAnswer::Refused {
                code: code.as_str().to_string(),
                message,
            }
        }
    }
}

async fn serve(
    engine: &Arc<Engine>,
    request: RoutedRequest,
) -> Result<serde_json::Value, EngineError> {
    let line = serde_json::to_vec(&serde_json::json!({
        "id": "fleet",
        "method": request.method,
        "params": request.params,
    }))
    .map_err(|error| EngineError::InvalidRequest(format!("cannot encode the request: {error}")))?;
    let decoded = decode_request(&line).map_err(|rejected| rejected.error)?;
    let Some(target) = routed_target(&decoded.params) else {
        return Err(EngineError::InvalidRequest(format!(
            "{} is not a method another host of the fleet may send here",
            request.method
        )));
    };
    // Served only where the mission is: never routed on.
    engine.missions.get_checked(&target.mission_id)?;
    let peer = Peer {
        uid: request.origin_uid,
        pid: None,
        consent: if request.consent_checked {
            ConsentVerdict::Allowed
        } else {
            ConsentVerdict::Refused(RefusalReason::NotAllowedOnOriginHost)
        },
    };
    match super::dispatch(engine, decoded.params, peer).await? {
        Reply::Result(result) => serde_json::to_value(result).map_err(|error| {
            EngineError::InvalidRequest(format!("cannot encode the answer: {error}"))
        }),
        Reply::Value(value) => Ok(value),
        _ => Err(EngineError::InvalidRequest(format!(
            "{} answers with a stream, which the fleet does not carry",
            request.method
        ))),
    }
}
