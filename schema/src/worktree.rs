//! nagi extensions for a mission's own worktree: its view in `mission.get`, and
//! `mission.diff`, the mission's change against the commit its worktree was made from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{ID_PATTERN, REVISION_PATTERN};

/// Where a mission's worktree stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MissionWorktreeState {
    /// The worktree is on disk and its runs work in it.
    Present,
    /// The worktree was deleted under the mission; the mission is `blocked`.
    Missing,
    /// The mission was archived and its worktree removed; the branch is kept.
    Removed,
    /// The mission was archived but its worktree holds changes that were not landed, so it
    /// was kept (see `kept_reason`).
    Kept,
}

/// The mission's own linked worktree, on branch `mission/<id>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionWorktreeViewV1 {
    /// Canonical root of the linked worktree.
    pub path: String,
    /// `mission/<mission_id>`.
    pub branch: String,
    /// The commit the worktree was made from (its diff is against it).
    #[schemars(regex(pattern = REVISION_PATTERN))]
    pub base_revision: String,
    /// The ref the base was given as (`HEAD` when none was).
    pub base_ref: String,
    pub created_at_millis: u64,
    pub state: MissionWorktreeState,
    /// Why an archived mission's worktree was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_reason: Option<String>,
    /// The branch the checkout had when the worktree was made: where `mission.land` goes
    /// by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_branch: Option<String>,
}

/// `mission.diff` (nagi extension). Unknown fields are rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionDiffParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
    /// Only the file list with line counts, no hunks.
    #[serde(default)]
    pub stat_only: bool,
    /// The most bytes of unified hunks to return (default 1 MiB, at most 16 MiB); the rest
    /// is left out and `omitted_patch_bytes` says how much.
    #[serde(default)]
    pub max_patch_bytes: Option<u64>,
}

/// How a file differs from the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DiffFileStatus {
    Added,
    Modified,
    Deleted,
    /// A file became a symlink or the other way round.
    TypeChanged,
}

/// One file of a mission's change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionDiffFileV1 {
    pub path: String,
    pub status: DiffFileStatus,
    /// Lines added and removed; `None` for a binary file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additions: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deletions: Option<u64>,
    pub binary: bool,
    /// The file was not in git before this change (untracked in the worktree).
    pub untracked: bool,
}

/// The mission's change: each file with its status and line counts, then unified hunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionDiffV1 {
    pub mission_id: String,
    pub worktree_path: String,
    pub branch: String,
    pub base_revision: String,
    pub files: Vec<MissionDiffFileV1>,
    pub additions: u64,
    pub deletions: u64,
    /// Unified hunks of every text file (binary files are named, not dumped); empty with
    /// `stat_only`.
    pub patch: String,
    /// Bytes of hunks left out past `max_patch_bytes` (0 when nothing was).
    pub omitted_patch_bytes: u64,
}
