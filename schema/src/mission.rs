//! `mission.*` parameters and the mission projections (contract §2, §3).
//!
//! Length, pattern and count limits appear in the generated schema as documentation; the
//! decoder checks only shapes and types, and the engine enforces the limits (in UTF-8
//! bytes) with domain error codes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::ids::{ID_PATTERN, REVISION_PATTERN};
pub const SHA256_PATTERN: &str = "^[0-9a-f]{64}$";

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MissionStatus {
    Draft,
    Preparing,
    Active,
    ReviewRequired,
    ReadyToClose,
    Blocked,
    Failed,
    Archived,
}

impl MissionStatus {
    pub const ALL: [MissionStatus; 8] = [
        MissionStatus::Draft,
        MissionStatus::Preparing,
        MissionStatus::Active,
        MissionStatus::ReviewRequired,
        MissionStatus::ReadyToClose,
        MissionStatus::Blocked,
        MissionStatus::Failed,
        MissionStatus::Archived,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MissionStatus::Draft => "draft",
            MissionStatus::Preparing => "preparing",
            MissionStatus::Active => "active",
            MissionStatus::ReviewRequired => "review_required",
            MissionStatus::ReadyToClose => "ready_to_close",
            MissionStatus::Blocked => "blocked",
            MissionStatus::Failed => "failed",
            MissionStatus::Archived => "archived",
        }
    }

    pub fn from_wire(text: &str) -> Option<MissionStatus> {
        MissionStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MissionProvider {
    Codex,
    ClaudeCode,
    OpenCode,
    Acp,
}

impl MissionProvider {
    pub const ALL: [MissionProvider; 4] = [
        MissionProvider::Codex,
        MissionProvider::ClaudeCode,
        MissionProvider::OpenCode,
        MissionProvider::Acp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MissionProvider::Codex => "codex",
            MissionProvider::ClaudeCode => "claude_code",
            MissionProvider::OpenCode => "open_code",
            MissionProvider::Acp => "acp",
        }
    }

    /// The provider's name as people read it, the one spelling every human-facing text uses
    /// (consent screens, transcripts, messages).
    pub fn display_name(self) -> &'static str {
        match self {
            MissionProvider::Codex => "Codex",
            MissionProvider::ClaudeCode => "Claude Code",
            MissionProvider::OpenCode => "OpenCode",
            MissionProvider::Acp => "ACP agent",
        }
    }

    pub fn from_wire(text: &str) -> Option<MissionProvider> {
        MissionProvider::ALL
            .into_iter()
            .find(|provider| provider.as_str() == text)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MissionProviderMode {
    Managed,
    Passthrough,
}

// ---------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------

/// `mission.create`. Unknown fields are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionCreateParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
    #[schemars(length(min = 1, max = 256))]
    pub title: String,
    /// Absolute path of the checkout root.
    #[schemars(length(min = 1, max = 4096))]
    pub repository_path: String,
    #[schemars(length(min = 1, max = 8192))]
    pub objective: String,
    #[schemars(length(min = 1, max = 16))]
    pub acceptance_criteria: Vec<String>,
    /// nagi extension, fleet mode only: the host the mission is pinned to (the id rule);
    /// absent means the host that receives the request. A server not in fleet mode
    /// answers `feature_unavailable` when it is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub host: Option<String>,
}

/// `mission.get`, `mission.proof.get`, `mission.close`. Unknown fields are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionTarget {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
}

/// Parameters of methods that take none (`{}`; unknown fields are ignored).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EmptyParams {}

/// `mission.configure`. Unknown fields are ignored, also inside checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionConfigureParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
    #[schemars(length(min = 1, max = 32))]
    pub checks: Vec<MissionCheck>,
}

/// One declared check of a closure plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MissionCheck {
    Command(CommandCheck),
    Manual(ManualCheck),
}

impl MissionCheck {
    pub fn id(&self) -> &str {
        match self {
            MissionCheck::Command(check) => &check.id,
            MissionCheck::Manual(check) => &check.id,
        }
    }

    pub fn required(&self) -> bool {
        match self {
            MissionCheck::Command(check) => check.required,
            MissionCheck::Manual(check) => check.required,
        }
    }

    pub fn covers(&self) -> &[u64] {
        match self {
            MissionCheck::Command(check) => &check.covers,
            MissionCheck::Manual(check) => &check.covers,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommandCheck {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub id: String,
    /// Executable, not a shell string.
    #[schemars(length(min = 1, max = 1024))]
    pub program: String,
    pub args: Vec<String>,
    /// Workspace-relative directory; `.` is the worktree root.
    #[schemars(length(min = 1, max = 4096))]
    pub cwd: String,
    /// `[]` means every file.
    pub relevant_paths: Vec<MissionPathRule>,
    pub required_artifacts: Vec<String>,
    #[serde(default)]
    pub include_ignored: bool,
    pub required: bool,
    /// 0-based indexes into `acceptance_criteria`.
    pub covers: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ManualCheck {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub id: String,
    pub reviewers: Vec<String>,
    #[serde(default)]
    pub allow_override: bool,
    pub required: bool,
    pub covers: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MissionPathRule {
    All,
    Exact { path: String },
    Prefix { prefix: String },
}

/// `mission.start`. Unknown fields are rejected: a forged consent flag must never be
/// dropped silently.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionStartParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub run_id: String,
    pub provider: MissionProvider,
    pub mode: MissionProviderMode,
    /// A checkout root of the same repository; defaults to the mission's repository.
    #[serde(default)]
    pub worktree_path: Option<String>,
    /// Consent to run the declared command checks, with the user's OS permissions, when
    /// the provider's turn completes.
    #[serde(default)]
    pub execute_declared_checks: bool,
    /// Consent to run `.nagi/project.toml` setup and services. The public socket cannot
    /// grant it.
    #[serde(default)]
    pub execute_project_recipe: bool,
    /// nagi extension: run in the mission's own linked worktree on branch
    /// `mission/<mission_id>`, made at the mission's first start (from `base`, else the
    /// checkout's `HEAD`) and reused after. Not with `worktree_path`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub worktree: bool,
    /// nagi extension: the ref a new mission worktree is made from (only with `worktree`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// nagi extension: the model the provider uses (its own name for it: `gpt-5.4`,
    /// `claude-sonnet-4-5`, `provider/model` for OpenCode). Not for ACP agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// nagi extension: the reasoning effort, where the provider has one (`low`, `medium`,
    /// `high`, …; passed as the provider names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MissionResponseDecision {
    ApproveOnce,
    ApproveForSession,
    Deny,
    Answer,
}

/// `mission.respond`. Unknown fields are rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionRespondParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub run_id: String,
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub attention_id: String,
    pub decision: MissionResponseDecision,
    /// Question id -> chosen answer(s).
    #[serde(default)]
    pub answers: std::collections::BTreeMap<String, Vec<String>>,
}

/// `mission.handoff.preview`. Unknown fields are rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionHandoffPreviewParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
    pub to: MissionProvider,
    /// nagi extension, fleet mode only: hand the mission to this host, when the host it is
    /// pinned to is gone (its artifact comes from what that host last reported, and the
    /// new host clones the repository's remote). Absent: the mission's own host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub host: Option<String>,
}

/// `mission.handoff.start`. Unknown fields are rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionHandoffStartParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
    pub to: MissionProvider,
    /// Timestamp from the inspected preview. The server rebuilds that exact artifact before
    /// starting the continuation.
    pub generated_at_millis: u64,
    #[schemars(length(min = 64, max = 64), regex(pattern = SHA256_PATTERN))]
    pub artifact_sha256: String,
    /// nagi extension, fleet mode only: the host the preview named, when the host it is
    /// pinned to is gone (its artifact comes from what that host last reported, and the
    /// new host clones the repository's remote). Absent: the mission's own host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub host: Option<String>,
}

/// `mission.abandon` (nagi extension): give the mission up. Unknown fields are rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionAbandonParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
    /// Why, in words (1–1024 bytes); kept in the mission's view and history.
    #[schemars(length(min = 1, max = 1024))]
    pub reason: String,
}

/// `mission.verify` (nagi extension): run the declared command checks now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionVerifyParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
    /// Consent to run the declared command checks with the user's OS permissions.
    #[serde(default)]
    pub execute_declared_checks: bool,
}

/// `attention.list`. Unknown fields are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AttentionListParams {
    #[serde(default)]
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: Option<String>,
    #[serde(default)]
    pub include_closed: bool,
}

/// `attention.get`. Unknown fields are ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AttentionTarget {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub attention_id: String,
    /// The item's mission (nagi, optional). Attention ids are facts of the host that raised
    /// the item; with the mission named, a fleet asks the mission's host, and an item of
    /// another mission is `attention_not_found`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: Option<String>,
}

// ---------------------------------------------------------------------------------------
// Projections
// ---------------------------------------------------------------------------------------

/// Complete first-generation mission projection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionViewV1 {
    pub schema_version: u32,
    pub mission_id: String,
    pub title: String,
    pub repository_path: String,
    pub objective: String,
    pub criteria: Vec<MissionCriterionSummaryV1>,
    pub closure_configured: bool,
    pub declared_check_count: u32,
    pub checks: Vec<MissionCheckSummaryV1>,
    pub evidence: Vec<MissionEvidenceSummaryV1>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_pack_digest: Option<String>,
    pub details_available: bool,
    pub status: MissionStatus,
    /// nagi extension: why the mission is `blocked` or `failed` (or what it waits for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<MissionRunViewV1>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_history: Vec<MissionRunViewV1>,
    /// nagi extension: the declared checks are running now (after a turn, for
    /// `mission.verify`, or for `mission.close`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks_running: Option<ChecksRunningV1>,
    /// nagi extension: why a person abandoned the mission (`mission.abandon`); it is then
    /// archived without a proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandoned_reason: Option<String>,
    /// nagi extension: the mission's own worktree, once its first start made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<crate::worktree::MissionWorktreeViewV1>,
    /// nagi extension: what the landing that archived the mission did (`mission.land`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landing: Option<Box<crate::land::MissionLandingV1>>,
    /// nagi extension: what the providers reported over all of the mission's runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::usage::UsageV1>,
    pub unresolved_attention_count: u32,
    pub updated_at_millis: u64,
    /// nagi extension, fleet mode only: the host the mission is pinned to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// A check run in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChecksRunningV1 {
    pub run_id: String,
    /// `turn_completed`, `verify` or `close`.
    pub purpose: String,
    pub started_at_millis: u64,
}

/// One entry of `mission.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionSummary {
    pub mission_id: String,
    pub title: String,
    pub repository_path: String,
    pub status: MissionStatus,
    pub unresolved_attention_count: u64,
    pub updated_at_millis: u64,
    /// nagi extension, fleet mode only: the host the mission is pinned to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionRunViewV1 {
    pub run_id: String,
    pub provider: MissionProvider,
    pub mode: MissionProviderMode,
    pub worktree_path: String,
    pub base_revision: String,
    pub execute_declared_checks: bool,
    #[serde(default)]
    pub execute_project_recipe: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff_from_run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff_artifact_sha256: Option<String>,
    /// nagi extension: the managed pane that shows this run's transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane_id: Option<String>,
    /// nagi extension: which read-only enforcement applied to this run
    /// (`provider_sandbox`, `provider_sandbox+landlock`, or `workspace_write`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforcement: Option<String>,
    /// nagi extension: whether the server holds a live provider process for this run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<bool>,
    /// nagi extension: how many turns the provider was given (the first, follow-ups, and a
    /// continuation after a restart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    /// nagi extension: how the last turn that ended ended (`completed`, `interrupted`,
    /// `failed: …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_turn_outcome: Option<String>,
    /// nagi extension: follow-ups waiting for the running turn to complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_follow_ups: Option<u32>,
    /// nagi extension: what the provider reported for this run's turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::usage::UsageV1>,
    /// nagi extension: the model and reasoning effort asked for (absent: the provider's
    /// default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MissionCriterionCoverageV1 {
    Unknown,
    Uncovered,
    Covered,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionCriterionSummaryV1 {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criterion_id: Option<String>,
    pub description: String,
    pub coverage: MissionCriterionCoverageV1,
    pub required_check_ids: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MissionCheckKindV1 {
    Command,
    Manual,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MissionCheckStatusV1 {
    Passed,
    Failed,
    Stale,
    Missing,
    ManualMissing,
    ProviderClaimOnly,
    DeclarationMismatch,
    IdentityMismatch,
    ArtifactMissingOrChanged,
    ManualNotAuthorized,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionCheckSummaryV1 {
    pub check_id: String,
    pub kind: MissionCheckKindV1,
    pub required: bool,
    pub covered_criterion_ids: Vec<String>,
    pub status: MissionCheckStatusV1,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MissionEvidenceKindV1 {
    Command,
    Manual,
    ProviderClaim,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MissionEvidenceAssessmentV1 {
    Passed,
    Failed,
    Stale,
    ProviderClaimOnly,
    DeclarationMismatch,
    IdentityMismatch,
    ArtifactMissingOrChanged,
    ManualNotAuthorized,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionEvidenceSummaryV1 {
    pub check_id: String,
    pub kind: MissionEvidenceKindV1,
    pub assessment: MissionEvidenceAssessmentV1,
    pub workspace_digest: String,
    pub recorded_at_millis: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_millis: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub artifact_count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manual_override: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// nagi extension: why the check failed (exit code, timeout, missing artifact…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// nagi extension: the last lines of the check's output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
}
