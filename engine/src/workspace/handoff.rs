//! The git part of a handoff artifact (MISSIONS §6.2): HEAD, the workspace
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
use super::scan::{ScanConfig, scan_workspace_with_details};
use super::snapshot::{Disposition, WorkspaceSnapshot};

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
    let scan_config = ScanConfig { include_ignored: false, ..config.clone() };
    let (snapshot, details) = scan_workspace_with_details(root, &scan_config)?;
    let git = &details.git;
    let root = details.checkout_root.as_path();
    let base = verify_commit(git, root, base_revision)?;

    let mut candidates: Vec<String> = Vec::new();
    if base != snapshot.head_commit {
        let committed = git.run(
            root,
            &["diff-tree", "-r", "-z", "--no-renames", "--name-only", "--no-commit-id", &base, &snapshot.head_commit],
        )?;
        for raw_path in committed.split(|byte| *byte == 0).filter(|raw| !raw.is_empty()) {
            candidates.push(super::porcelain::checked_path(raw_path)?);
        }
    }
    let mut untracked: Vec<String> = Vec::new();
    for entry in &snapshot.entries {
        match entry.disposition {
            Disposition::Staged | Disposition::Unstaged => candidates.push(entry.path.clone()),
            Disposition::Untracked => untracked.push(entry.path.clone()),
            Disposition::Tracked | Disposition::Ignored => {}
        }
    }
    candidates.sort_unstable();
    candidates.dedup();

    let (mut changed_paths, tracked_stat) = if candidates.is_empty() {
        (Vec::new(), String::new())
    } else {
        diff_against_base(git, root, &base, &candidates)?
    };
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

/// Runs `git diff --raw -z --stat <base> -- <candidates>` and returns the
/// paths that differ plus the trimmed stat text.
fn diff_against_base(
    git: &super::git::GitRunner,
    root: &Path,
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
    let output = git.run(root, &args)?;
    // Raw records come first: `:<modes> <ids> <status>\0<path>\0` each; the
    // stat text follows and never starts with ':'.
    let mut changed_paths = Vec::new();
    let mut rest: &[u8] = &output;
    while rest.first() == Some(&b':') {
        let header_end = rest.iter().position(|byte| *byte == 0).ok_or_else(|| malformed("raw header"))?;
        let after_header = &rest[header_end + 1..];
        let path_end =
            after_header.iter().position(|byte| *byte == 0).ok_or_else(|| malformed("raw path"))?;
        changed_paths.push(super::porcelain::checked_path(&after_header[..path_end])?);
        rest = &after_header[path_end + 1..];
    }
    let stat = String::from_utf8_lossy(rest).trim_start_matches('\n').trim_end().to_owned();
    Ok((changed_paths, stat))
}

fn malformed(detail: &str) -> WorkspaceError {
    WorkspaceError::MalformedGitOutput { command: "git diff --raw --stat".to_owned(), detail: detail.to_owned() }
}
