//! Trusted command runner for declared command checks (contract §5.4).
//!
//! The command is executed directly (no shell, arguments passed literally) in
//! `<worktree>/<cwd>`, with a cleared environment, stdin null, its own process
//! group that is killed once the command ends, a timeout and per-stream output
//! limits. This is **not** a sandbox: checks run with the user's permissions.
//!
//! The API is blocking on purpose: one check is one child process plus three
//! small threads, and the engine calls [`run_command_check`] from
//! `tokio::task::spawn_blocking`. Output can be streamed live to an
//! [`OutputSink`]; the returned [`CommandOutcome`] carries the digests and a
//! bounded tail of each stream.
//!
//! The caller is responsible for passing the run's checkout root as the
//! worktree (see `workspace::repository::checkout_root`); the runner itself
//! knows nothing about Git.

mod environment;
mod resolve;
mod supervise;

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

pub use environment::{ALLOWED_VARIABLES, check_environment};
pub use resolve::{resolve_program, resolve_working_directory};
pub use supervise::{
    CancellationFlag, DiscardOutput, OutputSink, OutputStream, StopReason, StreamCapture,
    SupervisedOutput, SupervisionLimits, supervise, unix_millis,
};

/// A declared command check, as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandCheckRequest {
    /// The run's checkout root.
    pub worktree: PathBuf,
    /// Normalised relative working directory (`.` for the root).
    pub cwd: String,
    pub program: String,
    pub args: Vec<String>,
}

/// Limits and inputs of the runner; `Default` gives the contract's values.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// Default 10 minutes.
    pub timeout: Duration,
    /// Default 16 MiB.
    pub stdout_limit_bytes: u64,
    /// Default 8 MiB.
    pub stderr_limit_bytes: u64,
    /// Bytes of each stream's end kept in the outcome; default 8 KiB.
    pub tail_bytes: usize,
    /// Environment the allowlist is taken from; `None` = this process's.
    pub base_environment: Option<Vec<(OsString, OsString)>>,
    /// How long to wait for output pipes after the process group was killed.
    pub exit_grace: Duration,
    pub cancellation: Option<CancellationFlag>,
    /// Set in the check's environment on top of the allowlist: nagi's ownership markers
    /// (`NAGI_SESSION_MARKER`, `NAGI_RUN_ID`), by which a restarted server finds leftovers.
    pub marker_environment: Vec<(OsString, OsString)>,
}

impl Default for RunnerConfig {
    fn default() -> RunnerConfig {
        RunnerConfig {
            timeout: Duration::from_secs(10 * 60),
            stdout_limit_bytes: 16 * 1024 * 1024,
            stderr_limit_bytes: 8 * 1024 * 1024,
            tail_bytes: 8 * 1024,
            base_environment: None,
            exit_grace: Duration::from_secs(2),
            cancellation: None,
            marker_environment: Vec::new(),
        }
    }
}

/// Why a command that was started does not count as having run to its end.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandFailure {
    #[error("the command timed out after {timeout_millis} ms and its process group was killed")]
    TimedOut { timeout_millis: u64 },
    #[error("the command wrote more than {limit_bytes} bytes to stdout and was killed")]
    StdoutLimitExceeded { limit_bytes: u64 },
    #[error("the command wrote more than {limit_bytes} bytes to stderr and was killed")]
    StderrLimitExceeded { limit_bytes: u64 },
    #[error("the command was cancelled and its process group was killed")]
    Cancelled,
    #[error(
        "a process that left the command's process group kept its output open; output after the command ended was not read"
    )]
    OutputHeldOpen,
}

/// Summary of one output stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSummary {
    pub total_bytes: u64,
    /// Lowercase hex SHA-256 of the (limit-bounded) stream.
    pub sha256: String,
    /// Last `tail_bytes` bytes, decoded as UTF-8 with replacement characters.
    pub tail: String,
}

/// What happened when a check command ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutcome {
    /// Exit code; `-1` when killed by a signal (also after a timeout kill).
    pub exit_code: i32,
    pub signal: Option<i32>,
    /// Set when the run was stopped or incomplete; such a run is a failed check.
    pub failure: Option<CommandFailure>,
    pub started_at_millis: u64,
    pub finished_at_millis: u64,
    pub duration_millis: u64,
    pub stdout: OutputSummary,
    pub stderr: OutputSummary,
    pub resolved_cwd: PathBuf,
    pub resolved_program: PathBuf,
}

impl CommandOutcome {
    /// Exit code 0 and no failure.
    pub fn succeeded(&self) -> bool {
        self.failure.is_none() && self.exit_code == 0
    }
}

/// A command that could not be started at all.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("working directory `{cwd}` is not a normalised relative path inside the worktree")]
    InvalidWorkingDirectory { cwd: String },
    #[error("worktree {worktree:?} cannot be resolved: {source}")]
    WorktreeUnavailable {
        worktree: PathBuf,
        source: std::io::Error,
    },
    #[error("working directory {path:?} cannot be resolved: {source}")]
    WorkingDirectoryUnavailable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "working directory `{cwd}` resolves to {resolved:?}, which is outside the worktree {worktree:?}"
    )]
    WorkingDirectoryEscapesWorktree {
        cwd: String,
        resolved: PathBuf,
        worktree: PathBuf,
    },
    #[error("working directory {path:?} is not a directory")]
    WorkingDirectoryNotADirectory { path: PathBuf },
    #[error("program `{program}` is empty or contains NUL")]
    InvalidProgram { program: String },
    #[error("program `{program}` was not found (looked at {searched:?})")]
    ProgramNotFound {
        program: String,
        searched: Vec<PathBuf>,
    },
    #[error("program {path:?} is not executable")]
    ProgramNotExecutable { path: PathBuf },
    #[error("program {path:?} is not a regular file")]
    ProgramNotRegularFile { path: PathBuf },
    #[error("argument {index} contains NUL")]
    InvalidArgument { index: usize },
    #[error("failed to start {program:?}: {source}")]
    Spawn {
        program: PathBuf,
        source: std::io::Error,
    },
}

/// Runs a declared command check to its end (or its limit) and reports the
/// outcome; rejects it with a [`RunnerError`] if it cannot be started.
pub fn run_command_check(
    request: &CommandCheckRequest,
    config: &RunnerConfig,
    sink: &mut dyn OutputSink,
) -> Result<CommandOutcome, RunnerError> {
    let resolved_cwd = resolve_working_directory(&request.worktree, &request.cwd)?;
    if let Some(index) = request
        .args
        .iter()
        .position(|argument| argument.contains('\0'))
    {
        return Err(RunnerError::InvalidArgument { index });
    }
    let base_environment: Vec<(OsString, OsString)> = config
        .base_environment
        .clone()
        .unwrap_or_else(|| std::env::vars_os().collect());
    let mut environment = check_environment(&base_environment, &resolved_cwd);
    environment.extend(config.marker_environment.iter().cloned());
    let search_path = environment
        .iter()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.as_os_str());
    let resolved_program = resolve_program(&request.program, &resolved_cwd, search_path)?;

    let mut command = Command::new(&resolved_program);
    command
        .args(&request.args)
        .current_dir(&resolved_cwd)
        .env_clear()
        .envs(environment);
    let limits = SupervisionLimits {
        timeout: config.timeout,
        stdout_limit_bytes: config.stdout_limit_bytes,
        stderr_limit_bytes: config.stderr_limit_bytes,
        tail_bytes: config.tail_bytes,
        keep_full_stdout: false,
        exit_grace: config.exit_grace,
        cancellation: config.cancellation.clone(),
    };
    let output = supervise(command, &limits, sink).map_err(|source| RunnerError::Spawn {
        program: resolved_program.clone(),
        source,
    })?;
    let failure = match output.stop_reason {
        Some(StopReason::TimedOut) => Some(CommandFailure::TimedOut {
            timeout_millis: config.timeout.as_millis() as u64,
        }),
        Some(StopReason::StdoutLimitExceeded) => Some(CommandFailure::StdoutLimitExceeded {
            limit_bytes: config.stdout_limit_bytes,
        }),
        Some(StopReason::StderrLimitExceeded) => Some(CommandFailure::StderrLimitExceeded {
            limit_bytes: config.stderr_limit_bytes,
        }),
        Some(StopReason::Cancelled) => Some(CommandFailure::Cancelled),
        None if output.output_held_open => Some(CommandFailure::OutputHeldOpen),
        None => None,
    };
    Ok(CommandOutcome {
        exit_code: output.exit_code,
        signal: output.signal,
        failure,
        started_at_millis: output.started_at_millis,
        finished_at_millis: output.finished_at_millis,
        duration_millis: output.duration.as_millis() as u64,
        stdout: summarize(&output.stdout),
        stderr: summarize(&output.stderr),
        resolved_cwd,
        resolved_program,
    })
}

fn summarize(capture: &StreamCapture) -> OutputSummary {
    OutputSummary {
        total_bytes: capture.total_bytes,
        sha256: capture.sha256.clone(),
        tail: String::from_utf8_lossy(&capture.tail).into_owned(),
    }
}
