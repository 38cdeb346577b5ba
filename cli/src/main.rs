//! `nagi`: a thin command-line client of the nagi server (and the server itself).

mod attach;
mod commands;
mod connect;
mod context;
mod demo;
mod exit;
mod output;
mod spec;

use clap::{Parser, Subcommand};

/// mimalloc instead of glibc's allocator: the server's memory is freed on other threads
/// than the one that allocated it (a request's job is built on a runtime worker and
/// dropped on the store's writer thread), and glibc serializes those frees on its arena
/// locks. Under 16 concurrent writers that contention cost 15–35% of the create rate.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use crate::exit::{CliError, EXIT_CODES_HELP};

/// mimalloc's `purge_delay` option (`mi_option_purge_delay` in mimalloc.h; the Rust
/// bindings do not name it).
const MIMALLOC_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Freed memory goes back to the system at once. mimalloc's default delays it by 10 ms and
/// purges only when the thread that freed it allocates again, so a burst (thousands of
/// connections holding large unfinished lines, then closing) left the server's runtime
/// threads idle with the memory still resident. `MIMALLOC_PURGE_DELAY` in the environment
/// still decides, for measurements.
fn return_freed_memory_promptly() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one allocator option; no memory is touched.
        unsafe { libmimalloc_sys::mi_option_set(MIMALLOC_OPTION_PURGE_DELAY, 0) };
    }
}

#[derive(Debug, Parser)]
#[command(name = "nagi", version, about = "A durable mission engine for coding agents", after_help = EXIT_CODES_HELP)]
pub struct Cli {
    /// Use the named session (its own server, socket and database).
    #[arg(long, global = true, value_name = "NAME")]
    pub session: Option<String>,
    /// Print results as JSON for scripts.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a real mission end to end, offline, in a temp dir, and print its proof.
    Demo,
    /// nagi's offline demo agent (the provider `nagi demo` runs).
    #[command(name = "demo-agent", hide = true)]
    DemoAgent {
        /// The adapter's own arguments (`app-server --listen stdio://`), accepted and ignored.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        provider_args: Vec<String>,
    },
    /// Run the server in the foreground, or stop it.
    Server(commands::server::ServerArgs),
    /// Check that the server answers; print its protocol and version.
    Ping,
    /// Create, inspect, configure, start and close missions.
    #[command(subcommand)]
    Mission(commands::mission::MissionCommand),
    /// List and inspect attention items.
    #[command(subcommand)]
    Attention(commands::attention::AttentionCommand),
    /// The consent cockpit: missions, attention and every consent, full-screen.
    #[command(long_about = commands::cockpit::COCKPIT_LONG_HELP)]
    Cockpit(commands::cockpit::CockpitArgs),
    /// Follow events.
    #[command(subcommand)]
    Events(commands::events::EventsCommand),
    /// The API's JSON Schema.
    #[command(subcommand)]
    Api(commands::api::ApiCommand),
    /// List and create workspaces of managed panes.
    #[command(subcommand)]
    Workspace(commands::workspace::WorkspaceCommand),
    /// Git checkouts of a repository as workspaces: list, create, open, remove.
    #[command(subcommand)]
    Worktree(commands::worktree::WorktreeCommand),
    /// Read, type into, close and attach to managed panes.
    #[command(subcommand)]
    Pane(commands::pane::PaneCommand),
    /// Wait for a pane's output.
    #[command(subcommand)]
    Wait(commands::wait::WaitCommand),
    /// Evidence packs: verify one offline.
    #[command(subcommand)]
    Proof(commands::evidence_pack::ProofCommand),
    /// Check the project recipe `.nagi/project.toml`.
    #[command(subcommand)]
    Project(commands::project::ProjectCommand),
    /// A run's console: follow it and talk to its agent.
    #[command(subcommand)]
    Run(commands::console::RunCommand),
    /// Tokens and cost the providers reported, per mission and in all.
    Usage(commands::usage::UsageArgs),
    /// Tell a person something through the desktop and the [notify] command.
    #[command(subcommand)]
    Notification(commands::notification::NotificationCommand),
}

fn main() {
    return_freed_memory_promptly();
    let cli = Cli::parse();
    let json = cli.json;
    let outcome = commands::run(cli);
    match outcome {
        Ok(code) => std::process::exit(code),
        Err(error) => {
            error.report(json);
            std::process::exit(error.exit_code());
        }
    }
}

/// Result of a command: the exit code on success.
pub type CommandResult = Result<i32, CliError>;
