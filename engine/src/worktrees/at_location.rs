//! A mission worktree at a recipe's relative `[worktree].location` (default `.worktrees`
//! for this helper), then the recipe's ignored files copied in. The engine's start path
//! places worktrees with `crate::worktrees` (outside the repository unless the recipe names
//! a location); this is the same git work for a caller that has a recipe and a checkout
//! root only.

use std::path::{Path, PathBuf};

use super::git::make_worktree;
use crate::errors::RecipeExecError;
use crate::recipe::ProjectRecipe;
use crate::recipe::exec::{CopiedFile, copy_ignored};

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

/// The branch of a mission's worktree.
pub fn mission_branch_name(mission_id: &str) -> String {
    nagi_mission::worktree::mission_branch(mission_id)
}

/// Creates (or finds) the linked worktree of `mission_id` at
/// `<repository_root>/<location>/<mission_id>` from `HEAD`. Blocking.
pub fn create_mission_worktree(
    repository_root: &Path,
    mission_id: &str,
    location: &str,
) -> Result<MissionWorktree, RecipeExecError> {
    let target = repository_root.join(location).join(mission_id);
    let made = make_worktree(repository_root, mission_id, &target, "HEAD").map_err(|detail| {
        RecipeExecError::WorktreeFailed {
            path: target.display().to_string(),
            detail,
        }
    })?;
    Ok(MissionWorktree {
        path: made.path,
        branch: made.branch,
        created: made.created,
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
    let location = recipe
        .and_then(|recipe| recipe.worktree.location.as_deref())
        .unwrap_or(".worktrees");
    let worktree = create_mission_worktree(repository_root, mission_id, location)?;
    let copied = match recipe {
        Some(recipe) => copy_ignored(repository_root, &worktree.path, recipe)?,
        None => Vec::new(),
    };
    Ok(PreparedWorktree { worktree, copied })
}
