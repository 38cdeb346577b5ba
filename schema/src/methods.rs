//! The method table: every method the server speaks, its params type and its policy for
//! unknown params fields. `nagi api schema` and the request dispatcher both read it.

use schemars::{JsonSchema, Schema, SchemaGenerator};

use crate::events::{MissionEventMatch, MissionSubscription};
use crate::mission::*;

/// What the decoder does with unknown fields in `params`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownFields {
    Ignored,
    Rejected,
}

pub struct MethodSpec {
    pub name: &'static str,
    pub summary: &'static str,
    pub unknown_fields: UnknownFields,
    pub params_schema: fn(&mut SchemaGenerator) -> Schema,
}

fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

macro_rules! method {
    ($name:literal, $params:ty, $policy:ident, $summary:literal) => {
        MethodSpec {
            name: $name,
            summary: $summary,
            unknown_fields: UnknownFields::$policy,
            params_schema: schema_of::<$params>,
        }
    };
}

/// `events.subscribe` params.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, JsonSchema)]
pub struct EventsSubscribeParams {
    pub subscriptions: Vec<Subscription>,
    /// nagi extension: replay durable mission events with a sequence number greater than
    /// this before streaming live ones.
    #[serde(default)]
    pub after_seq: Option<u64>,
}

/// One subscription of `events.subscribe`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, JsonSchema)]
#[serde(tag = "type")]
pub enum Subscription {
    /// Durable mission events (nagi extension).
    #[serde(rename = "mission")]
    Mission(MissionSubscription),
    /// Live workspace, tab and pane events (`pane.created`, `pane.output_matched`, …).
    #[serde(untagged)]
    Pane(crate::pane_events::PaneSubscription),
}

/// `events.wait` params.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, JsonSchema)]
pub struct EventsWaitParams {
    pub match_event: EventMatch,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, JsonSchema)]
#[serde(tag = "event")]
pub enum EventMatch {
    /// A durable mission event (nagi extension).
    #[serde(rename = "mission")]
    Mission(MissionEventMatch),
    /// A live workspace, tab or pane event (`pane_exited`, …).
    #[serde(untagged)]
    Pane(crate::pane_events::PaneEventMatch),
}

pub static ENGINE_METHODS: &[MethodSpec] = &[
    method!("ping", EmptyParams, Ignored, "Protocol and server version."),
    method!(
        "server.stop",
        EmptyParams,
        Ignored,
        "Stop the server after in-flight commits finish."
    ),
    method!(
        "server.reload_config",
        EmptyParams,
        Ignored,
        "Read config.toml again; what only a restart applies is named."
    ),
    method!(
        "mission.create",
        MissionCreateParams,
        Ignored,
        "Create a durable draft mission."
    ),
    method!(
        "mission.list",
        EmptyParams,
        Ignored,
        "Summaries of every mission, by id."
    ),
    method!(
        "mission.get",
        MissionTarget,
        Ignored,
        "The full mission projection."
    ),
    method!(
        "mission.configure",
        MissionConfigureParams,
        Ignored,
        "Freeze the closure plan."
    ),
    method!(
        "mission.start",
        MissionStartParams,
        Rejected,
        "Claim the checkout and start a provider run."
    ),
    method!(
        "mission.respond",
        MissionRespondParams,
        Rejected,
        "Answer an attention item (cockpit only)."
    ),
    method!(
        "mission.verify",
        MissionVerifyParams,
        Ignored,
        "Run the declared command checks now (nagi extension)."
    ),
    method!(
        "mission.abandon",
        MissionAbandonParams,
        Rejected,
        "Give the mission up: archive it with a reason, stop its run (nagi extension)."
    ),
    method!(
        "mission.land",
        crate::land::MissionLandParams,
        Rejected,
        "Land the mission's change on a branch (nagi extension; needs the cockpit's consent)."
    ),
    method!(
        "mission.sync",
        crate::land::MissionSyncParams,
        Rejected,
        "Rebase the mission branch onto a branch's tip (nagi extension; needs the cockpit's consent)."
    ),
    method!(
        "mission.diff",
        crate::worktree::MissionDiffParams,
        Rejected,
        "The mission's change against its worktree's base (nagi extension)."
    ),
    method!(
        "mission.proof.get",
        MissionTarget,
        Ignored,
        "The proof receipt of a verified mission."
    ),
    method!(
        "mission.send",
        crate::steer::MissionSendParams,
        Rejected,
        "A follow-up turn in the run's own session (nagi extension; grants no authority)."
    ),
    method!(
        "mission.interrupt",
        crate::steer::MissionSteerParams,
        Rejected,
        "Interrupt the turn in progress; the mission is blocked (nagi extension)."
    ),
    method!(
        "mission.stop",
        crate::steer::MissionSteerParams,
        Rejected,
        "Stop the run's provider and release the run; the mission is blocked (nagi extension)."
    ),
    method!(
        "mission.session",
        MissionTarget,
        Ignored,
        "The current run's native session id and the vendor's resume command, for a person's own terminal (nagi extension)."
    ),
    method!(
        "mission.usage",
        crate::usage::MissionUsageParams,
        Rejected,
        "Tokens and cost the providers reported, summed over the missions' turns (nagi extension)."
    ),
    method!(
        "mission.delete",
        MissionTarget,
        Ignored,
        "Delete a draft that never ran; its id is free again (nagi extension)."
    ),
    method!(
        "mission.proof.export",
        crate::evidence_pack::MissionProofExportParams,
        Rejected,
        "What proves a sealed mission, as the files of an evidence pack (nagi extension)."
    ),
    method!(
        "mission.handoff.get",
        crate::evidence_pack::MissionHandoffGetParams,
        Rejected,
        "A handoff artifact a continuation started from, by its digest (nagi extension)."
    ),
    method!(
        "mission.handoff.preview",
        MissionHandoffPreviewParams,
        Rejected,
        "A redacted, digest-bound continuation artifact."
    ),
    method!(
        "mission.handoff.start",
        MissionHandoffStartParams,
        Rejected,
        "Continue the mission with another provider."
    ),
    method!(
        "mission.close",
        MissionTarget,
        Ignored,
        "Re-verify and archive a ready mission."
    ),
    method!(
        "attention.list",
        AttentionListParams,
        Ignored,
        "Attention items, by mission and id."
    ),
    method!(
        "attention.get",
        AttentionTarget,
        Ignored,
        "One attention item."
    ),
    method!(
        "cockpit.hello",
        crate::cockpit::CockpitHelloParams,
        Rejected,
        "Whether this peer may grant consent (cockpit channel)."
    ),
    method!(
        "cockpit.preview",
        crate::cockpit::CockpitPreviewParams,
        Rejected,
        "Exactly what a consent would authorise, with its digest (cockpit channel)."
    ),
    method!(
        "cockpit.decide",
        crate::cockpit::CockpitDecideParams,
        Rejected,
        "Grant or refuse a previewed consent (cockpit channel)."
    ),
    method!(
        "notification.show",
        crate::notification::NotificationShowParams,
        Ignored,
        "Tell a person something through the desktop's notifications or the [notify] command."
    ),
    method!(
        "events.subscribe",
        EventsSubscribeParams,
        Ignored,
        "Stream events; mission events resume from a sequence."
    ),
    method!(
        "events.wait",
        EventsWaitParams,
        Ignored,
        "Wait for one event."
    ),
];

pub fn find_engine_method(name: &str) -> Option<&'static MethodSpec> {
    ENGINE_METHODS.iter().find(|spec| spec.name == name)
}

/// Methods of the protocol this server does not offer, beyond the pane table's own
/// not-implemented entries (a method is listed in one place only; a test checks it). They
/// answer `feature_unavailable` naming themselves.
pub const UNAVAILABLE_METHODS: &[&str] = &[
    "server.live_handoff",
    "server.agent_manifests",
    "server.reload_agent_manifests",
    "client.window_title.set",
    "client.window_title.clear",
    "agent.list",
    "agent.get",
    "agent.read",
    "agent.explain",
    "agent.send",
    "agent.rename",
    "agent.focus",
    "agent.start",
    "integration.install",
    "integration.uninstall",
    "plugin.capability.approve",
    "plugin.capability.revoke",
];

/// Every method of the protocol that answers `feature_unavailable`: the pane table's
/// entries that nagi does not implement, and [`UNAVAILABLE_METHODS`], sorted.
pub fn unavailable_methods() -> Vec<&'static str> {
    let mut methods: Vec<&'static str> = crate::pane_methods::PANE_METHODS
        .iter()
        .filter(|spec| !spec.implemented)
        .map(|spec| spec.name)
        .chain(UNAVAILABLE_METHODS.iter().copied())
        .collect();
    methods.sort_unstable();
    methods
}
