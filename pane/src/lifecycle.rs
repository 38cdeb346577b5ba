//! Creating, closing, renaming, moving and focusing workspaces, tabs and panes.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use nagi_schema::pane::{
    AgentInfo, PaneInfo, PaneLayoutPane, PaneLayoutRect, PaneLayoutSnapshot, SessionSnapshot,
    TabInfo, WorkspaceInfo,
};
use nagi_schema::pane_events::PaneEventData;

use super::core::PaneCore;
use super::error::PaneError;
use super::host::{PaneHost, Registry, TabCreate, TabEntry, WorkspaceCreate, WorkspaceEntry};
use super::metadata::{WorkspaceMetadata, normalize_text};
use super::process;
use super::pty::{PaneLaunch, spawn_pane};

/// Checked launch parameters.
struct Launch {
    cwd: String,
    command: Vec<String>,
    env: std::collections::BTreeMap<String, String>,
}

fn basename(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// A label from the caller, normalised; `None` when absent or blank.
fn optional_label(label: Option<&str>) -> Option<String> {
    label.map(normalize_text).filter(|label| !label.is_empty())
}

fn required_label(label: &str) -> Result<String, PaneError> {
    optional_label(Some(label)).ok_or_else(|| PaneError::invalid("label must contain visible text"))
}

/// What a close removed from the registry.
struct Removal {
    panes: Vec<Arc<PaneCore>>,
    closed_tabs: Vec<(String, String)>,
    closed_workspace: Option<WorkspaceInfo>,
}

/// (workspace, tab, pane) ids on the focus path.
type FocusPath = Option<(String, String, String)>;

fn focus_path(registry: &Registry) -> FocusPath {
    let workspace = &registry.workspaces[registry.focused_workspace_index()?];
    let tab = workspace.tabs.get(workspace.active_tab)?;
    let pane = tab.panes.get(tab.active_pane)?;
    Some((
        workspace.id.clone(),
        tab.id.clone(),
        pane.identity.pane_id.clone(),
    ))
}

impl PaneHost {
    fn default_command(&self) -> Vec<String> {
        let shell = self
            .config
            .default_shell
            .clone()
            .or_else(|| {
                std::env::var("SHELL")
                    .ok()
                    .filter(|shell| !shell.is_empty())
            })
            .unwrap_or_else(|| "/bin/sh".to_string());
        vec![shell]
    }

    fn check_launch(
        &self,
        cwd: Option<&str>,
        command: Option<&[String]>,
        env: &std::collections::BTreeMap<String, String>,
    ) -> Result<Launch, PaneError> {
        let cwd = match cwd {
            Some(cwd) => {
                let path = Path::new(cwd);
                if !path.is_absolute() {
                    return Err(PaneError::invalid(format!(
                        "cwd must be an absolute path, got {cwd:?}"
                    )));
                }
                if !path.is_dir() {
                    return Err(PaneError::invalid(format!(
                        "cwd {cwd:?} is not an existing directory"
                    )));
                }
                cwd.to_string()
            }
            None => std::env::var("HOME")
                .ok()
                .filter(|home| Path::new(home).is_dir())
                .unwrap_or_else(|| "/".to_string()),
        };
        let command = match command {
            Some([]) => return Err(PaneError::invalid("command must not be empty")),
            Some(command) if command[0].is_empty() => {
                return Err(PaneError::invalid("command[0] must name a program"));
            }
            Some(command) => command.to_vec(),
            None => self.default_command(),
        };
        if command.iter().any(|argument| argument.contains('\0')) {
            return Err(PaneError::invalid("command arguments must not contain NUL"));
        }
        for (key, value) in env {
            if key.is_empty() || key.contains('=') || key.contains('\0') || value.contains('\0') {
                return Err(PaneError::invalid(format!(
                    "env entry {key:?} is not a valid environment variable"
                )));
            }
        }
        Ok(Launch {
            cwd,
            command,
            env: env.clone(),
        })
    }

    fn launch(
        &self,
        workspace_id: &str,
        tab_id: &str,
        pane_id: &str,
        launch: Launch,
    ) -> Result<Arc<PaneCore>, PaneError> {
        spawn_pane(PaneLaunch {
            pane_id: pane_id.to_string(),
            workspace_id: workspace_id.to_string(),
            tab_id: tab_id.to_string(),
            terminal_id: self.next_terminal_id(),
            command: launch.command,
            cwd: launch.cwd,
            env: launch.env,
            socket_path: self.config.socket_path.clone(),
            cols: self.config.initial_cols.max(1),
            rows: self.config.initial_rows.max(1),
            scrollback_lines: self.config.scrollback_lines,
            ring_bytes: self.config.ring_bytes,
            keyframe_interval_bytes: self.config.keyframe_interval_bytes,
            queue_capacity: self.config.observer_queue_capacity,
            label: None,
            events: self.events.clone(),
        })
    }

    /// Ends a pane that could not be registered (the host shut down meanwhile).
    fn discard(&self, core: &Arc<PaneCore>) {
        core.closing.store(true, Ordering::Release);
        process::terminate_pane_processes(&core.process_identity(), self.config.close_grace);
    }

    fn emit_focus_change(&self, before: &FocusPath, after: &FocusPath) {
        let Some((workspace_id, tab_id, pane_id)) = after else {
            return;
        };
        let before_workspace = before.as_ref().map(|path| &path.0);
        let before_tab = before.as_ref().map(|path| &path.1);
        let before_pane = before.as_ref().map(|path| &path.2);
        if before_workspace != Some(workspace_id) {
            self.events.emit(PaneEventData::WorkspaceFocused {
                workspace_id: workspace_id.clone(),
            });
        }
        if before_tab != Some(tab_id) {
            self.events.emit(PaneEventData::TabFocused {
                tab_id: tab_id.clone(),
                workspace_id: workspace_id.clone(),
            });
        }
        if before_pane != Some(pane_id) {
            self.events.emit(PaneEventData::PaneFocused {
                pane_id: pane_id.clone(),
                workspace_id: workspace_id.clone(),
            });
        }
    }

    /// Creates a workspace with one tab whose root pane runs `command` or the shell.
    pub fn create_workspace(
        &self,
        request: WorkspaceCreate,
    ) -> Result<(WorkspaceInfo, TabInfo, PaneInfo), PaneError> {
        self.ensure_running()?;
        let launch = self.check_launch(
            request.cwd.as_deref(),
            request.command.as_deref(),
            &request.env,
        )?;
        let workspace_label = optional_label(request.label.as_deref());
        let tab_label = basename(&launch.command[0]);
        let cwd = launch.cwd.clone();
        let workspace_id = {
            let mut registry = self.registry();
            let number = registry.next_workspace;
            registry.next_workspace += 1;
            if let Some(file) = &self.config.workspace_number_file {
                super::host::record_workspace_number(file, number);
            }
            format!("w{number}")
        };
        let tab_id = format!("{workspace_id}:t1");
        let pane_id = format!("{workspace_id}:p1");
        let core = self.launch(&workspace_id, &tab_id, &pane_id, launch)?;
        let mut registry = self.registry();
        if self.ensure_running().is_err() {
            drop(registry);
            self.discard(&core);
            return Err(PaneError::ShuttingDown);
        }
        let before = focus_path(&registry);
        registry.workspaces.push(WorkspaceEntry {
            id: workspace_id.clone(),
            label: workspace_label.unwrap_or_else(|| match basename(&cwd) {
                name if name.is_empty() || name == "/" => workspace_id.clone(),
                name => name,
            }),
            cwd,
            tabs: vec![TabEntry {
                id: tab_id,
                label: tab_label,
                panes: vec![core.clone()],
                active_pane: 0,
            }],
            active_tab: 0,
            next_tab: 2,
            next_pane: 2,
            metadata: WorkspaceMetadata::default(),
            worktree: request.worktree,
        });
        if request.focus || registry.focused_workspace_index().is_none() {
            registry.focused_workspace = Some(workspace_id.clone());
        }
        registry.refresh_focus_flags();
        let index = registry.workspaces.len() - 1;
        let (workspace, tab) = (registry.workspace_info(index), registry.tab_info(index, 0));
        let after = focus_path(&registry);
        drop(registry);
        let pane = core.info();
        self.events.emit(PaneEventData::WorkspaceCreated {
            workspace: workspace.clone(),
        });
        self.events
            .emit(PaneEventData::TabCreated { tab: tab.clone() });
        self.events
            .emit(PaneEventData::PaneCreated { pane: pane.clone() });
        self.emit_focus_change(&before, &after);
        Ok((workspace, tab, pane))
    }

    /// Creates a tab (with its root pane) in a workspace.
    pub fn create_tab(&self, request: TabCreate) -> Result<(TabInfo, PaneInfo), PaneError> {
        self.ensure_running()?;
        let (workspace_id, default_cwd, tab_number, pane_number) = {
            let mut registry = self.registry();
            let index = match &request.workspace_id {
                Some(workspace_id) => registry.workspace_index(workspace_id)?,
                None => registry
                    .focused_workspace_index()
                    .ok_or(PaneError::NoFocusedWorkspace)?,
            };
            let workspace = &mut registry.workspaces[index];
            let numbers = (workspace.next_tab, workspace.next_pane);
            workspace.next_tab += 1;
            workspace.next_pane += 1;
            (
                workspace.id.clone(),
                workspace.cwd.clone(),
                numbers.0,
                numbers.1,
            )
        };
        let cwd = request.cwd.clone().or(Some(default_cwd));
        let launch = self.check_launch(cwd.as_deref(), request.command.as_deref(), &request.env)?;
        let tab_label = optional_label(request.label.as_deref())
            .unwrap_or_else(|| basename(&launch.command[0]));
        let tab_id = format!("{workspace_id}:t{tab_number}");
        let pane_id = format!("{workspace_id}:p{pane_number}");
        let core = self.launch(&workspace_id, &tab_id, &pane_id, launch)?;
        let mut registry = self.registry();
        // The host may have shut down, or the workspace closed, while the pane started.
        let index = match self
            .ensure_running()
            .and_then(|()| registry.workspace_index(&workspace_id))
        {
            Ok(index) => index,
            Err(error) => {
                drop(registry);
                self.discard(&core);
                return Err(error);
            }
        };
        let before = focus_path(&registry);
        let workspace = &mut registry.workspaces[index];
        workspace.tabs.push(TabEntry {
            id: tab_id,
            label: tab_label,
            panes: vec![core.clone()],
            active_pane: 0,
        });
        let tab_index = workspace.tabs.len() - 1;
        if request.focus {
            workspace.active_tab = tab_index;
            registry.focused_workspace = Some(workspace_id.clone());
        }
        registry.refresh_focus_flags();
        let tab = registry.tab_info(index, tab_index);
        let after = focus_path(&registry);
        drop(registry);
        let pane = core.info();
        self.events
            .emit(PaneEventData::TabCreated { tab: tab.clone() });
        self.events
            .emit(PaneEventData::PaneCreated { pane: pane.clone() });
        self.emit_focus_change(&before, &after);
        Ok((tab, pane))
    }

    /// Removes tab `tab_index` of workspace `index` (and the workspace when it was the
    /// last tab), fixing active indices and focus.
    fn remove_tab(registry: &mut Registry, index: usize, tab_index: usize, removal: &mut Removal) {
        let workspace = &mut registry.workspaces[index];
        let tab = workspace.tabs.remove(tab_index);
        removal
            .closed_tabs
            .push((tab.id.clone(), workspace.id.clone()));
        removal.panes.extend(tab.panes);
        if workspace.active_tab >= tab_index && workspace.active_tab > 0 {
            workspace.active_tab -= 1;
        }
        if workspace.tabs.is_empty() {
            Self::remove_workspace(registry, index, removal);
        }
    }

    fn remove_workspace(registry: &mut Registry, index: usize, removal: &mut Removal) {
        let info = registry.workspace_info(index);
        let workspace = registry.workspaces.remove(index);
        for tab in workspace.tabs {
            removal
                .closed_tabs
                .push((tab.id.clone(), workspace.id.clone()));
            removal.panes.extend(tab.panes);
        }
        if registry.focused_workspace.as_deref() == Some(workspace.id.as_str()) {
            registry.focused_workspace = registry
                .workspaces
                .get(index.min(registry.workspaces.len().saturating_sub(1)))
                .map(|workspace| workspace.id.clone());
        }
        removal.closed_workspace = Some(info);
    }

    /// Ends the processes of removed panes (in parallel) and emits the close events.
    async fn finish_removal(&self, removal: Removal, before: FocusPath, after: FocusPath) {
        let grace = self.config.close_grace;
        let mut endings = Vec::new();
        for pane in &removal.panes {
            pane.closing.store(true, Ordering::Release);
            pane.wake_reader();
            let identity = pane.process_identity();
            endings.push(tokio::task::spawn_blocking(move || {
                process::terminate_pane_processes(&identity, grace)
            }));
        }
        for ending in endings {
            if let Ok(termination) = ending.await
                && !termination.survivors.is_empty()
            {
                tracing::warn!(
                    "pane processes survived SIGKILL: {:?}",
                    termination.survivors
                );
            }
        }
        for pane in &removal.panes {
            crate::core::lock(&pane.session).drop_members();
            self.events.emit(PaneEventData::PaneClosed {
                pane_id: pane.identity.pane_id.clone(),
                workspace_id: pane.identity.workspace_id.clone(),
            });
        }
        for (tab_id, workspace_id) in removal.closed_tabs {
            self.events.emit(PaneEventData::TabClosed {
                tab_id,
                workspace_id,
            });
        }
        if let Some(workspace) = removal.closed_workspace {
            self.events.emit(PaneEventData::WorkspaceClosed {
                workspace_id: workspace.workspace_id.clone(),
                workspace: Some(workspace),
            });
        }
        self.emit_focus_change(&before, &after);
    }

    fn empty_removal() -> Removal {
        Removal {
            panes: Vec::new(),
            closed_tabs: Vec::new(),
            closed_workspace: None,
        }
    }

    /// Closes a pane and ends its whole process tree (its tab and workspace close with it
    /// when they become empty).
    pub async fn close_pane(&self, pane_id: &str) -> Result<(), PaneError> {
        let mut removal = Self::empty_removal();
        let (before, after) = {
            let mut registry = self.registry();
            let (index, tab_index, pane_index) = registry.pane_position(pane_id)?;
            let before = focus_path(&registry);
            let tab = &mut registry.workspaces[index].tabs[tab_index];
            if tab.panes.len() == 1 {
                Self::remove_tab(&mut registry, index, tab_index, &mut removal);
            } else {
                removal.panes.push(tab.panes.remove(pane_index));
                tab.active_pane = tab.active_pane.min(tab.panes.len() - 1);
            }
            registry.refresh_focus_flags();
            (before, focus_path(&registry))
        };
        self.finish_removal(removal, before, after).await;
        Ok(())
    }

    pub async fn close_tab(&self, tab_id: &str) -> Result<(), PaneError> {
        let mut removal = Self::empty_removal();
        let (before, after) = {
            let mut registry = self.registry();
            let (index, tab_index) = registry.tab_position(tab_id)?;
            let before = focus_path(&registry);
            Self::remove_tab(&mut registry, index, tab_index, &mut removal);
            registry.refresh_focus_flags();
            (before, focus_path(&registry))
        };
        self.finish_removal(removal, before, after).await;
        Ok(())
    }

    pub async fn close_workspace(&self, workspace_id: &str) -> Result<(), PaneError> {
        let mut removal = Self::empty_removal();
        let (before, after) = {
            let mut registry = self.registry();
            let index = registry.workspace_index(workspace_id)?;
            let before = focus_path(&registry);
            Self::remove_workspace(&mut registry, index, &mut removal);
            registry.refresh_focus_flags();
            (before, focus_path(&registry))
        };
        self.finish_removal(removal, before, after).await;
        Ok(())
    }

    /// Refuses new panes and ends every pane's process tree. Used at server stop.
    pub async fn shutdown(&self) {
        let workspace_ids: Vec<String> = {
            let registry = self.registry();
            self.shutting_down.store(true, Ordering::Release);
            registry
                .workspaces
                .iter()
                .map(|workspace| workspace.id.clone())
                .collect()
        };
        for workspace_id in workspace_ids {
            let _ = self.close_workspace(&workspace_id).await;
        }
    }

    pub fn rename_workspace(
        &self,
        workspace_id: &str,
        label: &str,
    ) -> Result<WorkspaceInfo, PaneError> {
        let label = required_label(label)?;
        let info = {
            let mut registry = self.registry();
            let index = registry.workspace_index(workspace_id)?;
            registry.workspaces[index].label = label.clone();
            registry.workspace_info(index)
        };
        self.events.emit(PaneEventData::WorkspaceRenamed {
            workspace_id: workspace_id.to_string(),
            label,
        });
        Ok(info)
    }

    pub fn rename_tab(&self, tab_id: &str, label: &str) -> Result<TabInfo, PaneError> {
        let label = required_label(label)?;
        let info = {
            let mut registry = self.registry();
            let (index, tab_index) = registry.tab_position(tab_id)?;
            registry.workspaces[index].tabs[tab_index].label = label.clone();
            registry.tab_info(index, tab_index)
        };
        self.events.emit(PaneEventData::TabRenamed {
            tab_id: tab_id.to_string(),
            workspace_id: info.workspace_id.clone(),
            label,
        });
        Ok(info)
    }

    /// Sets a pane's label, or clears it when `label` is absent or blank.
    pub fn rename_pane(&self, pane_id: &str, label: Option<&str>) -> Result<PaneInfo, PaneError> {
        let core = self.pane_core(pane_id)?;
        crate::core::lock(&core.meta).label = optional_label(label);
        core.bump_revision();
        let info = core.info();
        self.events
            .emit(PaneEventData::PaneUpdated { pane: info.clone() });
        Ok(info)
    }

    /// Moves a workspace to `insert_index` (clamped to the end).
    pub fn move_workspace(
        &self,
        workspace_id: &str,
        insert_index: u64,
    ) -> Result<Vec<WorkspaceInfo>, PaneError> {
        let (insert_index, workspaces) = {
            let mut registry = self.registry();
            let index = registry.workspace_index(workspace_id)?;
            let workspace = registry.workspaces.remove(index);
            let insert_index = (insert_index as usize).min(registry.workspaces.len());
            registry.workspaces.insert(insert_index, workspace);
            (
                insert_index,
                (0..registry.workspaces.len())
                    .map(|index| registry.workspace_info(index))
                    .collect::<Vec<_>>(),
            )
        };
        self.events.emit(PaneEventData::WorkspaceMoved {
            workspace_id: workspace_id.to_string(),
            insert_index: insert_index as u64,
            workspaces: workspaces.clone(),
        });
        Ok(workspaces)
    }

    /// Moves a tab within its workspace.
    pub fn move_tab(&self, tab_id: &str, insert_index: u64) -> Result<Vec<TabInfo>, PaneError> {
        let (workspace_id, insert_index, tabs) = {
            let mut registry = self.registry();
            let (index, tab_index) = registry.tab_position(tab_id)?;
            let workspace = &mut registry.workspaces[index];
            let active_id = workspace.tabs[workspace.active_tab].id.clone();
            let tab = workspace.tabs.remove(tab_index);
            let insert_index = (insert_index as usize).min(workspace.tabs.len());
            workspace.tabs.insert(insert_index, tab);
            workspace.active_tab = workspace
                .tabs
                .iter()
                .position(|tab| tab.id == active_id)
                .unwrap_or(0);
            let tabs: Vec<TabInfo> = (0..registry.workspaces[index].tabs.len())
                .map(|tab| registry.tab_info(index, tab))
                .collect();
            (registry.workspaces[index].id.clone(), insert_index, tabs)
        };
        self.events.emit(PaneEventData::TabMoved {
            tab_id: tab_id.to_string(),
            workspace_id,
            insert_index: insert_index as u64,
            tabs: tabs.clone(),
        });
        Ok(tabs)
    }

    fn focus(
        &self,
        select: impl FnOnce(&mut Registry) -> Result<(), PaneError>,
    ) -> Result<(), PaneError> {
        let (before, after) = {
            let mut registry = self.registry();
            let before = focus_path(&registry);
            select(&mut registry)?;
            registry.refresh_focus_flags();
            (before, focus_path(&registry))
        };
        self.emit_focus_change(&before, &after);
        Ok(())
    }

    pub fn focus_workspace(&self, workspace_id: &str) -> Result<WorkspaceInfo, PaneError> {
        self.focus(|registry| {
            registry.workspace_index(workspace_id)?;
            registry.focused_workspace = Some(workspace_id.to_string());
            Ok(())
        })?;
        self.workspace_info(workspace_id)
    }

    pub fn focus_tab(&self, tab_id: &str) -> Result<TabInfo, PaneError> {
        self.focus(|registry| {
            let (index, tab_index) = registry.tab_position(tab_id)?;
            registry.workspaces[index].active_tab = tab_index;
            registry.focused_workspace = Some(registry.workspaces[index].id.clone());
            Ok(())
        })?;
        self.tab_info(tab_id)
    }

    pub fn focus_pane(&self, pane_id: &str) -> Result<PaneInfo, PaneError> {
        self.focus(|registry| {
            let (index, tab_index, pane_index) = registry.pane_position(pane_id)?;
            let workspace = &mut registry.workspaces[index];
            workspace.active_tab = tab_index;
            workspace.tabs[tab_index].active_pane = pane_index;
            registry.focused_workspace = Some(registry.workspaces[index].id.clone());
            Ok(())
        })?;
        self.pane_info(pane_id)
    }

    /// `session.snapshot`: every workspace, tab, pane, layout and agent at once.
    pub fn snapshot(&self) -> SessionSnapshot {
        let registry = self.registry();
        let path = focus_path(&registry);
        let workspaces = (0..registry.workspaces.len())
            .map(|index| registry.workspace_info(index))
            .collect();
        let mut tabs = Vec::new();
        let mut panes = Vec::new();
        let mut layouts = Vec::new();
        let mut agents = Vec::new();
        for (index, workspace) in registry.workspaces.iter().enumerate() {
            for (tab_index, tab) in workspace.tabs.iter().enumerate() {
                tabs.push(registry.tab_info(index, tab_index));
                let infos: Vec<PaneInfo> = tab.panes.iter().map(|pane| pane.info()).collect();
                if let Some(active) = infos.get(tab.active_pane) {
                    let (rows, cols) =
                        crate::core::lock(&tab.panes[tab.active_pane].terminal).size();
                    let area = PaneLayoutRect {
                        x: 0,
                        y: 0,
                        width: cols,
                        height: rows,
                    };
                    layouts.push(PaneLayoutSnapshot {
                        workspace_id: workspace.id.clone(),
                        tab_id: tab.id.clone(),
                        zoomed: false,
                        area,
                        focused_pane_id: active.pane_id.clone(),
                        panes: infos
                            .iter()
                            .map(|info| PaneLayoutPane {
                                pane_id: info.pane_id.clone(),
                                focused: info.focused,
                                rect: area,
                            })
                            .collect(),
                        splits: Vec::new(),
                    });
                }
                for info in &infos {
                    if info.agent.is_some() {
                        agents.push(AgentInfo {
                            terminal_id: info.terminal_id.clone(),
                            agent_status: info.agent_status,
                            workspace_id: info.workspace_id.clone(),
                            tab_id: info.tab_id.clone(),
                            pane_id: info.pane_id.clone(),
                            focused: info.focused,
                            revision: info.revision,
                            agent: info.agent.clone(),
                            name: info.label.clone(),
                            display_agent: info.display_agent.clone(),
                            title: info.title.clone(),
                            cwd: info.cwd.clone(),
                            foreground_cwd: info.foreground_cwd.clone(),
                            state_labels: info.state_labels.clone(),
                            tokens: info.tokens.clone(),
                            agent_session: info.agent_session.clone(),
                            terminal_title: info.terminal_title.clone(),
                            terminal_title_stripped: info.terminal_title_stripped.clone(),
                            screen_detection_skipped: true,
                        });
                    }
                }
                panes.extend(infos);
            }
        }
        SessionSnapshot {
            version: self.config.server_version.clone(),
            protocol: self.config.protocol_version,
            focused_workspace_id: path.as_ref().map(|path| path.0.clone()),
            focused_tab_id: path.as_ref().map(|path| path.1.clone()),
            focused_pane_id: path.map(|path| path.2),
            workspaces,
            tabs,
            panes,
            layouts,
            agents,
        }
    }
}
