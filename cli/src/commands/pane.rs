//! `nagi pane list|read|send|keys|close|attach`: thin clients of the `pane.*` methods.

use clap::{Subcommand, ValueEnum};
use serde_json::{Value, json};

use crate::{CommandResult, attach, commands::Context};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReadSourceArg {
    /// The screen as a terminal shows it.
    Visible,
    /// The last lines of scrollback and screen, one per displayed row.
    Recent,
    /// Like recent, with soft-wrapped rows joined into their logical lines.
    RecentUnwrapped,
}

impl ReadSourceArg {
    pub fn wire(self) -> &'static str {
        match self {
            ReadSourceArg::Visible => "visible",
            ReadSourceArg::Recent => "recent",
            ReadSourceArg::RecentUnwrapped => "recent_unwrapped",
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum PaneCommand {
    /// Every pane (or one workspace's), with its process state.
    List {
        #[arg(long, value_name = "WORKSPACE")]
        workspace: Option<String>,
    },
    /// Print a pane's screen or recent output.
    Read {
        pane_id: String,
        #[arg(long, value_enum, default_value = "visible")]
        source: ReadSourceArg,
        /// How many lines (1..=10000); the whole screen, or the last 100 lines, by default.
        #[arg(long, value_name = "N")]
        lines: Option<u32>,
        /// Keep colours and styles as ANSI escape sequences.
        #[arg(long)]
        ansi: bool,
    },
    /// Type text into a pane, as it is.
    Send {
        pane_id: String,
        text: String,
        /// Press Enter after the text.
        #[arg(long)]
        enter: bool,
    },
    /// Press keys in a pane: enter, tab, escape, ctrl+c, alt+x, shift+tab, up, f5, …
    Keys {
        pane_id: String,
        #[arg(required = true, value_name = "KEY")]
        keys: Vec<String>,
    },
    /// The processes of a pane: those in its terminal's foreground, and the agent that
    /// works for it outside the terminal (a run's provider, whose console the pane shows).
    Processes { pane_id: String },
    /// Close a pane and end its whole process tree.
    Close { pane_id: String },
    /// Mirror a pane live in this terminal and type into it.
    #[command(long_about = attach::ATTACH_LONG_HELP, after_help = attach::DETACH_HELP)]
    Attach {
        pane_id: String,
        /// Watch only: never take control, and do not resize the pane.
        #[arg(long)]
        observe: bool,
        /// Attach to a pane of another host of the fleet, through the socket named in
        /// `[fleet.hosts.NAME]` (a forwarded socket: README "Fleet mode").
        #[arg(long, value_name = "NAME")]
        host: Option<String>,
    },
}

/// `nagi pane processes`: one line per process, foreground first.
fn processes_text(result: &Value) -> String {
    let info = &result["process_info"];
    let mut out = String::new();
    for (role, key) in [
        ("terminal", "foreground_processes"),
        ("agent", "agent_processes"),
    ] {
        for process in info[key].as_array().into_iter().flatten() {
            let command = process["cmdline"]
                .as_str()
                .or_else(|| process["name"].as_str())
                .unwrap_or("?");
            out.push_str(&format!("{role:<8} {:>7}  {command}\n", process["pid"]));
        }
    }
    if out.is_empty() {
        out.push_str("no running process\n");
    }
    out
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// One pane's process state for humans: `running (pid 42)`, `exited 3`, `killed by signal 9`.
pub fn process_state(pane: &Value) -> String {
    match pane.get("exit_status") {
        Some(status) => match (
            status.get("exit_code").and_then(Value::as_i64),
            status.get("signal").and_then(Value::as_i64),
        ) {
            (Some(code), _) => format!("exited {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => "exited".into(),
        },
        None => match pane.get("pid").and_then(Value::as_u64) {
            Some(pid) => format!("running (pid {pid})"),
            None => "running".into(),
        },
    }
}

pub fn pane_table(panes: &[Value]) -> String {
    if panes.is_empty() {
        return "no panes (nagi workspace create)\n".into();
    }
    let width = panes
        .iter()
        .map(|pane| text(pane, "pane_id").len())
        .max()
        .unwrap_or(4)
        .max(4);
    let mut out = format!(
        "{:<width$}  {:<8} {:<20} {:<8} COMMAND\n",
        "PANE", "TAB", "STATE", "AGENT"
    );
    for pane in panes {
        let focused = if pane.get("focused").and_then(Value::as_bool) == Some(true) {
            " *"
        } else {
            ""
        };
        let command: Vec<&str> = pane
            .get("command")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let label = pane
            .get("label")
            .and_then(Value::as_str)
            .map(|label| format!(" [{label}]"))
            .unwrap_or_default();
        out.push_str(&format!(
            "{:<width$}  {:<8} {:<20} {:<8} {}{label}{focused}\n",
            text(pane, "pane_id"),
            text(pane, "tab_id"),
            process_state(pane),
            text(pane, "agent_status"),
            command.join(" ")
        ));
    }
    out
}

pub fn run(context: &Context, command: PaneCommand) -> CommandResult {
    match command {
        PaneCommand::List { workspace } => {
            let result = context.request("pane.list", json!({"workspace_id": workspace}))?;
            context.print(&result, |result| {
                pane_table(
                    result
                        .get("panes")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or_default(),
                )
            })
        }
        PaneCommand::Read {
            pane_id,
            source,
            lines,
            ansi,
        } => {
            let params = json!({
                "pane_id": pane_id,
                "source": source.wire(),
                "lines": lines,
                "format": if ansi { "ansi" } else { "text" },
            });
            let result = context.request("pane.read", params)?;
            context.print(&result, |result| {
                // The blank rows below the last line of a screen say nothing to a reader.
                let text = result
                    .pointer("/read/text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .trim_end_matches('\n');
                if text.is_empty() {
                    String::new()
                } else {
                    format!("{text}\n")
                }
            })
        }
        PaneCommand::Send {
            pane_id,
            text,
            enter,
        } => {
            let result = if enter {
                context.request(
                    "pane.send_input",
                    json!({"pane_id": pane_id, "text": text, "keys": ["enter"]}),
                )?
            } else {
                context.request("pane.send_text", json!({"pane_id": pane_id, "text": text}))?
            };
            context.print(&result, |_| String::new())
        }
        PaneCommand::Keys { pane_id, keys } => {
            let result =
                context.request("pane.send_keys", json!({"pane_id": pane_id, "keys": keys}))?;
            context.print(&result, |_| String::new())
        }
        PaneCommand::Processes { pane_id } => {
            let result = context.request("pane.process_info", json!({"pane_id": pane_id}))?;
            context.print(&result, processes_text)
        }
        PaneCommand::Close { pane_id } => {
            let result = context.request("pane.close", json!({"pane_id": pane_id}))?;
            context.print(&result, |_| format!("closed pane {pane_id}\n"))
        }
        PaneCommand::Attach {
            pane_id,
            observe,
            host,
        } => attach::run(context, &pane_id, observe, host.as_deref()),
    }
}
