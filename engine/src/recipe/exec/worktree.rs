//! The mission's linked worktree (contract §7.2): branch `mission/<mission_id>` from
//! `HEAD`, checked out at `<repository>/<location>/<mission_id>` where `location` is the
//! recipe's `[worktree].location` (default `.worktrees`), then the declared ignored files
//! copied in.
//!
//! libgit2 (git2) does the work: it runs no hooks and no filters configured outside the
//! repository. An existing `mission/<id>` branch is reused (`WorktreeAddOptions::reference`),
//! and asking again for a worktree that already exists at the same place returns it, so a
//! retried launch does not fail on its own leftovers.

use std::path::{Path, PathBuf};

use super::copy::{CopiedFile, copy_ignored};
use crate::errors::RecipeExecError;
use crate::recipe::{ProjectRecipe, WorktreeRecipe};

/// A mission worktree, created or found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissionWorktree {
    /// Canonical root of the linked worktree.
    pub path: PathBuf,
    /// `mission/<mission_id>`.
    pub branch: String,
    /// `false` when the worktree already existed and was reused.
    pub created: bool,
}

/// A worktree with the recipe's ignored files copied in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedWorktree {
    pub worktree: MissionWorktree,
    pub copied: Vec<CopiedFile>,
}

fn failed(path: &Path, detail: impl Into<String>) -> RecipeExecError {
    RecipeExecError::WorktreeFailed {
        path: path.display().to_string(),
        detail: detail.into(),
    }
}

/// The branch of a mission's worktree.
pub fn mission_branch_name(mission_id: &str) -> String {
    format!("mission/{mission_id}")
}

/// Creates (or finds) the linked worktree of `mission_id` below `repository_root`, which
/// must be the root of a (main or linked) checkout. `location` is a validated
/// `[worktree].location`. Blocking.
pub fn create_mission_worktree(
    repository_root: &Path,
    mission_id: &str,
    location: &str,
) -> Result<MissionWorktree, RecipeExecError> {
    let target = repository_root.join(location).join(mission_id);
    let branch_name = mission_branch_name(mission_id);
    if mission_id.is_empty()
        || mission_id.contains(['/', '\\'])
        || !git2::Reference::is_valid_name(&format!("refs/heads/{branch_name}"))
    {
        return Err(failed(
            &target,
            format!("mission id {mission_id:?} cannot name the Git branch `{branch_name}`"),
        ));
    }
    let repository = git2::Repository::open(repository_root).map_err(|error| {
        failed(
            &target,
            format!("cannot open the repository: {}", error.message()),
        )
    })?;
    let root = std::fs::canonicalize(repository_root)
        .map_err(|error| failed(&target, format!("cannot resolve the repository: {error}")))?;
    let workdir = repository
        .workdir()
        .and_then(|workdir| std::fs::canonicalize(workdir).ok());
    if workdir.as_deref() != Some(root.as_path()) {
        return Err(failed(
            &target,
            format!(
                "{} is not the root of a checkout",
                repository_root.display()
            ),
        ));
    }
    if let Ok(existing) = repository.find_worktree(mission_id) {
        let existing_path = std::fs::canonicalize(existing.path()).ok();
        let wanted = std::fs::canonicalize(&target).ok();
        if existing.validate().is_ok() && existing_path.is_some() && existing_path == wanted {
            return Ok(MissionWorktree {
                path: existing_path.expect("checked"),
                branch: branch_name,
                created: false,
            });
        }
        return Err(failed(
            &target,
            format!(
                "the repository already has a worktree named `{mission_id}` at {}",
                existing.path().display()
            ),
        ));
    }
    if std::fs::symlink_metadata(&target).is_ok() {
        return Err(failed(
            &target,
            "the path already exists and is not this mission's worktree",
        ));
    }
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(|error| {
            failed(
                &target,
                format!("cannot create {}: {error}", parent.display()),
            )
        })?;
    }
    let branch = match repository.find_branch(&branch_name, git2::BranchType::Local) {
        Ok(branch) => branch,
        Err(_) => {
            let head = repository
                .head()
                .and_then(|head| head.peel_to_commit())
                .map_err(|error| {
                    failed(
                        &target,
                        format!("HEAD has no commit to branch from: {}", error.message()),
                    )
                })?;
            repository
                .branch(&branch_name, &head, false)
                .map_err(|error| {
                    failed(
                        &target,
                        format!(
                            "cannot create the branch `{branch_name}`: {}",
                            error.message()
                        ),
                    )
                })?
        }
    };
    let mut options = git2::WorktreeAddOptions::new();
    options.reference(Some(branch.get()));
    repository
        .worktree(mission_id, &target, Some(&options))
        .map_err(|error| {
            failed(
                &target,
                format!("git worktree add failed: {}", error.message()),
            )
        })?;
    let path = std::fs::canonicalize(&target)
        .map_err(|error| failed(&target, format!("cannot resolve the new worktree: {error}")))?;
    Ok(MissionWorktree {
        path,
        branch: branch_name,
        created: true,
    })
}

/// Creates the mission worktree at the recipe's location and copies its ignored files
/// (the recipe is the one of the source checkout; without one, `.worktrees` and no
/// copies). Blocking.
pub fn prepare_mission_worktree(
    repository_root: &Path,
    mission_id: &str,
    recipe: Option<&ProjectRecipe>,
) -> Result<PreparedWorktree, RecipeExecError> {
    let default_worktree = WorktreeRecipe::default();
    let location = recipe
        .map(|recipe| recipe.worktree.location.as_str())
        .unwrap_or(default_worktree.location.as_str());
    let worktree = create_mission_worktree(repository_root, mission_id, location)?;
    let copied = match recipe {
        Some(recipe) => copy_ignored(repository_root, &worktree.path, recipe)?,
        None => Vec::new(),
    };
    Ok(PreparedWorktree { worktree, copied })
}
