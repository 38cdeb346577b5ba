//! A run's readable transcript: agent text, tool calls, approvals asked, provider stderr
//! and check output, appended to a file (`<run>.log`) that outlives the server process; and
//! beside it the same run as console records (`<run>.console.jsonl`, one JSON object per
//! line), which the run's pane (`nagi run console`) follows and draws: streamed text, tool
//! output to fold, turn boundaries with their usage and diff stat.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nagi_providers::TranscriptLine;
use nagi_schema::console::{ConsoleRecord, FileStat};
use nagi_schema::usage::TokenUsage;

pub struct Transcript {
    path: PathBuf,
    sink: Mutex<Sink>,
    records: Mutex<Records>,
}

/// The console records' file, and the streamed text not written yet.
struct Records {
    sink: Sink,
    /// The agent's streamed text, written as early as no secret could be cut in two (see
    /// `nagi_mission::redact::StreamRedactor`).
    stream: nagi_mission::redact::StreamRedactor,
}

/// Where lines go: kept in memory until the file is opened (a run opens its transcript
/// once the provider's session is bound, so that creating the file and its directory
/// is not on the way to the binding), then appended to the file.
enum Sink {
    Pending(Vec<u8>),
    File(std::fs::File),
}

const RESET: &str = "\x1b[0m";

/// Colour and cursor sequences a provider wrote (Codex colours its stderr): CSI and OSC
/// sequences, and lone escapes.
static TERMINAL_SEQUENCE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"\x1b\[[0-9:;<=>?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?",
    )
    .expect("terminal sequence pattern compiles")
});

/// What a transcript line may hold: provider text must not drive the pane's terminal, so
/// its escape sequences are removed whole (not left as `[31m` once the escape is gone) and
/// other control characters except newlines and tabs dropped; and secrets are redacted,
/// since the transcript is kept on disk and shown in the run's pane.
fn clean(text: &str) -> String {
    nagi_mission::redact::redact(&printable(text)).into_owned()
}

/// Text without terminal sequences and control characters (newlines and tabs kept).
fn printable(text: &str) -> String {
    TERMINAL_SEQUENCE
        .replace_all(text, "")
        .chars()
        .filter(|character| !character.is_control() || matches!(character, '\n' | '\t'))
        .collect()
}

impl Transcript {
    /// Opens (creating) the transcript file now.
    pub fn open(path: &Path) -> std::io::Result<Transcript> {
        let transcript = Transcript::deferred(path);
        transcript.open_file()?;
        Ok(transcript)
    }

    /// A transcript whose file is created by [`Transcript::open_file`]; lines written
    /// before are kept until then.
    pub fn deferred(path: &Path) -> Transcript {
        Transcript {
            path: path.to_path_buf(),
            sink: Mutex::new(Sink::Pending(Vec::new())),
            records: Mutex::new(Records {
                sink: Sink::Pending(Vec::new()),
                stream: Default::default(),
            }),
        }
    }

    /// Creates the file (and its directory) if not done yet, and writes what was kept.
    pub fn open_file(&self) -> std::io::Result<()> {
        let poisoned = || std::io::Error::other("the transcript lock is poisoned");
        {
            let mut sink = self.sink.lock().map_err(|_| poisoned())?;
            sink.open(&self.path)?;
        }
        let mut records = self.records.lock().map_err(|_| poisoned())?;
        records
            .sink
            .open(&nagi_schema::console::records_path(&self.path))
    }

    fn append(&self, bytes: &[u8]) {
        if let Ok(mut sink) = self.sink.lock() {
            sink.write(bytes);
        }
    }

    /// Appends one console record, after the streamed text held back before it.
    fn record(&self, record: &ConsoleRecord) {
        if let Ok(mut records) = self.records.lock() {
            let held = records.stream.finish();
            if !held.is_empty() {
                records.write(&ConsoleRecord::AgentDelta { text: held });
            }
            records.write(record);
        }
    }

    /// A piece of the agent's streamed text: written as soon as it is safe to show.
    fn delta(&self, text: &str) {
        let Ok(mut records) = self.records.lock() else {
            return;
        };
        let shown = records.stream.push(&printable(text));
        if !shown.is_empty() {
            records.write(&ConsoleRecord::AgentDelta { text: shown });
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write_labelled(&self, label: &str, color: &str, text: &str) {
        let text = clean(text);
        let mut block = String::new();
        for line in text.lines() {
            block.push_str(&format!("{color}{label:>7} │{RESET} {line}\n"));
        }
        if block.is_empty() {
            block.push_str(&format!("{color}{label:>7} │{RESET}\n"));
        }
        self.append(block.as_bytes());
    }

    pub fn line(&self, line: &TranscriptLine) {
        match line {
            // The log keeps whole messages; the console draws the pieces at once.
            TranscriptLine::AgentDelta(piece) => self.delta(piece),
            TranscriptLine::AgentText(message) => {
                self.write_labelled("agent", "\x1b[1;36m", message);
                self.record(&ConsoleRecord::AgentText {
                    text: clean(message),
                });
            }
            TranscriptLine::ToolCall(title) => {
                self.write_labelled("tool", "\x1b[1;33m", title);
                self.record(&ConsoleRecord::ToolCall {
                    title: clean(title),
                });
            }
            TranscriptLine::ToolResult { title, output } => {
                self.write_labelled("result", "\x1b[33m", title);
                if !output.is_empty() {
                    self.write_labelled("", "\x1b[33m", output);
                }
                self.record(&ConsoleRecord::ToolResult {
                    title: clean(title),
                    output: clean(output),
                });
            }
            TranscriptLine::Approval(summary) => {
                self.write_labelled("asks", "\x1b[1;35m", summary);
                self.record(&ConsoleRecord::Info {
                    text: clean(summary),
                });
            }
            TranscriptLine::Stderr(line) => {
                self.write_labelled("stderr", "\x1b[31m", line);
                self.record(&ConsoleRecord::Stderr { text: clean(line) });
            }
            TranscriptLine::Info(note) => {
                self.write_labelled("info", "\x1b[2m", note);
                self.record(&ConsoleRecord::Info { text: clean(note) });
            }
        }
    }

    pub fn nagi(&self, text: &str) {
        self.write_labelled("nagi", "\x1b[1;32m", text);
        self.record(&ConsoleRecord::Nagi { text: clean(text) });
    }

    pub fn check(&self, text: &str) {
        self.write_labelled("check", "\x1b[1;34m", text);
        self.record(&ConsoleRecord::Check { text: clean(text) });
    }

    /// Raw check output, kept as the command wrote it (control characters stripped).
    pub fn check_output(&self, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let cleaned: String = clean(&text);
        self.append(cleaned.as_bytes());
        self.record(&ConsoleRecord::CheckOutput { text: cleaned });
    }

    /// An approval or a question waits for a person, and where to answer it.
    pub fn waiting(&self, attention_id: &str, summary: &str) {
        self.write_labelled(
            "asks",
            "\x1b[1;35m",
            &format!(
                "{summary} — answer it in the cockpit (nagi cockpit), attention {attention_id}"
            ),
        );
        self.record(&ConsoleRecord::Waiting {
            attention_id: attention_id.to_string(),
            summary: clean(summary),
        });
    }

    /// A turn starts; `text` is a follow-up's text (the first turn's prompt is the mission).
    pub fn turn_started(&self, turn: u32, text: Option<&str>) {
        match text {
            Some(text) => self.write_labelled("you", "\x1b[1m", &format!("(turn {turn}) {text}")),
            None => self.write_labelled("nagi", "\x1b[1;32m", &format!("turn {turn} starts")),
        }
        self.record(&ConsoleRecord::TurnStarted {
            turn,
            text: text.map(clean),
        });
    }

    /// A turn ended, with the usage the provider reported and the worktree's diff stat.
    pub fn turn_ended(
        &self,
        turn: u32,
        outcome: &str,
        usage: Option<TokenUsage>,
        files: Vec<FileStat>,
    ) {
        self.write_labelled("nagi", "\x1b[1;32m", &format!("turn {turn} {outcome}"));
        self.record(&ConsoleRecord::TurnEnded {
            turn,
            outcome: clean(outcome),
            usage,
            files,
        });
    }
}

impl Sink {
    /// Creates the file (and its directory) if not done yet, and writes what was kept.
    fn open(&mut self, path: &Path) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let Sink::Pending(kept) = self else {
            return Ok(());
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        file.write_all(kept)?;
        *self = Sink::File(file);
        Ok(())
    }

    fn write(&mut self, bytes: &[u8]) {
        match self {
            Sink::Pending(kept) => kept.extend_from_slice(bytes),
            Sink::File(file) => {
                let _ = file.write_all(bytes);
            }
        }
    }
}

impl Records {
    fn write(&mut self, record: &ConsoleRecord) {
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        line.push(b'\n');
        self.sink.write(&line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deferred_transcript_keeps_its_lines_until_the_file_is_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mission").join("run.log");
        let transcript = Transcript::deferred(&path);
        transcript.nagi("before the file");
        assert!(!path.exists(), "nothing touches the disk before open_file");
        transcript.open_file().unwrap();
        transcript.nagi("after the file");
        transcript.open_file().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let before = text.find("before the file").expect("the kept line");
        let after = text.find("after the file").expect("the later line");
        assert!(before < after, "{text}");
        assert_eq!(text.matches("before the file").count(), 1, "{text}");
    }

    #[test]
    fn provider_colours_are_removed_whole_and_secrets_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.log");
        let transcript = Transcript::open(&path).unwrap();
        transcript.line(&TranscriptLine::Stderr(
            "\x1b[2m2026-12-03\x1b[0m \x1b[31mERROR\x1b[0m token refused: ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 \x1b]0;title\x07done".into(),
        ));
        transcript.check_output(b"export NPM_TOKEN=npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\n");
        let text = std::fs::read_to_string(&path).unwrap();
        // The provider's part of the line, after nagi's own label, has no sequence left.
        assert!(
            text.contains("│\x1b[0m 2026-12-03 ERROR token refused: [REDACTED] done\n"),
            "{text:?}"
        );
        assert!(
            !text.contains("ghp_") && !text.contains("npm_AbCd"),
            "{text:?}"
        );
    }

    fn records_of(path: &Path) -> Vec<ConsoleRecord> {
        std::fs::read_to_string(nagi_schema::console::records_path(path))
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    #[test]
    fn streamed_pieces_reach_the_console_records_and_a_secret_split_across_pieces_is_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.log");
        let transcript = Transcript::open(&path).unwrap();
        for piece in [
            "The token is ghp_aBcDeFgHiJkL",
            "mNoPqRsTuVwXyZ0123456789 and",
            " more",
        ] {
            transcript.line(&TranscriptLine::AgentDelta(piece.into()));
        }
        let whole = "The token is ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 and more";
        transcript.line(&TranscriptLine::AgentText(whole.into()));
        let records = records_of(&path);
        let streamed: String = records
            .iter()
            .filter_map(|record| match record {
                ConsoleRecord::AgentDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(streamed, "The token is [REDACTED] and more", "{records:?}");
        assert!(
            records
                .iter()
                .all(|record| !format!("{record:?}").contains("ghp_")),
            "{records:?}"
        );
        assert_eq!(
            records.last(),
            Some(&ConsoleRecord::AgentText {
                text: "The token is [REDACTED] and more".into()
            })
        );
        // The log keeps the whole message once, not its pieces.
        let log = std::fs::read_to_string(&path).unwrap();
        assert_eq!(log.matches("The token is").count(), 1, "{log}");
    }

    #[test]
    fn a_tool_result_keeps_its_output_apart_and_a_turn_end_its_usage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.log");
        let transcript = Transcript::deferred(&path);
        transcript.line(&TranscriptLine::ToolResult {
            title: "ls [completed, exit 0]".into(),
            output: "README.md\nsrc".into(),
        });
        transcript.turn_ended(1, "completed", None, Vec::new());
        transcript.open_file().unwrap();
        assert_eq!(
            records_of(&path),
            vec![
                ConsoleRecord::ToolResult {
                    title: "ls [completed, exit 0]".into(),
                    output: "README.md\nsrc".into(),
                },
                ConsoleRecord::TurnEnded {
                    turn: 1,
                    outcome: "completed".into(),
                    usage: None,
                    files: Vec::new(),
                },
            ]
        );
    }
}
