//! How the run's console draws its records: a labelled gutter, text wrapped to the pane's
//! width, the agent's text as it streams, tool output folded past a few lines, and turn
//! boundaries with their diff stat and usage. Pure: records and a width in, terminal bytes
//! out, so it is tested without a terminal.

use nagi_schema::console::{ConsoleRecord, FileStat};
use nagi_schema::usage::TokenUsage;
use unicode_width::UnicodeWidthChar;

/// Lines of a tool's output shown before the rest is folded.
pub const FOLDED_OUTPUT_LINES: usize = 4;
/// Files of a diff stat listed before the rest is counted.
const LISTED_FILES: usize = 8;
/// Columns of the gutter: a label right-aligned in 7, then " │ ".
const GUTTER_COLUMNS: usize = 10;
/// The narrowest text column drawn, whatever the pane's width.
const MIN_TEXT_COLUMNS: usize = 20;

const RESET: &str = "\x1b[0m";
const DIM: &str = "\x1b[2m";

/// The drawing state between records: the message being streamed, if any.
#[derive(Debug, Default)]
pub struct Drawer {
    stream: Option<Stream>,
}

/// The agent's message as far as it was streamed, and where the cursor is in its line.
#[derive(Debug)]
struct Stream {
    text: String,
    column: usize,
}

impl Drawer {
    /// The bytes that draw `record` on a pane `width` columns wide.
    pub fn draw(&mut self, record: &ConsoleRecord, width: usize) -> String {
        let text_columns = width.saturating_sub(GUTTER_COLUMNS).max(MIN_TEXT_COLUMNS);
        let mut out = String::new();
        match record {
            ConsoleRecord::AgentDelta { text } => {
                self.stream_text(&mut out, text, text_columns);
                return out;
            }
            ConsoleRecord::AgentText { text } => {
                // Streamed already: only what the pieces missed is drawn.
                let streamed = self
                    .stream
                    .as_ref()
                    .filter(|stream| text.starts_with(&stream.text))
                    .map(|stream| stream.text.len());
                match streamed {
                    Some(streamed) => {
                        self.stream_text(&mut out, &text[streamed..], text_columns);
                        self.end_stream(&mut out);
                    }
                    None => {
                        self.end_stream(&mut out);
                        block(&mut out, "agent", "\x1b[1;36m", "", text, text_columns);
                    }
                }
                return out;
            }
            _ => self.end_stream(&mut out),
        }
        match record {
            ConsoleRecord::AgentDelta { .. } | ConsoleRecord::AgentText { .. } => {}
            ConsoleRecord::ToolCall { title } => block(
                &mut out,
                "tool",
                "\x1b[1;33m",
                "",
                &format!("$ {title}"),
                text_columns,
            ),
            ConsoleRecord::ToolResult { title, output } => {
                block(&mut out, "result", "\x1b[33m", "", title, text_columns);
                folded(&mut out, output, text_columns);
            }
            ConsoleRecord::Waiting {
                attention_id,
                summary,
            } => {
                block(
                    &mut out,
                    "waiting",
                    "\x1b[1;35m",
                    "\x1b[1m",
                    &format!("waiting for you: {summary}"),
                    text_columns,
                );
                block(
                    &mut out,
                    "",
                    "\x1b[1;35m",
                    "",
                    &format!("answer it in `nagi cockpit` (attention {attention_id})"),
                    text_columns,
                );
            }
            ConsoleRecord::TurnStarted { turn, text } => {
                rule(&mut out, &format!("turn {turn}"), "\x1b[1m", width);
                if let Some(text) = text {
                    block(&mut out, "you", "\x1b[1m", "", text, text_columns);
                }
            }
            ConsoleRecord::TurnEnded {
                turn,
                outcome,
                usage,
                files,
            } => {
                if !files.is_empty() {
                    diff_stat(&mut out, files, text_columns);
                }
                if let Some(usage) = usage {
                    block(
                        &mut out,
                        "usage",
                        DIM,
                        DIM,
                        &usage_line(usage),
                        text_columns,
                    );
                }
                let colour = match outcome.as_str() {
                    "completed" => "\x1b[1;32m",
                    "interrupted" | "stopped" => "\x1b[1;33m",
                    _ => "\x1b[1;31m",
                };
                rule(&mut out, &format!("turn {turn} {outcome}"), colour, width);
            }
            ConsoleRecord::Info { text } => block(&mut out, "info", DIM, DIM, text, text_columns),
            ConsoleRecord::Stderr { text } => {
                block(&mut out, "stderr", "\x1b[31m", DIM, text, text_columns)
            }
            ConsoleRecord::Nagi { text } => {
                block(&mut out, "nagi", "\x1b[1;32m", "", text, text_columns)
            }
            ConsoleRecord::Check { text } => {
                block(&mut out, "check", "\x1b[1;34m", "", text, text_columns)
            }
            ConsoleRecord::CheckOutput { text } => folded(&mut out, text, text_columns),
        }
        out
    }

    /// Draws a streamed piece where the last one stopped, wrapping at the text column.
    fn stream_text(&mut self, out: &mut String, text: &str, text_columns: usize) {
        if text.is_empty() {
            return;
        }
        let stream = self.stream.get_or_insert_with(|| {
            out.push_str(&gutter("agent", "\x1b[1;36m"));
            Stream {
                text: String::new(),
                column: 0,
            }
        });
        stream.text.push_str(text);
        for character in text.chars() {
            if character == '\n' {
                out.push_str("\r\n");
                out.push_str(&gutter("", "\x1b[1;36m"));
                stream.column = 0;
                continue;
            }
            let columns = character.width().unwrap_or(0);
            if stream.column + columns > text_columns {
                out.push_str("\r\n");
                out.push_str(&gutter("", "\x1b[1;36m"));
                stream.column = 0;
            }
            out.push(character);
            stream.column += columns;
        }
    }

    /// Ends the streamed message's line, if one is open.
    fn end_stream(&mut self, out: &mut String) {
        if self.stream.take().is_some() {
            out.push_str("\r\n");
        }
    }
}

/// The gutter: the label right-aligned in its colour, and the bar.
fn gutter(label: &str, colour: &str) -> String {
    format!("{colour}{label:>7} │{RESET} ")
}

/// Text under a label, every line wrapped to the text column.
fn block(
    out: &mut String,
    label: &str,
    label_colour: &str,
    text_colour: &str,
    text: &str,
    text_columns: usize,
) {
    let mut first = true;
    for line in text.lines().flat_map(|line| wrap(line, text_columns)) {
        let shown_label = if first { label } else { "" };
        first = false;
        out.push_str(&gutter(shown_label, label_colour));
        out.push_str(text_colour);
        out.push_str(&line);
        if !text_colour.is_empty() {
            out.push_str(RESET);
        }
        out.push_str("\r\n");
    }
    if first {
        out.push_str(&gutter(label, label_colour));
        out.push_str("\r\n");
    }
}

/// A tool's or a check's output: its first lines, then how many more were folded.
fn folded(out: &mut String, output: &str, text_columns: usize) {
    let lines: Vec<&str> = output.lines().collect();
    let shown = if lines.len() > FOLDED_OUTPUT_LINES + 1 {
        FOLDED_OUTPUT_LINES
    } else {
        lines.len()
    };
    for line in &lines[..shown] {
        for row in wrap(line, text_columns) {
            out.push_str(&gutter("", "\x1b[33m"));
            out.push_str(DIM);
            out.push_str(&row);
            out.push_str(RESET);
            out.push_str("\r\n");
        }
    }
    let hidden = lines.len() - shown;
    if hidden > 0 {
        let note = format!(
            "… {hidden} more line{} (all of it is in the transcript)",
            if hidden == 1 { "" } else { "s" }
        );
        block(out, "", "\x1b[33m", DIM, &note, text_columns);
    }
}

/// The files the worktree holds changed: a summary line, then a line per file.
fn diff_stat(out: &mut String, files: &[FileStat], text_columns: usize) {
    let added: u64 = files.iter().filter_map(|file| file.added).sum();
    let removed: u64 = files.iter().filter_map(|file| file.removed).sum();
    let summary = format!(
        "{} file{} changed, \x1b[32m+{added}\x1b[0m \x1b[31m-{removed}\x1b[0m",
        files.len(),
        if files.len() == 1 { "" } else { "s" }
    );
    out.push_str(&gutter("files", "\x1b[1;34m"));
    out.push_str(&summary);
    out.push_str("\r\n");
    for file in files.iter().take(LISTED_FILES) {
        let change = match (file.added, file.removed) {
            (Some(added), Some(removed)) => {
                format!("\x1b[32m+{added}\x1b[0m \x1b[31m-{removed}\x1b[0m")
            }
            _ => "binary".to_string(),
        };
        let path = truncate_to_columns(&file.path, text_columns.saturating_sub(16).max(8));
        out.push_str(&gutter("", "\x1b[1;34m"));
        out.push_str(&format!("{path}  {change}\r\n"));
    }
    if files.len() > LISTED_FILES {
        out.push_str(&gutter("", "\x1b[1;34m"));
        out.push_str(&format!(
            "{DIM}… and {} more{RESET}\r\n",
            files.len() - LISTED_FILES
        ));
    }
}

/// A turn's tokens and cost, as one line.
pub fn usage_line(usage: &TokenUsage) -> String {
    let mut line = format!("{} in", usage.input_tokens);
    if usage.cached_input_tokens > 0 {
        line.push_str(&format!(" ({} cached)", usage.cached_input_tokens));
    }
    line.push_str(&format!(" · {} out", usage.output_tokens));
    if usage.reasoning_output_tokens > 0 {
        line.push_str(&format!(" ({} reasoning)", usage.reasoning_output_tokens));
    }
    if let Some(micro) = usage.cost_micro_usd {
        line.push_str(&format!(
            " · ${}.{:04}",
            micro / 1_000_000,
            (micro % 1_000_000) / 100
        ));
    }
    line
}

/// A full-width rule with a title: `── turn 2 completed ─────`.
fn rule(out: &mut String, title: &str, colour: &str, width: usize) {
    let used = 4 + title.chars().count();
    let fill = width.saturating_sub(used).min(200);
    out.push_str(&format!(
        "{colour}── {title} {}{RESET}\r\n",
        "─".repeat(fill)
    ));
}

/// Splits one line into rows of at most `columns` display columns.
fn wrap(line: &str, columns: usize) -> Vec<String> {
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut used = 0;
    for character in line.chars() {
        let width = if character == '\t' {
            4
        } else {
            character.width().unwrap_or(0)
        };
        if used + width > columns && !row.is_empty() {
            rows.push(std::mem::take(&mut row));
            used = 0;
        }
        if character == '\t' {
            row.push_str("    ");
        } else {
            row.push(character);
        }
        used += width;
    }
    rows.push(row);
    rows
}

/// The start of `text` that fits in `columns`, with `…` when cut.
fn truncate_to_columns(text: &str, columns: usize) -> String {
    let rows = wrap(text, columns.saturating_sub(1).max(1));
    match rows.as_slice() {
        [only] => only.clone(),
        [first, ..] => format!("{first}…"),
        [] => String::new(),
    }
}

#[cfg(test)]
mod tests;
