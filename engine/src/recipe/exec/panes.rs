//! The project pane: one managed workspace per run that executes a recipe, whose root pane
//! follows the recipe transcript (progress lines and setup/cleanup output) and which has
//! one tab per service following that service's log — all with `tail -F`, the pattern of
//! the run panes (`runs::start`), so `nagi pane attach` shows them live.
//!
//! The followers carry `NAGI_SESSION_MARKER`, so a restarted server ends them as leftovers;
//! the files they follow stay, and recovery opens a new project pane. A pane that cannot be
//! opened is reported as a progress line and does not fail the launch: the output is in the
//! files either way.

use std::collections::BTreeMap;
use std::path::Path;

use crate::engine::Engine;
use crate::leftovers::SESSION_MARKER;
use nagi_pane::{TabCreate, WorkspaceCreate};

use super::RunTarget;

/// The workspace and root pane of a run's project pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectPane {
    pub workspace_id: String,
    /// The root pane, following the recipe transcript.
    pub pane_id: String,
}

fn follow(path: &Path) -> Vec<String> {
    vec![
        "tail".into(),
        "-n".into(),
        "+1".into(),
        "-F".into(),
        path.display().to_string(),
    ]
}

fn marker_environment(engine: &Engine) -> BTreeMap<String, String> {
    [(
        SESSION_MARKER.to_string(),
        crate::leftovers::session_marker_value(&engine.config.current().paths.data_dir),
    )]
    .into_iter()
    .collect()
}

/// Opens the run's project workspace following `transcript_path`.
pub fn open_project_pane(
    engine: &Engine,
    target: &RunTarget,
    transcript_path: &Path,
) -> Result<ProjectPane, String> {
    let (workspace, _tab, pane) = engine
        .panes
        .create_workspace(WorkspaceCreate {
            label: Some(format!("{} {} project", target.mission_id, target.run_id)),
            cwd: Some(target.worktree.display().to_string()),
            command: Some(follow(transcript_path)),
            env: marker_environment(engine),
            focus: false,
            worktree: None,
        })
        .map_err(|error| error.to_string())?;
    Ok(ProjectPane {
        workspace_id: workspace.workspace_id,
        pane_id: pane.pane_id,
    })
}

/// Adds a tab following a service's log; returns its pane id.
pub fn open_service_tab(
    engine: &Engine,
    project: &ProjectPane,
    target: &RunTarget,
    service_id: &str,
    log_path: &Path,
) -> Result<String, String> {
    let (_tab, pane) = engine
        .panes
        .create_tab(TabCreate {
            workspace_id: Some(project.workspace_id.clone()),
            label: Some(service_id.to_owned()),
            cwd: Some(target.worktree.display().to_string()),
            command: Some(follow(log_path)),
            env: marker_environment(engine),
            focus: false,
        })
        .map_err(|error| error.to_string())?;
    Ok(pane.pane_id)
}
