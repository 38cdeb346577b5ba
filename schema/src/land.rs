//! nagi extension: landing a mission's change (`mission.land`). Landing re-verifies the
//! proof, commits the worktree's changes on `mission/<id>`, integrates them into a target
//! branch, and archives the mission. It writes the person's branch, so it needs their
//! consent: over the public socket `mission.land` only checks the request and answers
//! `interactive_consent_required`; the landing itself is the cockpit action `land`
//! (`cockpit.preview` / `cockpit.decide`), which `nagi mission land` drives from a terminal.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{ID_PATTERN, REVISION_PATTERN};

/// How the mission's commits reach the target branch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LandStrategy {
    /// One new commit on the target with the mission's whole change (the default).
    #[default]
    Squash,
    /// A merge commit whose second parent is the mission branch.
    Merge,
    /// The mission's commits replayed onto the target, which then fast-forwards.
    Rebase,
}

impl LandStrategy {
    pub fn as_str(self) -> &'static str {
        match self {
            LandStrategy::Squash => "squash",
            LandStrategy::Merge => "merge",
            LandStrategy::Rebase => "rebase",
        }
    }
}

/// What to land and how. Shared by `mission.land` and the cockpit action `land`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionLandParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
    /// The branch to land into; default: the branch the checkout had when the mission's
    /// worktree was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub into: Option<String>,
    #[serde(default)]
    pub strategy: LandStrategy,
    /// The commit message's text; default: the mission's title, then its objective. The
    /// trailers `Nagi-Mission` and `Nagi-Proof` are always added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 8192))]
    pub message: Option<String>,
    /// Push the landed target branch to this remote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub push_remote: Option<String>,
    /// Open a pull request instead of integrating locally: push `mission/<id>` to
    /// `push_remote` and ask `gh` to open a pull request into the target branch (or give the
    /// command to run when `gh` is not installed).
    #[serde(default)]
    pub pull_request: bool,
}

/// What a landing did, in the mission's view and in its archive receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MissionLandingV1 {
    pub strategy: LandStrategy,
    /// The branch the change landed in (or a pull request was opened into).
    pub target_branch: String,
    /// The target branch's tip before the landing.
    #[schemars(regex(pattern = REVISION_PATTERN))]
    pub previous_target_revision: String,
    /// The landed commit: the target branch's new tip, or the tip of `mission/<id>` that a
    /// pull request proposes.
    #[schemars(regex(pattern = REVISION_PATTERN))]
    pub landed_revision: String,
    /// The commit of the worktree's changes on `mission/<id>` (its tip at landing).
    #[schemars(regex(pattern = REVISION_PATTERN))]
    pub mission_revision: String,
    /// The checkout whose working tree was moved with the target branch, if one had it
    /// checked out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_checkout: Option<String>,
    /// The remote the branch was pushed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed_to: Option<String>,
    /// The pull request: its address from `gh`, or the `gh` command to open it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_request: Option<String>,
    /// What went wrong after the target branch moved (a checkout that could not be
    /// updated, a push or `gh` that failed); the landing stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    pub landed_at_millis: u64,
}

/// `mission.sync` (nagi extension): rebase the mission branch onto the current tip of a
/// branch, as "rebase from main" does; the worktree's uncommitted changes are carried
/// over. Like landing, it needs a person's consent (the cockpit action `sync`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionSyncParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
    /// The branch to rebase onto; default: the branch a landing would go into.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 256))]
    pub onto: Option<String>,
}
