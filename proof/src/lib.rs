//! The proof engine (contract §5.4–§5.9), free of sockets and SQLite.
//!
//! The flow a caller drives:
//!
//! 1. For each command check, in plan order: scan, run it with `runner::run_command_check`,
//!    scan again, and turn the outcome into [`Evidence`](nagi_mission::model::Evidence)
//!    with [`command_evidence`] (or [`rejected_command_evidence`] when the runner refused).
//!    A reviewer's verdict on a manual check becomes evidence through [`manual_evidence`].
//! 2. After recording the evidence, observe the final workspace ([`ProofWorkspace`]) and
//!    [`verify`] the mission read at the current authority head.
//! 3. Commit the outcome in the same store job that re-reads the head:
//!    [`readiness_outcome`] (ready seal) or [`close_outcome`] (archive seal or `blocked`).
//! 4. `mission.proof.get` is [`proof_receipt`]; `pack::verify_pack` checks an exported
//!    evidence pack offline (`nagi proof verify`).
//!
//! Provider claims never count (§5.9): evidence is only ever built from a command outcome or
//! a listed reviewer, a provider-claim record assesses as `provider_claim_only`, and a
//! receipt's evidence can only come from `assess::PassedEvidence`, which nothing outside
//! `assess.rs` can construct.

pub mod assess;
pub mod binding;
pub mod error;
pub mod evidence;
pub mod pack;
pub mod receipt;
pub mod seal;
pub mod verify;
pub mod workspace;

pub mod handoff;

#[cfg(test)]
pub(crate) mod test_support;

pub use assess::{CheckAssessment, PassedEvidence, PlanAssessment, assess_check, assess_plan};
pub use binding::{AuthorityHead, WorktreeLease, current_identity, identity_digest};
pub use error::ProofError;
pub use evidence::{
    CommandEvidenceInput, command_evidence, evidence_record_digest, manual_evidence,
    rejected_command_evidence,
};
pub use receipt::proof_receipt;
pub use seal::{VERIFIER_ACTOR, close_outcome, readiness_outcome, seal_archive, seal_ready};
pub use verify::{PlanBinding, Verdict, VerificationInput, plan_binding, verify};
pub use workspace::{ProofWorkspace, artifact_content_digest, media_type_of};
