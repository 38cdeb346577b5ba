//! `nagi server` and `nagi server stop`.

use clap::{Args, Subcommand};
use nagi_engine::config::{EngineConfig, UserConfig};

use crate::CommandResult;
use crate::connect::{connect_existing, remote, session_paths};
use crate::context::Context;
use crate::exit::{CliError, EXIT_OK};

#[derive(Debug, Args)]
pub struct ServerArgs {
    #[command(subcommand)]
    pub action: Option<ServerAction>,
    /// Fleet mode: the Temporal service this server joins as one host (HOST:PORT or a URL;
    /// overrides `address` in [fleet]). Needs a binary built with the `fleet` feature.
    #[arg(long, value_name = "ADDRESS")]
    pub fleet: Option<String>,
    /// Fleet mode: this host's name (overrides `host` in [fleet]).
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum ServerAction {
    /// Stop the running server after its in-flight commits finish.
    Stop,
    /// Read config.toml again; says what applied and what waits for the next start.
    ReloadConfig,
}

pub fn run(context: &Context, args: ServerArgs) -> CommandResult {
    let paths = session_paths(context.session.as_deref())?;
    match args.action {
        Some(ServerAction::Stop) => {
            let mut client = connect_existing(&paths)?;
            client
                .request("server.stop", serde_json::json!({}))
                .map_err(remote)?;
            // Wait until the server has finished (it removes its socket last), so that
            // scripts can rely on the stop and start a new server at once.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while paths.socket_path.exists() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
            if !context.json {
                println!("nagi server at {} stopped", paths.socket_path.display());
            }
            Ok(EXIT_OK)
        }
        Some(ServerAction::ReloadConfig) => {
            let mut client = connect_existing(&paths)?;
            let result = client
                .request("server.reload_config", serde_json::json!({}))
                .map_err(remote)?;
            let status = result
                .get("status")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("");
            context.print(&result, |result| {
                let mut text = format!("configuration reload: {status}\n");
                for line in result
                    .get("diagnostics")
                    .and_then(serde_json::Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    text.push_str(&format!("  {}\n", line.as_str().unwrap_or("")));
                }
                text
            })?;
            Ok(if status == "failed" {
                crate::exit::EXIT_REMOTE_ERROR
            } else {
                EXIT_OK
            })
        }
        None => {
            tracing_subscriber::fmt()
                .with_env_filter(
                    tracing_subscriber::EnvFilter::try_from_env("NAGI_LOG")
                        .unwrap_or_else(|_| "info".into()),
                )
                .with_writer(std::io::stderr)
                .init();
            let config_file = paths.config_file_path();
            let user = UserConfig::load(&config_file)
                .map_err(|error| CliError::Usage(error.to_string()))?;
            // Fleet mode is checked, and its Temporal service reached, before anything is
            // written.
            let fleet = match crate::commands::fleet::resolve(args.fleet, args.host, &user)? {
                Some(request) => Some(crate::commands::fleet::attachment(request)?),
                None => None,
            };
            if config_file.exists() {
                tracing::info!(file = %config_file.display(), "configuration read");
            } else {
                tracing::info!(file = %config_file.display(), "no configuration file: the defaults apply");
            }
            if !user.ignored_sections.is_empty() {
                tracing::warn!(
                    file = %config_file.display(),
                    "ignoring the config sections [{}]: nagi reads only [providers], [sandbox], [server], [worktree], [notify] and [fleet]",
                    user.ignored_sections.join("], [")
                );
            }
            let mut config = EngineConfig::new(paths, user);
            // Each run's pane runs this binary's `run console`.
            config.console_program = std::env::current_exe().ok();
            if let Ok(pages) = std::env::var("NAGI_STORE_MAX_PAGES") {
                config.store_max_page_count = pages.parse().ok();
            }
            nagi_engine::daemon::run_server_with(config, fleet)
                .map_err(|error| CliError::Unreachable(error.to_string()))?;
            Ok(EXIT_OK)
        }
    }
}
