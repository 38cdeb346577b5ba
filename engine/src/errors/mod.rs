//! The one place where internal errors become wire codes.

mod checkouts;
mod recipe_exec;

use nagi_schema::codes::ErrorCode;
use nagi_store::{StoreError, StoreErrorKind};

pub use checkouts::WorktreeError;
use nagi_mission::MissionError;
use nagi_pane::PaneError;
use nagi_proof::ProofError;
use nagi_proof::handoff::HandoffError;
pub use recipe_exec::RecipeExecError;

#[derive(Debug, Clone, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Mission(#[from] MissionError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Proof(#[from] ProofError),
    #[error(transparent)]
    Handoff(#[from] HandoffError),
    /// A workspace, tab, pane or session operation failed.
    #[error(transparent)]
    Pane(#[from] PaneError),
    /// Executing the project recipe failed.
    #[error(transparent)]
    Recipe(#[from] RecipeExecError),
    /// A `worktree.*` method failed.
    #[error(transparent)]
    Worktree(#[from] WorktreeError),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    #[error("request line exceeds {0} bytes; the connection will be closed")]
    RequestTooLarge(usize),
    #[error("invalid params: {0}")]
    InvalidParams(String),
    #[error("{0}")]
    FeatureUnavailable(String),
    #[error("{0}")]
    ServerUnavailable(String),
    #[error("{0}")]
    PermissionDenied(String),
    #[error("{0}")]
    Timeout(String),
    /// Fleet mode: what another host's engine answered, with that host's stable code.
    #[error("{message}")]
    Fleet { code: ErrorCode, message: String },
}

/// The stable code and message a client sees for an error.
pub fn wire_error(error: &EngineError) -> (ErrorCode, String) {
    let code = match error {
        EngineError::Mission(mission) => mission_code(mission),
        EngineError::Store(store) => store_code(store),
        EngineError::Proof(proof) => proof_code(proof),
        EngineError::Handoff(handoff) => handoff_code(handoff),
        EngineError::Pane(pane) => pane.code(),
        EngineError::Recipe(recipe) => recipe_code(recipe),
        EngineError::Worktree(worktree) => worktree_code(worktree),
        EngineError::InvalidRequest(_) => ErrorCode::InvalidRequest,
        EngineError::RequestTooLarge(_) => ErrorCode::RequestTooLarge,
        EngineError::InvalidParams(_) => ErrorCode::InvalidParams,
        EngineError::FeatureUnavailable(_) => ErrorCode::FeatureUnavailable,
        EngineError::ServerUnavailable(_) => ErrorCode::ServerUnavailable,
        EngineError::PermissionDenied(_) => ErrorCode::PermissionDenied,
        EngineError::Timeout(_) => ErrorCode::Timeout,
        EngineError::Fleet { code, .. } => *code,
    };
    (code, error.to_string())
}

fn recipe_code(error: &RecipeExecError) -> ErrorCode {
    match error {
        RecipeExecError::CopyRefused { .. }
        | RecipeExecError::SetupFailed { .. }
        | RecipeExecError::ServiceFailed { .. }
        | RecipeExecError::PortsExhausted { .. }
        | RecipeExecError::StopFailed { .. }
        | RecipeExecError::Io { .. } => ErrorCode::ProjectRecipeFailed,
        RecipeExecError::WorktreeFailed { .. } => ErrorCode::MissionRuntimeError,
        RecipeExecError::Store(store) => store_code(store),
    }
}

fn worktree_code(error: &WorktreeError) -> ErrorCode {
    match error {
        WorktreeError::InvalidParams(_) => ErrorCode::InvalidParams,
        WorktreeError::NotACheckout(_) => ErrorCode::InvalidRepository,
        WorktreeError::NotFound(_) => ErrorCode::WorktreeNotFound,
        WorktreeError::Failed(_) => ErrorCode::WorktreeFailed,
        WorktreeError::Dirty(_) => ErrorCode::CheckoutDirty,
        WorktreeError::Claimed(_) => ErrorCode::CheckoutClaimed,
    }
}

fn store_code(error: &StoreError) -> ErrorCode {
    match error.kind {
        StoreErrorKind::Full => ErrorCode::StorageFull,
        StoreErrorKind::Closed => ErrorCode::ServerUnavailable,
        StoreErrorKind::ReadOnly
        | StoreErrorKind::Io
        | StoreErrorKind::Corrupt
        | StoreErrorKind::NewerSchema
        | StoreErrorKind::Other => ErrorCode::StorageFailed,
    }
}

fn proof_code(error: &ProofError) -> ErrorCode {
    match error {
        ProofError::NoClosurePlan { .. } => ErrorCode::InvalidClosure,
        ProofError::NotAManualCheck { .. } | ProofError::InvalidManualEvidence { .. } => {
            ErrorCode::InvalidParams
        }
        ProofError::ReviewerNotListed { .. } | ProofError::OverrideNotAllowed { .. } => {
            ErrorCode::ConsentForbidden
        }
        ProofError::ArtifactUnreadable { .. }
        | ProofError::CollectionCancelled { .. }
        | ProofError::WorkspaceUnavailable { .. } => ErrorCode::ProofWorkerFailed,
        ProofError::ProofNotReady { .. } => ErrorCode::ProofNotReady,
        ProofError::ProofBindingMismatch { .. } => ErrorCode::ProofBindingMismatch,
        ProofError::NoRun { .. }
        | ProofError::InvalidBaseRevision { .. }
        | ProofError::NotACommandCheck { .. }
        | ProofError::IgnoredFilesNotScanned { .. }
        | ProofError::StatusNotSealable { .. }
        | ProofError::SealStale { .. }
        | ProofError::ArchiveSubjectChanged { .. }
        | ProofError::SealRefused { .. } => ErrorCode::MissionRuntimeError,
    }
}

fn handoff_code(error: &HandoffError) -> ErrorCode {
    match error {
        HandoffError::InvalidState { .. } | HandoffError::NoRun { .. } => {
            ErrorCode::InvalidHandoffState
        }
        HandoffError::SameProvider { .. } => ErrorCode::InvalidHandoffProvider,
        HandoffError::ConsentRequired { .. } => ErrorCode::InteractiveConsentRequired,
        HandoffError::ArtifactChanged { .. } => ErrorCode::HandoffArtifactChanged,
        HandoffError::AttentionUnresolved { .. } => ErrorCode::HandoffAttentionUnresolved,
        HandoffError::RunMismatch { .. } => ErrorCode::RunMismatch,
        HandoffError::RunConflict { .. } => ErrorCode::RunConflict,
        HandoffError::InvalidRun { .. } => ErrorCode::InvalidRun,
        HandoffError::Serialization { .. } => ErrorCode::MissionRuntimeError,
    }
}

fn mission_code(error: &MissionError) -> ErrorCode {
    match error {
        MissionError::NotFound(_) => ErrorCode::MissionNotFound,
        MissionError::InvalidMission(_) => ErrorCode::InvalidMission,
        MissionError::InvalidRepository(_) => ErrorCode::InvalidRepository,
        MissionError::Conflict(_) => ErrorCode::MissionConflict,
        MissionError::InvalidClosure(_) => ErrorCode::InvalidClosure,
        MissionError::InvalidRun(_) => ErrorCode::InvalidRun,
        MissionError::RunConflict(_) => ErrorCode::RunConflict,
        MissionError::CheckoutClaimed(_) => ErrorCode::CheckoutClaimed,
        MissionError::ProviderModeUnavailable(_) => ErrorCode::ProviderModeUnavailable,
        MissionError::ProviderUnavailable(_) => ErrorCode::ProviderUnavailable,
        MissionError::ProviderStartFailed(_) => ErrorCode::ProviderStartFailed,
        MissionError::ConsentRequired(_) => ErrorCode::InteractiveConsentRequired,
        MissionError::ConsentStale(_) => ErrorCode::ConsentStale,
        MissionError::ConsentForbidden(_) => ErrorCode::ConsentForbidden,
        MissionError::NotReady(_) => ErrorCode::MissionNotReady,
        MissionError::CheckoutDirty(_) => ErrorCode::CheckoutDirty,
        MissionError::LandConflict(_) => ErrorCode::LandConflict,
        MissionError::LandFailed(_) => ErrorCode::LandFailed,
        MissionError::Busy(_) => ErrorCode::MissionBusy,
        MissionError::ProofNotReady(_) => ErrorCode::ProofNotReady,
        MissionError::ProofBindingMismatch(_) => ErrorCode::ProofBindingMismatch,
        MissionError::ProofWorkerFailed(_) => ErrorCode::ProofWorkerFailed,
        MissionError::InvalidHandoffState(_) => ErrorCode::InvalidHandoffState,
        MissionError::InvalidHandoffProvider(_) => ErrorCode::InvalidHandoffProvider,
        MissionError::HandoffArtifactChanged(_) => ErrorCode::HandoffArtifactChanged,
        MissionError::HandoffAttentionUnresolved(_) => ErrorCode::HandoffAttentionUnresolved,
        MissionError::HandoffArtifactNotFound(_) => ErrorCode::HandoffArtifactNotFound,
        MissionError::NotDraft(_) => ErrorCode::MissionNotDraft,
        MissionError::HandoffSnapshotFailed(_) => ErrorCode::HandoffSnapshotFailed,
        MissionError::RunMismatch(_) => ErrorCode::RunMismatch,
        MissionError::ProjectRecipeFailed(_) => ErrorCode::ProjectRecipeFailed,
        MissionError::WorktreeFailed(_) => ErrorCode::WorktreeFailed,
        MissionError::WorktreeMissing(_) => ErrorCode::WorktreeMissing,
        MissionError::AttentionNotFound(_) => ErrorCode::AttentionNotFound,
        MissionError::RunNotActive(_) => ErrorCode::RunNotActive,
        MissionError::AttentionNotRespondable(_) => ErrorCode::AttentionNotRespondable,
        MissionError::InvalidResponse(_) => ErrorCode::InvalidResponse,
        MissionError::ResponseStateUncertain(_) => ErrorCode::ResponseStateUncertain,
        MissionError::Runtime(_) => ErrorCode::MissionRuntimeError,
    }
}
