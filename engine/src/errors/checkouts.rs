//! What can go wrong in a `worktree.*` method, and which wire code each becomes
//! (`errors::wire_error` holds the mapping; each variant's doc names its code). Nothing was
//! changed when one is returned.

#[derive(Debug, Clone, thiserror::Error)]
pub enum WorktreeError {
    /// `invalid_params`: both `workspace_id` and `cwd`, a relative path, a bad branch name.
    #[error("{0}")]
    InvalidParams(String),
    /// `invalid_repository`: the directory is not inside a Git checkout.
    #[error("{0}")]
    NotACheckout(String),
    /// `worktree_not_found`: no checkout of the repository has that branch or path.
    #[error("{0}")]
    NotFound(String),
    /// `worktree_failed`: git refused, or the checkout may not be removed (the main
    /// checkout, a mission's worktree, a locked one).
    #[error("{0}")]
    Failed(String),
    /// `checkout_dirty`: removing it would delete uncommitted or untracked files.
    #[error("{0}")]
    Dirty(String),
    /// `checkout_claimed`: a live run holds the checkout.
    #[error("{0}")]
    Claimed(String),
}
