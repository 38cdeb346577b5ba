//! `nagi mission diff ID [--stat] [--color auto|always|never]`: the mission's change
//! against its worktree's base, as `git diff` shows one: the files with their status and
//! line counts, then the hunks, coloured and paged on a terminal.

use std::io::{IsTerminal, Write};

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use crate::CommandResult;
use crate::context::Context;
use crate::exit::EXIT_OK;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    pub mission_id: String,
    /// Only the changed files with their line counts.
    #[arg(long)]
    pub stat: bool,
    /// Colour the output (auto: when it goes to a terminal).
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
}

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

pub fn run(context: &Context, args: DiffArgs) -> CommandResult {
    let result = context.request(
        "mission.diff",
        json!({"mission_id": args.mission_id, "stat_only": args.stat}),
    )?;
    if context.json {
        return context.print(&result, |_| String::new());
    }
    let terminal = std::io::stdout().is_terminal();
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => terminal && std::env::var_os("NO_COLOR").is_none(),
    };
    let text = render(result.get("diff").unwrap_or(&Value::Null), color);
    if terminal {
        page(&text);
    } else {
        print!("{text}");
    }
    Ok(EXIT_OK)
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

fn count(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The diff as text: a header, one line per file, then the hunks.
pub fn render(diff: &Value, color: bool) -> String {
    let paint = |code: &str, line: &str| {
        if color {
            format!("{code}{line}{RESET}")
        } else {
            line.to_string()
        }
    };
    let mut out = String::new();
    let base = text(diff, "base_revision");
    let branch = text(diff, "branch");
    out.push_str(&paint(
        BOLD,
        &format!(
            "mission {} in {}{} against {}",
            text(diff, "mission_id"),
            text(diff, "worktree_path"),
            if branch.is_empty() {
                String::new()
            } else {
                format!(" (branch {branch})")
            },
            &base[..base.len().min(12)]
        ),
    ));
    out.push('\n');
    let files = diff
        .get("files")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if files.is_empty() {
        out.push_str("no changes\n");
        return out;
    }
    for file in &files {
        let status = match text(file, "status") {
            "added" => "A",
            "deleted" => "D",
            "type_changed" => "T",
            _ => "M",
        };
        let counts = if file.get("binary").and_then(Value::as_bool) == Some(true) {
            "binary".to_string()
        } else {
            format!(
                "+{} -{}",
                count(file, "additions"),
                count(file, "deletions")
            )
        };
        let untracked = if file.get("untracked").and_then(Value::as_bool) == Some(true) {
            "  (untracked)"
        } else {
            ""
        };
        out.push_str(&format!(
            " {status} {:<12} {}{untracked}\n",
            counts,
            text(file, "path")
        ));
    }
    out.push_str(&format!(
        " {} file{} changed, {} insertion{}(+), {} deletion{}(-)\n",
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        count(diff, "additions"),
        if count(diff, "additions") == 1 {
            ""
        } else {
            "s"
        },
        count(diff, "deletions"),
        if count(diff, "deletions") == 1 {
            ""
        } else {
            "s"
        },
    ));
    let patch = text(diff, "patch");
    if !patch.is_empty() {
        out.push('\n');
        for line in patch.lines() {
            let painted = if line.starts_with("diff --git")
                || line.starts_with("index ")
                || line.starts_with("+++")
                || line.starts_with("---")
            {
                paint(BOLD, line)
            } else if line.starts_with("@@") {
                paint(CYAN, line)
            } else if line.starts_with('+') {
                paint(GREEN, line)
            } else if line.starts_with('-') {
                paint(RED, line)
            } else {
                line.to_string()
            };
            out.push_str(&painted);
            out.push('\n');
        }
    }
    let omitted = count(diff, "omitted_patch_bytes");
    if omitted > 0 {
        out.push_str(&format!(
            "\n[{omitted} more bytes of hunks left out; see them with: git -C {} diff {base}]\n",
            text(diff, "worktree_path")
        ));
    }
    out
}

/// Shows `text` through `$PAGER` (default `less -FRX`, which quits when it fits one
/// screen), as `git diff` does; straight to stdout when no pager starts.
fn page(text: &str) {
    let pager = std::env::var("PAGER")
        .ok()
        .filter(|pager| !pager.trim().is_empty())
        .unwrap_or_else(|| "less -FRX".to_string());
    let mut words = pager.split_whitespace();
    let spawned = words.next().and_then(|program| {
        std::process::Command::new(program)
            .args(words)
            .env(
                "LESS",
                std::env::var("LESS").unwrap_or_else(|_| "FRX".into()),
            )
            .stdin(std::process::Stdio::piped())
            .spawn()
            .ok()
    });
    match spawned {
        Some(mut child) => {
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(text.as_bytes());
            }
            let _ = child.wait();
        }
        None => print!("{text}"),
    }
}
