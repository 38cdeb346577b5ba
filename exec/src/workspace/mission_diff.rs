//! A mission's change against the commit its worktree was made from: every file that
//! differs, untracked ones included (ignored ones not), with its status and line counts,
//! then the unified hunks.
//!
//! Two diffs run side by side: `git diff <base>` of the tracked files, as a person's own
//! command does it (reading the worktree's index, never writing it), and, when there are
//! untracked files, a diff of just those, from a private copy of the index in which they
//! are intent-to-add entries. The two outputs are merged in path order. Every git command
//! runs under the scan's overrides, so nothing the repository's configuration names
//! (external diff, textconv, filters, fsmonitor) runs.

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
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
];

/// The most bytes of paths one git command is given (the rest go to the next one).
const PATHS_PER_COMMAND_BYTES: usize = 256 * 1024;

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
    std::thread::scope(|scope| {
        let untracked_job = scope.spawn(|| -> Result<_, WorkspaceError> {
            let untracked = untracked_paths(&git, root)?;
            let diffed =
                diff_untracked(&git, root, &index_path, base_revision, config, &untracked)?;
            Ok((untracked, diffed))
        });
        let tracked = git.run(root, &diff_arguments(base_revision, config, &[]))?;
        let (untracked, untracked_diffs) =
            untracked_job
                .join()
                .map_err(|_| WorkspaceError::MalformedGitOutput {
                    command: "git ls-files --others".to_owned(),
                    detail: "the thread that ran it panicked".to_owned(),
                })??;
        let (mut listing, tracked_patch) = split_listing(&tracked);
        let mut patches = vec![tracked_patch];
        for output in &untracked_diffs {
            let (records, patch) = split_listing(output);
            listing.extend_from_slice(&records);
            patches.push(patch);
        }
        let mut files = parse_listing(&listing, &untracked)?;
        files.sort_by(|left, right| left.path.cmp(&right.path));
        let (patch, omitted_patch_bytes) = if config.stat_only {
            (String::new(), 0)
        } else {
            cap_patch(merge_patches(&patches), config.max_patch_bytes)
        };
        Ok(MissionDiff {
            files,
            patch,
            omitted_patch_bytes,
        })
    })
}

fn diff_arguments<'a>(
    base_revision: &'a str,
    config: &MissionDiffConfig,
    paths: &[&'a str],
) -> Vec<&'a str> {
    let mut args: Vec<&str> = DIFF_ARGS.to_vec();
    args.extend(["-z", "--raw", "--numstat"]);
    if !config.stat_only {
        args.push("--patch");
    }
    args.extend([base_revision, "--"]);
    args.extend_from_slice(paths);
    args
}

/// `paths` in groups small enough for one command line each.
fn path_groups(paths: &BTreeSet<String>) -> Vec<Vec<&str>> {
    let mut groups: Vec<Vec<&str>> = Vec::new();
    let mut bytes = 0;
    for path in paths {
        if groups.is_empty() || bytes + path.len() > PATHS_PER_COMMAND_BYTES {
            groups.push(Vec::new());
            bytes = 0;
        }
        bytes += path.len() + 1;
        groups.last_mut().expect("pushed above").push(path);
    }
    groups
}

/// The diff of the untracked files against the base: a private copy of the index gets
/// them as intent-to-add entries, and `git diff <base>` of just those paths shows them as
/// new files. One output per group of paths; nothing when there are none.
fn diff_untracked(
    git: &GitRunner,
    root: &Path,
    index_path: &Path,
    base_revision: &str,
    config: &MissionDiffConfig,
    untracked: &BTreeSet<String>,
) -> Result<Vec<Vec<u8>>, WorkspaceError> {
    if untracked.is_empty() {
        return Ok(Vec::new());
    }
    let private = tempfile::Builder::new()
        .prefix("nagi-diff-index-")
        .tempfile()
        .map_err(|source| WorkspaceError::PathUnavailable {
            path: std::env::temp_dir(),
            source,
        })?;
    copy_index(index_path, private.path())?;
    let groups = path_groups(untracked);
    for group in &groups {
        let mut args = vec!["add", "--intent-to-add", "--"];
        args.extend_from_slice(group);
        git.run_with_index_file(root, &args, private.path())?;
    }
    groups
        .iter()
        .map(|group| {
            git.run_with_index_file(
                root,
                &diff_arguments(base_revision, config, group),
                private.path(),
            )
        })
        .collect()
}

/// One diff output: the `-z` records end with an empty one, and the hunks follow it.
fn split_listing(output: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let mut start = 0;
    while let Some(length) = output[start..].iter().position(|byte| *byte == 0) {
        if length == 0 {
            return (output[..start].to_vec(), output[start + 1..].to_vec());
        }
        start += length + 1;
    }
    (output.to_vec(), Vec::new())
}

/// The files' sections of one patch (each starts with `diff --git `), with the `b/` path
/// of its header to order by.
fn patch_sections(patch: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut starts: Vec<usize> = Vec::new();
    let mut line_start = 0;
    while line_start < patch.len() {
        if patch[line_start..].starts_with(b"diff --git ") {
            starts.push(line_start);
        }
        line_start = match patch[line_start..].iter().position(|byte| *byte == b'\n') {
            Some(end) => line_start + end + 1,
            None => patch.len(),
        };
    }
    starts
        .iter()
        .enumerate()
        .map(|(index, &start)| {
            let end = starts.get(index + 1).copied().unwrap_or(patch.len());
            let section = &patch[start..end];
            let header_end = section
                .iter()
                .position(|byte| *byte == b'\n')
                .unwrap_or(section.len());
            (header_path(&section[..header_end]), section)
        })
        .collect()
}

/// The path of a `diff --git a/<path> b/<path>` header (the two are the same without
/// renames); the whole header for a quoted one, which still orders it near its place.
fn header_path(header: &[u8]) -> &[u8] {
    const PREFIX: &[u8] = b"diff --git a/";
    let Some(rest) = header.strip_prefix(PREFIX) else {
        return header;
    };
    // rest = <path> " b/" <path>
    if rest.len() < 3 || (rest.len() - 3) % 2 != 0 {
        return header;
    }
    let length = (rest.len() - 3) / 2;
    let (first, second) = (&rest[..length], &rest[length + 3..]);
    if first == second && &rest[length..length + 3] == b" b/" {
        first
    } else {
        header
    }
}

/// The patches of the tracked and the untracked files as one, in path order (each is in
/// path order already: git sorts its output).
fn merge_patches(patches: &[Vec<u8>]) -> Vec<u8> {
    let mut sections: Vec<(&[u8], &[u8])> = patches
        .iter()
        .flat_map(|patch| patch_sections(patch))
        .collect();
    sections.sort_by(|left, right| left.0.cmp(right.0));
    sections
        .into_iter()
        .flat_map(|(_, section)| section.iter().copied())
        .collect()
}

/// Copies the checkout's index to `private`, for git to work on with `GIT_INDEX_FILE` while
/// the checkout's own stays untouched; `false` when the repository has no index yet, which
/// leaves no file (git then starts the private one empty).
///
/// The copy keeps the original's modification time. git takes an entry whose file time is
/// not older than the index file's as racily clean and compares its content. A copy with a
/// fresh time would make git trust the stats of a file rewritten, at the same size, within
/// the clock tick in which the index was written: `git add -A` would stage the old content.
/// The time is read before the content, so an index rewritten in between is at worst
/// taken as older than it is, which only makes git compare more content.
pub(super) fn copy_index(index_path: &Path, private: &Path) -> Result<bool, WorkspaceError> {
    let unreadable = |source: std::io::Error| WorkspaceError::Io {
        path: index_path.display().to_string(),
        source,
    };
    let mut original = match std::fs::File::open(index_path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let _ = std::fs::remove_file(private);
            return Ok(false);
        }
        Err(error) => return Err(unreadable(error)),
    };
    let modified = original
        .metadata()
        .and_then(|metadata| metadata.modified())
        .map_err(unreadable)?;
    let unwritable = |source: std::io::Error| WorkspaceError::Io {
        path: private.display().to_string(),
        source,
    };
    let mut copy = std::fs::File::create(private).map_err(unwritable)?;
    std::io::copy(&mut original, &mut copy).map_err(unreadable)?;
    copy.set_modified(modified).map_err(unwritable)?;
    Ok(true)
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
    fn the_patches_of_tracked_and_untracked_files_merge_in_path_order() {
        let tracked = b"diff --git a/b.rs b/b.rs\n-x\n+y\ndiff --git a/d b/d\n+d\n".to_vec();
        let untracked =
            b"diff --git a/a b/c b/a b/c\n+new\ndiff --git a/c.txt b/c.txt\n+c\n".to_vec();
        let merged = String::from_utf8(merge_patches(&[tracked, untracked])).unwrap();
        let headers: Vec<&str> = merged
            .lines()
            .filter(|line| line.starts_with("diff --git"))
            .collect();
        assert_eq!(
            headers,
            vec![
                "diff --git a/a b/c b/a b/c",
                "diff --git a/b.rs b/b.rs",
                "diff --git a/c.txt b/c.txt",
                "diff --git a/d b/d"
            ]
        );
        assert!(merged.contains("+new\n") && merged.ends_with("+d\n"));
    }

    #[test]
    fn raw_and_numstat_records_pair_up_by_path() {
        let listing = b":100644 100644 aaa bbb M\0src/a.rs\0:000000 100644 000 ccc A\0new.bin\0:100644 000000 ddd 000 D\0gone.txt\x003\t1\tsrc/a.rs\0-\t-\tnew.bin\x000\t2\tgone.txt\0";
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
