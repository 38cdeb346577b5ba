//! Where a checkout lives: its root, its Git common dir and its HEAD commit.
//!
//! Claims (contract §10) key a lease by (canonical Git common dir, canonical
//! checkout root) and require the requested checkout to be a checkout root of
//! the mission repository's repository; a linked worktree's root counts,
//! because it shares the common dir.

use std::path::{Path, PathBuf};

use super::WorkspaceError;
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

fn output_lines<'a>(output: &'a [u8], command: &str) -> Result<Vec<&'a str>, WorkspaceError> {
    let text = std::str::from_utf8(output).map_err(|_| WorkspaceError::NonUtf8Path {
        lossy: String::from_utf8_lossy(output).into_owned(),
    })?;
    let lines: Vec<&str> = text.lines().collect();
    if lines.iter().any(|line| line.is_empty()) {
        return Err(WorkspaceError::MalformedGitOutput {
            command: command.to_owned(),
            detail: "empty line".to_owned(),
        });
    }
    Ok(lines)
}

fn location_from_lines(lines: &[&str]) -> Result<CheckoutLocation, WorkspaceError> {
    Ok(CheckoutLocation {
        checkout_root: canonicalize(Path::new(lines[0]))?,
        git_common_dir: canonicalize(Path::new(lines[1]))?,
        // The index may not exist yet in a fresh repository.
        index_path: PathBuf::from(lines[2]),
        object_format: lines[3].to_owned(),
    })
}

const LOCATION_ARGS: &[&str] = &[
    "rev-parse",
    "--path-format=absolute",
    "--show-toplevel",
    "--git-common-dir",
    "--git-path",
    "index",
    "--show-object-format",
];

/// Locates the checkout containing `path` (which may be any directory in it).
pub fn locate_checkout(git: &GitRunner, path: &Path) -> Result<CheckoutLocation, WorkspaceError> {
    let directory = canonicalize(path)?;
    let (exit_code, output, stderr) = git.run_with_exit_code(&directory, LOCATION_ARGS)?;
    if exit_code != 0 {
        if stderr.contains("not a git repository") {
            return Err(WorkspaceError::NotARepository { path: directory });
        }
        return Err(WorkspaceError::GitFailed {
            command: "git rev-parse --show-toplevel".to_owned(),
            exit_code,
            stderr,
        });
    }
    let lines = output_lines(&output, "git rev-parse --show-toplevel")?;
    if lines.len() != 4 {
        return Err(WorkspaceError::MalformedGitOutput {
            command: "git rev-parse --show-toplevel".to_owned(),
            detail: format!("expected 4 lines, got {}", lines.len()),
        });
    }
    location_from_lines(&lines)
}

/// Locates the checkout whose root is exactly `path`, and reads its HEAD
/// commit, in one git command. `NotACheckoutRoot` if `path` is inside a
/// checkout but not its root; `NoHeadCommit` for an unborn HEAD.
pub fn locate_checkout_root_and_head(
    git: &GitRunner,
    path: &Path,
) -> Result<(CheckoutLocation, String), WorkspaceError> {
    let directory = canonicalize(path)?;
    let mut args: Vec<&str> = LOCATION_ARGS.to_vec();
    args.extend(["--verify", "HEAD^{commit}"]);
    let (exit_code, output, _) = git.run_with_exit_code(&directory, &args)?;
    if exit_code != 0 {
        let location = locate_checkout(git, &directory)?;
        require_root(&directory, &location)?;
        return Err(WorkspaceError::NoHeadCommit {
            checkout_root: location.checkout_root,
        });
    }
    let lines = output_lines(&output, "git rev-parse --show-toplevel --verify HEAD")?;
    if lines.len() != 5 {
        return Err(WorkspaceError::MalformedGitOutput {
            command: "git rev-parse --show-toplevel --verify HEAD".to_owned(),
            detail: format!("expected 5 lines, got {}", lines.len()),
        });
    }
    let location = location_from_lines(&lines)?;
    require_root(&directory, &location)?;
    Ok((location, lines[4].to_owned()))
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
pub fn checkout_root(git: &GitRunner, path: &Path) -> Result<PathBuf, WorkspaceError> {
    Ok(locate_checkout(git, path)?.checkout_root)
}

/// The canonical Git common dir of the repository containing `path`.
pub fn git_common_dir(git: &GitRunner, path: &Path) -> Result<PathBuf, WorkspaceError> {
    Ok(locate_checkout(git, path)?.git_common_dir)
}

/// `HEAD^{commit}` of the checkout containing `path`.
pub fn head_commit(git: &GitRunner, path: &Path) -> Result<String, WorkspaceError> {
    let directory = canonicalize(path)?;
    let (exit_code, output, stderr) = git.run_with_exit_code(
        &directory,
        &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
    )?;
    if exit_code != 0 {
        let location = locate_checkout(git, &directory)?;
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
    git: &GitRunner,
    repository: &Path,
    requested: &Path,
) -> Result<Option<CheckoutLocation>, WorkspaceError> {
    let repository_location = locate_checkout(git, repository)?;
    let requested_directory = canonicalize(requested)?;
    let requested_location = locate_checkout(git, &requested_directory)?;
    let is_root = requested_location.checkout_root == requested_directory;
    let same_repository = requested_location.git_common_dir == repository_location.git_common_dir;
    Ok((is_root && same_repository).then_some(requested_location))
}
