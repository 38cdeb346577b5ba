//! One module per command family. Each is a thin client of the socket.

pub mod api;
pub mod attention;
pub mod cockpit;
pub mod events;
pub mod mission;
pub mod pane;
pub mod project;
pub mod project_check;
pub mod server;
pub mod wait;
pub mod workspace;

use nagi_schema::client::Client;
use serde_json::Value;

use crate::connect::{connect_or_start, remote, session_paths};
use crate::exit::EXIT_OK;
use crate::{Cli, Command, CommandResult};

/// What every command gets: where to connect and how to print.
pub struct Context {
    pub session: Option<String>,
    pub json: bool,
}

impl Context {
    pub fn client(&self) -> Result<Client, crate::exit::CliError> {
        let paths = session_paths(self.session.as_deref())?;
        connect_or_start(&paths, self.session.as_deref())
    }

    /// Sends one request (starting a server if needed) and returns its result.
    pub fn request(&self, method: &str, params: Value) -> Result<Value, crate::exit::CliError> {
        self.client()?.request(method, params).map_err(remote)
    }

    /// Prints a result: JSON as is, or the human rendering.
    pub fn print(&self, result: &Value, human: impl FnOnce(&Value) -> String) -> CommandResult {
        if self.json {
            println!(
                "{}",
                serde_json::to_string_pretty(result).unwrap_or_default()
            );
        } else {
            print!("{}", human(result));
        }
        Ok(EXIT_OK)
    }
}

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
                println!("nagi-demo-agent 0.171.0 (speaks the Codex CLI 0.171.0 app-server protocol)");
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
        Command::Pane(command) => pane::run(&context, command),
        Command::Wait(command) => wait::run(&context, command),
        Command::Project(command) => project::run(&context, command),
    }
}
