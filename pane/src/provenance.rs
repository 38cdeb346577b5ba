//! What the worktree methods need of the pane host: where each workspace is, its Git
//! provenance (set, with `workspace.updated` when it changes), a workspace's root pane,
//! and a way to send the worktree lifecycle events on the host's bus.

use nagi_schema::pane::{PaneInfo, TabInfo, WorkspaceInfo, WorkspaceWorktreeInfo};
use nagi_schema::pane_events::PaneEventData;

use super::error::PaneError;
use super::host::PaneHost;

/// Where one workspace is.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkspacePlace {
    pub workspace_id: String,
    /// The directory its root pane started in.
    pub cwd: String,
    pub worktree: Option<WorkspaceWorktreeInfo>,
    pub focused: bool,
}

impl PaneHost {
    /// Every workspace's place, in order.
    pub fn workspace_places(&self) -> Vec<WorkspacePlace> {
        let registry = self.registry();
        registry
            .workspaces
            .iter()
            .map(|workspace| WorkspacePlace {
                workspace_id: workspace.id.clone(),
                cwd: workspace.cwd.clone(),
                worktree: workspace.worktree.clone(),
                focused: registry.focused_workspace.as_deref() == Some(workspace.id.as_str()),
            })
            .collect()
    }

    /// Gives a workspace its worktree provenance; `workspace.updated` is sent when it
    /// changed.
    pub fn set_workspace_worktree(
        &self,
        workspace_id: &str,
        worktree: WorkspaceWorktreeInfo,
    ) -> Result<WorkspaceInfo, PaneError> {
        let (workspace, changed) = {
            let mut registry = self.registry();
            let index = registry.workspace_index(workspace_id)?;
            let entry = &mut registry.workspaces[index];
            let changed = entry.worktree.as_ref() != Some(&worktree);
            entry.worktree = Some(worktree);
            (registry.workspace_info(index), changed)
        };
        if changed {
            self.events.emit(PaneEventData::WorkspaceUpdated {
                workspace: workspace.clone(),
            });
        }
        Ok(workspace)
    }

    /// A workspace with its active tab and that tab's first pane.
    pub fn workspace_root(
        &self,
        workspace_id: &str,
    ) -> Result<(WorkspaceInfo, TabInfo, PaneInfo), PaneError> {
        let registry = self.registry();
        let index = registry.workspace_index(workspace_id)?;
        let entry = &registry.workspaces[index];
        let tab_index = entry.active_tab.min(entry.tabs.len().saturating_sub(1));
        let pane = entry
            .tabs
            .get(tab_index)
            .and_then(|tab| tab.panes.first())
            .cloned()
            .ok_or_else(|| PaneError::WorkspaceNotFound {
                workspace_id: workspace_id.to_string(),
            })?;
        let answer = (
            registry.workspace_info(index),
            registry.tab_info(index, tab_index),
        );
        drop(registry);
        Ok((answer.0, answer.1, pane.info()))
    }

    /// Sends a lifecycle event that the host did not make itself (the worktree events).
    pub fn publish(&self, data: PaneEventData) {
        self.events.emit(data);
    }
}
