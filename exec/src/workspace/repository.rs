//! Where a checkout lives: its root, its Git common dir and its HEAD commit.
//!
//! Claims (contract §10) key a lease by (canonical Git common dir, canonical
//! checkout root) and require the requested checkout to be a checkout root of
//! the mission repository's repository; a linked worktree's root counts,
//! because it shares the common dir.

use std::path::{Path, PathBuf};

use super::WorkspaceError;
use super::checkout::{FindCheckoutError, FoundCheckout, find_checkout};
use super::git::GitRunner;

/// The canonical location of one checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckoutLocation {
    /// Canonical top-level directory of the checkout containing the path.
    pub checkout_root: PathBuf,
    /// Canonical Git common dir (shared by all linked worktrees).
    pub git_common_dir: PathBuf,
    /// Canonical path of this checkout's index file.
    pub index_path: PathBuf,
    /// `sha1` or `sha256`.
    pub object_format: String,
}

fn canonicalize(path: &Path) -> Result<PathBuf, WorkspaceError> {
    path.canonicalize()
        .map_err(|source| WorkspaceError::PathUnavailable {
            path: path.to_path_buf(),
            source,
        })
}

impl From<FindCheckoutError> for WorkspaceError {
    fn from(error: FindCheckoutError) -> WorkspaceError {
        match error {
            FindCheckoutError::NotInCheckout { path } => WorkspaceError::NotARepository { path },
            other => WorkspaceError::Checkout(other),
        }
    }
}

fn location_of(found: FoundCheckout) -> CheckoutLocation {
    CheckoutLocation {
        checkout_root: found.root,
        git_common_dir: found.common_dir,
        // The index may not exist yet in a fresh repository.
        index_path: found.git_dir.join("index"),
        object_format: found.object_format,
    }
}

/// Locates the checkout containing `path` (which may be any directory in it), by the one
/// rule of `checkout::find_checkout`.
pub fn locate_checkout(path: &Path) -> Result<CheckoutLocation, WorkspaceError> {
    let directory = canonicalize(path)?;
    Ok(location_of(find_checkout(&directory)?))
}

/// Locates the checkout whose root is exactly `path`, and reads its HEAD commit.
/// `NotACheckoutRoot` if `path` is inside a checkout but not its root; `NoHeadCommit` for
/// an unborn HEAD.
pub fn locate_checkout_root_and_head(
    path: &Path,
) -> Result<(CheckoutLocation, String), WorkspaceError> {
    let directory = canonicalize(path)?;
    let found = find_checkout(&directory)?;
    let head = found.head_commit()?;
    let location = location_of(found);
    require_root(&directory, &location)?;
    match head {
        Some(head) => Ok((location, head)),
        None => Err(WorkspaceError::NoHeadCommit {
            checkout_root: location.checkout_root,
        }),
    }
}

fn require_root(directory: &Path, location: &CheckoutLocation) -> Result<(), WorkspaceError> {
    if location.checkout_root != directory {
        return Err(WorkspaceError::NotACheckoutRoot {
            path: directory.to_path_buf(),
            checkout_root: location.checkout_root.clone(),
        });
    }
    Ok(())
}

/// The canonical checkout root of the checkout containing `path`.
pub fn checkout_root(path: &Path) -> Result<PathBuf, WorkspaceError> {
    Ok(locate_checkout(path)?.checkout_root)
}

/// The canonical Git common dir of the repository containing `path`.
pub fn git_common_dir(path: &Path) -> Result<PathBuf, WorkspaceError> {
    Ok(locate_checkout(path)?.git_common_dir)
}

/// `HEAD^{commit}` of the checkout containing `path`.
pub fn head_commit(git: &GitRunner, path: &Path) -> Result<String, WorkspaceError> {
    let directory = canonicalize(path)?;
    let (exit_code, output, stderr) = git.run_with_exit_code(
        &directory,
        &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
    )?;
    if exit_code != 0 {
        let location = locate_checkout(&directory)?;
        if stderr.is_empty() {
            return Err(WorkspaceError::NoHeadCommit {
                checkout_root: location.checkout_root,
            });
        }
        return Err(WorkspaceError::GitFailed {
            command: "git rev-parse --verify HEAD^{commit}".to_owned(),
            exit_code,
            stderr,
        });
    }
    Ok(String::from_utf8_lossy(&output).trim().to_owned())
}

/// Whether `revision` is a full object id (40 or 64 hex, either case).
pub fn is_full_revision(revision: &str) -> bool {
    (revision.len() == 40 || revision.len() == 64)
        && revision.bytes().all(|byte| byte.is_ascii_hexdigit())
}

/// Verifies that `revision` (a full object id) names a commit; returns it in
/// lowercase.
pub fn verify_commit(
    git: &GitRunner,
    root: &Path,
    revision: &str,
) -> Result<String, WorkspaceError> {
    if !is_full_revision(revision) {
        return Err(WorkspaceError::InvalidRevision {
            revision: revision.to_owned(),
        });
    }
    let lowercase = revision.to_ascii_lowercase();
    let (exit_code, output, _) = git.run_with_exit_code(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{lowercase}^{{commit}}"),
        ],
    )?;
    if exit_code != 0 {
        return Err(WorkspaceError::UnknownRevision {
            revision: revision.to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&output).trim().to_owned())
}

/// Whether `requested` is the root of a checkout of the same repository as
/// `repository` (same Git common dir); a linked worktree's root counts.
/// Returns the requested checkout's location when it is.
pub fn checkout_of_same_repository(
    repository: &Path,
    requested: &Path,
) -> Result<Option<CheckoutLocation>, WorkspaceError> {
    let repository_location = locate_checkout(repository)?;
    let requested_directory = canonicalize(requested)?;
    let requested_location = locate_checkout(&requested_directory)?;
    let is_root = requested_location.checkout_root == requested_directory;
    let same_repository = requested_location.git_common_dir == repository_location.git_common_dir;
    Ok((is_root && same_repository).then_some(requested_location))
}
