//! Wire types of the managed panes: workspaces, tabs and panes, the params of the
//! `workspace.*`, `tab.*`, `pane.*` and `session.snapshot` methods, and their results.
//!
//! Shapes follow the reference schema (`nagi-api.schema.json`). Fields marked "nagi
//! extension" are additions; a reference client ignores them. Optional fields that have no
//! value are omitted rather than sent as `null`. Unknown params fields are ignored.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Regex of a token name in `tokens` maps.
pub const TOKEN_NAME_PATTERN: &str = "^[A-Za-z0-9_-]{1,32}$";

/// The semantic state of the agent in a pane, and the rollup over a tab or workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    Idle,
    Working,
    Blocked,
    Done,
    #[default]
    Unknown,
}

impl AgentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentStatus::Idle => "idle",
            AgentStatus::Working => "working",
            AgentStatus::Blocked => "blocked",
            AgentStatus::Done => "done",
            AgentStatus::Unknown => "unknown",
        }
    }
}

/// The states an integration may report with `pane.report_agent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PaneAgentState {
    Idle,
    Working,
    Blocked,
    Unknown,
}

impl From<PaneAgentState> for AgentStatus {
    fn from(state: PaneAgentState) -> AgentStatus {
        match state {
            PaneAgentState::Idle => AgentStatus::Idle,
            PaneAgentState::Working => AgentStatus::Working,
            PaneAgentState::Blocked => AgentStatus::Blocked,
            PaneAgentState::Unknown => AgentStatus::Unknown,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentSessionRefKind {
    Id,
    Path,
}

/// A stored native session reference of the agent in a pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentSessionInfo {
    pub source: String,
    pub agent: String,
    pub kind: AgentSessionRefKind,
    pub value: String,
}

/// Scroll metrics of a pane: where the pane's view of its history is. The server keeps
/// one view per pane; the attach controller moves it (`session_scroll`, which
/// `nagi pane attach` sends for Shift+PageUp and Shift+PageDown), every attached screen
/// shows it, and `pane.scroll_changed` is emitted when `offset_from_bottom` changes.
/// Reads (`pane.read`) always see the live screen.
///
/// - `offset_from_bottom`: how many rows the view is above the live screen's bottom; 0
///   when it shows the live screen. While it is above 0, new output keeps the view on the
///   same rows (the offset grows by the rows that scroll into the history); typing into
///   the pane from the attach controller returns it to 0.
/// - `max_offset_from_bottom`: how far the view can go: the scrollback rows retained, or
///   0 while the alternate screen is active (a full-screen program has no history there).
/// - `viewport_rows`: the rows of the pane's screen, which is also the view's height.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PaneScrollInfo {
    pub offset_from_bottom: u64,
    pub max_offset_from_bottom: u64,
    pub viewport_rows: u64,
}

/// How a pane's process ended (nagi extension).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PaneExitStatus {
    /// The exit code, when the process exited normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal number, when the process was killed by a signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneInfo {
    pub pane_id: String,
    /// The pane's terminal; also the `session_id` of the attach protocol.
    pub terminal_id: String,
    pub workspace_id: String,
    pub tab_id: String,
    pub focused: bool,
    pub agent_status: AgentStatus,
    /// Increases whenever the pane's output or state changes.
    pub revision: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The directory the pane process was started in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The cwd of the process currently in the foreground of the pane's terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreground_cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub state_labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 32))]
    pub tokens: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_session: Option<AgentSessionInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scroll: Option<PaneScrollInfo>,
    /// The latest OSC 0/2 title, with control characters removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_title: Option<String>,
    /// `terminal_title` without one leading spinner or activity glyph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_title_stripped: Option<String>,
    /// nagi extension: the argv the pane was started with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// nagi extension: the pid of the pane's process (also while it runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// nagi extension: present once the pane's process has ended. The pane stays readable
    /// until it is closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<PaneExitStatus>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TabInfo {
    pub tab_id: String,
    pub workspace_id: String,
    /// 1-based position of the tab in its workspace.
    pub number: u64,
    pub label: String,
    pub focused: bool,
    pub pane_count: u64,
    /// Rollup of the panes' states: blocked, then working, done, idle, unknown.
    pub agent_status: AgentStatus,
}

/// Git worktree provenance of a workspace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkspaceWorktreeInfo {
    pub repo_key: String,
    pub repo_name: String,
    pub repo_root: String,
    pub checkout_path: String,
    pub is_linked_worktree: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkspaceInfo {
    pub workspace_id: String,
    /// 1-based position of the workspace in the server's list.
    pub number: u64,
    pub label: String,
    pub focused: bool,
    pub pane_count: u64,
    pub tab_count: u64,
    pub active_tab_id: String,
    pub agent_status: AgentStatus,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 32))]
    pub tokens: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorkspaceWorktreeInfo>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PaneLayoutRect {
    pub x: u16,
    pub y: u16,
    pub width: u16,
    pub height: u16,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneLayoutPane {
    pub pane_id: String,
    pub focused: bool,
    pub rect: PaneLayoutRect,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SplitDirection {
    Right,
    Down,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneLayoutSplit {
    pub id: String,
    pub direction: SplitDirection,
    pub ratio: f32,
    pub rect: PaneLayoutRect,
}

/// The layout of one tab. nagi tabs hold one pane each, which covers the whole area.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneLayoutSnapshot {
    pub workspace_id: String,
    pub tab_id: String,
    pub zoomed: bool,
    pub area: PaneLayoutRect,
    pub focused_pane_id: String,
    pub panes: Vec<PaneLayoutPane>,
    pub splits: Vec<PaneLayoutSplit>,
}

/// A pane that has an agent, as `session.snapshot` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentInfo {
    pub terminal_id: String,
    pub agent_status: AgentStatus,
    pub workspace_id: String,
    pub tab_id: String,
    pub pane_id: String,
    pub focused: bool,
    pub revision: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreground_cwd: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub state_labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tokens: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_session: Option<AgentSessionInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_title_stripped: Option<String>,
    pub screen_detection_skipped: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SessionSnapshot {
    pub version: String,
    pub protocol: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focused_workspace_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focused_tab_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focused_pane_id: Option<String>,
    pub workspaces: Vec<WorkspaceInfo>,
    pub tabs: Vec<TabInfo>,
    pub panes: Vec<PaneInfo>,
    pub layouts: Vec<PaneLayoutSnapshot>,
    pub agents: Vec<AgentInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneProcessInfoProcess {
    pub pid: u32,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv0: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneProcessInfo {
    pub pane_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_pid: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreground_process_group_id: Option<u32>,
    #[serde(default)]
    pub foreground_processes: Vec<PaneProcessInfoProcess>,
    /// nagi extension: processes that work for the pane outside its terminal: the provider
    /// of a run whose console the pane shows.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent_processes: Vec<PaneProcessInfoProcess>,
    /// The terminal device of the pane, e.g. `/dev/pts/3`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tty: Option<String>,
}

/// What `pane.read` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadSource {
    /// The screen as a terminal shows it, one line per row.
    Visible,
    /// The last lines of scrollback and screen, one line per displayed row.
    Recent,
    /// Like `recent`, with soft-wrapped rows joined into their logical lines.
    RecentUnwrapped,
    /// The agent-detection snapshot. nagi has no screen-based agent detection; this
    /// source answers `feature_unavailable`.
    Detection,
}

impl ReadSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ReadSource::Visible => "visible",
            ReadSource::Recent => "recent",
            ReadSource::RecentUnwrapped => "recent_unwrapped",
            ReadSource::Detection => "detection",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReadFormat {
    /// Plain text, escape sequences removed.
    #[default]
    Text,
    /// Text with SGR (colour and style) escape sequences.
    Ansi,
}

fn default_true() -> bool {
    true
}

/// Largest `lines` a read accepts.
pub const MAX_READ_LINES: u32 = 10_000;

/// `pane.read`. The text is ANSI-formatted when `format` is `ansi` or `strip_ansi` is
/// false. `lines` is 1..=10000; without it `visible` returns the whole screen and the
/// `recent` sources the last 100 lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneReadParams {
    pub pane_id: String,
    pub source: ReadSource,
    #[serde(default)]
    pub format: ReadFormat,
    #[serde(default)]
    pub lines: Option<u32>,
    #[serde(default = "default_true")]
    pub strip_ansi: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PaneReadResult {
    pub pane_id: String,
    pub workspace_id: String,
    pub tab_id: String,
    pub source: ReadSource,
    pub format: ReadFormat,
    /// Lines joined with `\n`, trailing blanks of each line removed.
    pub text: String,
    pub revision: u64,
    /// True when more lines were available than `lines` allowed.
    pub truncated: bool,
}

/// What `pane.wait_for_output` and `pane.output_matched` look for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputMatch {
    Substring {
        value: String,
    },
    /// A regular expression in the syntax of the Rust `regex` crate.
    Regex {
        value: String,
    },
}

/// `pane.wait_for_output`. Without `timeout_ms` the wait lasts until the output matches
/// or the pane's process has ended and the output can no longer change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneWaitForOutputParams {
    pub pane_id: String,
    pub source: ReadSource,
    #[serde(rename = "match")]
    pub output_match: OutputMatch,
    #[serde(default)]
    pub lines: Option<u32>,
    #[serde(default = "default_true")]
    pub strip_ansi: bool,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneTarget {
    pub pane_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneListParams {
    /// Only the panes of this workspace.
    #[serde(default)]
    pub workspace_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneCurrentParams {
    /// Answer this pane; without it, the focused pane.
    #[serde(default)]
    pub caller_pane_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneProcessInfoParams {
    /// The focused pane when absent.
    #[serde(default)]
    pub pane_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneRenameParams {
    pub pane_id: String,
    /// The new label; absent or null clears it.
    #[serde(default)]
    pub label: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneSendTextParams {
    pub pane_id: String,
    /// Written to the pane's terminal as it is.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneSendKeysParams {
    pub pane_id: String,
    /// Key-combo strings such as `enter`, `ctrl+c`, `alt+x`, `shift+tab`, `f5`, `minus`.
    pub keys: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneSendInputParams {
    pub pane_id: String,
    /// Written first, as it is.
    #[serde(default)]
    pub text: Option<String>,
    /// Key combos written after `text`.
    #[serde(default)]
    pub keys: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneReportAgentParams {
    pub pane_id: String,
    pub source: String,
    pub agent: String,
    pub state: PaneAgentState,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub agent_session_id: Option<String>,
    #[serde(default)]
    pub agent_session_path: Option<String>,
    #[serde(default)]
    pub seq: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneReportAgentSessionParams {
    pub pane_id: String,
    pub source: String,
    pub agent: String,
    #[serde(default)]
    pub agent_session_id: Option<String>,
    #[serde(default)]
    pub agent_session_path: Option<String>,
    #[serde(default)]
    pub session_start_source: Option<String>,
    #[serde(default)]
    pub seq: Option<u64>,
}

/// `pane.report_metadata`: display-only presentation fields and token patches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneReportMetadataParams {
    pub pane_id: String,
    pub source: String,
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub applies_to_source: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub clear_title: bool,
    #[serde(default)]
    pub display_agent: Option<String>,
    #[serde(default)]
    pub clear_display_agent: bool,
    #[serde(default)]
    pub state_labels: BTreeMap<String, String>,
    #[serde(default)]
    pub clear_state_labels: bool,
    /// A string sets a token, `null` clears it; at most 16 keys per report.
    #[serde(default)]
    #[schemars(extend("maxProperties" = 16))]
    pub tokens: BTreeMap<String, Option<String>>,
    #[serde(default)]
    #[schemars(range(min = 1, max = 86_400_000))]
    pub ttl_ms: Option<u64>,
    #[serde(default)]
    pub seq: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkspaceReportMetadataParams {
    pub workspace_id: String,
    pub source: String,
    #[schemars(extend("maxProperties" = 16))]
    pub tokens: BTreeMap<String, Option<String>>,
    #[serde(default)]
    #[schemars(range(min = 1, max = 86_400_000))]
    pub ttl_ms: Option<u64>,
    #[serde(default)]
    pub seq: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneClearAgentAuthorityParams {
    pub pane_id: String,
    /// Clear only when this source holds the authority.
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub seq: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaneReleaseAgentParams {
    pub pane_id: String,
    pub source: String,
    pub agent: String,
    #[serde(default)]
    pub seq: Option<u64>,
}

/// `workspace.create`. `command` (nagi extension) runs that argv as the root pane
/// instead of the user's shell.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct WorkspaceCreateParams {
    /// Absolute directory of the root pane.
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub focus: bool,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub command: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkspaceTarget {
    pub workspace_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkspaceRenameParams {
    pub workspace_id: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkspaceMoveParams {
    pub workspace_id: String,
    pub insert_index: u64,
}

/// `tab.create`. Without `workspace_id` the tab goes to the focused workspace.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct TabCreateParams {
    #[serde(default)]
    pub workspace_id: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub focus: bool,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub command: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TabTarget {
    pub tab_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TabListParams {
    /// Only the tabs of this workspace; every tab when absent.
    #[serde(default)]
    pub workspace_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TabRenameParams {
    pub tab_id: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TabMoveParams {
    pub tab_id: String,
    pub insert_index: u64,
}

/// Results of the pane, workspace, tab and session methods, tagged by `type`. Built once
/// per reply and serialized, so the size difference between variants does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PaneMethodResult {
    SessionSnapshot {
        snapshot: SessionSnapshot,
    },
    WorkspaceInfo {
        workspace: WorkspaceInfo,
    },
    WorkspaceCreated {
        workspace: WorkspaceInfo,
        tab: TabInfo,
        root_pane: PaneInfo,
    },
    WorkspaceList {
        workspaces: Vec<WorkspaceInfo>,
    },
    TabInfo {
        tab: TabInfo,
    },
    TabCreated {
        tab: TabInfo,
        root_pane: PaneInfo,
    },
    TabList {
        tabs: Vec<TabInfo>,
    },
    PaneInfo {
        pane: PaneInfo,
    },
    PaneList {
        panes: Vec<PaneInfo>,
    },
    PaneCurrent {
        pane: PaneInfo,
    },
    PaneProcessInfo {
        process_info: PaneProcessInfo,
    },
    PaneRead {
        read: PaneReadResult,
    },
    OutputMatched {
        pane_id: String,
        revision: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        matched_line: Option<String>,
        read: PaneReadResult,
    },
    Ok,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_params_defaults_follow_the_schema() {
        let params: PaneReadParams = serde_json::from_value(
            serde_json::json!({"pane_id": "w1:p1", "source": "recent_unwrapped"}),
        )
        .unwrap();
        assert_eq!(params.source, ReadSource::RecentUnwrapped);
        assert_eq!(params.format, ReadFormat::Text);
        assert!(params.strip_ansi);
        assert_eq!(params.lines, None);
    }

    #[test]
    fn results_carry_their_type_tag() {
        let value = serde_json::to_value(PaneMethodResult::Ok).unwrap();
        assert_eq!(value, serde_json::json!({"type": "ok"}));
        let read = PaneReadResult {
            pane_id: "w1:p1".into(),
            workspace_id: "w1".into(),
            tab_id: "w1:t1".into(),
            source: ReadSource::Visible,
            format: ReadFormat::Text,
            text: "hi".into(),
            revision: 3,
            truncated: false,
        };
        let value = serde_json::to_value(PaneMethodResult::PaneRead { read }).unwrap();
        assert_eq!(value["type"], "pane_read");
        assert_eq!(value["read"]["source"], "visible");
    }

    #[test]
    fn wait_params_decode_the_match_field() {
        let params: PaneWaitForOutputParams = serde_json::from_value(serde_json::json!({
            "pane_id": "w1:p1", "source": "recent", "match": {"type": "regex", "value": "a+"}
        }))
        .unwrap();
        assert_eq!(
            params.output_match,
            OutputMatch::Regex { value: "a+".into() }
        );
    }
}
