//! Running the real `git` binary for trusted scans (contract §5.4).
//!
//! Every invocation gets a cleared environment (so no `GIT_DIR`,
//! `GIT_INDEX_FILE`, pager or user configuration leaks in), configuration
//! overrides that keep git from running hooks or daemons on our behalf
//! (fsmonitor) or writing caches (untracked cache, optional locks), literal
//! pathspecs, a per-command timeout and an output cap. Execution goes through
//! the runner's supervisor, so a hung git is killed with its process group.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use super::WorkspaceError;
use crate::runner::{DiscardOutput, StopReason, SupervisionLimits, supervise};

/// Where git is looked for first, before `PATH`.
pub const WELL_KNOWN_GIT_LOCATIONS: &[&str] = &[
    "/usr/bin/git",
    "/usr/local/bin/git",
    "/opt/homebrew/bin/git",
];

/// Configuration applied to every git command (`git -c name=value`).
///
/// * `core.fsmonitor=false`, `core.untrackedCache=false`: no hook program, no
///   cached answers; every scan looks at the file system itself.
/// * `core.fileMode=true`: executable-bit changes must count as changes even
///   if the repository was configured to ignore them.
/// * `core.ignoreStat=false`: never trust "assume unchanged" implicitly.
/// * `core.quotePath=false`, `color.ui=false`: plain UTF-8 names, no colour
///   codes in the diff stat.
/// * `submodule.recurse=false`, `diff.ignoreSubmodules=none`: no recursion;
///   submodules are refused anyway.
/// * `core.hooksPath=/dev/null`: read-only commands run no hooks, but be sure.
/// * The rest name no program: these keys have no driver name, so they are
///   blanked on every command, even one run before the repository's own
///   configuration was read (see [`super::config_programs`] for the keys
///   whose names vary).
const CONFIGURATION_OVERRIDES: &[&str] = &[
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.fileMode=true",
    "core.ignoreStat=false",
    "core.quotePath=false",
    "color.ui=false",
    "submodule.recurse=false",
    "diff.ignoreSubmodules=none",
    "core.hooksPath=/dev/null",
    "core.pager=",
    "core.editor=",
    "core.sshCommand=",
    "core.askPass=",
    "core.gitProxy=",
    "core.alternateRefsCommand=",
    "sequence.editor=",
    "diff.external=",
    "credential.helper=",
    "gpg.program=",
    "interactive.diffFilter=",
];

/// The only environment a scan's git sees.
const ENVIRONMENT: &[(&str, &str)] = &[
    ("LC_ALL", "C"),
    ("LANG", "C"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_LITERAL_PATHSPECS", "1"),
    ("GIT_PAGER", "cat"),
    ("PAGER", "cat"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_ADVICE", "0"),
];

/// Limits of git commands; `Default` gives the contract's values.
#[derive(Debug, Clone)]
pub struct GitConfig {
    /// Use this git instead of resolving one.
    pub executable: Option<PathBuf>,
    /// Default 30 s per command.
    pub command_timeout: Duration,
    /// Default 256 MiB of stdout per command.
    pub output_limit_bytes: u64,
}

impl Default for GitConfig {
    fn default() -> GitConfig {
        GitConfig {
            executable: None,
            command_timeout: Duration::from_secs(30),
            output_limit_bytes: 256 * 1024 * 1024,
        }
    }
}

/// A resolved git binary plus the limits its commands run under.
#[derive(Debug, Clone)]
pub struct GitRunner {
    executable: PathBuf,
    config: GitConfig,
    /// Configuration keys of one repository that name programs; every
    /// command gets them with an empty value (see [`Self::for_repository`]).
    blanked_keys: Arc<[String]>,
}

fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

/// Finds git: the well-known locations first, then the server's `PATH`.
pub fn resolve_git_executable() -> Result<PathBuf, WorkspaceError> {
    for location in WELL_KNOWN_GIT_LOCATIONS {
        if is_executable_file(Path::new(location)) {
            return Ok(PathBuf::from(location));
        }
    }
    if let Some(path_value) = std::env::var_os("PATH") {
        for directory in std::env::split_paths(&path_value) {
            let candidate = directory.join("git");
            if directory.is_absolute() && is_executable_file(&candidate) {
                return Ok(candidate);
            }
        }
    }
    Err(WorkspaceError::GitNotFound)
}

impl GitRunner {
    pub fn new(config: &GitConfig) -> Result<GitRunner, WorkspaceError> {
        let executable = match &config.executable {
            Some(executable) => executable.clone(),
            None => resolve_git_executable()?,
        };
        Ok(GitRunner {
            executable,
            config: config.clone(),
            blanked_keys: Arc::from(Vec::new()),
        })
    }

    /// A runner for commands in the repository containing `directory` that
    /// runs none of the programs its configuration names: one
    /// `git config --list` reads that configuration as git will (includes
    /// followed) and every program-naming entry is blanked on each later
    /// command. Fails for a repository that requires a filter driver.
    ///
    /// Commands that never read file contents through attributes (`rev-parse`,
    /// `ls-files -s`, tree-to-tree `diff-tree --name-only`) are safe without
    /// this; anything that compares working-tree files (`status`, `diff`)
    /// needs it.
    pub fn for_repository(&self, directory: &Path) -> Result<GitRunner, WorkspaceError> {
        let listing = self.run(directory, super::config_programs::CONFIG_LIST_ARGUMENTS)?;
        let keys = super::config_programs::program_keys_to_blank(&listing)?;
        Ok(GitRunner {
            executable: self.executable.clone(),
            config: self.config.clone(),
            blanked_keys: Arc::from(keys),
        })
    }

    /// The keys this runner blanks beyond the fixed overrides.
    pub fn blanked_keys(&self) -> &[String] {
        &self.blanked_keys
    }

    pub fn executable(&self) -> &Path {
        &self.executable
    }

    /// Runs `git <args>` in `cwd`; non-zero exit is an error.
    pub fn run<S: AsRef<OsStr>>(&self, cwd: &Path, args: &[S]) -> Result<Vec<u8>, WorkspaceError> {
        let (exit_code, stdout, stderr) = self.run_with_exit_code(cwd, args)?;
        if exit_code != 0 {
            return Err(WorkspaceError::GitFailed {
                command: describe(args),
                exit_code,
                stderr,
            });
        }
        Ok(stdout)
    }

    /// Runs `git <args>` in `cwd` with `GIT_INDEX_FILE` pointing at
    /// `index_file` (a private copy, so index refreshes land there).
    pub fn run_with_index_file<S: AsRef<OsStr>>(
        &self,
        cwd: &Path,
        args: &[S],
        index_file: &Path,
    ) -> Result<Vec<u8>, WorkspaceError> {
        let (exit_code, stdout, stderr) =
            self.run_with_environment(cwd, args, &[("GIT_INDEX_FILE", index_file.as_os_str())])?;
        if exit_code != 0 {
            return Err(WorkspaceError::GitFailed {
                command: describe(args),
                exit_code,
                stderr,
            });
        }
        Ok(stdout)
    }

    /// Runs `git <args>` in `cwd` and returns (exit code, stdout, stderr tail).
    pub fn run_with_exit_code<S: AsRef<OsStr>>(
        &self,
        cwd: &Path,
        args: &[S],
    ) -> Result<(i32, Vec<u8>, String), WorkspaceError> {
        self.run_with_environment(cwd, args, &[])
    }

    fn run_with_environment<S: AsRef<OsStr>>(
        &self,
        cwd: &Path,
        args: &[S],
        extra_environment: &[(&str, &OsStr)],
    ) -> Result<(i32, Vec<u8>, String), WorkspaceError> {
        let mut command = Command::new(&self.executable);
        command.arg("--no-pager");
        for override_setting in CONFIGURATION_OVERRIDES {
            command.arg("-c").arg(override_setting);
        }
        command
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .envs(ENVIRONMENT.iter().copied());
        // Command-scope configuration from the environment: read after the
        // repository's own, so an empty value here wins. Keys travel verbatim
        // (no `=` splitting as with `-c`).
        if !self.blanked_keys.is_empty() {
            command.env("GIT_CONFIG_COUNT", self.blanked_keys.len().to_string());
            for (position, key) in self.blanked_keys.iter().enumerate() {
                command
                    .env(format!("GIT_CONFIG_KEY_{position}"), key)
                    .env(format!("GIT_CONFIG_VALUE_{position}"), "");
            }
        }
        command.envs(extra_environment.iter().copied());
        let limits = SupervisionLimits {
            timeout: self.config.command_timeout,
            stdout_limit_bytes: self.config.output_limit_bytes,
            stderr_limit_bytes: 1024 * 1024,
            tail_bytes: 4096,
            keep_full_stdout: true,
            exit_grace: Duration::from_secs(1),
            cancellation: None,
        };
        let output = supervise(command, &limits, &mut DiscardOutput).map_err(|source| {
            WorkspaceError::GitSpawn {
                executable: self.executable.clone(),
                source,
            }
        })?;
        match output.stop_reason {
            Some(StopReason::TimedOut) => {
                return Err(WorkspaceError::GitTimedOut {
                    command: describe(args),
                    timeout: self.config.command_timeout,
                });
            }
            Some(StopReason::StdoutLimitExceeded) => {
                return Err(WorkspaceError::GitOutputTooLarge {
                    command: describe(args),
                    limit_bytes: self.config.output_limit_bytes,
                });
            }
            Some(StopReason::StderrLimitExceeded) => {
                return Err(WorkspaceError::GitOutputTooLarge {
                    command: describe(args),
                    limit_bytes: limits.stderr_limit_bytes,
                });
            }
            Some(StopReason::Cancelled) | None => {}
        }
        let stderr = String::from_utf8_lossy(&output.stderr.tail)
            .trim()
            .to_owned();
        Ok((
            output.exit_code,
            output.stdout.full.unwrap_or_default(),
            stderr,
        ))
    }
}

/// `git a b c` for error messages (long argument lists shortened).
fn describe<S: AsRef<OsStr>>(args: &[S]) -> String {
    let mut words: Vec<String> = args
        .iter()
        .take(8)
        .map(|arg| arg.as_ref().to_string_lossy().into_owned())
        .collect();
    if args.len() > 8 {
        words.push(format!("… ({} more)", args.len() - 8));
    }
    format!("git {}", words.join(" "))
}
