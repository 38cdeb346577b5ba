//! Engine configuration: the session's paths, limits, and the user's `config.toml`
//! (`<config dir>/config.toml`).
//!
//! ```toml
//! [providers.codex]
//! command = ["/opt/codex/bin/codex"]   # argv prefix; the first element is the executable
//! args = ["-c", "model=gpt-5.5"]       # extra arguments appended by the adapter
//! env = { CODEX_HOME = "/home/me/.codex-nagi" }
//!
//! [providers.acp]
//! command = ["my-agent", "--acp"]      # required for ACP runs
//!
//! [sandbox]
//! landlock = true                      # confine read-only runs when the kernel can
//! writable = ["/home/me/.cache/my-agent"]  # more folders a confined provider may write
//!
//! [server]
//! reply_poll_microseconds = 100        # poll a prompt client's socket after a reply; 0 = off
//! provider_start_timeout_seconds = 120 # a run whose provider binds no session by then fails
//! full_integrity_check = false         # integrity_check instead of quick_check at start
//! partial_line_budget_mib = 64         # unfinished request lines of all connections together
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::paths::SessionPaths;

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    #[serde(default)]
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvidersConfig {
    #[serde(default)]
    pub codex: Option<ProviderConfig>,
    #[serde(default)]
    pub claude_code: Option<ProviderConfig>,
    #[serde(default)]
    pub open_code: Option<ProviderConfig>,
    #[serde(default)]
    pub acp: Option<ProviderConfig>,
}

/// `[sandbox]`: how read-only runs are enforced.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// Confine read-only provider processes with Landlock when the kernel offers it
    /// (default). Turning it off leaves the provider's own sandbox and the workspace digest
    /// guard, which still raises a security warning on any change.
    #[serde(default = "default_true")]
    pub landlock: bool,
    /// More folders a confined read-only provider may write, beside its vendor's own state
    /// folders and its scratch folder (an ACP agent's cache, say). Absolute paths; a folder
    /// that holds or lies inside nagi's config or data folders, or the worktree, is never
    /// granted.
    #[serde(default)]
    pub writable: Vec<PathBuf>,
}

fn default_true() -> bool {
    true
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            landlock: true,
            writable: Vec::new(),
        }
    }
}

/// `[server]`: how the socket server spends CPU on latency.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// How long a connection whose client answers promptly has its socket polled after
    /// each reply before its thread parks (see `server/reply_poll.rs`); 0 turns it off.
    #[serde(default = "default_reply_poll_microseconds")]
    pub reply_poll_microseconds: u64,
    /// How long a provider may take from its start to a bound session before the run fails
    /// with that reason (a start-up that hangs, on a repository hook or fsmonitor say).
    #[serde(default = "default_provider_start_timeout_seconds")]
    pub provider_start_timeout_seconds: u64,
    /// Check the database with `PRAGMA integrity_check` (every index against its table) at
    /// start, instead of the default `quick_check`.
    #[serde(default)]
    pub full_integrity_check: bool,
    /// The memory all connections together may hold in unfinished request lines, past a
    /// small allowance per line; a line that would exceed it is refused with
    /// `server_unavailable` and its connection closed.
    #[serde(default = "default_partial_line_budget_mib")]
    pub partial_line_budget_mib: u64,
    /// How long the panes of an archived mission's runs stay open (to read or attach to)
    /// before they close; their transcripts stay on disk.
    #[serde(default = "default_archived_pane_linger_seconds")]
    pub archived_pane_linger_seconds: u64,
}

pub const DEFAULT_ARCHIVED_PANE_LINGER_SECONDS: u64 = 600;

fn default_archived_pane_linger_seconds() -> u64 {
    DEFAULT_ARCHIVED_PANE_LINGER_SECONDS
}

pub const DEFAULT_PARTIAL_LINE_BUDGET_MIB: u64 = 64;

fn default_partial_line_budget_mib() -> u64 {
    DEFAULT_PARTIAL_LINE_BUDGET_MIB
}

pub const DEFAULT_PROVIDER_START_TIMEOUT_SECONDS: u64 = 120;

fn default_provider_start_timeout_seconds() -> u64 {
    DEFAULT_PROVIDER_START_TIMEOUT_SECONDS
}

pub const DEFAULT_REPLY_POLL_MICROSECONDS: u64 = 100;
pub const MAX_REPLY_POLL_MICROSECONDS: u64 = 1000;

fn default_reply_poll_microseconds() -> u64 {
    DEFAULT_REPLY_POLL_MICROSECONDS
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            reply_poll_microseconds: DEFAULT_REPLY_POLL_MICROSECONDS,
            provider_start_timeout_seconds: DEFAULT_PROVIDER_START_TIMEOUT_SECONDS,
            full_integrity_check: false,
            partial_line_budget_mib: DEFAULT_PARTIAL_LINE_BUDGET_MIB,
            archived_pane_linger_seconds: DEFAULT_ARCHIVED_PANE_LINGER_SECONDS,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserConfig {
    #[serde(default)]
    pub providers: ProvidersConfig,
    #[serde(default)]
    pub sandbox: SandboxConfig,
    #[serde(default)]
    pub server: ServerSettings,
    #[serde(default)]
    pub worktree: WorktreeSettings,
    #[serde(default)]
    pub notify: crate::notify::settings::NotifySettings,
    /// `[fleet]`: this server as one host of a fleet (read only by a binary built with the
    /// `fleet` feature; any other binary refuses to start with it).
    #[serde(default)]
    pub fleet: Option<FleetSettings>,
    /// Top-level sections that are not nagi's (the file's name and folder are shared with
    /// another program of the same name): ignored, and named once in the server's log.
    /// nagi's own sections stay strict.
    #[serde(skip)]
    pub ignored_sections: Vec<String>,
}

/// The top-level sections nagi reads from its config file.
const OWN_SECTIONS: &[&str] = &[
    "providers",
    "sandbox",
    "server",
    "worktree",
    "notify",
    "fleet",
];

/// `[fleet]`: the Temporal service this server joins as one host, and the host's name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FleetSettings {
    /// The Temporal frontend, `host:port` or a URL (`http://127.0.0.1:7233`).
    #[serde(default)]
    pub address: Option<String>,
    /// The Temporal namespace; `default` when absent.
    #[serde(default)]
    pub namespace: Option<String>,
    /// This host's name in the fleet (the id rule: one path component).
    #[serde(default)]
    pub host: Option<String>,
    /// An API key sent to the Temporal service.
    #[serde(default)]
    pub api_key: Option<String>,
    /// TLS: the server's CA certificate, and the client's certificate and key (PEM files).
    #[serde(default)]
    pub tls_ca: Option<PathBuf>,
    #[serde(default)]
    pub tls_cert: Option<PathBuf>,
    #[serde(default)]
    pub tls_key: Option<PathBuf>,
    /// How long a host may take no work of a mission this host creates before the fleet
    /// shows the mission `blocked`, its host gone (seconds; 600 when absent, at least 1).
    #[serde(default)]
    pub host_gone_after_seconds: Option<u64>,
    /// `[fleet.hosts.NAME]`: how this machine reaches another host's socket (for
    /// `nagi pane attach --host NAME`).
    #[serde(default)]
    pub hosts: BTreeMap<String, FleetHostSettings>,
}

/// `[fleet.hosts.NAME]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FleetHostSettings {
    /// A local Unix socket that leads to that host's nagi socket, usually forwarded with
    /// `ssh -N -L SOCKET:REMOTE_SOCKET HOST`.
    pub socket: PathBuf,
}

impl FleetSettings {
    /// A host name follows the id rule, so it is one path component and one task-queue
    /// suffix (`nagi-host-<name>`).
    pub fn check_host(host: &str) -> Result<(), String> {
        nagi_schema::ids::check_id_text(host)
            .map_err(|fault| fault.describe("the fleet host name", host))
    }
}

/// `[worktree]`: where mission worktrees go.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorktreeSettings {
    /// The folder that holds mission worktrees, one folder per repository inside it (an
    /// absolute path outside nagi's config and data folders). A recipe's own
    /// `[worktree] location` wins for its repository.
    #[serde(default)]
    pub location: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

pub const MAX_ACP_ARGS: usize = 256;
pub const MAX_ACP_ARG_BYTES: usize = 16 * 1024;

impl UserConfig {
    /// Reads the config file; a missing file is the default config.
    pub fn load(path: &Path) -> Result<UserConfig, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(UserConfig::default());
            }
            Err(error) => {
                return Err(ConfigError {
                    path: path.display().to_string(),
                    message: error.to_string(),
                });
            }
        };
        let invalid = |message: String| ConfigError {
            path: path.display().to_string(),
            message,
        };
        let mut table: toml::Table =
            toml::from_str(&text).map_err(|error| invalid(error.to_string()))?;
        let ignored_sections: Vec<String> = table
            .keys()
            .filter(|key| !OWN_SECTIONS.contains(&key.as_str()))
            .cloned()
            .collect();
        for key in &ignored_sections {
            table.remove(key);
        }
        // Without foreign sections the text itself is read, so an error names its line.
        let mut config: UserConfig = if ignored_sections.is_empty() {
            toml::from_str(&text).map_err(|error| invalid(error.to_string()))?
        } else {
            toml::Table::try_into(table)
                .map_err(|error: toml::de::Error| invalid(error.to_string()))?
        };
        config.ignored_sections = ignored_sections;
        config.validate().map_err(|message| ConfigError {
            path: path.display().to_string(),
            message,
        })?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), String> {
        self.notify.check()?;
        if let Some(host) = self.fleet.as_ref().and_then(|fleet| fleet.host.as_deref()) {
            FleetSettings::check_host(host).map_err(|message| format!("fleet.host: {message}"))?;
        }
        if let Some(location) = &self.worktree.location
            && !location.is_absolute()
        {
            return Err(format!(
                "worktree.location {} must be an absolute path",
                location.display()
            ));
        }
        if self.server.reply_poll_microseconds > MAX_REPLY_POLL_MICROSECONDS {
            return Err(format!(
                "server.reply_poll_microseconds is {}; the limit is {MAX_REPLY_POLL_MICROSECONDS} (0 turns polling off)",
                self.server.reply_poll_microseconds
            ));
        }
        if let Some(relative) = self
            .sandbox
            .writable
            .iter()
            .find(|path| !path.is_absolute())
        {
            return Err(format!(
                "sandbox.writable names {}, which is not an absolute path",
                relative.display()
            ));
        }
        let entries = [
            ("providers.codex", &self.providers.codex),
            ("providers.claude_code", &self.providers.claude_code),
            ("providers.open_code", &self.providers.open_code),
            ("providers.acp", &self.providers.acp),
        ];
        for (name, provider) in entries {
            let Some(provider) = provider else { continue };
            if let Some(command) = &provider.command {
                if command.is_empty() {
                    return Err(format!(
                        "{name}.command is an empty list; give the executable as its first element"
                    ));
                }
                if command.len() > MAX_ACP_ARGS {
                    return Err(format!(
                        "{name}.command has {} elements; the limit is {MAX_ACP_ARGS}",
                        command.len()
                    ));
                }
                if let Some(bad) = command.iter().position(|arg| {
                    arg.is_empty() || arg.len() > MAX_ACP_ARG_BYTES || arg.contains('\0')
                }) {
                    return Err(format!(
                        "{name}.command[{bad}] must be non-empty, at most 16 KiB, without NUL"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The engine's configuration, replaced whole by `server.reload_config`: every reader takes
/// the current one (`current`), so a request sees one consistent configuration from start
/// to end, and a reload never changes one mid-way.
#[derive(Debug)]
pub struct ConfigCell {
    current: std::sync::RwLock<std::sync::Arc<EngineConfig>>,
}

impl ConfigCell {
    pub fn new(config: EngineConfig) -> ConfigCell {
        ConfigCell {
            current: std::sync::RwLock::new(std::sync::Arc::new(config)),
        }
    }

    pub fn current(&self) -> std::sync::Arc<EngineConfig> {
        self.current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Puts `user` in place of the user configuration; returns the previous one.
    pub fn replace_user(&self, user: UserConfig) -> std::sync::Arc<EngineConfig> {
        let mut current = self
            .current
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut next = EngineConfig::clone(&current);
        next.worktrees_dir = user
            .worktree
            .location
            .clone()
            .or_else(crate::paths::default_worktrees_dir)
            .unwrap_or_else(|| next.paths.config_dir.with_file_name("nagi-worktrees"));
        next.user = user;
        std::mem::replace(&mut *current, std::sync::Arc::new(next))
    }
}

/// Everything the engine needs to run.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub paths: SessionPaths,
    pub user: UserConfig,
    /// Extra directories searched for provider executables before `PATH` (tests).
    pub extra_provider_path: Vec<PathBuf>,
    /// Most concurrent connections; more wait in the accept queue.
    pub max_connections: usize,
    /// A connection that sends nothing for this long is closed.
    pub idle_timeout: std::time::Duration,
    pub store_max_page_count: Option<u64>,
    /// Where mission worktrees go when the recipe names no place (`[worktree] location`,
    /// else `crate::worktrees::default_worktrees_dir`, else beside the config folder).
    pub worktrees_dir: PathBuf,
    /// The `nagi` executable whose `run console` a run's pane runs (the server's own binary);
    /// `None` (an engine inside another program): the pane follows the transcript with
    /// `tail -F` and takes no input.
    pub console_program: Option<PathBuf>,
}

impl EngineConfig {
    pub fn new(paths: SessionPaths, user: UserConfig) -> EngineConfig {
        let worktrees_dir = user
            .worktree
            .location
            .clone()
            .or_else(crate::paths::default_worktrees_dir)
            .unwrap_or_else(|| paths.config_dir.with_file_name("nagi-worktrees"));
        EngineConfig {
            worktrees_dir,
            paths,
            user,
            extra_provider_path: Vec::new(),
            max_connections: 4096,
            idle_timeout: std::time::Duration::from_secs(300),
            store_max_page_count: None,
            console_program: None,
        }
    }
}
