//! What a landing asks git about a checkout, with git's own speed and none of the programs
//! the repository's configuration names (the runner's overrides): the tree `git add -A`
//! would stage, written with a private copy of the index so the checkout's own index is
//! untouched, and the tracked files that differ from the index or `HEAD`.

use std::path::Path;

use super::WorkspaceError;
use super::git::{GitConfig, GitRunner};

/// The id of the tree `git add -A` would stage in the checkout at `root` (ignored files
/// left out), written as objects only.
pub fn staged_tree(root: &Path, config: &GitConfig) -> Result<String, WorkspaceError> {
    let git = GitRunner::new(config)?.for_repository(root)?;
    let index_path = super::mission_diff::index_path_of(&git, root)?;
    let private = tempfile::Builder::new()
        .prefix("nagi-land-index-")
        .tempfile()
        .map_err(|source| WorkspaceError::Io {
            path: "a private index in the temp folder".to_string(),
            source,
        })?;
    if std::fs::copy(&index_path, private.path()).is_err() {
        // A repository without an index yet: git starts the private one empty.
        let _ = std::fs::remove_file(private.path());
    }
    git.run_with_index_file(root, &["add", "-A", "--", "."], private.path())?;
    let output = git.run_with_index_file(root, &["write-tree"], private.path())?;
    Ok(String::from_utf8_lossy(&output).trim().to_string())
}

/// Tracked files of the checkout at `root` with changes of their own, staged or not
/// (untracked files are not looked at).
pub fn changed_tracked_paths(
    root: &Path,
    config: &GitConfig,
) -> Result<Vec<String>, WorkspaceError> {
    let git = GitRunner::new(config)?.for_repository(root)?;
    let output = git.run(
        root,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=no",
            "--no-renames",
            "--ignore-submodules=all",
        ],
    )?;
    Ok(output
        .split(|byte| *byte == 0)
        .filter(|record| record.len() > 3)
        .map(|record| String::from_utf8_lossy(&record[3..]).into_owned())
        .collect())
}
