//! Trusted Git workspace scan (contract §5.4, §5.5, §6.2).
//!
//! A scan answers "what exactly is in this checkout right now" in a form that
//! can be compared and digested: HEAD, and for every path its disposition
//! (`ignored`/`untracked`/`unstaged`/`staged`/`tracked`) and a fingerprint.
//! It runs the real `git` binary under a cleared environment and fails closed
//! on anything it cannot vouch for (submodules, conflicts, intent-to-add,
//! skip-worktree/assume-unchanged, special files, non-UTF-8 paths, too many
//! paths or bytes). See [`snapshot`] for how fingerprints and the digest are
//! chosen, and [`scan`] for the order of work.
//!
//! Everything here is blocking; call it from `spawn_blocking`.

pub mod checkout;
mod config_programs;
mod error;
mod fingerprint;
pub mod git;
pub mod handoff;
mod index;
pub mod mission_diff;
pub mod porcelain;
pub mod repository;
pub mod scan;
pub mod snapshot;
pub mod staging;

#[cfg(test)]
mod hostile_config_fixture;
#[cfg(test)]
mod hostile_config_tests;
#[cfg(test)]
mod tests;

pub use error::WorkspaceError;
pub use git::{GitConfig, GitRunner};
pub use handoff::{HandoffDiff, handoff_diff};
pub use repository::{
    CheckoutLocation, checkout_of_same_repository, checkout_root, git_common_dir, head_commit,
    locate_checkout, verify_commit,
};
pub use scan::{ScanConfig, scan_workspace};
pub use snapshot::{
    Disposition, Fingerprint, WorkspaceEntry, WorkspaceSnapshot, relevant_files_digest,
    relevant_files_equal,
};

pub use nagi_mission::digest::PathRule;
