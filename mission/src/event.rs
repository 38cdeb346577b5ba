//! Domain events: the durable log of what happened to a mission. The projection
//! (`Mission`) is a pure fold of them (`apply.rs`). Each is stored with the status it left
//! the mission in, so subscribers that resume mid-log need no fold.

use nagi_schema::mission::MissionStatus;
use nagi_schema::proof::ProofReceiptV1;
use serde::{Deserialize, Serialize};

use super::model::{
    AttemptState, Attention, Declaration, Evidence, MissionWorktree, ResponseAttempt, Run,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MissionEvent {
    MissionCreated {
        mission_id: nagi_schema::ids::MissionId,
        title: String,
        repository_path: String,
        objective: String,
        acceptance_criteria: Vec<String>,
        at_millis: u64,
    },
    ClosureConfigured {
        declarations: Vec<Declaration>,
        declaration_set_digest: String,
        at_millis: u64,
    },
    RunStarted {
        run: Run,
        at_millis: u64,
    },
    /// A person gave the mission up: it is archived with this reason, its history kept.
    MissionAbandoned {
        reason: String,
        at_millis: u64,
    },
    /// A draft that never ran was deleted: the mission no longer exists (its events stay in
    /// the log), and its id may name a new mission.
    MissionDeleted {
        at_millis: u64,
    },
    /// The mission's worktree was made (committed with the `RunStarted` of its first run).
    WorktreeCreated {
        worktree: MissionWorktree,
        at_millis: u64,
    },
    /// The worktree's state changed: deleted under the mission, removed or kept at archive.
    WorktreeSettled {
        path: String,
        state: nagi_schema::worktree::MissionWorktreeState,
        #[serde(default)]
        reason: Option<String>,
        at_millis: u64,
    },
    RunContinued {
        source_run_id: String,
        run: Run,
        at_millis: u64,
    },
    /// The run's managed pane and the enforcement that applied are known.
    RunPaneAttached {
        run_id: String,
        pane_id: String,
        enforcement: String,
        #[serde(default)]
        workspace_digest_at_start: Option<String>,
        at_millis: u64,
    },
    ProviderSessionBound {
        run_id: String,
        provider_session_id: String,
        at_millis: u64,
    },
    StatusChanged {
        status: MissionStatus,
        #[serde(default)]
        reason: Option<String>,
        /// Set when this change ends the provider part of the current run.
        #[serde(default)]
        run_outcome: Option<String>,
        at_millis: u64,
    },
    AttentionOpened {
        attention: Attention,
        at_millis: u64,
    },
    ResponseRequested {
        attention_id: String,
        attempt: ResponseAttempt,
        at_millis: u64,
    },
    ResponseSettled {
        attention_id: String,
        attempt: u32,
        state: AttemptState,
        at_millis: u64,
    },
    AttentionClosed {
        attention_id: String,
        /// `expired` or `dismissed`.
        expired: bool,
        actor: String,
        reason: String,
        at_millis: u64,
    },
    ChecksStarted {
        run_id: String,
        purpose: String,
        check_count: u32,
        at_millis: u64,
    },
    ChecksFinished {
        run_id: String,
        /// What the checks showed, in words (why the proof is not ready, or that it is).
        #[serde(default)]
        outcome: Option<String>,
        at_millis: u64,
    },
    EvidenceRecorded {
        evidence: Evidence,
        at_millis: u64,
    },
    EvidencePackRecorded {
        run_id: String,
        pack_digest: String,
        at_millis: u64,
    },
    MissionSealed {
        receipt: ProofReceiptV1,
        at_millis: u64,
    },
    ConsentRecorded {
        consent_id: String,
        subject: String,
        decision: String,
        at_millis: u64,
    },
    /// The mission branch was rebased onto `onto` at `base_revision` (`mission.sync`); the
    /// worktree's diff is against that commit from now on.
    WorktreeSynced {
        path: String,
        onto: String,
        base_revision: String,
        at_millis: u64,
    },
    /// A landing's commits are written and its target branch moves next: what recovery
    /// finishes or rolls back if the server dies before `MissionLanded`.
    LandingPrepared {
        landing: nagi_schema::land::MissionLandingV1,
        at_millis: u64,
    },
    /// A prepared landing did not happen (refused, or rolled back after a crash): the
    /// target branch never moved.
    LandingRolledBack {
        reason: String,
        at_millis: u64,
    },
    /// The mission's change landed; committed with the archive seal, after it.
    MissionLanded {
        landing: nagi_schema::land::MissionLandingV1,
        at_millis: u64,
    },
    /// Someone steered the run: a follow-up, an interrupt or a stop (`steer.rs`).
    RunSteered {
        run_id: String,
        steer: Steer,
        actor: nagi_schema::steer::RunActorV1,
        at_millis: u64,
    },
    /// One turn of the run ended. `next_turn_starts`: a queued follow-up is sent at once.
    TurnEnded {
        run_id: String,
        /// Which turn of the run ended (1 is the first).
        turn: u32,
        outcome: String,
        next_turn_starts: bool,
        /// What the provider reported for the turn, when it did.
        #[serde(default)]
        usage: Option<nagi_schema::usage::TokenUsage>,
        at_millis: u64,
    },
}

/// What steering a run asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Steer {
    /// A follow-up turn; `Resumed` reopens the run that had ended.
    Send {
        text: String,
        delivery: nagi_schema::steer::FollowUpDelivery,
        /// A model or effort from this turn on (only when the provider starts again).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning_effort: Option<String>,
    },
    Interrupt,
    Stop,
}

impl Steer {
    pub fn action(&self) -> &'static str {
        match self {
            Steer::Send { .. } => "send",
            Steer::Interrupt => "interrupt",
            Steer::Stop => "stop",
        }
    }
}

impl MissionEvent {
    pub fn at_millis(&self) -> u64 {
        match self {
            MissionEvent::MissionCreated { at_millis, .. }
            | MissionEvent::ClosureConfigured { at_millis, .. }
            | MissionEvent::RunStarted { at_millis, .. }
            | MissionEvent::WorktreeCreated { at_millis, .. }
            | MissionEvent::MissionAbandoned { at_millis, .. }
            | MissionEvent::MissionDeleted { at_millis }
            | MissionEvent::WorktreeSettled { at_millis, .. }
            | MissionEvent::RunContinued { at_millis, .. }
            | MissionEvent::RunPaneAttached { at_millis, .. }
            | MissionEvent::ProviderSessionBound { at_millis, .. }
            | MissionEvent::StatusChanged { at_millis, .. }
            | MissionEvent::AttentionOpened { at_millis, .. }
            | MissionEvent::ResponseRequested { at_millis, .. }
            | MissionEvent::ResponseSettled { at_millis, .. }
            | MissionEvent::AttentionClosed { at_millis, .. }
            | MissionEvent::ChecksStarted { at_millis, .. }
            | MissionEvent::ChecksFinished { at_millis, .. }
            | MissionEvent::EvidenceRecorded { at_millis, .. }
            | MissionEvent::EvidencePackRecorded { at_millis, .. }
            | MissionEvent::MissionSealed { at_millis, .. }
            | MissionEvent::ConsentRecorded { at_millis, .. }
            | MissionEvent::MissionLanded { at_millis, .. }
            | MissionEvent::WorktreeSynced { at_millis, .. }
            | MissionEvent::LandingPrepared { at_millis, .. }
            | MissionEvent::LandingRolledBack { at_millis, .. }
            | MissionEvent::RunSteered { at_millis, .. }
            | MissionEvent::TurnEnded { at_millis, .. } => *at_millis,
        }
    }

    /// The `kind` column of the event log.
    pub fn kind(&self) -> &'static str {
        match self {
            MissionEvent::MissionCreated { .. } => "mission_created",
            MissionEvent::ClosureConfigured { .. } => "closure_configured",
            MissionEvent::RunStarted { .. } => "run_started",
            MissionEvent::WorktreeCreated { .. } => "worktree_created",
            MissionEvent::MissionAbandoned { .. } => "mission_abandoned",
            MissionEvent::MissionDeleted { .. } => "mission_deleted",
            MissionEvent::WorktreeSettled { .. } => "worktree_settled",
            MissionEvent::RunContinued { .. } => "run_continued",
            MissionEvent::RunPaneAttached { .. } => "run_pane_attached",
            MissionEvent::ProviderSessionBound { .. } => "provider_session_bound",
            MissionEvent::StatusChanged { .. } => "status_changed",
            MissionEvent::AttentionOpened { .. } => "attention_opened",
            MissionEvent::ResponseRequested { .. } => "response_requested",
            MissionEvent::ResponseSettled { .. } => "response_settled",
            MissionEvent::AttentionClosed { .. } => "attention_closed",
            MissionEvent::ChecksStarted { .. } => "checks_started",
            MissionEvent::ChecksFinished { .. } => "checks_finished",
            MissionEvent::EvidenceRecorded { .. } => "evidence_recorded",
            MissionEvent::EvidencePackRecorded { .. } => "evidence_pack_recorded",
            MissionEvent::MissionSealed { .. } => "mission_sealed",
            MissionEvent::ConsentRecorded { .. } => "consent_recorded",
            MissionEvent::MissionLanded { .. } => "mission_landed",
            MissionEvent::WorktreeSynced { .. } => "worktree_synced",
            MissionEvent::LandingPrepared { .. } => "landing_prepared",
            MissionEvent::LandingRolledBack { .. } => "landing_rolled_back",
            MissionEvent::RunSteered { .. } => "run_steered",
            MissionEvent::TurnEnded { .. } => "turn_ended",
        }
    }
}

/// What the log stores per event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredEvent {
    pub status_after: MissionStatus,
    pub event: MissionEvent,
}
