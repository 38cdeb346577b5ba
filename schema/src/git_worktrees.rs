//! The `worktree.*` methods (seed 001): Git checkouts of a repository as nagi workspaces.
//! `worktree.list` lists the checkouts of the repository a workspace (or a directory) is
//! in; `worktree.create` adds a linked checkout and opens a workspace in it;
//! `worktree.open` opens a workspace in an existing checkout, or returns the one already
//! open; `worktree.remove` removes a linked checkout and closes its workspace, and never
//! deletes a branch. Their lifecycle events (`worktree.created`, `worktree.opened`,
//! `worktree.removed`) are in `pane_events`; a workspace's provenance is
//! [`WorkspaceWorktreeInfo`].
//! Their method table and schema extension are in `worktree_document`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::pane::{PaneInfo, TabInfo, WorkspaceInfo};

pub use crate::pane::WorkspaceWorktreeInfo;

/// `worktree.list`: at most one of `workspace_id` and `cwd`; neither means the focused
/// workspace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeListParams {
    #[serde(default)]
    pub workspace_id: Option<String>,
    /// An absolute directory inside a checkout of the repository.
    #[serde(default)]
    pub cwd: Option<String>,
}

/// `worktree.create`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeCreateParams {
    #[serde(default)]
    pub workspace_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// The branch of the new checkout: an existing local branch is checked out; another
    /// name is created from `base`. nagi names one (`worktree/<n>`) when absent.
    #[serde(default)]
    pub branch: Option<String>,
    /// The revision a new branch starts from (`HEAD` of the source checkout when absent).
    #[serde(default)]
    pub base: Option<String>,
    /// Absolute folder of the new checkout; nagi's worktrees folder when absent.
    #[serde(default)]
    pub path: Option<String>,
    /// The new workspace's label (the branch when absent).
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub focus: bool,
}

/// `worktree.open`: exactly one of `path` and `branch`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeOpenParams {
    #[serde(default)]
    pub workspace_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub branch: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub focus: bool,
}

/// `worktree.remove`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeRemoveParams {
    /// The workspace open in the linked checkout.
    pub workspace_id: String,
    /// Remove a checkout with uncommitted or untracked files, or the worktree of a mission
    /// that is not archived. Never a checkout that a live run holds.
    #[serde(default)]
    pub force: bool,
}

/// One checkout of a repository.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeInfo {
    pub path: String,
    /// The checked-out branch (short name); `null` when detached.
    #[serde(default)]
    pub branch: Option<String>,
    pub is_bare: bool,
    pub is_detached: bool,
    /// Git's record of the checkout remains but its folder is gone.
    pub is_prunable: bool,
    /// `false` for the repository's main checkout.
    pub is_linked_worktree: bool,
    /// The branch, else the folder's name.
    pub label: String,
    /// The workspace open in this checkout, if any.
    #[serde(default)]
    pub open_workspace_id: Option<String>,
}

/// The repository a `worktree.list` was asked about, and the checkout it was asked from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeSourceInfo {
    /// `<name>-<8 hex digits>`: the same key names the repository's folder of nagi
    /// worktrees.
    pub repo_key: String,
    pub repo_name: String,
    /// The main checkout's root.
    pub repo_root: String,
    pub source_checkout_path: String,
    #[serde(default)]
    pub source_workspace_id: Option<String>,
}

/// The results of the `worktree.*` methods, tagged by `type`.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WorktreeMethodResult {
    WorktreeList {
        source: WorktreeSourceInfo,
        worktrees: Vec<WorktreeInfo>,
    },
    WorktreeCreated {
        workspace: WorkspaceInfo,
        tab: TabInfo,
        root_pane: PaneInfo,
        worktree: WorktreeInfo,
    },
    WorktreeOpened {
        workspace: WorkspaceInfo,
        tab: TabInfo,
        root_pane: PaneInfo,
        worktree: WorktreeInfo,
        already_open: bool,
    },
    WorktreeRemoved {
        workspace_id: String,
        path: String,
        forced: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_take_the_seed_examples_and_remove_needs_a_workspace() {
        let create: WorktreeCreateParams = serde_json::from_value(serde_json::json!(
            {"workspace_id": "w1", "branch": "worktree/api", "focus": false}
        ))
        .unwrap();
        assert_eq!(create.branch.as_deref(), Some("worktree/api"));
        let open: WorktreeOpenParams = serde_json::from_value(serde_json::json!(
            {"workspace_id": "w1", "branch": "worktree/api", "focus": true}
        ))
        .unwrap();
        assert!(open.focus);
        assert!(serde_json::from_value::<WorktreeRemoveParams>(serde_json::json!({})).is_err());
        let result = WorktreeMethodResult::WorktreeRemoved {
            workspace_id: "w2".into(),
            path: "/tmp/x".into(),
            forced: false,
        };
        assert_eq!(
            serde_json::to_value(result).unwrap()["type"],
            "worktree_removed"
        );
    }
}
