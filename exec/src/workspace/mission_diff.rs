//! A mission's change against the commit its worktree was made from: every file that
//! differs, untracked ones included (ignored ones not), with its status and line counts,
//! then the unified hunks.
//!
//! The worktree's own index is never touched: a private copy takes `git add -A` (so new
//! files count), and the diffs compare that copy with the base. Every git command runs
//! under the scan's overrides, so nothing the repository's configuration names (external
//! diff, textconv, filters, fsmonitor) runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::WorkspaceError;
use super::git::{GitConfig, GitRunner};

/// What to compute.
#[derive(Debug, Clone)]
pub struct MissionDiffConfig {
    pub git: GitConfig,
    /// Only the file list, no hunks.
    pub stat_only: bool,
    /// The most bytes of hunks kept; the rest is counted, not returned.
    pub max_patch_bytes: usize,
}

/// How one file differs from the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
    TypeChanged,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedFile {
    pub path: String,
    pub status: FileStatus,
    /// `None` for a binary file.
    pub additions: Option<u64>,
    pub deletions: Option<u64>,
    pub untracked: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissionDiff {
    /// Sorted by path.
    pub files: Vec<ChangedFile>,
    pub patch: String,
    pub omitted_patch_bytes: u64,
}

const DIFF_ARGS: &[&str] = &[
    "diff",
    "--cached",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
];

/// Computes the diff of the checkout at `root` against `base_revision` (a full object id).
pub fn mission_diff(
    root: &Path,
    base_revision: &str,
    config: &MissionDiffConfig,
) -> Result<MissionDiff, WorkspaceError> {
    if !super::repository::is_full_revision(base_revision) {
        return Err(WorkspaceError::InvalidRevision {
            revision: base_revision.to_owned(),
        });
    }
    let git = GitRunner::new(&config.git)?.for_repository(root)?;
    let index_path = index_path_of(&git, root)?;
    // The untracked walk reads the checkout's own index (git takes no lock on it:
    // `GIT_OPTIONAL_LOCKS=0`) while the private copy takes `git add -A` and the diff.
    std::thread::scope(|scope| {
        let untracked_job = scope.spawn(|| untracked_paths(&git, root));
        let diffed = diff_with_private_index(&git, root, &index_path, base_revision, config);
        let untracked =
            untracked_job
                .join()
                .map_err(|_| WorkspaceError::MalformedGitOutput {
                    command: "git ls-files --others".to_owned(),
                    detail: "the thread that ran it panicked".to_owned(),
                })??;
        let (listing, patch) = diffed?;
        let mut files = parse_listing(&listing, &untracked)?;
        files.sort_by(|left, right| left.path.cmp(&right.path));
        let (patch, omitted_patch_bytes) = if config.stat_only {
            (String::new(), 0)
        } else {
            cap_patch(patch, config.max_patch_bytes)
        };
        Ok(MissionDiff {
            files,
            patch,
            omitted_patch_bytes,
        })
    })
}

/// The checkout's index file: `<root>/.git/index`, or for a linked worktree the `index` in
/// the folder its `.git` file names. Asks git when the layout is anything else.
pub(super) fn index_path_of(
    git: &GitRunner,
    root: &Path,
) -> Result<std::path::PathBuf, WorkspaceError> {
    let dot_git = root.join(".git");
    if dot_git.is_dir() {
        return Ok(dot_git.join("index"));
    }
    if let Ok(text) = std::fs::read_to_string(&dot_git)
        && let Some(gitdir) = text.trim_end().strip_prefix("gitdir: ")
    {
        let gitdir = Path::new(gitdir);
        let gitdir = if gitdir.is_absolute() {
            gitdir.to_path_buf()
        } else {
            root.join(gitdir)
        };
        if gitdir.is_dir() {
            return Ok(gitdir.join("index"));
        }
    }
    let output = git.run(
        root,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    )?;
    Ok(String::from_utf8_lossy(&output).trim().into())
}

fn untracked_paths(git: &GitRunner, root: &Path) -> Result<BTreeSet<String>, WorkspaceError> {
    Ok(git
        .run(root, &["ls-files", "-z", "--others", "--exclude-standard"])?
        .split(|byte| *byte == 0)
        .filter(|path| !path.is_empty())
        .map(|path| String::from_utf8_lossy(path).into_owned())
        .collect())
}

/// `git add -A` into a private copy of the index, then one `git diff` of that copy against
/// the base: the `--raw` and `--numstat` records, and (unless only the stat is asked for)
/// the hunks after them.
fn diff_with_private_index(
    git: &GitRunner,
    root: &Path,
    index_path: &Path,
    base_revision: &str,
    config: &MissionDiffConfig,
) -> Result<(Vec<u8>, Vec<u8>), WorkspaceError> {
    let private = tempfile::Builder::new()
        .prefix("nagi-diff-index-")
        .tempfile()
        .map_err(|source| WorkspaceError::PathUnavailable {
            path: std::env::temp_dir(),
            source,
        })?;
    match std::fs::copy(index_path, private.path()) {
        Ok(_) => {}
        // A repository without an index yet: git starts the private one empty.
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let _ = std::fs::remove_file(private.path());
        }
        Err(source) => {
            return Err(WorkspaceError::PathUnavailable {
                path: index_path.to_path_buf(),
                source,
            });
        }
    }
    git.run_with_index_file(root, &["add", "-A", "--", "."], private.path())?;
    let mut args: Vec<&str> = DIFF_ARGS.to_vec();
    args.extend(["-z", "--raw", "--numstat"]);
    if !config.stat_only {
        args.push("--patch");
    }
    args.extend([base_revision, "--"]);
    let output = git.run_with_index_file(root, &args, private.path())?;
    // The records end with an empty one; the hunks follow it.
    let mut start = 0;
    while let Some(length) = output[start..].iter().position(|byte| *byte == 0) {
        if length == 0 {
            return Ok((output[..start].to_vec(), output[start + 1..].to_vec()));
        }
        start += length + 1;
    }
    Ok((output, Vec::new()))
}

/// `--raw` records (`:<modes> <ids> <status>\0<path>\0`) then `--numstat` records
/// (`<added>\t<deleted>\t<path>\0`, `-` for binary files).
fn parse_listing(
    listing: &[u8],
    untracked: &BTreeSet<String>,
) -> Result<Vec<ChangedFile>, WorkspaceError> {
    let malformed = |detail: &str| WorkspaceError::MalformedGitOutput {
        command: "git diff --raw --numstat".to_owned(),
        detail: detail.to_owned(),
    };
    let mut statuses: BTreeMap<String, FileStatus> = BTreeMap::new();
    let mut counts: BTreeMap<String, (Option<u64>, Option<u64>)> = BTreeMap::new();
    let mut fields = listing
        .split(|byte| *byte == 0)
        .filter(|field| !field.is_empty());
    while let Some(field) = fields.next() {
        let text = String::from_utf8_lossy(field);
        if let Some(raw) = text.strip_prefix(':') {
            let status = match raw
                .rsplit(' ')
                .next()
                .and_then(|status| status.chars().next())
            {
                Some('A') => FileStatus::Added,
                Some('D') => FileStatus::Deleted,
                Some('T') => FileStatus::TypeChanged,
                Some(_) => FileStatus::Modified,
                None => return Err(malformed("a raw record without a status")),
            };
            let path = fields
                .next()
                .ok_or_else(|| malformed("a raw record without a path"))?;
            statuses.insert(String::from_utf8_lossy(path).into_owned(), status);
        } else {
            let mut parts = text.splitn(3, '\t');
            let (Some(added), Some(deleted), Some(path)) =
                (parts.next(), parts.next(), parts.next())
            else {
                return Err(malformed("a numstat record without three fields"));
            };
            counts.insert(path.to_owned(), (added.parse().ok(), deleted.parse().ok()));
        }
    }
    Ok(statuses
        .into_iter()
        .map(|(path, status)| {
            let (additions, deletions) = counts.get(&path).copied().unwrap_or((None, None));
            ChangedFile {
                untracked: untracked.contains(&path),
                path,
                status,
                additions,
                deletions,
            }
        })
        .collect())
}

/// Keeps whole lines of `patch` up to `max_bytes`; returns the text and the bytes left out.
fn cap_patch(patch: Vec<u8>, max_bytes: usize) -> (String, u64) {
    if patch.len() <= max_bytes {
        return (String::from_utf8_lossy(&patch).into_owned(), 0);
    }
    let cut = patch[..max_bytes]
        .iter()
        .rposition(|byte| *byte == b'\n')
        .map(|position| position + 1)
        .unwrap_or(0);
    (
        String::from_utf8_lossy(&patch[..cut]).into_owned(),
        (patch.len() - cut) as u64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_and_numstat_records_pair_up_by_path() {
        let listing = b":100644 100644 aaa bbb M\0src/a.rs\0:000000 100644 000 ccc A\0new.bin\0:100644 000000 ddd 000 D\0gone.txt\03\t1\tsrc/a.rs\0-\t-\tnew.bin\00\t2\tgone.txt\0";
        let untracked: BTreeSet<String> = ["new.bin".to_string()].into();
        let files = parse_listing(listing, &untracked).unwrap();
        assert_eq!(
            files,
            vec![
                ChangedFile {
                    path: "gone.txt".into(),
                    status: FileStatus::Deleted,
                    additions: Some(0),
                    deletions: Some(2),
                    untracked: false
                },
                ChangedFile {
                    path: "new.bin".into(),
                    status: FileStatus::Added,
                    additions: None,
                    deletions: None,
                    untracked: true
                },
                ChangedFile {
                    path: "src/a.rs".into(),
                    status: FileStatus::Modified,
                    additions: Some(3),
                    deletions: Some(1),
                    untracked: false
                },
            ]
        );
    }

    #[test]
    fn a_capped_patch_keeps_whole_lines_and_counts_the_rest() {
        let (kept, omitted) = cap_patch(b"line one\nline two\nline three\n".to_vec(), 12);
        assert_eq!(kept, "line one\n");
        assert_eq!(omitted, 20);
        let (whole, none) = cap_patch(b"short\n".to_vec(), 100);
        assert_eq!((whole.as_str(), none), ("short\n", 0));
    }
}
