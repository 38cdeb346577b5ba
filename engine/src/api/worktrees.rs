//! The `worktree.*` methods: Git checkouts as workspaces (seed 001). The git work is in
//! `worktrees::checkouts` (run on a blocking thread); this module finds the source
//! checkout (a workspace's, a directory's, or the focused workspace's), opens and closes
//! workspaces with their worktree provenance, and sends the worktree events.
//!
//! A workspace is open in a checkout when its provenance names the checkout, or, without
//! provenance, when its directory is the checkout's root. `worktree.remove` never deletes a
//! branch, and refuses the main checkout, a checkout that a live run holds (it holds the
//! checkout's claim lock while it removes), a mission's worktree whose mission is not
//! archived, and uncommitted or untracked files, the last two unless `force`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nagi_pane::{PaneError, WorkspaceCreate, WorkspacePlace};
use nagi_schema::git_worktrees::{
    WorktreeCreateParams, WorktreeListParams, WorktreeMethodResult, WorktreeOpenParams,
    WorktreeRemoveParams,
};
use nagi_schema::pane_events::PaneEventData;

use crate::engine::Engine;
use crate::errors::{EngineError, WorktreeError};
use crate::worktrees::checkouts::{self, CheckoutEntry, RepositoryPlace};

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, WorktreeError> + Send + 'static,
) -> Result<T, EngineError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| EngineError::ServerUnavailable(format!("a git task failed: {error}")))?
        .map_err(EngineError::from)
}

fn absolute(field: &str, raw: &str) -> Result<PathBuf, WorktreeError> {
    if raw.is_empty() || raw.contains('\0') || !Path::new(raw).is_absolute() {
        return Err(WorktreeError::InvalidParams(format!(
            "{field} must be an absolute path, got {raw:?} (the CLI expands relative paths)"
        )));
    }
    Ok(PathBuf::from(raw))
}

/// Where a workspace is: the checkout its provenance names, else its directory.
fn place_directory(place: &WorkspacePlace) -> PathBuf {
    place
        .worktree
        .as_ref()
        .map(|worktree| PathBuf::from(&worktree.checkout_path))
        .unwrap_or_else(|| PathBuf::from(&place.cwd))
}

/// The directory a request is about, and the workspace it came from.
fn source_directory(
    engine: &Engine,
    workspace_id: Option<&str>,
    cwd: Option<&str>,
) -> Result<(PathBuf, Option<String>), EngineError> {
    let places = engine.panes.workspace_places();
    match (workspace_id, cwd) {
        (Some(_), Some(_)) => Err(WorktreeError::InvalidParams(
            "give at most one of workspace_id and cwd".into(),
        )
        .into()),
        (None, Some(cwd)) => Ok((absolute("cwd", cwd)?, None)),
        (Some(workspace_id), None) => {
            let place = places
                .iter()
                .find(|place| place.workspace_id == workspace_id)
                .ok_or_else(|| PaneError::WorkspaceNotFound {
                    workspace_id: workspace_id.to_string(),
                })?;
            Ok((place_directory(place), Some(place.workspace_id.clone())))
        }
        (None, None) => {
            let place = places.iter().find(|place| place.focused).ok_or_else(|| {
                WorktreeError::InvalidParams(
                    "no workspace is focused; give workspace_id or cwd".into(),
                )
            })?;
            Ok((place_directory(place), Some(place.workspace_id.clone())))
        }
    }
}

async fn repository(
    engine: &Engine,
    workspace_id: Option<&str>,
    cwd: Option<&str>,
) -> Result<(RepositoryPlace, Option<String>), EngineError> {
    let (directory, source_workspace) = source_directory(engine, workspace_id, cwd)?;
    let place = blocking(move || checkouts::repository_of(&directory)).await?;
    Ok((place, source_workspace))
}

/// The workspace open in `checkout`, if any.
fn open_workspace(places: &[WorkspacePlace], checkout: &Path) -> Option<String> {
    places
        .iter()
        .find(|place| match &place.worktree {
            Some(worktree) => Path::new(&worktree.checkout_path) == checkout,
            None => std::fs::canonicalize(&place.cwd).is_ok_and(|cwd| cwd == checkout),
        })
        .map(|place| place.workspace_id.clone())
}

fn info(
    entry: &CheckoutEntry,
    places: &[WorkspacePlace],
) -> nagi_schema::git_worktrees::WorktreeInfo {
    entry.info(open_workspace(places, &entry.path))
}

pub async fn list(
    engine: &Arc<Engine>,
    params: WorktreeListParams,
) -> Result<WorktreeMethodResult, EngineError> {
    let (place, source_workspace) = repository(
        engine,
        params.workspace_id.as_deref(),
        params.cwd.as_deref(),
    )
    .await?;
    let listed = place.clone();
    let entries = blocking(move || checkouts::checkouts(&listed)).await?;
    let places = engine.panes.workspace_places();
    Ok(WorktreeMethodResult::WorktreeList {
        source: place.source(source_workspace),
        worktrees: entries.iter().map(|entry| info(entry, &places)).collect(),
    })
}

/// The source workspace joins the worktree group when it has no provenance yet and sits at
/// the root of the source checkout (`workspace.updated`).
fn adopt_source(engine: &Engine, place: &RepositoryPlace, source_workspace: Option<&str>) {
    let Some(workspace_id) = source_workspace else {
        return;
    };
    let places = engine.panes.workspace_places();
    if open_workspace(&places, &place.checkout).as_deref() == Some(workspace_id)
        && let Some(source) = places.iter().find(|p| p.workspace_id == workspace_id)
        && source.worktree.is_none()
    {
        let _ = engine
            .panes
            .set_workspace_worktree(workspace_id, place.provenance(&place.checkout));
    }
}

/// Where a new checkout goes: `path` (absolute), else nagi's worktrees folder of the
/// repository. Never inside nagi's own folders.
fn target_folder(
    engine: &Engine,
    place: &RepositoryPlace,
    path: Option<&str>,
    branch: &str,
) -> Result<PathBuf, WorktreeError> {
    let config = engine.config.current();
    let target = match path {
        Some(path) => resolve_parent(&absolute("path", path)?),
        None => checkouts::unused_folder(
            &crate::worktrees::git::repository_folder(
                &config.worktrees_dir,
                &place.root,
                &place.common_dir,
            ),
            branch,
        ),
    };
    crate::worktrees::refuse_nagi_folders(&config, &target).map_err(|own| {
        WorktreeError::Failed(format!(
            "{} is inside nagi's folder {}, which no provider may write; choose another path",
            target.display(),
            own.display()
        ))
    })?;
    Ok(target)
}

/// `path` with its parent resolved (symlinks and all), so that it compares with the
/// canonical paths git reports.
fn resolve_parent(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map(|parent| parent.join(name))
            .unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}

fn new_workspace(
    engine: &Engine,
    place: &RepositoryPlace,
    checkout: &Path,
    label: String,
    focus: bool,
) -> Result<
    (
        nagi_schema::pane::WorkspaceInfo,
        nagi_schema::pane::TabInfo,
        nagi_schema::pane::PaneInfo,
    ),
    PaneError,
> {
    engine.panes.create_workspace(WorkspaceCreate {
        label: Some(label),
        cwd: Some(checkout.display().to_string()),
        command: None,
        env: Default::default(),
        focus,
        worktree: Some(place.provenance(checkout)),
    })
}

pub async fn create(
    engine: &Arc<Engine>,
    params: WorktreeCreateParams,
) -> Result<WorktreeMethodResult, EngineError> {
    if let Some(branch) = &params.branch {
        checkouts::check_branch_name(branch)?;
    }
    if let Some(path) = &params.path {
        absolute("path", path)?;
    }
    let (place, source_workspace) = repository(
        engine,
        params.workspace_id.as_deref(),
        params.cwd.as_deref(),
    )
    .await?;
    let branch = match params.branch.clone() {
        Some(branch) => branch,
        None => {
            let named = place.clone();
            blocking(move || checkouts::unused_branch_name(&named)).await?
        }
    };
    let target = target_folder(engine, &place, params.path.as_deref(), &branch)?;
    let (adding, branch_to_add, base) = (place.clone(), branch.clone(), params.base.clone());
    let added = blocking(move || {
        let added = checkouts::add_checkout(&adding, &branch_to_add, base.as_deref(), &target)?;
        copy_recipe_files(&adding, &added)?;
        Ok(added)
    })
    .await?;
    let label = params.label.clone().unwrap_or_else(|| branch.clone());
    let (_, tab, root_pane) =
        match new_workspace(engine, &place, &added.entry.path, label, params.focus) {
            Ok(made) => made,
            Err(error) => {
                let (undo_place, undo) = (place.clone(), added.clone());
                let _ =
                    tokio::task::spawn_blocking(move || checkouts::undo_add(&undo_place, &undo))
                        .await;
                return Err(error.into());
            }
        };
    adopt_source(engine, &place, source_workspace.as_deref());
    let workspace = engine.panes.workspace_info(&tab.workspace_id)?;
    let worktree = info(&added.entry, &engine.panes.workspace_places());
    engine.panes.publish(PaneEventData::WorktreeCreated {
        workspace: workspace.clone(),
        worktree: worktree.clone(),
    });
    Ok(WorktreeMethodResult::WorktreeCreated {
        workspace,
        tab,
        root_pane,
        worktree,
    })
}

/// A new checkout gets the repository recipe's `copy_ignored` files (`.env` and the like),
/// as a mission worktree does. The recipe's setup is not run: it runs programs, and
/// `worktree.create` has no consent to give for that. Undoes the add when a copy fails.
fn copy_recipe_files(
    place: &RepositoryPlace,
    added: &checkouts::AddedCheckout,
) -> Result<(), WorktreeError> {
    let Ok(Some(recipe)) = crate::recipe::load_project_recipe(&place.checkout) else {
        return Ok(());
    };
    if let Err(error) =
        crate::recipe::exec::copy_ignored(&place.checkout, &added.entry.path, &recipe)
    {
        checkouts::undo_add(place, added);
        return Err(WorktreeError::Failed(format!(
            "the recipe's ignored files could not be copied into the new worktree, which was removed again: {error}"
        )));
    }
    Ok(())
}

pub async fn open(
    engine: &Arc<Engine>,
    params: WorktreeOpenParams,
) -> Result<WorktreeMethodResult, EngineError> {
    let wanted_path = match (&params.path, &params.branch) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(
                WorktreeError::InvalidParams("give exactly one of path and branch".into()).into(),
            );
        }
        (Some(path), None) => Some(absolute("path", path)?),
        (None, Some(_)) => None,
    };
    let (place, _) = repository(
        engine,
        params.workspace_id.as_deref(),
        params.cwd.as_deref(),
    )
    .await?;
    let listed = place.clone();
    let entries = blocking(move || checkouts::checkouts(&listed)).await?;
    let entry = match (&wanted_path, &params.branch) {
        (Some(path), _) => {
            let resolved = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
            entries
                .into_iter()
                .find(|entry| entry.path == resolved || entry.path == *path)
                .ok_or_else(|| {
                    WorktreeError::NotFound(format!(
                        "{} is not a checkout of the repository {}; `nagi worktree list` shows its checkouts",
                        path.display(),
                        place.root.display()
                    ))
                })?
        }
        (None, Some(branch)) => entries
            .into_iter()
            .find(|entry| entry.branch.as_deref() == Some(branch.as_str()))
            .ok_or_else(|| {
                WorktreeError::NotFound(format!(
                    "no checkout of the repository {} has the branch {branch} checked out; make one with worktree.create (nagi worktree create --branch {branch})",
                    place.root.display()
                ))
            })?,
        (None, None) => unreachable!("checked above"),
    };
    if entry.is_prunable || entry.is_bare {
        return Err(WorktreeError::Failed(format!(
            "{} cannot be opened: {}",
            entry.path.display(),
            if entry.is_bare {
                "it is a bare repository, with no files"
            } else {
                "its folder is gone (`git worktree prune` forgets it)"
            }
        ))
        .into());
    }
    let places = engine.panes.workspace_places();
    let (workspace_id, tab, root_pane, already_open) = match open_workspace(&places, &entry.path) {
        Some(workspace_id) => {
            engine
                .panes
                .set_workspace_worktree(&workspace_id, place.provenance(&entry.path))?;
            if params.focus {
                engine.panes.focus_workspace(&workspace_id)?;
            }
            let (_, tab, root_pane) = engine.panes.workspace_root(&workspace_id)?;
            (workspace_id, tab, root_pane, true)
        }
        None => {
            let label = params
                .label
                .clone()
                .unwrap_or_else(|| entry.info(None).label);
            let (workspace, tab, root_pane) =
                new_workspace(engine, &place, &entry.path, label, params.focus)?;
            (workspace.workspace_id, tab, root_pane, false)
        }
    };
    let workspace = engine.panes.workspace_info(&workspace_id)?;
    let worktree = info(&entry, &engine.panes.workspace_places());
    engine.panes.publish(PaneEventData::WorktreeOpened {
        workspace: workspace.clone(),
        worktree: worktree.clone(),
        already_open,
    });
    Ok(WorktreeMethodResult::WorktreeOpened {
        workspace,
        tab,
        root_pane,
        worktree,
        already_open,
    })
}

pub async fn remove(
    engine: &Arc<Engine>,
    params: WorktreeRemoveParams,
) -> Result<WorktreeMethodResult, EngineError> {
    let places = engine.panes.workspace_places();
    let place_of_workspace = places
        .iter()
        .find(|place| place.workspace_id == params.workspace_id)
        .ok_or_else(|| PaneError::WorkspaceNotFound {
            workspace_id: params.workspace_id.clone(),
        })?;
    let directory = place_directory(place_of_workspace);
    let workspace_id = params.workspace_id.clone();
    let found = directory.clone();
    let (place, entry) = blocking(move || {
        let place = checkouts::repository_of(&found)?;
        let entry = checkouts::checkouts(&place)?
            .into_iter()
            .find(|entry| entry.path == place.checkout)
            .ok_or_else(|| {
                WorktreeError::NotFound(format!("{} is not a checkout", found.display()))
            })?;
        Ok((place, entry))
    })
    .await?;
    if open_workspace(&places, &entry.path).as_deref() != Some(workspace_id.as_str()) {
        return Err(WorktreeError::Failed(format!(
            "workspace {workspace_id} is not open at the root of a checkout (its directory is {}); open one with worktree.open",
            directory.display()
        ))
        .into());
    }
    if !entry.is_linked {
        return Err(WorktreeError::Failed(format!(
            "workspace {workspace_id} is the repository's main checkout {}; worktree.remove removes linked worktrees only",
            entry.path.display()
        ))
        .into());
    }
    refuse_live_mission_worktree(engine, &entry, params.force)?;
    let checkout = crate::missions::repository::Checkout {
        root: entry.path.clone(),
        common_dir: place.common_dir.clone(),
    };
    let key = checkout.claim_key();
    let _claim = crate::runs::steps::ClaimLock::acquire(engine, &checkout)?;
    if let Some(holder) = engine.missions.read(|reader| reader.claim(&key))? {
        return Err(WorktreeError::Claimed(format!(
            "the checkout {} is claimed by mission {} run {}",
            entry.path.display(),
            holder.mission_id,
            holder.run_id
        ))
        .into());
    }
    let (checked, force) = (entry.clone(), params.force);
    blocking(move || checkouts::check_removable(&checked, force)).await?;
    let snapshot = engine.panes.workspace_info(&workspace_id).ok();
    for place in engine.panes.workspace_places() {
        if open_workspace(std::slice::from_ref(&place), &entry.path).is_some() {
            engine.panes.close_workspace(&place.workspace_id).await?;
        }
    }
    let (removing, removed) = (place.clone(), entry.clone());
    blocking(move || checkouts::remove_checkout(&removing, &removed)).await?;
    engine.panes.publish(PaneEventData::WorktreeRemoved {
        workspace_id: workspace_id.clone(),
        workspace: snapshot,
        worktree: entry.info(None),
        forced: params.force,
    });
    Ok(WorktreeMethodResult::WorktreeRemoved {
        workspace_id,
        path: entry.path.display().to_string(),
        forced: params.force,
    })
}

/// A mission's worktree (branch `mission/<id>`, the path its mission records) may be
/// removed only when the mission is archived, or with `force`: it holds the mission's
/// work until it lands.
fn refuse_live_mission_worktree(
    engine: &Engine,
    entry: &CheckoutEntry,
    force: bool,
) -> Result<(), EngineError> {
    let Some(mission_id) = entry
        .branch
        .as_deref()
        .and_then(|branch| branch.strip_prefix("mission/"))
    else {
        return Ok(());
    };
    let Ok(mission) = crate::api::missions::load_checked(engine, mission_id) else {
        return Ok(());
    };
    let records_it = mission
        .worktree
        .as_ref()
        .is_some_and(|worktree| Path::new(&worktree.path) == entry.path);
    if records_it && mission.status != nagi_schema::mission::MissionStatus::Archived && !force {
        return Err(WorktreeError::Failed(format!(
            "{} is the worktree of mission {mission_id} ({}); land or abandon the mission, or remove with force to delete its work",
            entry.path.display(),
            mission.status.as_str()
        ))
        .into());
    }
    Ok(())
}
