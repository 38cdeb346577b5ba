//! Why a handoff preview or start was refused. Each variant's doc names the wire code
//! `crate::errors` turns it into.

/// Errors of `mission.handoff.preview` and `mission.handoff.start` (contract §2.8, §2.9).
/// A Git snapshot failure (`handoff_snapshot_failed`) is the caller's: it computes the diff.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandoffError {
    /// `invalid_handoff_state`
    #[error(
        "mission {mission_id} is {status}; a handoff starts only from blocked, failed, review_required or ready_to_close"
    )]
    InvalidState { mission_id: String, status: String },
    /// `invalid_handoff_state`
    #[error("mission {mission_id} has no run to hand off")]
    NoRun { mission_id: String },
    /// `invalid_handoff_provider`
    #[error("the current run already uses {provider}; hand off to another provider")]
    SameProvider { provider: String },
    /// `interactive_consent_required`
    #[error("{detail}")]
    ConsentRequired { detail: String },
    /// `handoff_artifact_changed`
    #[error(
        "the handoff artifact changed since it was previewed ({detail}); request a fresh preview"
    )]
    ArtifactChanged { detail: String },
    /// `handoff_attention_unresolved`
    #[error("the mission has {count} unresolved attention item(s); settle them before handing off")]
    AttentionUnresolved { count: u32 },
    /// `run_mismatch`
    #[error(
        "the artifact continues run {artifact_run_id}, but the mission's current run is {current_run_id}"
    )]
    RunMismatch {
        artifact_run_id: String,
        current_run_id: String,
    },
    /// `run_conflict`
    #[error("run id {run_id} was already used by this mission")]
    RunConflict { run_id: String },
    /// `invalid_run`
    #[error(
        "run id {run_id:?} is blank, longer than 128 bytes or has characters outside the ID rule"
    )]
    InvalidRun { run_id: String },
    /// `mission_runtime_error`: the artifact could not be serialised for its digest.
    #[error("the handoff artifact cannot be serialised: {detail}")]
    Serialization { detail: String },
}
