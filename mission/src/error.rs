//! Domain errors of the mission state machine. Each variant corresponds to one stable
//! wire code; the mapping lives in the engine's `errors` module.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MissionError {
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    InvalidMission(String),
    #[error("{0}")]
    InvalidRepository(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    InvalidClosure(String),
    #[error("{0}")]
    InvalidRun(String),
    #[error("{0}")]
    RunConflict(String),
    #[error("{0}")]
    CheckoutClaimed(String),
    #[error("{0}")]
    ProviderModeUnavailable(String),
    #[error("{0}")]
    ProviderUnavailable(String),
    #[error("{0}")]
    ProviderStartFailed(String),
    #[error("{0}")]
    ConsentRequired(String),
    #[error("{0}")]
    ConsentStale(String),
    #[error("{0}")]
    ConsentForbidden(String),
    #[error("{0}")]
    NotReady(String),
    #[error("{0}")]
    Busy(String),
    #[error("{0}")]
    ProofNotReady(String),
    #[error("{0}")]
    ProofBindingMismatch(String),
    #[error("{0}")]
    ProofWorkerFailed(String),
    #[error("{0}")]
    InvalidHandoffState(String),
    #[error("{0}")]
    InvalidHandoffProvider(String),
    #[error("{0}")]
    HandoffArtifactChanged(String),
    #[error("{0}")]
    HandoffAttentionUnresolved(String),
    /// Only a draft that never ran can be deleted.
    #[error("{0}")]
    NotDraft(String),
    /// No kept handoff artifact has the digest asked for.
    #[error("{0}")]
    HandoffArtifactNotFound(String),
    #[error("{0}")]
    HandoffSnapshotFailed(String),
    #[error("{0}")]
    RunMismatch(String),
    #[error("{0}")]
    ProjectRecipeFailed(String),
    #[error("{0}")]
    WorktreeFailed(String),
    #[error("{0}")]
    WorktreeMissing(String),
    #[error("{0}")]
    CheckoutDirty(String),
    #[error("{0}")]
    LandConflict(String),
    #[error("{0}")]
    LandFailed(String),
    #[error("{0}")]
    AttentionNotFound(String),
    #[error("{0}")]
    RunNotActive(String),
    #[error("{0}")]
    AttentionNotRespondable(String),
    #[error("{0}")]
    InvalidResponse(String),
    #[error("{0}")]
    ResponseStateUncertain(String),
    /// An illegal transition or an internal inconsistency: `mission_runtime_error`.
    #[error("{0}")]
    Runtime(String),
}

impl MissionError {
    /// `mission_not_found` for `mission_id`, worded the same wherever a mission is missing.
    pub fn no_mission(mission_id: &str) -> MissionError {
        MissionError::NotFound(format!("no mission {mission_id:?}"))
    }
}
