//! Handing a mission to another provider (contract §6), free of sockets and SQLite.
//!
//! `mission.handoff.preview` = `check_handoff_preconditions`, `workspace::handoff_diff` on
//! the run's worktree and base revision, then [`build_handoff_artifact`].
//! `mission.handoff.start` = the three steps documented in [`start`], then the provider is
//! started with [`handoff_prompt`] of the rebuilt artifact.

pub mod artifact;
pub mod error;
pub mod prompt;
pub mod relocation;
pub mod start;

#[cfg(test)]
mod test_support;

pub use artifact::{
    HandoffArtifactConfig, build_handoff_artifact, check_handoff_preconditions, default_warnings,
    handoff_artifact_sha256, provider_slug,
};
pub use error::HandoffError;
pub use prompt::{handoff_prompt, mission_prompt};
pub use relocation::{RelocationSource, build_relocation_artifact};
pub use start::{
    HandoffAuthority, HandoffStartPrecheck, WriteGrant, confirm_rebuilt_artifact,
    decide_run_continued, decide_run_continued_with, precheck_handoff_start,
};
