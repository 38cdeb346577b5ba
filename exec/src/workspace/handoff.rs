//! The git part of a handoff artifact (contract §6.2): HEAD, the workspace
//! digest, the paths that differ from the base revision and a diff stat.
//!
//! `git diff <base>` compares the working tree with the base commit. A path
//! can only differ there if it differs somewhere along base → HEAD (a commit
//! since the base), HEAD → index (staged) or index → working tree (unstaged).
//! The scan already knows the last two; a tree-to-tree `git diff-tree` gives
//! the first without touching the working tree. So the one real `git diff`
//! runs only over those candidate paths: it confirms which of them really
//! differ (a change that was later reverted drops out) and prints the stat.
//! Renames are shown as a deletion plus an addition (`--no-renames`), so both
//! paths are listed.
//!
//! The returned strings are **not** redacted; the artifact builder redacts
//! `changed_paths` and `stat` before hashing (§6.3).

use std::path::Path;

use super::WorkspaceError;
use super::repository::verify_commit;
use super::scan::{ScanConfig, finish_scan, walk_workspace};
use super::snapshot::WorkspaceSnapshot;

/// Above this many candidate paths the diff runs without a pathspec: one stat
/// walk is cheaper than matching thousands of pathspecs per index entry.
const PATHSPEC_LIMIT: usize = 256;

/// The handoff `diff` data plus the HEAD it was computed at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandoffDiff {
    pub head_revision: String,
    /// Digest of the scan without ignored files.
    pub workspace_digest: String,
    /// `changed_paths` is non-empty.
    pub dirty: bool,
    /// Sorted union of paths differing from the base and untracked paths.
    pub changed_paths: Vec<String>,
    /// `git diff --stat <base> --` (trailing whitespace trimmed, the leading
    /// space of each line kept), plus `"<N> untracked path(s)"`.
    pub stat: String,
}

/// Scans `root` (ignored files excluded) and computes the handoff diff
/// against `base_revision`.
pub fn handoff_diff(
    root: &Path,
    base_revision: &str,
    config: &ScanConfig,
) -> Result<(WorkspaceSnapshot, HandoffDiff), WorkspaceError> {
    if !super::repository::is_full_revision(base_revision) {
        return Err(WorkspaceError::InvalidRevision {
            revision: base_revision.to_owned(),
        });
    }
    let scan_config = ScanConfig {
        include_ignored: false,
        ..config.clone()
    };
    // The base check and the tree-to-tree diff need only HEAD, so they run
    // during the status walk.
    let (walk, committed) = walk_workspace(root, &scan_config, |git, root, head| {
        committed_since_base(git, root, base_revision, head)
    })?;
    let (base, mut candidates) = committed?;
    candidates.extend(
        walk.status
            .changed
            .iter()
            .map(|changed| changed.path.clone()),
    );
    candidates.sort_unstable();
    candidates.dedup();
    let mut untracked: Vec<String> = walk.status.untracked.clone();
    untracked.sort_unstable();
    untracked.dedup();

    // The confirming diff runs while this thread hashes and digests.
    let git = walk.git.clone();
    let root = walk.checkout_root.clone();
    let index_path = walk.index_path.clone();
    let (snapshot, diff_result) = std::thread::scope(|scope| {
        let diff_job = scope.spawn(|| {
            if candidates.is_empty() {
                Ok((Vec::new(), String::new()))
            } else {
                diff_against_base(&git, &root, &index_path, &base, &candidates)
            }
        });
        let snapshot = finish_scan(walk, &scan_config);
        (snapshot, diff_job.join().expect("diff thread panicked"))
    });
    let snapshot = snapshot?;
    let (mut changed_paths, tracked_stat) = diff_result?;
    changed_paths.extend(untracked.iter().cloned());
    changed_paths.sort_unstable();
    changed_paths.dedup();

    let mut stat = tracked_stat;
    if !untracked.is_empty() {
        if !stat.is_empty() {
            stat.push('\n');
        }
        stat.push_str(&format!("{} untracked path(s)", untracked.len()));
    }
    let diff = HandoffDiff {
        head_revision: snapshot.head_commit.clone(),
        workspace_digest: snapshot.digest.clone(),
        dirty: !changed_paths.is_empty(),
        changed_paths,
        stat,
    };
    Ok((snapshot, diff))
}

/// Verifies the base commit and lists the paths that differ between it and
/// HEAD (tree to tree; the working tree is not touched).
fn committed_since_base(
    git: &super::git::GitRunner,
    root: &Path,
    base_revision: &str,
    head: &str,
) -> Result<(String, Vec<String>), WorkspaceError> {
    let base = verify_commit(git, root, base_revision)?;
    let mut committed = Vec::new();
    if base != head {
        let output = git.run(
            root,
            &[
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--name-only",
                "--no-commit-id",
                &base,
                head,
            ],
        )?;
        for raw_path in output
            .split(|byte| *byte == 0)
            .filter(|raw| !raw.is_empty())
        {
            committed.push(super::porcelain::checked_path(raw_path)?);
        }
    }
    Ok((base, committed))
}

/// Runs `git diff --raw -z --stat <base> -- <candidates>` and returns the
/// paths that differ plus the stat text (trailing whitespace trimmed).
///
/// `git diff` content-compares stat-dirty files and then rewrites the index
/// to record what it learned, taking `index.lock` (it does not honour
/// `GIT_OPTIONAL_LOCKS=0`). A scan must never write to the repository, so the
/// diff reads a private copy of the index, whose modification time is the
/// original's so git's racy-entry detection sees the same index.
fn diff_against_base(
    git: &super::git::GitRunner,
    root: &Path,
    index_path: &Path,
    base: &str,
    candidates: &[String],
) -> Result<(Vec<String>, String), WorkspaceError> {
    let mut args: Vec<&str> = vec![
        "diff",
        "--raw",
        "-z",
        "--stat",
        "--no-renames",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=none",
        base,
        "--",
    ];
    if candidates.len() <= PATHSPEC_LIMIT {
        args.extend(candidates.iter().map(String::as_str));
    }
    let index_copy = private_index_copy(index_path)?;
    let output = match &index_copy {
        Some(copy) => git.run_with_index_file(root, &args, copy)?,
        None => git.run(root, &args)?,
    };
    // Raw records come first: `:<modes> <ids> <status>\0<path>\0` each; the
    // stat text follows and never starts with ':'.
    let mut changed_paths = Vec::new();
    let mut rest: &[u8] = &output;
    while rest.first() == Some(&b':') {
        let header_end = rest
            .iter()
            .position(|byte| *byte == 0)
            .ok_or_else(|| malformed("raw header"))?;
        let after_header = &rest[header_end + 1..];
        let path_end = after_header
            .iter()
            .position(|byte| *byte == 0)
            .ok_or_else(|| malformed("raw path"))?;
        changed_paths.push(super::porcelain::checked_path(&after_header[..path_end])?);
        rest = &after_header[path_end + 1..];
    }
    let stat = String::from_utf8_lossy(rest)
        .trim_start_matches('\n')
        .trim_end()
        .to_owned();
    Ok((changed_paths, stat))
}

/// Copies the index to a private temporary file with the same modification
/// time; `None` if the repository has no index file yet.
fn private_index_copy(index_path: &Path) -> Result<Option<tempfile::TempPath>, WorkspaceError> {
    let copy = tempfile::Builder::new()
        .prefix("nagi-index-")
        .tempfile()
        .map_err(|source| WorkspaceError::Io {
            path: "a private index in the temp folder".to_string(),
            source,
        })?
        .into_temp_path();
    Ok(super::mission_diff::copy_index(index_path, &copy)?.then_some(copy))
}

fn malformed(detail: &str) -> WorkspaceError {
    WorkspaceError::MalformedGitOutput {
        command: "git diff --raw --stat".to_owned(),
        detail: detail.to_owned(),
    }
}
