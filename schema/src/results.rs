//! Result objects of the engine's own methods. Each is a tagged union on `type`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::attention::AttentionItemV1;
use crate::handoff::MissionHandoffArtifactV1;
use crate::mission::{MissionSummary, MissionViewV1};
use crate::proof::ProofReceiptV1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerCapabilities {
    pub live_handoff: bool,
    #[serde(default)]
    pub detached_server_daemon: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseResult {
    Pong {
        version: String,
        protocol: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        capabilities: Option<ServerCapabilities>,
    },
    Ok,
    /// `server.reload_config`: whether the file was put in place, and what to know.
    ConfigReload {
        status: ConfigReloadStatus,
        diagnostics: Vec<String>,
    },
    /// `events.subscribe` acknowledged. `head_seq` (nagi extension) is the last durable
    /// mission event sequence at subscription time.
    SubscriptionStarted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        head_seq: Option<u64>,
    },
    WaitMatched {
        event: serde_json::Value,
    },
    MissionInfo {
        mission: MissionViewV1,
    },
    MissionCreated {
        mission: MissionViewV1,
        created: bool,
    },
    MissionConfigured {
        mission: MissionViewV1,
        configured: bool,
    },
    MissionRunStarted {
        mission: MissionViewV1,
    },
    MissionResponseQueued {
        mission_id: String,
        attention_id: String,
    },
    MissionList {
        missions: Vec<crate::mission::MissionSummary>,
    },
    MissionProof {
        receipt: ProofReceiptV1,
    },
    MissionHandoffPreview {
        artifact: MissionHandoffArtifactV1,
    },
    /// nagi extension: `mission.handoff.get`, a kept artifact by its digest.
    MissionHandoffArtifact {
        artifact: MissionHandoffArtifactV1,
    },
    /// nagi extension: `mission.proof.export`, the files of an evidence pack.
    MissionEvidencePack {
        mission_id: String,
        seal_digest: String,
        files: Vec<crate::evidence_pack::EvidencePackFile>,
    },
    MissionCloseAccepted {
        mission: MissionViewV1,
    },
    /// nagi extension: `mission.abandon`: the mission is archived with the reason; a live
    /// run was stopped and everything it held released.
    MissionAbandoned {
        mission: MissionViewV1,
    },
    /// nagi extension: `mission.send`: the follow-up is queued behind the running turn, or
    /// the provider was started again on its session with it.
    MissionSendAccepted {
        mission: MissionViewV1,
        delivery: crate::steer::FollowUpDelivery,
    },
    /// nagi extension: `mission.interrupt`: the provider was asked to end its turn.
    MissionInterruptAccepted {
        mission: MissionViewV1,
    },
    /// nagi extension: `mission.session`: the current run's native session, shown only to
    /// a person's own terminal.
    MissionSession {
        mission_id: String,
        run_id: String,
        provider: crate::mission::MissionProvider,
        worktree_path: String,
        session: crate::steer::ProviderSessionV1,
    },
    /// `notification.show`: whether a sink showed it (`no_foreground_client`: no desktop
    /// service answered and no command is configured).
    NotificationShow {
        shown: bool,
        reason: crate::notification::NotificationShowReason,
    },
    /// nagi extension: `mission.usage`: tokens and cost summed over the missions' turns.
    MissionUsage {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since_millis: Option<u64>,
        usage: crate::usage::UsageV1,
        missions: Vec<crate::usage::MissionUsageEntryV1>,
    },
    /// nagi extension: `mission.stop`: the provider was stopped and the run released.
    MissionStopped {
        mission: MissionViewV1,
    },
    /// nagi extension: `mission.delete`: the draft is gone and its id is free.
    MissionDeleted {
        mission_id: String,
    },
    /// nagi extension: `mission.diff`.
    MissionDiff {
        diff: crate::worktree::MissionDiffV1,
    },
    /// nagi extension: `mission.verify` accepted; the checks run in the background.
    MissionVerifyAccepted {
        mission: MissionViewV1,
    },
    AttentionList {
        items: Vec<AttentionItemV1>,
    },
    /// `cockpit.hello` (nagi extension): whether this peer may grant consent, and why not.
    CockpitHello {
        consent_allowed: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// `cockpit.preview` (nagi extension).
    CockpitPreview {
        preview: crate::cockpit::CockpitPreview,
    },
    /// `cockpit.decide` (nagi extension).
    CockpitDecided {
        outcome: crate::cockpit::CockpitOutcome,
    },
    AttentionInfo {
        item: AttentionItemV1,
    },
}

impl ResponseResult {
    pub fn mission_list(missions: Vec<MissionSummary>) -> ResponseResult {
        ResponseResult::MissionList { missions }
    }
}

/// How much of a reloaded configuration is in effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConfigReloadStatus {
    /// All of it.
    Applied,
    /// Some settings take effect only at the next server start (the diagnostics name them).
    Partial,
    /// The file did not load; nothing changed.
    Failed,
}
