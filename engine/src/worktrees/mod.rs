//! A mission's own worktree: where it goes, making it at the mission's first start (with
//! the recipe's ignored files copied in when the start runs the recipe), noticing that it was deleted, and removing it at
//! archive unless it holds changes that were not landed. `git.rs` does the git work.
//!
//! Where: the recipe's `[worktree] location` (relative to the checkout) when it names
//! one; else `[worktree] location` of `config.toml`; else nagi's worktrees folder
//! (`crate::paths::default_worktrees_dir`), one folder per
//! repository. Never inside nagi's config or data folders, which no provider may write.

pub mod at_location;
pub mod checkouts;
pub mod git;
pub mod land;
pub mod merging;
pub mod remote;
pub mod sync;

pub use at_location::{
    MissionWorktree as WorktreeAtLocation, PreparedWorktree, create_mission_worktree,
    mission_branch_name, prepare_mission_worktree,
};

use std::path::{Path, PathBuf};

use nagi_mission::MissionError;
use nagi_mission::model::MissionWorktree;
use nagi_schema::ids::MissionId;
use nagi_schema::worktree::MissionWorktreeState;

use crate::config::EngineConfig;
use crate::missions::repository::Checkout;
use crate::recipe::ProjectRecipe;

/// Where a mission's worktree will be made, and from what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedWorktree {
    pub target: PathBuf,
    pub base_ref: String,
}

/// `Err(folder)` when `target` is inside nagi's config or data folder, which no provider
/// may write, so no worktree may be there.
pub fn refuse_nagi_folders(config: &EngineConfig, target: &Path) -> Result<(), PathBuf> {
    for own in [&config.paths.config_dir, &config.paths.data_dir] {
        let own = std::fs::canonicalize(own).unwrap_or_else(|_| own.clone());
        if target.starts_with(&own) {
            return Err(own);
        }
    }
    Ok(())
}

/// Decides where the mission's worktree goes and what it is made from: `base`, else the
/// recipe's `[worktree] base`, else `HEAD`. Refuses a place inside nagi's own folders.
pub fn plan(
    config: &EngineConfig,
    repository: &Checkout,
    mission_id: &MissionId,
    base: Option<&str>,
    recipe: Option<&ProjectRecipe>,
) -> Result<PlannedWorktree, MissionError> {
    let target = match recipe.and_then(|recipe| recipe.worktree.location.as_deref()) {
        Some(location) => repository
            .root
            .join(location)
            .join(mission_id.path_segment()),
        None => git::repository_folder(
            &config.worktrees_dir,
            &repository.root,
            &repository.common_dir,
        )
        .join(mission_id.path_segment()),
    };
    refuse_nagi_folders(config, &target).map_err(|own| {
        MissionError::WorktreeFailed(format!(
            "the mission worktree would be {}, inside nagi's folder {}, which no provider may write; set [worktree] location in config.toml to a folder outside it",
            target.display(),
            own.display()
        ))
    })?;
    let base_ref = base
        .map(str::to_string)
        .or_else(|| recipe.map(|recipe| recipe.worktree.base.clone()))
        .unwrap_or_else(|| "HEAD".to_string());
    if base_ref.trim().is_empty() || base_ref.contains(['\0', '\n', '\r']) || base_ref.len() > 256 {
        return Err(MissionError::WorktreeFailed(format!(
            "the base {base_ref:?} is not a revision: give a branch, tag or commit of at most 256 bytes"
        )));
    }
    Ok(PlannedWorktree { target, base_ref })
}

/// A worktree made for a start, and how to undo it if the start fails before its commit.
#[derive(Debug, Clone)]
pub struct MadeForStart {
    pub worktree: MissionWorktree,
    pub repository_root: PathBuf,
    pub created: bool,
    pub branch_created: bool,
}

/// Makes the planned worktree and copies the recipe's ignored files into a new one.
/// Blocking.
pub fn make_for_start(
    repository: &Checkout,
    mission_id: &MissionId,
    planned: &PlannedWorktree,
    recipe: Option<&ProjectRecipe>,
    now: u64,
) -> Result<MadeForStart, MissionError> {
    let made = git::make_worktree(
        &repository.root,
        mission_id,
        &planned.target,
        &planned.base_ref,
    )
    .map_err(MissionError::WorktreeFailed)?;
    let made_for_start = MadeForStart {
        worktree: MissionWorktree {
            path: made
                .path
                .to_str()
                .ok_or_else(|| {
                    MissionError::WorktreeFailed(format!("{} is not UTF-8", made.path.display()))
                })?
                .to_string(),
            branch: made.branch.clone(),
            base_revision: made.base_revision.clone(),
            base_ref: planned.base_ref.clone(),
            created_at_millis: now,
            state: MissionWorktreeState::Present,
            kept_reason: None,
            target_branch: land::current_branch(&repository.root),
        },
        repository_root: repository.root.clone(),
        created: made.created,
        branch_created: made.branch_created,
    };
    if made.created
        && let Some(recipe) = recipe
        && let Err(error) = crate::recipe::exec::copy_ignored(&repository.root, &made.path, recipe)
    {
        undo_make(&made_for_start);
        return Err(MissionError::WorktreeFailed(format!(
            "the recipe's ignored files could not be copied into the new worktree: {error}"
        )));
    }
    Ok(made_for_start)
}

/// Undoes [`make_for_start`]: removes a worktree it created, and the branch if it made
/// that too. A worktree it only found is left as it was. Blocking.
pub fn undo_make(made: &MadeForStart) {
    if !made.created {
        return;
    }
    let branch = made.branch_created.then_some(made.worktree.branch.as_str());
    let mission_id = made
        .worktree
        .branch
        .strip_prefix("mission/")
        .unwrap_or(&made.worktree.branch);
    if let Err(error) = git::remove_worktree(
        &made.repository_root,
        mission_id,
        Path::new(&made.worktree.path),
        branch,
    ) {
        tracing::warn!(%error, path = %made.worktree.path, "a failed start could not remove the worktree it made");
    }
}

/// What a start that asks for the mission's worktree runs in.
#[derive(Debug, Clone)]
pub enum WorktreeForStart {
    /// The mission's worktree exists: its runs go on in it.
    Existing(PathBuf),
    /// It is made now, at the mission's first start.
    ToMake {
        planned: PlannedWorktree,
        recipe: Option<ProjectRecipe>,
    },
}

/// Decides the worktree of a start that asks for the mission's own: the one it has, or one
/// to make (placed by [`plan`], with the repository's recipe, if it has a valid one, for
/// the location and the files to copy). `worktree_missing` when the mission's worktree was
/// deleted; the caller blocks the mission.
pub fn choose_for_start(
    config: &EngineConfig,
    repository: &Checkout,
    mission: &nagi_mission::model::Mission,
    base: Option<&str>,
) -> Result<WorktreeForStart, MissionError> {
    if let Some(worktree) = &mission.worktree {
        if let Some(base) = base {
            return Err(MissionError::WorktreeFailed(format!(
                "mission {} already has its worktree {} (made from {}); a base ({base}) applies only to the first start",
                mission.mission_id, worktree.path, worktree.base_ref
            )));
        }
        return match worktree.state {
            MissionWorktreeState::Present
                if git::worktree_is_present(Path::new(&worktree.path)) =>
            {
                Ok(WorktreeForStart::Existing(PathBuf::from(&worktree.path)))
            }
            MissionWorktreeState::Present | MissionWorktreeState::Missing => {
                Err(MissionError::WorktreeMissing(missing_reason(worktree)))
            }
            MissionWorktreeState::Removed | MissionWorktreeState::Kept => {
                Err(MissionError::WorktreeFailed(format!(
                    "the worktree of mission {} was settled when it was archived",
                    mission.mission_id
                )))
            }
        };
    }
    let recipe = crate::recipe::load_project_recipe(&repository.root)
        .ok()
        .flatten();
    let planned = plan(
        config,
        repository,
        &mission.mission_id,
        base,
        recipe.as_ref(),
    )?;
    Ok(WorktreeForStart::ToMake { planned, recipe })
}

/// Why a mission is blocked when its worktree is gone.
pub fn missing_reason(worktree: &MissionWorktree) -> String {
    format!(
        "the mission worktree {} was deleted; its branch {} is kept. Recreate it with `git worktree add {} {}` or start the mission in a checkout with --in-place",
        worktree.path, worktree.branch, worktree.path, worktree.branch
    )
}
