//! Request dispatch: decodes each method's params with its own unknown-field policy and
//! calls its handler.

pub mod attention;
pub mod cockpit;
pub mod decode;
pub mod events;
pub mod missions;
pub mod panes;
pub mod proof;

use std::sync::Arc;

use nagi_schema::methods::{EventsSubscribeParams, EventsWaitParams};
use nagi_schema::results::{ResponseResult, ServerCapabilities};
use nagi_schema::{PROTOCOL_VERSION, SERVER_VERSION};
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::engine::Engine;
use crate::errors::EngineError;

/// Who is on the other end of a connection, and whether it may grant consent (judged once,
/// at accept: `consent::peer::judge_connection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer {
    pub uid: u32,
    pub pid: Option<i32>,
    pub consent: crate::consent::peer::ConsentVerdict,
}

/// What the connection does with a request.
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

/// Decodes params. A shape error is `invalid_request` (MISSIONS.md §1.2): limits are
/// checked later by the handlers, with domain codes.
pub fn decode<T: DeserializeOwned>(params: &RawValue) -> Result<T, EngineError> {
    decode::decode_params(params)
}

/// Methods of the protocol this server does not offer.
pub const UNAVAILABLE_METHODS: &[&str] = &[
    "server.live_handoff",
    "server.reload_config",
    "server.agent_manifests",
    "server.reload_agent_manifests",
    "notification.show",
    "client.window_title.set",
    "client.window_title.clear",
    "workspace.focus",
    "workspace.move",
    "workspace.report_metadata",
    "worktree.list",
    "worktree.create",
    "worktree.open",
    "worktree.remove",
    "tab.focus",
    "tab.move",
    "agent.list",
    "agent.get",
    "agent.read",
    "agent.explain",
    "agent.send",
    "agent.rename",
    "agent.focus",
    "agent.start",
    "pane.split",
    "pane.swap",
    "pane.move",
    "pane.zoom",
    "pane.layout",
    "layout.export",
    "layout.apply",
    "layout.set_split_ratio",
    "pane.neighbor",
    "pane.edges",
    "pane.focus_direction",
    "pane.resize",
    "pane.focus",
    "pane.graphics.set",
    "pane.graphics.clear",
    "pane.graphics.info",
    "pane.graphics.stream",
    "pane.clear_agent_authority",
    "pane.release_agent",
    "popup.close",
    "integration.install",
    "integration.uninstall",
    "plugin.link",
    "plugin.list",
    "plugin.unlink",
    "plugin.enable",
    "plugin.disable",
    "plugin.capability.approve",
    "plugin.capability.revoke",
    "plugin.action.list",
    "plugin.action.invoke",
    "plugin.log.list",
    "plugin.pane.open",
    "plugin.pane.focus",
    "plugin.pane.close",
];

pub async fn dispatch(
    engine: &Arc<Engine>,
    method: &str,
    params: &RawValue,
    peer: Peer,
) -> Result<Reply, EngineError> {
    let result = match method {
        "ping" => {
            let _: nagi_schema::mission::EmptyParams = decode(params)?;
            ResponseResult::Pong {
                version: SERVER_VERSION.to_string(),
                protocol: PROTOCOL_VERSION,
                capabilities: Some(ServerCapabilities {
                    live_handoff: false,
                    detached_server_daemon: true,
                }),
            }
        }
        "server.stop" => {
            let _: nagi_schema::mission::EmptyParams = decode(params)?;
            return Ok(Reply::StopServer);
        }
        "mission.create" => missions::create(engine, decode(params)?).await?,
        "mission.list" => {
            let _: nagi_schema::mission::EmptyParams = decode(params)?;
            missions::list(engine)?
        }
        "mission.get" => missions::get(engine, decode(params)?)?,
        "mission.configure" => missions::configure(engine, decode(params)?).await?,
        "mission.start" => missions::start(engine, decode(params)?).await?,
        "mission.respond" => missions::respond(engine, decode(params)?).await?,
        "mission.close" => proof::close(engine, decode(params)?).await?,
        "mission.verify" => proof::verify(engine, decode(params)?).await?,
        "mission.proof.get" => proof::proof_get(engine, decode(params)?)?,
        "mission.handoff.preview" => crate::runs::handoff::preview(engine, decode(params)?).await?,
        "mission.handoff.start" => {
            crate::runs::handoff::start(
                engine,
                decode(params)?,
                crate::handoff::HandoffAuthority::PublicSocket,
            )
            .await?
        }
        "attention.list" => attention::list(engine, decode(params)?)?,
        "attention.get" => attention::get(engine, decode(params)?)?,
        "cockpit.hello" => {
            let _: nagi_schema::cockpit::CockpitHelloParams = decode(params)?;
            cockpit::hello(peer)
        }
        "cockpit.preview" => cockpit::preview(engine, peer, decode(params)?).await?,
        "cockpit.decide" => cockpit::decide(engine, peer, decode(params)?).await?,
        "events.subscribe" => return Ok(Reply::Subscribe(decode(params)?)),
        "events.wait" => return Ok(Reply::Wait(decode(params)?)),
        other if panes::is_pane_method(other) => {
            return panes::dispatch(engine, other, params)
                .await
                .map(Reply::Value);
        }
        other if UNAVAILABLE_METHODS.contains(&other) => {
            return Err(EngineError::FeatureUnavailable(format!(
                "{other} is not offered by this nagi server"
            )));
        }
        other => {
            return Err(EngineError::InvalidRequest(format!(
                "unknown method {other:?}"
            )));
        }
    };
    Ok(Reply::Result(result))
}

/// Schema parts of the method families beyond the engine's own (panes, sessions).
pub fn schema_extensions() -> Vec<nagi_schema::document::SchemaExtension> {
    vec![nagi_schema::pane_document::pane_schema_extension()]
}
