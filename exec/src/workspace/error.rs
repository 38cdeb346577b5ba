//! Why a trusted workspace scan refused to produce a snapshot.

use std::path::PathBuf;
use std::time::Duration;

/// Every fail-closed condition of the scan is its own variant, so callers can
/// show the person exactly what to fix.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error(
        "no git executable found (looked in /usr/bin, /usr/local/bin, /opt/homebrew/bin and PATH)"
    )]
    GitNotFound,
    #[error("failed to start git at {executable:?}: {source}")]
    GitSpawn {
        executable: PathBuf,
        source: std::io::Error,
    },
    #[error("`{command}` failed with exit code {exit_code}: {stderr}")]
    GitFailed {
        command: String,
        exit_code: i32,
        stderr: String,
    },
    #[error("`{command}` did not finish within {timeout:?} and was killed")]
    GitTimedOut { command: String, timeout: Duration },
    #[error("`{command}` produced more than {limit_bytes} bytes of output")]
    GitOutputTooLarge { command: String, limit_bytes: u64 },
    #[error("unexpected output from `{command}`: {detail}")]
    MalformedGitOutput { command: String, detail: String },
    #[error("{path:?} cannot be resolved: {source}")]
    PathUnavailable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path:?} is not inside a Git checkout")]
    NotARepository { path: PathBuf },
    /// A bare repository, or one libgit2 cannot open (see `checkout::find_checkout`).
    #[error("{0}")]
    Checkout(super::checkout::FindCheckoutError),
    #[error("{path:?} is not a checkout root (the checkout root is {checkout_root:?})")]
    NotACheckoutRoot {
        path: PathBuf,
        checkout_root: PathBuf,
    },
    #[error("the repository at {checkout_root:?} has no commit yet (HEAD is unborn)")]
    NoHeadCommit { checkout_root: PathBuf },
    #[error("`{revision}` is not a full commit id (40 or 64 hex characters)")]
    InvalidRevision { revision: String },
    #[error("commit `{revision}` does not exist in this repository")]
    UnknownRevision { revision: String },
    #[error("`{path}` is a submodule; workspaces with submodules cannot be scanned")]
    Submodule { path: String },
    #[error("`{path}` has unresolved merge conflicts; resolve them before scanning")]
    UnmergedEntry { path: String },
    #[error("`{path}` was added with --intent-to-add; stage it or remove it before scanning")]
    IntentToAdd { path: String },
    #[error("`{path}` has the skip-worktree flag; its working copy cannot be trusted")]
    SkipWorktree { path: String },
    #[error("`{path}` has the assume-unchanged flag; its working copy cannot be trusted")]
    AssumeUnchanged { path: String },
    #[error("a path is not valid UTF-8: {lossy:?}")]
    NonUtf8Path { lossy: String },
    #[error("`{path}` escapes the workspace or lies under .git")]
    PathOutsideWorkspace { path: String },
    #[error("`{path}` is a {kind}; only regular files and symlinks can be scanned")]
    SpecialFile { path: String, kind: &'static str },
    #[error("the workspace has {count} paths, more than the limit of {limit}")]
    TooManyPaths { count: usize, limit: usize },
    #[error("`{path}` is {size} bytes, more than the limit of {limit} bytes")]
    FileTooLarge { path: String, size: u64, limit: u64 },
    #[error("more than {limit} bytes would have to be hashed")]
    TooMuchToHash { limit: u64 },
    #[error(
        "the repository's Git configuration marks the filter `{driver}` as required \
         (filter.{driver}.required); nagi's git runs no program the repository names, so it \
         cannot compare files through that filter. Unset filter.{driver}.required in the \
         repository's config to let nagi compare the files as stored"
    )]
    RequiredFilterDriver { driver: String },
    #[error(
        "the repository's Git configuration names {count} programs, more than the limit of \
         {limit} that nagi's git can be told to ignore"
    )]
    TooManyConfiguredPrograms { count: usize, limit: usize },
    #[error("the workspace changed during the scan ({detail}); scan again")]
    ChangedDuringScan { detail: String },
    #[error("cannot read `{path}`: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}
