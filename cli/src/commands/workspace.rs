//! `nagi workspace list|create`: thin clients of the `workspace.*` methods.

use clap::Subcommand;
use serde_json::{Value, json};

use crate::CommandResult;
use crate::context::Context;

#[derive(Debug, Subcommand)]
pub enum WorkspaceCommand {
    /// Every workspace, in order (* marks the focused one).
    List,
    /// Create a workspace whose root pane runs your shell, or COMMAND.
    Create {
        /// Absolute directory of the root pane (your home when absent).
        #[arg(long, value_name = "DIR")]
        cwd: Option<String>,
        #[arg(long)]
        label: Option<String>,
        /// Focus the new workspace.
        #[arg(long)]
        focus: bool,
        /// The program and its arguments (after `--`).
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn count(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

pub fn workspace_table(workspaces: &[Value]) -> String {
    if workspaces.is_empty() {
        return "no workspaces (nagi workspace create)\n".into();
    }
    let mut out = format!(
        "{:<6} {:>4} {:>5}  {:<8} LABEL\n",
        "ID", "TABS", "PANES", "AGENT"
    );
    for workspace in workspaces {
        let focused = if workspace.get("focused").and_then(Value::as_bool) == Some(true) {
            " *"
        } else {
            ""
        };
        out.push_str(&format!(
            "{:<6} {:>4} {:>5}  {:<8} {}{focused}\n",
            text(workspace, "workspace_id"),
            count(workspace, "tab_count"),
            count(workspace, "pane_count"),
            text(workspace, "agent_status"),
            text(workspace, "label")
        ));
    }
    out
}

pub fn run(context: &Context, command: WorkspaceCommand) -> CommandResult {
    match command {
        WorkspaceCommand::List => {
            let result = context.request("workspace.list", json!({}))?;
            context.print(&result, |result| {
                workspace_table(
                    result
                        .get("workspaces")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or_default(),
                )
            })
        }
        WorkspaceCommand::Create {
            cwd,
            label,
            focus,
            command,
        } => {
            let command = (!command.is_empty()).then_some(command);
            let params = json!({"cwd": cwd, "label": label, "focus": focus, "command": command});
            let result = context.request("workspace.create", params)?;
            context.print(&result, |result| {
                let pane = result.get("root_pane").cloned().unwrap_or(Value::Null);
                format!(
                    "created workspace {} with pane {} (nagi pane attach {})\n",
                    result
                        .pointer("/workspace/workspace_id")
                        .and_then(Value::as_str)
                        .unwrap_or("?"),
                    text(&pane, "pane_id"),
                    text(&pane, "pane_id")
                )
            })
        }
    }
}
