//! `nagi wait output`: block until a pane's output matches (`pane.wait_for_output`).

use clap::Subcommand;
use serde_json::{Value, json};

use super::pane::ReadSourceArg;
use crate::CommandResult;
use crate::context::Context;
use crate::exit::CliError;

#[derive(Debug, Subcommand)]
pub enum WaitCommand {
    /// Wait until a pane's output matches a regular expression; print the matched line.
    /// Exits 4 when the timeout passes first.
    Output {
        pane_id: String,
        /// A regular expression (Rust regex syntax); `^` and `$` match at the start and end
        /// of each line.
        #[arg(long = "match", value_name = "REGEX")]
        pattern: String,
        /// Give up after this many seconds (fractions allowed); without it, wait until the
        /// output matches or the pane's process has ended.
        #[arg(long, value_name = "SECS")]
        timeout: Option<f64>,
        #[arg(long, value_enum, default_value = "recent")]
        source: ReadSourceArg,
        /// How many lines to search (1..=10000).
        #[arg(long, value_name = "N")]
        lines: Option<u32>,
    },
}

pub fn run(context: &Context, command: WaitCommand) -> CommandResult {
    let WaitCommand::Output {
        pane_id,
        pattern,
        timeout,
        source,
        lines,
    } = command;
    let timeout_ms = match timeout {
        Some(seconds) if !seconds.is_finite() || seconds < 0.0 => {
            return Err(CliError::Usage(format!(
                "--timeout must be a non-negative number of seconds, got {seconds}"
            )));
        }
        Some(seconds) => Some((seconds * 1000.0).round() as u64),
        None => None,
    };
    let params = json!({
        "pane_id": pane_id,
        "source": source.wire(),
        "match": {"type": "regex", "value": format!("(?m){pattern}")},
        "lines": lines,
        "timeout_ms": timeout_ms,
    });
    let result = context.request("pane.wait_for_output", params)?;
    context.print(&result, |result| {
        match result.get("matched_line").and_then(Value::as_str) {
            Some(line) => format!("{line}\n"),
            None => String::new(),
        }
    })
}
