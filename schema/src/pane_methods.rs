//! The table of the pane host's methods (`session.snapshot`, `workspace.*`, `tab.*`,
//! `pane.*` and the reference's methods nagi does not offer): each one's name, summary,
//! whether it is implemented, and the schema of its params. The params and results
//! themselves are in `pane`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::pane::{
    PaneClearAgentAuthorityParams, PaneCurrentParams, PaneListParams, PaneProcessInfoParams,
    PaneReadParams, PaneReleaseAgentParams, PaneRenameParams, PaneReportAgentParams,
    PaneReportAgentSessionParams, PaneReportMetadataParams, PaneSendInputParams,
    PaneSendKeysParams, PaneSendTextParams, PaneTarget, PaneWaitForOutputParams, TabCreateParams,
    TabListParams, TabMoveParams, TabRenameParams, TabTarget, WorkspaceCreateParams,
    WorkspaceMoveParams, WorkspaceRenameParams, WorkspaceReportMetadataParams, WorkspaceTarget,
};

/// One pane method: its name, a summary, and whether nagi implements it. Methods that are
/// not implemented answer `feature_unavailable` naming the method.
pub struct PaneMethodSpec {
    pub name: &'static str,
    pub summary: &'static str,
    pub implemented: bool,
    pub params_schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
}

fn schema_of<T: JsonSchema>(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    generator.subschema_for::<T>()
}

/// Params of methods without params (`{}`; unknown fields ignored).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct NoParams {}

macro_rules! pane_method {
    ($name:literal, $params:ty, $implemented:literal, $summary:literal) => {
        PaneMethodSpec {
            name: $name,
            summary: $summary,
            implemented: $implemented,
            params_schema: schema_of::<$params>,
        }
    };
}

/// Every workspace, tab, pane and session method the pane host answers, in protocol order.
pub static PANE_METHODS: &[PaneMethodSpec] = &[
    pane_method!(
        "session.snapshot",
        NoParams,
        true,
        "One-time bootstrap snapshot of workspaces, tabs, panes and agents."
    ),
    pane_method!(
        "workspace.create",
        WorkspaceCreateParams,
        true,
        "Create a workspace with one tab and a root pane."
    ),
    pane_method!(
        "workspace.list",
        NoParams,
        true,
        "Every workspace, in order."
    ),
    pane_method!("workspace.get", WorkspaceTarget, true, "One workspace."),
    pane_method!(
        "workspace.focus",
        WorkspaceTarget,
        true,
        "Focus a workspace and its active tab."
    ),
    pane_method!(
        "workspace.rename",
        WorkspaceRenameParams,
        true,
        "Set a workspace's label."
    ),
    pane_method!(
        "workspace.move",
        WorkspaceMoveParams,
        true,
        "Move a workspace to another position."
    ),
    pane_method!(
        "workspace.report_metadata",
        WorkspaceReportMetadataParams,
        true,
        "Patch a workspace's display tokens."
    ),
    pane_method!(
        "workspace.close",
        WorkspaceTarget,
        true,
        "Close a workspace and end every process in it."
    ),
    pane_method!(
        "tab.create",
        TabCreateParams,
        true,
        "Create a tab with a root pane."
    ),
    pane_method!(
        "tab.list",
        TabListParams,
        true,
        "Tabs of one workspace, or every tab."
    ),
    pane_method!("tab.get", TabTarget, true, "One tab."),
    pane_method!("tab.focus", TabTarget, true, "Focus a tab."),
    pane_method!("tab.rename", TabRenameParams, true, "Set a tab's label."),
    pane_method!(
        "tab.move",
        TabMoveParams,
        true,
        "Move a tab within its workspace."
    ),
    pane_method!(
        "tab.close",
        TabTarget,
        true,
        "Close a tab and end every process in it."
    ),
    pane_method!(
        "pane.list",
        PaneListParams,
        true,
        "Panes of one workspace, or every pane."
    ),
    pane_method!(
        "pane.current",
        PaneCurrentParams,
        true,
        "The caller's pane, or the focused one."
    ),
    pane_method!("pane.get", PaneTarget, true, "One pane."),
    pane_method!("pane.focus", PaneTarget, true, "Focus a pane."),
    pane_method!(
        "pane.rename",
        PaneRenameParams,
        true,
        "Set or clear a pane's label."
    ),
    pane_method!(
        "pane.read",
        PaneReadParams,
        true,
        "Read the screen or the recent output."
    ),
    pane_method!(
        "pane.send_text",
        PaneSendTextParams,
        true,
        "Write literal text to the pane."
    ),
    pane_method!(
        "pane.send_keys",
        PaneSendKeysParams,
        true,
        "Send key combos to the pane."
    ),
    pane_method!(
        "pane.send_input",
        PaneSendInputParams,
        true,
        "Send text, then key combos."
    ),
    pane_method!(
        "pane.wait_for_output",
        PaneWaitForOutputParams,
        true,
        "Wait until the pane's output matches."
    ),
    pane_method!(
        "pane.process_info",
        PaneProcessInfoParams,
        true,
        "Shell pid and the foreground processes."
    ),
    pane_method!(
        "pane.report_agent",
        PaneReportAgentParams,
        true,
        "Report the semantic state of the agent in a pane."
    ),
    pane_method!(
        "pane.report_agent_session",
        PaneReportAgentSessionParams,
        true,
        "Report a native session reference."
    ),
    pane_method!(
        "pane.report_metadata",
        PaneReportMetadataParams,
        true,
        "Report display-only metadata and tokens."
    ),
    pane_method!(
        "pane.clear_agent_authority",
        PaneClearAgentAuthorityParams,
        true,
        "Forget which source owns the agent state."
    ),
    pane_method!(
        "pane.release_agent",
        PaneReleaseAgentParams,
        true,
        "Clear the agent state a source reported."
    ),
    pane_method!(
        "pane.close",
        PaneTarget,
        true,
        "Close a pane and end its whole process tree."
    ),
    pane_method!(
        "pane.split",
        NoParams,
        false,
        "Not offered: nagi tabs hold one pane."
    ),
    pane_method!(
        "pane.swap",
        NoParams,
        false,
        "Not offered: nagi tabs hold one pane."
    ),
    pane_method!("pane.move", NoParams, false, "Not offered."),
    pane_method!(
        "pane.zoom",
        NoParams,
        false,
        "Not offered: nagi tabs hold one pane."
    ),
    pane_method!("pane.layout", NoParams, false, "Not offered."),
    pane_method!("pane.neighbor", NoParams, false, "Not offered."),
    pane_method!("pane.edges", NoParams, false, "Not offered."),
    pane_method!("pane.focus_direction", NoParams, false, "Not offered."),
    pane_method!(
        "pane.resize",
        NoParams,
        false,
        "Not offered; attach controllers resize with session_resize."
    ),
    pane_method!("pane.graphics.info", NoParams, false, "Not offered."),
    pane_method!("pane.graphics.set", NoParams, false, "Not offered."),
    pane_method!("pane.graphics.clear", NoParams, false, "Not offered."),
    pane_method!("pane.graphics.stream", NoParams, false, "Not offered."),
    pane_method!("layout.export", NoParams, false, "Not offered."),
    pane_method!("layout.apply", NoParams, false, "Not offered."),
    pane_method!("layout.set_split_ratio", NoParams, false, "Not offered."),
    pane_method!("popup.close", NoParams, false, "Not offered."),
    pane_method!("plugin.link", NoParams, false, "Not offered."),
    pane_method!("plugin.list", NoParams, false, "Not offered."),
    pane_method!("plugin.unlink", NoParams, false, "Not offered."),
    pane_method!("plugin.enable", NoParams, false, "Not offered."),
    pane_method!("plugin.disable", NoParams, false, "Not offered."),
    pane_method!("plugin.action.list", NoParams, false, "Not offered."),
    pane_method!("plugin.action.invoke", NoParams, false, "Not offered."),
    pane_method!("plugin.log.list", NoParams, false, "Not offered."),
    pane_method!("plugin.pane.open", NoParams, false, "Not offered."),
    pane_method!("plugin.pane.focus", NoParams, false, "Not offered."),
    pane_method!("plugin.pane.close", NoParams, false, "Not offered."),
];

/// The spec of a pane method by name.
pub fn find_pane_method(name: &str) -> Option<&'static PaneMethodSpec> {
    PANE_METHODS.iter().find(|spec| spec.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_are_unique() {
        let mut names: Vec<_> = PANE_METHODS.iter().map(|spec| spec.name).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
    }
}
