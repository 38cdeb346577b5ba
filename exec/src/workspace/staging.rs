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
    let private = tempfile::Builder::new()
        .prefix("nagi-land-index-")
        .tempfile()
        .map_err(|source| WorkspaceError::Io {
            path: "a private index in the temp folder".to_string(),
            source,
        })?;
    stage_into(root, config, private.path())
}

/// The name of the index [`staged_tree_keeping_index`] keeps for `tree`.
pub fn kept_index_name(tree: &str) -> String {
    format!("{KEPT_INDEX_PREFIX}{tree}")
}

const KEPT_INDEX_PREFIX: &str = "nagi-staged-index-";

/// [`staged_tree`], keeping the private index it staged in `folder` (the checkout's own
/// git folder) as [`kept_index_name`] of the tree: an index that describes exactly that
/// tree, with fresh file stats, which can become the checkout's index once a commit of
/// that tree is its `HEAD` (one rename instead of rewriting every entry). Earlier kept
/// indexes in `folder` are removed.
pub fn staged_tree_keeping_index(
    root: &Path,
    config: &GitConfig,
    folder: &Path,
) -> Result<String, WorkspaceError> {
    if let Ok(entries) = std::fs::read_dir(folder) {
        for entry in entries.flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(KEPT_INDEX_PREFIX)
            {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let staging = folder.join(format!("{KEPT_INDEX_PREFIX}staging"));
    let tree = stage_into(root, config, &staging);
    let tree = match tree {
        Ok(tree) => tree,
        Err(error) => {
            let _ = std::fs::remove_file(&staging);
            return Err(error);
        }
    };
    std::fs::rename(&staging, folder.join(kept_index_name(&tree))).map_err(|source| {
        WorkspaceError::Io {
            path: staging.display().to_string(),
            source,
        }
    })?;
    Ok(tree)
}

/// Stages the checkout into the index file `private` (a copy of its own index to start
/// from) and writes its tree.
fn stage_into(root: &Path, config: &GitConfig, private: &Path) -> Result<String, WorkspaceError> {
    let git = GitRunner::new(config)?.for_repository(root)?;
    let index_path = super::mission_diff::index_path_of(&git, root)?;
    super::mission_diff::copy_index(&index_path, private)?;
    git.run_with_index_file(root, &["add", "-A", "--", "."], private)?;
    let output = git.run_with_index_file(root, &["write-tree"], private)?;
    Ok(String::from_utf8_lossy(&output).trim().to_string())
}

/// Writes the tree cache into the index of the checkout at `root` (`git write-tree`
/// keeps it there): a checkout libgit2 made has none, and without it every later staging
/// of the checkout hashes each of its folders again. The file stats in the index stay.
pub fn cache_index_trees(root: &Path, config: &GitConfig) -> Result<(), WorkspaceError> {
    let git = GitRunner::new(config)?.for_repository(root)?;
    git.run(root, &["write-tree"])?;
    Ok(())
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
