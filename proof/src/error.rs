//! Why the proof engine refused to do something. Each variant's doc names the wire code
//! `crate::errors` turns it into.

use std::fmt;

/// Errors of evidence recording, evaluation, sealing and receipt reading.
///
/// A proof that simply does not verify is not an error: it is
/// [`super::verify::Verdict::ReviewRequired`]. These are the cases where the caller asked for
/// something that cannot be done at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// `mission_runtime_error`: evidence and proofs belong to a run.
    #[error("mission {mission_id} has no run, so there is nothing to prove")]
    NoRun { mission_id: String },
    /// `invalid_closure`: a proof needs the frozen closure plan.
    #[error("mission {mission_id} has no closure plan")]
    NoClosurePlan { mission_id: String },
    /// `mission_runtime_error`: §5.4 step 1 requires a full commit id.
    #[error(
        "run {run_id} has base revision `{base_revision}`, which is not a full commit id (40 or 64 hex characters)"
    )]
    InvalidBaseRevision {
        run_id: String,
        base_revision: String,
    },
    /// `mission_runtime_error`: command evidence was offered for a manual check.
    #[error("check {check_id} is a manual check; it is never executed")]
    NotACommandCheck { check_id: String },
    /// `invalid_params`: manual evidence was offered for a command check.
    #[error("check {check_id} is a command check; only a manual check takes a reviewer's evidence")]
    NotAManualCheck { check_id: String },
    /// `invalid_params`: the reviewer id or the reason breaks its rule.
    #[error("{detail}")]
    InvalidManualEvidence { detail: String },
    /// `consent_forbidden`: only a reviewer the plan lists may pass a manual check.
    #[error("{reviewer} is not a reviewer of manual check {check_id} (allowed: {allowed})")]
    ReviewerNotListed {
        check_id: String,
        reviewer: String,
        allowed: String,
    },
    /// `consent_forbidden`: the plan froze `allow_override: false` for this check.
    #[error("manual check {check_id} does not allow an override")]
    OverrideNotAllowed { check_id: String },
    /// `mission_runtime_error`: the caller scanned without ignored files although a check
    /// includes them (§5.4 step 2 scans ignored files when any declaration asks).
    #[error("check {check_id} includes ignored files, but the workspace was scanned without them")]
    IgnoredFilesNotScanned { check_id: String },
    /// `proof_worker_failed`: a required artifact could not be read to hash it.
    #[error("the workspace cannot be scanned: {detail}")]
    WorkspaceUnavailable { detail: String },

    #[error("required artifact `{path}` cannot be read: {detail}")]
    ArtifactUnreadable { path: String, detail: String },
    /// `proof_worker_failed`: the check was cancelled; §5.4 aborts the whole collection.
    #[error("check {check_id} was cancelled; the evidence collection is abandoned")]
    CollectionCancelled { check_id: String },
    /// `mission_runtime_error`: only `review_required` (ready) and `ready_to_close`
    /// (archive) missions can be sealed.
    #[error(
        "mission {mission_id} is {status}; only a review_required or ready_to_close mission can be sealed"
    )]
    StatusNotSealable { mission_id: String, status: String },
    /// `mission_runtime_error`: an event was committed after the evaluation (or the lease
    /// changed); evaluate again instead of sealing.
    #[error("the proof is stale: {detail}; evaluate the proof again")]
    SealStale { detail: String },
    /// `mission_runtime_error`: the archive proof is not about what the ready receipt proved
    /// (the close worker blocks the mission instead, see `seal::close_outcome`).
    #[error("the archive proof differs from the ready receipt: {detail}")]
    ArchiveSubjectChanged { detail: String },
    /// `mission_runtime_error`: the receipt cannot seal this mission (wrong decision,
    /// identity, time or sequence).
    #[error("the proof cannot be sealed: {detail}")]
    SealRefused { detail: String },
    /// `proof_not_ready`: `mission.proof.get` on a mission without a sealed proof.
    #[error("{detail}")]
    ProofNotReady { detail: String },
    /// `proof_binding_mismatch`: the stored receipt does not re-derive from the stored
    /// evidence and plan.
    #[error("the stored proof receipt does not match the stored evidence: {detail}")]
    ProofBindingMismatch { detail: String },
}

/// Joins names for messages: `a, b, c`.
pub(crate) struct NameList<'a>(pub &'a [String]);

impl fmt::Display for NameList<'_> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return formatter.write_str("none");
        }
        formatter.write_str(&self.0.join(", "))
    }
}
