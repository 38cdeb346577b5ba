//! One module per command family. Each is a thin client of the socket.

pub mod api;
pub mod attention;
pub mod cockpit;
pub mod consent;
pub mod console;
pub mod diff;
pub mod events;
pub mod evidence_pack;
pub mod fleet;
pub mod land;
pub mod mission;
pub mod notification;
pub mod pane;
pub mod project;
pub mod project_check;
pub mod server;
pub mod usage;
pub mod wait;
pub mod workspace;
pub mod worktree;

use serde_json::Value;

use crate::{Cli, Command, CommandResult};

pub use crate::context::Context;

pub fn run(cli: Cli) -> CommandResult {
    let context = Context {
        session: cli.session,
        json: cli.json,
    };
    match cli.command {
        Command::Server(args) => server::run(&context, args),
        Command::Demo => crate::demo::run(&context),
        Command::DemoAgent { provider_args } => {
            if provider_args.iter().any(|arg| arg == "--version") {
                // The demo agent stands in for the Codex CLI, whose version nagi checks
                // before a start; it speaks that version's app-server protocol.
                println!(
                    "nagi-demo-agent 0.171.0 (speaks the Codex CLI 0.171.0 app-server protocol)"
                );
                return Ok(0);
            }
            Ok(crate::demo::agent::run())
        }
        Command::Ping => {
            let result = context.request("ping", serde_json::json!({}))?;
            context.print(&result, |result| {
                format!(
                    "nagi server {} (protocol {}) answers\n",
                    result.get("version").and_then(Value::as_str).unwrap_or("?"),
                    result.get("protocol").and_then(Value::as_u64).unwrap_or(0)
                )
            })
        }
        Command::Mission(command) => mission::run(&context, command),
        Command::Attention(command) => attention::run(&context, command),
        Command::Cockpit(args) => cockpit::run(&context, args),
        Command::Events(command) => events::run(&context, command),
        Command::Api(command) => api::run(&context, command),
        Command::Workspace(command) => workspace::run(&context, command),
        Command::Worktree(command) => worktree::run(&context, command),
        Command::Proof(command) => evidence_pack::run(&context, command),
        Command::Pane(command) => pane::run(&context, command),
        Command::Wait(command) => wait::run(&context, command),
        Command::Project(command) => project::run(&context, command),
        Command::Run(command) => console::run(&context, command),
        Command::Usage(args) => usage::run(&context, args),
        Command::Notification(command) => notification::run(&context, command),
    }
}
