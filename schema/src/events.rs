//! Mission events on `events.subscribe` / `events.wait` (nagi extension, contract preface
//! item 2). They come from the durable event log, so a subscriber that passes the last
//! `seq` it saw resumes without a gap across reconnects and server restarts.
//!
//! Pushed lines have the same envelope as pane events: `{"event": <kind>, "data": {...}}`,
//! where `data.type` equals `event` and mission events carry `data.seq`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::attention::{AttentionKindV1, AttentionRiskV1};
use crate::mission::{MissionEvidenceAssessmentV1, MissionProvider, MissionStatus};
use crate::proof::ProofClosureDecisionV1;

/// One durable mission event as subscribers see it. The provider's native session id and
/// answer texts never appear here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionEventV1 {
    /// Position in the durable log; strictly increasing, contiguous from 1.
    pub seq: u64,
    pub mission_id: String,
    pub at_millis: u64,
    /// The mission's status after this event.
    pub status: MissionStatus,
    #[serde(flatten)]
    pub detail: MissionEventDetail,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MissionEventDetail {
    MissionCreated {
        title: String,
    },
    MissionConfigured {
        declared_check_count: u32,
    },
    MissionRunStarted {
        run_id: String,
        provider: MissionProvider,
    },
    MissionRunContinued {
        run_id: String,
        source_run_id: String,
        provider: MissionProvider,
    },
    MissionRunPaneAttached {
        run_id: String,
        pane_id: String,
        enforcement: String,
    },
    MissionSessionBound {
        run_id: String,
    },
    MissionStatusChanged {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    MissionAttentionChanged {
        attention_id: String,
        /// `open`, `pending_response`, `resolved`, `reconciliation_required`, `expired`,
        /// `dismissed`.
        state: String,
        /// Present when the item opens.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<AttentionKindV1>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        risk: Option<AttentionRiskV1>,
    },
    MissionEvidenceChanged {
        check_id: String,
        assessment: MissionEvidenceAssessmentV1,
    },
    MissionEvidencePackRecorded {
        run_id: String,
        pack_digest: String,
    },
    MissionChecksStarted {
        run_id: String,
        purpose: String,
        check_count: u32,
    },
    MissionChecksFinished {
        run_id: String,
    },
    MissionProofSealed {
        decision: ProofClosureDecisionV1,
    },
    MissionConsentRecorded {
        consent_id: String,
        subject: String,
        decision: String,
    },
    /// nagi extension: the mission's worktree was made, went missing, or was removed or
    /// kept at archive.
    MissionWorktreeChanged {
        path: String,
        branch: String,
        state: crate::worktree::MissionWorktreeState,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// nagi extension: the mission's change landed (`mission.land`).
    MissionLanded {
        landing: crate::land::MissionLandingV1,
    },
    /// nagi extension: a draft that never ran was deleted (`mission.delete`); its id may
    /// name a new mission after this.
    MissionDeleted {},
    /// nagi extension: a person (or a program) steered the run: `send`, `interrupt` or
    /// `stop`.
    MissionRunSteered {
        run_id: String,
        action: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delivery: Option<crate::steer::FollowUpDelivery>,
        actor: crate::steer::RunActorV1,
    },
    /// nagi extension: one turn of the run ended (the run may go on with a queued
    /// follow-up).
    MissionTurnEnded {
        run_id: String,
        turn: u32,
        outcome: String,
    },
}

/// Every mission event kind, as `MissionEventDetail::kind` names them.
pub const MISSION_EVENT_KINDS: &[&str] = &[
    "mission_created",
    "mission_configured",
    "mission_run_started",
    "mission_run_continued",
    "mission_run_pane_attached",
    "mission_session_bound",
    "mission_status_changed",
    "mission_attention_changed",
    "mission_evidence_changed",
    "mission_evidence_pack_recorded",
    "mission_checks_started",
    "mission_checks_finished",
    "mission_proof_sealed",
    "mission_consent_recorded",
    "mission_worktree_changed",
    "mission_landed",
    "mission_deleted",
    "mission_run_steered",
    "mission_turn_ended",
];

impl MissionEventDetail {
    /// The `event` / `data.type` name.
    pub fn kind(&self) -> &'static str {
        match self {
            MissionEventDetail::MissionCreated { .. } => "mission_created",
            MissionEventDetail::MissionConfigured { .. } => "mission_configured",
            MissionEventDetail::MissionRunStarted { .. } => "mission_run_started",
            MissionEventDetail::MissionRunContinued { .. } => "mission_run_continued",
            MissionEventDetail::MissionRunPaneAttached { .. } => "mission_run_pane_attached",
            MissionEventDetail::MissionSessionBound { .. } => "mission_session_bound",
            MissionEventDetail::MissionStatusChanged { .. } => "mission_status_changed",
            MissionEventDetail::MissionAttentionChanged { .. } => "mission_attention_changed",
            MissionEventDetail::MissionEvidenceChanged { .. } => "mission_evidence_changed",
            MissionEventDetail::MissionEvidencePackRecorded { .. } => {
                "mission_evidence_pack_recorded"
            }
            MissionEventDetail::MissionChecksStarted { .. } => "mission_checks_started",
            MissionEventDetail::MissionChecksFinished { .. } => "mission_checks_finished",
            MissionEventDetail::MissionProofSealed { .. } => "mission_proof_sealed",
            MissionEventDetail::MissionConsentRecorded { .. } => "mission_consent_recorded",
            MissionEventDetail::MissionWorktreeChanged { .. } => "mission_worktree_changed",
            MissionEventDetail::MissionLanded { .. } => "mission_landed",
            MissionEventDetail::MissionDeleted {} => "mission_deleted",
            MissionEventDetail::MissionRunSteered { .. } => "mission_run_steered",
            MissionEventDetail::MissionTurnEnded { .. } => "mission_turn_ended",
        }
    }
}

/// A pushed mission event line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionEventEnvelope {
    pub event: String,
    pub data: MissionEventV1,
}

impl MissionEventEnvelope {
    pub fn new(data: MissionEventV1) -> MissionEventEnvelope {
        MissionEventEnvelope {
            event: data.detail.kind().to_string(),
            data,
        }
    }
}

/// A mission subscription of `events.subscribe`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionSubscription {
    /// Only events of this mission; every mission when absent.
    #[serde(default)]
    pub mission_id: Option<String>,
    /// Only these event kinds (`mission_status_changed`, …); every kind when empty.
    #[serde(default)]
    pub kinds: Vec<String>,
}

impl MissionSubscription {
    pub fn matches(&self, event: &MissionEventV1) -> bool {
        let mission_matches = self
            .mission_id
            .as_deref()
            .is_none_or(|id| id == event.mission_id);
        let kind_matches =
            self.kinds.is_empty() || self.kinds.iter().any(|kind| kind == event.detail.kind());
        mission_matches && kind_matches
    }
}

/// The mission variant of `events.wait`'s `match_event` (`"event": "mission"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionEventMatch {
    #[serde(default)]
    pub mission_id: Option<String>,
    /// Event kind, e.g. `mission_status_changed`.
    #[serde(default)]
    pub kind: Option<String>,
    /// Only events after which the mission has this status.
    #[serde(default)]
    pub status: Option<MissionStatus>,
    /// Consider events after this sequence number (default: only future events). Passing
    /// the `seq` of a previous read makes the wait race-free.
    #[serde(default)]
    pub after_seq: Option<u64>,
}

impl MissionEventMatch {
    pub fn matches(&self, event: &MissionEventV1) -> bool {
        let mission_matches = self
            .mission_id
            .as_deref()
            .is_none_or(|id| id == event.mission_id);
        let kind_matches = self
            .kind
            .as_deref()
            .is_none_or(|kind| kind == event.detail.kind());
        let status_matches = self.status.is_none_or(|wanted| wanted == event.status);
        let after_matches = self.after_seq.is_none_or(|after| event.seq > after);
        mission_matches && kind_matches && status_matches && after_matches
    }
}
