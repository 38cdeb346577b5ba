//! The trusted workspace scan: one `git status` stat walk, the index, and
//! content hashes only for the paths git reported.
//!
//! Order of work, and why:
//! 1. `git rev-parse` locates the checkout (it must be the root) and HEAD.
//! 2. The index file's metadata is noted.
//! 3. `git status --porcelain=v2 -z` (the one stat walk of the tree) and
//!    `git ls-files -s -v -z` (the index: modes, blob ids, flags) run at the
//!    same time; the second is cheap and hides behind the first.
//! 4. Paths git reported are hashed by us; all others take their index entry.
//! 5. HEAD and the index metadata are read again; if either moved, the scan
//!    fails with `ChangedDuringScan` rather than return a mixed picture.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::WorkspaceError;
use super::fingerprint::{HashBudget, fingerprint_path};
use super::git::{GitConfig, GitRunner};
use super::porcelain::{PorcelainStatus, parse_index, parse_status};
use super::repository::{head_commit, locate_checkout_root_and_head};
use super::snapshot::{Disposition, Fingerprint, WorkspaceEntry, WorkspaceSnapshot};

/// Limits of a scan; `Default` gives the contract's values.
#[derive(Debug, Clone)]
pub struct ScanConfig {
    /// Also scan (and hash) ignored files.
    pub include_ignored: bool,
    pub git: GitConfig,
    /// Default 200,000 paths.
    pub max_paths: usize,
    /// Default 512 MiB per hashed file.
    pub max_file_bytes: u64,
    /// Default 2 GiB hashed per scan.
    pub max_total_hashed_bytes: u64,
}

impl Default for ScanConfig {
    fn default() -> ScanConfig {
        ScanConfig {
            include_ignored: false,
            git: GitConfig::default(),
            max_paths: 200_000,
            max_file_bytes: 512 * 1024 * 1024,
            max_total_hashed_bytes: 2 * 1024 * 1024 * 1024,
        }
    }
}

/// What the scan learned besides the snapshot (used by the handoff diff).
pub(crate) struct ScanDetails {
    pub checkout_root: PathBuf,
    pub git: GitRunner,
}

type IndexMarker = Option<(u64, u64, i64, i64, i64, i64)>;

fn index_marker(index_path: &Path) -> IndexMarker {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(index_path).ok().map(|metadata| {
        (
            metadata.ino(),
            metadata.size(),
            metadata.mtime(),
            metadata.mtime_nsec(),
            metadata.ctime(),
            metadata.ctime_nsec(),
        )
    })
}

fn status_arguments(include_ignored: bool) -> Vec<&'static str> {
    let mut arguments = vec![
        "status",
        "--porcelain=v2",
        "-z",
        "--branch",
        "--no-renames",
        "--untracked-files=all",
        "--ignore-submodules=none",
    ];
    // `traditional` lists each ignored file (with -uall), not just the
    // ignored directory, so each one can be hashed.
    arguments.push(if include_ignored { "--ignored=traditional" } else { "--ignored=no" });
    arguments
}

/// Disposition of every path `git status` reported, first match winning.
fn reported_dispositions(status: &PorcelainStatus) -> HashMap<&str, Disposition> {
    fn report<'a>(
        dispositions: &mut HashMap<&'a str, Disposition>,
        path: &'a str,
        disposition: Disposition,
    ) {
        let slot = dispositions.entry(path).or_insert(disposition);
        *slot = (*slot).min(disposition);
    }
    let mut dispositions: HashMap<&str, Disposition> = HashMap::new();
    for changed in &status.changed {
        let disposition = if changed.worktree_status != b'.' {
            Disposition::Unstaged
        } else {
            Disposition::Staged
        };
        report(&mut dispositions, &changed.path, disposition);
    }
    for path in &status.untracked {
        report(&mut dispositions, path, Disposition::Untracked);
    }
    for path in &status.ignored {
        report(&mut dispositions, path, Disposition::Ignored);
    }
    dispositions
}

/// Scans the checkout whose root is `root`.
pub fn scan_workspace(root: &Path, config: &ScanConfig) -> Result<WorkspaceSnapshot, WorkspaceError> {
    scan_workspace_with_details(root, config).map(|(snapshot, _)| snapshot)
}

pub(crate) fn scan_workspace_with_details(
    root: &Path,
    config: &ScanConfig,
) -> Result<(WorkspaceSnapshot, ScanDetails), WorkspaceError> {
    let git = GitRunner::new(&config.git)?;
    let (location, head_before) = locate_checkout_root_and_head(&git, root)?;
    let checkout_root = location.checkout_root.clone();
    let index_before = index_marker(&location.index_path);

    let status_args = status_arguments(config.include_ignored);
    let (status_output, index_output) = std::thread::scope(|scope| {
        let index_job = scope.spawn(|| git.run(&checkout_root, &["ls-files", "-s", "-v", "-z"]));
        let status_output = git.run(&checkout_root, &status_args);
        let index_output = index_job.join().expect("ls-files thread panicked");
        (status_output, index_output)
    });
    let status = parse_status(&status_output?)?;
    let index = parse_index(&index_output?)?;
    if status.head.as_deref() != Some(head_before.as_str()) {
        return Err(WorkspaceError::ChangedDuringScan { detail: "HEAD moved".to_owned() });
    }

    let mut reported = reported_dispositions(&status);
    let untracked_count = reported.keys().filter(|path| !index_contains(&index, path)).count();
    let path_count = index.len() + untracked_count;
    if path_count > config.max_paths {
        return Err(WorkspaceError::TooManyPaths { count: path_count, limit: config.max_paths });
    }

    let mut budget = HashBudget {
        max_file_bytes: config.max_file_bytes,
        max_total_bytes: config.max_total_hashed_bytes,
        hashed_bytes: 0,
    };
    let mut entries: Vec<WorkspaceEntry> = Vec::with_capacity(path_count);
    for index_entry in &index {
        let entry = match reported.remove(index_entry.path.as_str()) {
            Some(disposition) => WorkspaceEntry {
                path: index_entry.path.clone(),
                disposition,
                fingerprint: fingerprint_path(&checkout_root, &index_entry.path, &mut budget)?,
            },
            None => WorkspaceEntry {
                path: index_entry.path.clone(),
                disposition: Disposition::Tracked,
                fingerprint: Fingerprint::IndexBlob {
                    mode: index_entry.mode,
                    blob_id: index_entry.blob_id.clone(),
                },
            },
        };
        entries.push(entry);
    }
    // Paths git reported that are not in the index: untracked, ignored, and
    // staged deletions.
    let mut unindexed: Vec<(&str, Disposition)> = reported.into_iter().collect();
    unindexed.sort_unstable();
    for (path, disposition) in unindexed {
        entries.push(WorkspaceEntry {
            path: path.to_owned(),
            disposition,
            fingerprint: fingerprint_path(&checkout_root, path, &mut budget)?,
        });
    }
    // Index order is bytewise path order; the appended run is sorted too, so
    // this stable sort is a single merge.
    entries.sort_by(|left, right| left.path.cmp(&right.path));

    let head_after = head_commit(&git, &checkout_root)?;
    if head_after != head_before {
        return Err(WorkspaceError::ChangedDuringScan { detail: "HEAD moved".to_owned() });
    }
    if index_marker(&location.index_path) != index_before {
        return Err(WorkspaceError::ChangedDuringScan { detail: "the index was rewritten".to_owned() });
    }
    let snapshot = WorkspaceSnapshot::new(head_before, config.include_ignored, entries);
    Ok((snapshot, ScanDetails { checkout_root, git }))
}

fn index_contains(index: &[super::porcelain::IndexEntry], path: &str) -> bool {
    index.binary_search_by(|entry| entry.path.as_str().cmp(path)).is_ok()
}
