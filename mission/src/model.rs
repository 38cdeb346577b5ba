//! The mission aggregate: everything the store keeps about one mission, as the engine's
//! own (non-wire) types. It is a pure fold of the mission's events (`apply.rs`); the store
//! keeps it as a JSON document next to the event log.

use std::collections::BTreeMap;

use nagi_schema::attention::{
    AttentionDecisionV1, AttentionFailureCodeV1, AttentionKindV1, AttentionQuestionV1,
    AttentionRiskV1, AttentionSourceV1,
};
use nagi_schema::mission::{
    MissionEvidenceAssessmentV1, MissionEvidenceKindV1, MissionPathRule, MissionProvider,
    MissionProviderMode, MissionStatus,
};
use nagi_schema::proof::ProofReceiptV1;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mission {
    pub mission_id: nagi_schema::ids::MissionId,
    pub title: String,
    pub repository_path: String,
    pub objective: String,
    pub criteria: Vec<Criterion>,
    #[serde(default)]
    pub plan: Option<ClosurePlan>,
    pub status: MissionStatus,
    /// Why the mission is blocked or failed, or what it is waiting for.
    #[serde(default)]
    pub status_reason: Option<String>,
    #[serde(default)]
    pub run: Option<Run>,
    #[serde(default)]
    pub run_history: Vec<Run>,
    /// Keyed by attention id.
    #[serde(default)]
    pub attention: BTreeMap<String, Attention>,
    /// Keyed by check id.
    #[serde(default)]
    pub evidence: BTreeMap<String, Evidence>,
    #[serde(default)]
    pub evidence_pack_digest: Option<String>,
    #[serde(default)]
    pub ready_receipt: Option<ProofReceiptV1>,
    #[serde(default)]
    pub archive_receipt: Option<ProofReceiptV1>,
    /// A check run (after a turn, `mission.verify` or `mission.close`) that has started and
    /// not finished. Recovery re-runs or marks it.
    #[serde(default)]
    pub checks_in_flight: Option<ChecksInFlight>,
    /// The mission's own linked worktree, made at its first start when asked for.
    #[serde(default)]
    pub worktree: Option<MissionWorktree>,
    /// Why a person abandoned the mission (it is then archived without a proof).
    #[serde(default)]
    pub abandoned_reason: Option<String>,
    /// What the landing that archived the mission did.
    #[serde(default)]
    pub landing: Option<nagi_schema::land::MissionLandingV1>,
    /// A landing whose commits are written and whose target branch is about to move (or
    /// moved, if a crash came between): recovery finishes it or rolls it back.
    #[serde(default)]
    pub landing_pending: Option<nagi_schema::land::MissionLandingV1>,
    pub created_at_millis: u64,
    /// Logical time: never moves backwards.
    pub updated_at_millis: u64,
    /// Number of events applied; the next event's id is derived from it.
    pub revision: u64,
}

/// A mission's own linked worktree on branch `mission/<id>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissionWorktree {
    pub path: String,
    pub branch: String,
    pub base_revision: String,
    pub base_ref: String,
    pub created_at_millis: u64,
    pub state: nagi_schema::worktree::MissionWorktreeState,
    #[serde(default)]
    pub kept_reason: Option<String>,
    /// The branch the checkout had when the worktree was made: where a landing goes by
    /// default. `None` when the checkout's HEAD was detached.
    #[serde(default)]
    pub target_branch: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Criterion {
    pub criterion_id: String,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClosurePlan {
    /// In the order first configured.
    pub declarations: Vec<Declaration>,
    /// Digest of the sorted declaration digests (configure idempotency).
    pub declaration_set_digest: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Declaration {
    pub check_id: String,
    pub kind: DeclarationKind,
    pub required: bool,
    /// Sorted and deduplicated.
    pub covered_criterion_ids: Vec<String>,
    pub digest: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DeclarationKind {
    Command {
        program: String,
        args: Vec<String>,
        cwd: String,
        relevant_paths: Vec<MissionPathRule>,
        required_artifacts: Vec<String>,
        include_ignored: bool,
    },
    Manual {
        reviewers: Vec<String>,
        allow_override: bool,
    },
}

impl Declaration {
    pub fn is_command(&self) -> bool {
        matches!(self.kind, DeclarationKind::Command { .. })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxGrant {
    ReadOnly,
    WorkspaceWrite,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub run_id: nagi_schema::ids::RunId,
    pub provider: MissionProvider,
    pub mode: MissionProviderMode,
    pub worktree_path: String,
    pub base_revision: String,
    pub execute_declared_checks: bool,
    pub execute_project_recipe: bool,
    #[serde(default)]
    pub handoff_from_run_id: Option<String>,
    #[serde(default)]
    pub handoff_artifact_sha256: Option<String>,
    /// Stored durably, never exposed on the wire.
    #[serde(default)]
    pub provider_session_id: Option<String>,
    pub sandbox: SandboxGrant,
    /// The cockpit consent that granted this run's authority, if any.
    #[serde(default)]
    pub consent_id: Option<String>,
    #[serde(default)]
    pub pane_id: Option<String>,
    /// Which read-only enforcement applied.
    #[serde(default)]
    pub enforcement: Option<String>,
    /// Workspace digest when the provider started (read-only guard).
    #[serde(default)]
    pub workspace_digest_at_start: Option<String>,
    pub started_at_millis: u64,
    #[serde(default)]
    pub ended_at_millis: Option<u64>,
    /// How the provider part of the run ended, in words.
    #[serde(default)]
    pub outcome: Option<String>,
    /// Turns the provider was given: the first, follow-ups, a continuation after a restart.
    #[serde(default)]
    pub turns: u32,
    /// How the last turn that ended ended, in words.
    #[serde(default)]
    pub last_turn_outcome: Option<String>,
    /// Follow-ups queued behind the running turn.
    #[serde(default)]
    pub queued_follow_ups: u32,
    /// What the provider reported for the run's turns, summed.
    #[serde(default)]
    pub usage: Option<nagi_schema::usage::TokenUsage>,
    /// The model and reasoning effort asked for (`None`: the provider's default).
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub reasoning_effort: Option<String>,
}

/// One attempt at delivering a decision to the provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseAttempt {
    pub attempt: u32,
    pub decision: AttentionDecisionV1,
    pub actor: String,
    pub state: AttemptState,
    pub requested_at_millis: u64,
    pub updated_at_millis: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AttemptState {
    Requested,
    Acknowledged,
    DefinitelyNotApplied { code: AttentionFailureCodeV1 },
    DeliveryUnknown { code: AttentionFailureCodeV1 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestClass {
    CommandApproval,
    FileChangeApproval,
    PermissionApproval,
    UserInput,
    /// Not a provider request: a warning or notice for a person (security warning,
    /// manual verification due).
    Notice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttentionLifecycle {
    Open,
    /// Waiting for the provider to acknowledge the latest attempt.
    PendingResponse,
    Resolved,
    ReconciliationRequired,
    Dismissed,
    Expired,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attention {
    pub attention_id: String,
    pub run_id: String,
    pub kind: AttentionKindV1,
    pub risk: AttentionRiskV1,
    pub requested_action: String,
    pub scope: String,
    #[serde(default)]
    pub questions: Vec<AttentionQuestionV1>,
    pub request_class: RequestClass,
    #[serde(default)]
    pub session_approval_available: bool,
    /// The provider's audit id of the request (`number:41`), when it came from one.
    #[serde(default)]
    pub provider_request_key: Option<String>,
    pub source: AttentionSourceV1,
    pub lifecycle: AttentionLifecycle,
    #[serde(default)]
    pub attempts: Vec<ResponseAttempt>,
    /// Why it was dismissed or expired.
    #[serde(default)]
    pub closed_reason: Option<String>,
    #[serde(default)]
    pub closed_by: Option<String>,
    pub created_at_millis: u64,
    pub updated_at_millis: u64,
}

impl Attention {
    pub fn is_unresolved(&self) -> bool {
        matches!(
            self.lifecycle,
            AttentionLifecycle::Open
                | AttentionLifecycle::PendingResponse
                | AttentionLifecycle::ReconciliationRequired
        )
    }
}

/// How a piece of evidence was produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EvidenceSource {
    Command {
        program: String,
        args: Vec<String>,
        cwd: String,
        exit_code: i32,
        started_at_millis: u64,
        finished_at_millis: u64,
    },
    Manual {
        reviewer: String,
        reason: String,
        is_override: bool,
        recorded_at_millis: u64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceArtifact {
    pub path: String,
    pub content_digest: String,
    pub media_type: String,
}

/// The latest evidence for one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub check_id: String,
    pub kind: MissionEvidenceKindV1,
    pub assessment: MissionEvidenceAssessmentV1,
    /// Snapshot digest of the whole workspace when recorded.
    pub workspace_digest: String,
    /// Digest of the check's relevant files when recorded (command checks), for §5.5
    /// freshness.
    #[serde(default)]
    pub relevant_digest: Option<String>,
    pub declaration_digest: String,
    /// The run the evidence belongs to.
    pub run_id: String,
    /// Proof-identity digest (mission, run, repository, worktree, base revision) the
    /// evidence was recorded under; the proof evaluator compares it with the current
    /// identity (§5.6 `identity_mismatch`). Absent on evidence no evaluator can trust.
    #[serde(default)]
    pub identity_digest: Option<String>,
    /// Digest of the command's stdout and stderr (their SHA-256 and sizes), when it ran.
    #[serde(default)]
    pub output_digest: Option<String>,
    pub recorded_at_millis: u64,
    #[serde(default)]
    pub duration_millis: Option<u64>,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub source: Option<EvidenceSource>,
    #[serde(default)]
    pub artifacts: Vec<EvidenceArtifact>,
    /// Digest of the evidence record (source, artifacts, digests), when one exists.
    #[serde(default)]
    pub record_digest: Option<String>,
    #[serde(default)]
    pub detail: Option<String>,
    #[serde(default)]
    pub output_tail: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChecksInFlight {
    pub run_id: String,
    /// `turn_completed`, `verify` or `close`.
    pub purpose: String,
    pub started_at_millis: u64,
}

impl Mission {
    pub fn unresolved_attention_count(&self) -> u32 {
        self.attention
            .values()
            .filter(|item| item.is_unresolved())
            .count() as u32
    }

    /// The run the server must reconcile at start.
    pub fn has_live_run(&self) -> bool {
        matches!(
            self.status,
            MissionStatus::Preparing | MissionStatus::Active
        ) || self.checks_in_flight.is_some()
    }

    pub fn declaration(&self, check_id: &str) -> Option<&Declaration> {
        self.plan
            .as_ref()?
            .declarations
            .iter()
            .find(|declaration| declaration.check_id == check_id)
    }
}

impl Attention {
    /// Who asks, as the consent preview names it.
    pub fn kind_label(&self) -> &'static str {
        use RequestClass as R;
        match self.request_class {
            R::CommandApproval => "the provider (command)",
            R::FileChangeApproval => "the provider (file change)",
            R::PermissionApproval => "the provider (permission)",
            R::UserInput => "the provider (question)",
            R::Notice => "nagi (notice)",
        }
    }
}

impl Mission {
    /// Reads a mission's stored projection document (the store keeps it as opaque JSON).
    pub fn from_document(document: &str) -> Result<Mission, crate::error::MissionError> {
        serde_json::from_str(document).map_err(|error| {
            crate::error::MissionError::Runtime(format!("a stored mission cannot be read: {error}"))
        })
    }
}
