//! Request dispatch: decodes each method's params with its own unknown-field policy and
//! calls its handler.

pub mod attention;
pub mod cockpit;
pub mod decode;
pub mod diff;
pub mod events;
pub mod evidence_pack;
pub mod fleet_missions;
pub mod fleet_relocate;
pub mod fleet_route;
pub mod missions;
pub mod panes;
pub mod proof;
pub mod reload;
pub mod usage;
pub mod worktrees;

use std::sync::Arc;

use nagi_schema::methods::{EventsSubscribeParams, EventsWaitParams};
use nagi_schema::results::{ResponseResult, ServerCapabilities};
use nagi_schema::{PROTOCOL_VERSION, SERVER_VERSION};

use crate::engine::Engine;
use crate::errors::EngineError;
use decode::MethodParams;

/// Who is on the other end of a connection, and whether it may grant consent (judged once,
/// at accept: `consent::peer::judge_connection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub uid: u32,
    pub pid: Option<i32>,
    pub consent: crate::consent::peer::ConsentVerdict,
}

/// What the connection does with a request.
#[expect(
    clippy::large_enum_variant,
    reason = "one per request, moved once to the connection; boxing would only add an allocation"
)]
pub enum Reply {
    Result(ResponseResult),
    /// Acknowledge, then stream events on this connection.
    Subscribe(EventsSubscribeParams),
    /// Answer once a matching event arrives.
    Wait(EventsWaitParams),
    /// Answer `ok`, then stop the server.
    StopServer,
    /// A result object of the pane host (workspace, tab, pane and session methods), its
    /// `type` included.
    Value(serde_json::Value),
}

/// Answers one decoded request (`decode::decode_request`): the single `match` over every
/// method nagi offers.
pub async fn dispatch(
    engine: &Arc<Engine>,
    params: MethodParams,
    peer: Peer,
) -> Result<Reply, EngineError> {
    use MethodParams as P;
    if let Some(reply) = fleet_route::route(engine, &params, peer).await? {
        return Ok(reply);
    }
    let result = match params {
        P::Ping(_) => ResponseResult::Pong {
            version: SERVER_VERSION.to_string(),
            protocol: PROTOCOL_VERSION,
            capabilities: Some(ServerCapabilities {
                live_handoff: false,
                detached_server_daemon: true,
            }),
        },
        P::ServerStop(_) => return Ok(Reply::StopServer),
        P::ServerReloadConfig(_) => reload::reload(engine),
        P::MissionCreate(params) => fleet_missions::create(engine, params).await?,
        P::MissionList(_) => fleet_missions::list(engine).await?,
        P::MissionGet(params) => fleet_missions::get(engine, params).await?,
        P::MissionConfigure(params) => missions::configure(engine, params).await?,
        P::MissionStart(params) => missions::start(engine, params).await?,
        P::MissionRespond(params) => missions::respond(engine, params).await?,
        P::MissionClose(params) => proof::close(engine, params).await?,
        P::MissionVerify(params) => proof::verify(engine, params).await?,
        P::MissionDiff(params) => diff::diff(engine, params).await?,
        P::MissionAbandon(params) => crate::runs::abandon::abandon(engine, params).await?,
        P::MissionLand(params) => crate::runs::land::refuse_without_consent(engine, params)?,
        P::MissionSync(params) => crate::runs::sync::refuse_without_consent(engine, params)?,
        P::MissionProofGet(params) => proof::proof_get(engine, params)?,
        P::MissionProofExport(params) => {
            on_blocking_pool(engine, |engine| evidence_pack::proof_export(engine, params)).await?
        }
        P::MissionDelete(params) => missions::delete(engine, params).await?,
        P::MissionSend(params) => {
            crate::runs::steer::send(engine, params, actor_of(engine, peer)).await?
        }
        P::MissionInterrupt(params) => {
            crate::runs::steer::interrupt(engine, params, actor_of(engine, peer)).await?
        }
        P::MissionStop(params) => {
            crate::runs::steer::stop(engine, params, actor_of(engine, peer)).await?
        }
        P::MissionSession(params) => missions::session(engine, params, peer)?,
        P::MissionUsage(params) => {
            on_blocking_pool(engine, |engine| usage::usage(engine, params)).await?
        }
        P::NotificationShow(params) => show_notification(engine, params).await?,
        P::MissionHandoffGet(params) => {
            on_blocking_pool(engine, |engine| evidence_pack::handoff_get(engine, params)).await?
        }
        P::MissionHandoffPreview(params) => crate::runs::handoff::preview(engine, params).await?,
        P::MissionHandoffStart(params) => {
            crate::runs::handoff::start(
                engine,
                params,
                nagi_proof::handoff::HandoffAuthority::PublicSocket,
            )
            .await?
        }
        P::AttentionList(params) => fleet_missions::attention_list(engine, params, peer).await?,
        P::AttentionGet(params) => fleet_missions::attention_get(engine, params)?,
        P::CockpitHello(_) => cockpit::hello(peer),
        P::CockpitPreview(params) => cockpit::preview(engine, peer, params).await?,
        P::CockpitDecide(params) => cockpit::decide(engine, peer, params).await?,
        P::EventsSubscribe(params) => return Ok(Reply::Subscribe(params)),
        P::EventsWait(params) => return Ok(Reply::Wait(params)),
        P::Pane(request) => return panes::dispatch(engine, request).await.map(Reply::Value),
        P::WorktreeList(params) => return worktree_value(worktrees::list(engine, params).await),
        P::WorktreeCreate(params) => {
            return worktree_value(worktrees::create(engine, params).await);
        }
        P::WorktreeOpen(params) => return worktree_value(worktrees::open(engine, params).await),
        P::WorktreeRemove(params) => {
            return worktree_value(worktrees::remove(engine, params).await);
        }
    };
    Ok(Reply::Result(result))
}

/// Runs a handler whose reads are not bounded by a key (every mission, a sum over the
/// event log, a pack of blobs) on the blocking pool: no runtime worker waits on SQLite
/// while it scans. Reads of one row by its key, and pages of at most 256 logged events,
/// stay on the worker that serves the request (see ARCHITECTURE.md, invariants).
pub(crate) async fn on_blocking_pool<F>(
    engine: &Arc<Engine>,
    handler: F,
) -> Result<ResponseResult, EngineError>
where
    F: FnOnce(&Arc<Engine>) -> Result<ResponseResult, EngineError> + Send + 'static,
{
    let engine = engine.clone();
    tokio::task::spawn_blocking(move || handler(&engine))
        .await
        .map_err(|error| {
            EngineError::ServerUnavailable(format!("the server stopped while reading: {error}"))
        })?
}

/// `notification.show`: through the configured sinks, now.
async fn show_notification(
    engine: &Engine,
    params: nagi_schema::notification::NotificationShowParams,
) -> Result<ResponseResult, EngineError> {
    use crate::notify::{Notification, settings::NotifyKind};
    use nagi_schema::notification::NotificationShowReason;
    let notification = Notification::new(
        NotifyKind::Message,
        None,
        &params.title,
        params.body.as_deref().unwrap_or_default(),
    );
    if notification.title.is_empty() {
        return Err(EngineError::InvalidParams(
            "title must have visible text".into(),
        ));
    }
    let settings = engine.config.current().user.notify.clone();
    if !settings.enabled {
        return Ok(ResponseResult::NotificationShow {
            shown: false,
            reason: NotificationShowReason::Disabled,
        });
    }
    let delivered = crate::notify::deliver(&settings, &notification).await;
    Ok(ResponseResult::NotificationShow {
        shown: delivered.any(),
        reason: if delivered.any() {
            NotificationShowReason::Shown
        } else {
            NotificationShowReason::NoForegroundClient
        },
    })
}

/// The connection's peer as a run's history records who steered it.
fn actor_of(engine: &Engine, peer: Peer) -> nagi_schema::steer::RunActorV1 {
    use crate::consent::peer::{ConsentVerdict, RefusalReason, runs_in_managed_pane};
    nagi_schema::steer::RunActorV1 {
        uid: peer.uid,
        pid: peer.pid,
        managed_pane: peer
            .pid
            .is_some_and(|pid| runs_in_managed_pane(engine, pid)),
        started_by_server: matches!(
            peer.consent,
            ConsentVerdict::Refused(RefusalReason::Descendant)
        ),
    }
}

fn worktree_value(
    result: Result<nagi_schema::git_worktrees::WorktreeMethodResult, EngineError>,
) -> Result<Reply, EngineError> {
    result.map(|result| {
        Reply::Value(serde_json::to_value(result).expect("worktree results serialize to JSON"))
    })
}

/// Schema parts of the method families beyond the engine's own (panes, sessions,
/// worktrees).
pub fn schema_extensions() -> Vec<nagi_schema::document::SchemaExtension> {
    vec![
        nagi_schema::pane_document::pane_schema_extension(),
        nagi_schema::worktree_document::worktree_schema_extension(),
    ]
}
