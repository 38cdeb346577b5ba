//! The git work of a mission worktree, through libgit2, which runs no hooks and no filters
//! configured outside the repository: make it on branch `mission/<id>` from a base, tell
//! whether it holds changes, and remove it while keeping its branch. Blocking.

use std::path::{Path, PathBuf};

/// A mission worktree on disk, made or found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MadeWorktree {
    /// Canonical root of the linked worktree.
    pub path: PathBuf,
    /// `mission/<mission_id>`.
    pub branch: String,
    /// The commit the branch pointed at when the worktree was made.
    pub base_revision: String,
    /// `false` when the worktree already existed at `target` and was reused.
    pub created: bool,
    /// `false` when the branch existed before (it is then kept by an undo).
    pub branch_created: bool,
}

fn repository_at(root: &Path) -> Result<git2::Repository, String> {
    git2::Repository::open(root).map_err(|error| {
        format!(
            "cannot open the repository {}: {}",
            root.display(),
            error.message()
        )
    })
}

/// The libgit2 name of a mission's worktree (its folder under `.git/worktrees`).
fn worktree_name(mission_id: &str) -> String {
    format!("nagi-{mission_id}")
}

/// Makes (or finds) the linked worktree of `mission_id` at `target`, on branch
/// `mission/<mission_id>`, from `base_ref` (any revision git understands: `HEAD`, a branch,
/// a tag, a commit). `repository_root` is the root of a checkout of the repository. An
/// existing branch of that name is used as it is, and asking again for a worktree that
/// exists at `target` returns it, so a retried start does not fail on its own leftovers.
pub fn make_worktree(
    repository_root: &Path,
    mission_id: &str,
    target: &Path,
    base_ref: &str,
) -> Result<MadeWorktree, String> {
    let branch_name = nagi_mission::worktree::mission_branch(mission_id);
    if !git2::Reference::is_valid_name(&format!("refs/heads/{branch_name}")) {
        return Err(format!(
            "mission id {mission_id:?} cannot name the Git branch `{branch_name}`; start it in the checkout itself (--in-place)"
        ));
    }
    let repository = repository_at(repository_root)?;
    let name = worktree_name(mission_id);
    if let Ok(existing) = repository.find_worktree(&name) {
        let existing_path = std::fs::canonicalize(existing.path()).ok();
        let wanted = std::fs::canonicalize(target).ok();
        if let Some(path) = existing_path
            && existing.validate().is_ok()
            && Some(&path) == wanted.as_ref()
        {
            let worktree_repository = repository_at(&path)?;
            let head = worktree_repository
                .head()
                .and_then(|head| head.peel_to_commit())
                .map_err(|error| {
                    format!(
                        "cannot read HEAD of {}: {}",
                        path.display(),
                        error.message()
                    )
                })?;
            return Ok(MadeWorktree {
                path,
                branch: branch_name,
                base_revision: head.id().to_string(),
                created: false,
                branch_created: false,
            });
        }
        // A worktree of this name whose folder is gone is stale: prune it and make it anew.
        if existing.validate().is_err() {
            let mut prune = git2::WorktreePruneOptions::new();
            prune.valid(false).working_tree(false);
            existing.prune(Some(&mut prune)).map_err(|error| {
                format!(
                    "cannot prune the stale worktree `{name}`: {}",
                    error.message()
                )
            })?;
        } else {
            return Err(format!(
                "the repository already has a worktree `{name}` at {}",
                existing.path().display()
            ));
        }
    }
    if std::fs::symlink_metadata(target).is_ok() {
        return Err(format!(
            "{} already exists and is not this mission's worktree",
            target.display()
        ));
    }
    let base = repository
        .revparse_single(base_ref)
        .and_then(|object| object.peel_to_commit())
        .map_err(|error| format!("the base {base_ref:?} names no commit: {}", error.message()))?;
    let (branch, branch_created) =
        match repository.find_branch(&branch_name, git2::BranchType::Local) {
            Ok(branch) => (branch, false),
            Err(_) => (
                repository
                    .branch(&branch_name, &base, false)
                    .map_err(|error| {
                        format!(
                            "cannot create the branch `{branch_name}`: {}",
                            error.message()
                        )
                    })?,
                true,
            ),
        };
    let base_revision = branch
        .get()
        .peel_to_commit()
        .map_err(|error| {
            format!(
                "the branch `{branch_name}` has no commit: {}",
                error.message()
            )
        })?
        .id()
        .to_string();
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
    }
    let mut options = git2::WorktreeAddOptions::new();
    options.reference(Some(branch.get()));
    if let Err(error) = repository.worktree(&name, target, Some(&options)) {
        if branch_created
            && let Ok(mut branch) = repository.find_branch(&branch_name, git2::BranchType::Local)
        {
            let _ = branch.delete();
        }
        return Err(format!("git worktree add failed: {}", error.message()));
    }
    let path = std::fs::canonicalize(target)
        .map_err(|error| format!("cannot resolve the new worktree: {error}"))?;
    // libgit2's checkout leaves the tree cache out of the index; git's own
    // `worktree add` writes it, and a landing's staging needs it to stay fast. Best effort:
    // a worktree without it is only slower.
    if let Err(error) = nagi_exec::workspace::staging::cache_index_trees(&path, &Default::default())
    {
        tracing::debug!(path = %path.display(), %error, "the new worktree's index keeps no tree cache");
    }
    Ok(MadeWorktree {
        path,
        branch: branch_name,
        base_revision,
        created: true,
        branch_created,
    })
}

/// Whether `path` is still a checkout (its folder and its `.git` entry exist).
pub fn worktree_is_present(path: &Path) -> bool {
    std::fs::symlink_metadata(path.join(".git")).is_ok()
}

/// What in the worktree was not landed: files that differ from its HEAD (untracked ones
/// included, ignored ones not) and, when `base_revision` is given, commits on its branch
/// past it. `None` when there is nothing.
pub fn unlanded_changes(
    path: &Path,
    base_revision: Option<&str>,
) -> Result<Option<String>, String> {
    let repository = repository_at(path)?;
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let changed = repository
        .statuses(Some(&mut options))
        .map_err(|error| {
            format!(
                "cannot read the status of {}: {}",
                path.display(),
                error.message()
            )
        })?
        .len();
    let head = repository
        .head()
        .and_then(|head| head.peel_to_commit())
        .map_err(|error| {
            format!(
                "cannot read HEAD of {}: {}",
                path.display(),
                error.message()
            )
        })?
        .id();
    let commits = match base_revision.map(git2::Oid::from_str) {
        Some(Ok(base)) if base != head => {
            let mut walk = repository
                .revwalk()
                .map_err(|error| error.message().to_string())?;
            walk.push(head)
                .map_err(|error| error.message().to_string())?;
            let _ = walk.hide(base);
            walk.count()
        }
        _ => 0,
    };
    let mut parts = Vec::new();
    if changed > 0 {
        parts.push(format!(
            "{changed} changed file{}",
            if changed == 1 { "" } else { "s" }
        ));
    }
    if commits > 0 {
        parts.push(format!(
            "{commits} commit{} past the base",
            if commits == 1 { "" } else { "s" }
        ));
    }
    Ok((!parts.is_empty()).then(|| parts.join(" and ")))
}

/// Removes the worktree at `path` (its folder and git's record of it). The branch stays,
/// unless `delete_branch` names it (the undo of a start that made a fresh branch).
pub fn remove_worktree(
    repository_root: &Path,
    mission_id: &str,
    path: &Path,
    delete_branch: Option<&str>,
) -> Result<(), String> {
    if std::fs::symlink_metadata(path).is_ok() {
        std::fs::remove_dir_all(path)
            .map_err(|error| format!("cannot remove {}: {error}", path.display()))?;
    }
    let repository = repository_at(repository_root)?;
    if let Ok(worktree) = repository.find_worktree(&worktree_name(mission_id)) {
        let mut prune = git2::WorktreePruneOptions::new();
        prune.valid(true).working_tree(false);
        worktree
            .prune(Some(&mut prune))
            .map_err(|error| format!("cannot prune the worktree record: {}", error.message()))?;
    }
    if let Some(branch_name) = delete_branch
        && let Ok(mut branch) = repository.find_branch(branch_name, git2::BranchType::Local)
    {
        branch.delete().map_err(|error| {
            format!(
                "cannot delete the branch `{branch_name}`: {}",
                error.message()
            )
        })?;
    }
    Ok(())
}

/// `<base>/<repository folder name>-<8 hex digits of its common dir>`: one folder per
/// repository, and two repositories of the same name never share one.
pub fn repository_folder(base: &Path, checkout_root: &Path, common_dir: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let name = checkout_root
        .file_name()
        .and_then(|name| name.to_str())
        .filter(|name| !name.is_empty())
        .unwrap_or("repository");
    let digest = Sha256::digest(common_dir.as_os_str().as_encoded_bytes());
    base.join(format!("{name}-{}", &hex::encode(digest)[..8]))
}
