//! The trusted workspace scan: one `git status` stat walk, the index, and
//! content hashes only for the paths git reported.
//!
//! Order of work, and why:
//! 1. `git rev-parse` locates the checkout (it must be the root) and HEAD,
//!    while `git config --list` reads the configuration whose program-naming
//!    entries every later command blanks ([`super::config_programs`]).
//! 2. The index file's metadata is noted.
//! 3. `git status --porcelain=v2 -z` (the one stat walk of the tree) runs
//!    while another thread reads the index (modes, blob ids, flags; see
//!    [`super::index`]); the second is cheap and hides behind the first.
//! 4. Paths git reported are hashed by us; all others take their index entry.
//! 5. HEAD and the index metadata are read again; if either moved, the scan
//!    fails with `ChangedDuringScan` rather than return a mixed picture.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::WorkspaceError;
use super::fingerprint::{HashBudget, fingerprint_path};
use super::git::{GitConfig, GitRunner};
use super::index::read_index;
use super::porcelain::{IndexEntry, PorcelainStatus, parse_status};
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
    arguments.push(if include_ignored {
        "--ignored=traditional"
    } else {
        "--ignored=no"
    });
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
pub fn scan_workspace(
    root: &Path,
    config: &ScanConfig,
) -> Result<WorkspaceSnapshot, WorkspaceError> {
    let (walk, ()) = walk_workspace(root, config, |_, _, _| ())?;
    finish_scan(walk, config)
}

/// What git said about the checkout (steps 1–3), before any hashing.
pub(crate) struct WorkspaceWalk {
    pub git: GitRunner,
    pub checkout_root: PathBuf,
    pub head: String,
    pub status: PorcelainStatus,
    index: Vec<IndexEntry>,
    pub index_path: PathBuf,
    index_before: IndexMarker,
}

/// Steps 1–3 of a scan. `alongside(git, checkout_root, head)` runs on its own
/// thread during the `git status` walk (the handoff diff uses it for work
/// that does not depend on the status).
pub(crate) fn walk_workspace<R: Send>(
    root: &Path,
    config: &ScanConfig,
    alongside: impl FnOnce(&GitRunner, &Path, &str) -> R + Send,
) -> Result<(WorkspaceWalk, R), WorkspaceError> {
    let plain_git = GitRunner::new(&config.git)?;
    // Reading the repository's configuration (to blank the programs it
    // names) needs no answer from locating the checkout, so the two run side
    // by side; locating it (libgit2) reads no file contents and runs nothing.
    let (located, configured) = std::thread::scope(|scope| {
        let configured_job = scope.spawn(|| plain_git.for_repository(root));
        let located = locate_checkout_root_and_head(root);
        let configured = configured_job.join().expect("config thread panicked");
        (located, configured)
    });
    let (location, head) = located?;
    let git = configured?;
    let checkout_root = location.checkout_root.clone();
    let index_before = index_marker(&location.index_path);

    let status_args = status_arguments(config.include_ignored);
    let (status_output, index, alongside_result) = std::thread::scope(|scope| {
        let index_job = scope.spawn(|| read_index(&git, &checkout_root));
        let alongside_job = scope.spawn(|| alongside(&git, &checkout_root, &head));
        let status_output = git.run(&checkout_root, &status_args);
        let index = index_job.join().expect("index thread panicked");
        let alongside_result = alongside_job
            .join()
            .expect("scan companion thread panicked");
        (status_output, index, alongside_result)
    });
    let status = parse_status(&status_output?)?;
    let index = index?;
    if status.head.as_deref() != Some(head.as_str()) {
        return Err(WorkspaceError::ChangedDuringScan {
            detail: "HEAD moved".to_owned(),
        });
    }
    if index.len() > config.max_paths {
        return Err(WorkspaceError::TooManyPaths {
            count: index.len(),
            limit: config.max_paths,
        });
    }
    let walk = WorkspaceWalk {
        git,
        checkout_root,
        head,
        status,
        index,
        index_path: location.index_path,
        index_before,
    };
    Ok((walk, alongside_result))
}

/// Steps 4–5: fingerprints, the consistency re-check and the digest.
pub(crate) fn finish_scan(
    walk: WorkspaceWalk,
    config: &ScanConfig,
) -> Result<WorkspaceSnapshot, WorkspaceError> {
    let WorkspaceWalk {
        git,
        checkout_root,
        head,
        status,
        index,
        index_path,
        index_before,
    } = walk;
    // Paths git reported get a content fingerprint (filled in below once the
    // path count is known to be within the limit); all others take their
    // index entry.
    let mut reported = reported_dispositions(&status);
    let mut entries: Vec<WorkspaceEntry> = Vec::with_capacity(index.len() + reported.len());
    let mut to_hash: Vec<usize> = Vec::with_capacity(reported.len());
    for index_entry in index {
        match reported.remove(index_entry.path.as_str()) {
            Some(disposition) => {
                to_hash.push(entries.len());
                entries.push(WorkspaceEntry {
                    path: index_entry.path,
                    disposition,
                    fingerprint: Fingerprint::Missing,
                });
            }
            None => entries.push(WorkspaceEntry {
                path: index_entry.path,
                disposition: Disposition::Tracked,
                fingerprint: Fingerprint::IndexBlob {
                    mode: index_entry.mode,
                    blob_id: index_entry.blob_id,
                },
            }),
        }
    }
    // Paths git reported that are not in the index: untracked, ignored, and
    // staged deletions.
    let mut unindexed: Vec<(&str, Disposition)> = reported.into_iter().collect();
    unindexed.sort_unstable();
    for (path, disposition) in unindexed {
        to_hash.push(entries.len());
        entries.push(WorkspaceEntry {
            path: path.to_owned(),
            disposition,
            fingerprint: Fingerprint::Missing,
        });
    }
    if entries.len() > config.max_paths {
        return Err(WorkspaceError::TooManyPaths {
            count: entries.len(),
            limit: config.max_paths,
        });
    }
    let mut budget = HashBudget {
        max_file_bytes: config.max_file_bytes,
        max_total_bytes: config.max_total_hashed_bytes,
        hashed_bytes: 0,
    };
    for position in to_hash {
        let entry = &mut entries[position];
        entry.fingerprint = fingerprint_path(&checkout_root, &entry.path, &mut budget)?;
    }
    // Index order is bytewise path order and the appended run is sorted too,
    // so this stable sort is a single merge.
    entries.sort_by(|left, right| left.path.cmp(&right.path));

    let head_after = head_commit(&git, &checkout_root)?;
    if head_after != head {
        return Err(WorkspaceError::ChangedDuringScan {
            detail: "HEAD moved".to_owned(),
        });
    }
    if index_marker(&index_path) != index_before {
        return Err(WorkspaceError::ChangedDuringScan {
            detail: "the index was rewritten".to_owned(),
        });
    }
    Ok(WorkspaceSnapshot::new(
        head,
        config.include_ignored,
        entries,
    ))
}
