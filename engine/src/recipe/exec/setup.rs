//! `[setup]` and `[[cleanup]]` commands: run in the worktree root through the trusted
//! runner (`nagi_exec::runner`: cleared environment, stdin null, own process group killed when
//! the command ends, stdout 16 MiB / stderr 8 MiB, the declared timeout), with their output
//! streamed into the recipe transcript that the project pane follows.
//!
//! Why the runner and not a pane: the launch needs the exit status and an excerpt of the
//! output to decide and explain, and the runner gives both with the limits the contract
//! asks for, while the pane (`tail -F` of the transcript) shows the same bytes live.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use crate::errors::RecipeExecError;
use crate::recipe::RecipeCommand;
use crate::transcript::Transcript;
use nagi_exec::runner::{
    CommandCheckRequest, CommandOutcome, OutputStream, RunnerConfig, run_command_check,
};

/// Most characters of output quoted in a failure message.
pub const FAILURE_EXCERPT_CHARS: usize = 2048;

/// The last `max_chars` characters of `text`, trimmed.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    let trimmed = text.trim();
    let count = trimmed.chars().count();
    if count <= max_chars {
        return trimmed.to_owned();
    }
    let skip = count - max_chars;
    let tail: String = trimmed.chars().skip(skip).collect();
    format!("…{tail}")
}

/// `npm run build` for messages (arguments with spaces quoted).
pub fn describe_command(argv: &[String]) -> String {
    argv.iter()
        .map(|argument| {
            if argument.contains(char::is_whitespace) || argument.is_empty() {
                format!("{argument:?}")
            } else {
                argument.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// [`describe_command`] cut to `max_chars` characters, for messages.
pub fn describe_command_briefly(argv: &[String], max_chars: usize) -> String {
    let full = describe_command(argv);
    if full.chars().count() <= max_chars {
        return full;
    }
    let kept: String = full.chars().take(max_chars).collect();
    format!("{kept}…")
}

/// Most characters of a command quoted in a message.
const COMMAND_CHARS_IN_MESSAGES: usize = 240;

/// Why a finished command does not count as a success, with an output excerpt (stderr,
/// or stdout when stderr is empty); `None` when it succeeded.
pub fn failure_message(argv: &[String], outcome: &CommandOutcome) -> Option<String> {
    if outcome.succeeded() {
        return None;
    }
    let command = describe_command_briefly(argv, COMMAND_CHARS_IN_MESSAGES);
    let mut message = match (&outcome.failure, outcome.signal) {
        (Some(failure), _) => format!("`{command}` failed: {failure}"),
        (None, Some(signal)) => format!("`{command}` was killed by signal {signal}"),
        (None, None) => format!("`{command}` exited with code {}", outcome.exit_code),
    };
    let stderr = excerpt(&outcome.stderr.tail, FAILURE_EXCERPT_CHARS);
    let (label, quoted) = if stderr.is_empty() {
        (
            "stdout",
            excerpt(&outcome.stdout.tail, FAILURE_EXCERPT_CHARS),
        )
    } else {
        ("stderr", stderr)
    };
    if !quoted.is_empty() {
        message.push_str(&format!("; {label}:\n{quoted}"));
    }
    Some(message)
}

/// Runs one recipe command in `worktree` to its end. `Ok(outcome)` when it ran (check
/// [`failure_message`]); `Err(message)` when it could not start. Blocking.
pub fn run_recipe_command(
    worktree: &Path,
    command: &RecipeCommand,
    markers: &[(OsString, OsString)],
    transcript: Option<&Transcript>,
) -> Result<CommandOutcome, String> {
    let request = CommandCheckRequest {
        worktree: worktree.to_path_buf(),
        cwd: ".".into(),
        program: command.command[0].clone(),
        args: command.command[1..].to_vec(),
    };
    let config = RunnerConfig {
        timeout: Duration::from_secs(u64::from(command.timeout_seconds)),
        marker_environment: markers.to_vec(),
        ..RunnerConfig::default()
    };
    let mut sink = |_stream: OutputStream, bytes: &[u8]| {
        if let Some(transcript) = transcript {
            transcript.check_output(bytes);
        }
    };
    run_command_check(&request, &config, &mut sink).map_err(|rejected| {
        format!(
            "`{}` could not start: {rejected}",
            describe_command_briefly(&command.command, COMMAND_CHARS_IN_MESSAGES)
        )
    })
}

/// Runs `[setup]`: any failure to start, non-zero exit, timeout or output limit is a
/// [`RecipeExecError::SetupFailed`] naming the exit code with an output excerpt. Blocking.
pub fn run_setup(
    worktree: &Path,
    setup: &RecipeCommand,
    markers: &[(OsString, OsString)],
    transcript: Option<&Transcript>,
) -> Result<CommandOutcome, RecipeExecError> {
    let outcome = run_recipe_command(worktree, setup, markers, transcript)
        .map_err(|message| RecipeExecError::SetupFailed { message })?;
    match failure_message(&setup.command, &outcome) {
        Some(message) => Err(RecipeExecError::SetupFailed { message }),
        None => Ok(outcome),
    }
}
