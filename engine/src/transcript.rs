//! A run's readable transcript: agent text, tool calls, approvals asked, provider stderr
//! and check output, appended to a file that the run's managed pane follows
//! (`tail -F`), so `nagi pane attach` shows it live and it outlives the server process.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nagi_providers::TranscriptLine;

pub struct Transcript {
    path: PathBuf,
    sink: Mutex<Sink>,
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
    let without_sequences = TERMINAL_SEQUENCE.replace_all(text, "");
    let printable: String = without_sequences
        .chars()
        .filter(|character| !character.is_control() || matches!(character, '\n' | '\t'))
        .collect();
    nagi_mission::redact::redact(&printable).into_owned()
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
        }
    }

    /// Creates the file (and its directory) if not done yet, and writes what was kept.
    pub fn open_file(&self) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut sink = self
            .sink
            .lock()
            .map_err(|_| std::io::Error::other("the transcript lock is poisoned"))?;
        let Sink::Pending(kept) = &*sink else {
            return Ok(());
        };
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)?;
        file.write_all(kept)?;
        *sink = Sink::File(file);
        Ok(())
    }

    fn append(&self, bytes: &[u8]) {
        if let Ok(mut sink) = self.sink.lock() {
            match &mut *sink {
                Sink::Pending(kept) => kept.extend_from_slice(bytes),
                Sink::File(file) => {
                    let _ = file.write_all(bytes);
                }
            }
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
            TranscriptLine::AgentText(text) => self.write_labelled("agent", "\x1b[1;36m", text),
            TranscriptLine::ToolCall(text) => self.write_labelled("tool", "\x1b[1;33m", text),
            TranscriptLine::ToolResult(text) => self.write_labelled("result", "\x1b[33m", text),
            TranscriptLine::Approval(text) => self.write_labelled("asks", "\x1b[1;35m", text),
            TranscriptLine::Stderr(text) => self.write_labelled("stderr", "\x1b[31m", text),
            TranscriptLine::Info(text) => self.write_labelled("info", "\x1b[2m", text),
        }
    }

    pub fn nagi(&self, text: &str) {
        self.write_labelled("nagi", "\x1b[1;32m", text);
    }

    pub fn check(&self, text: &str) {
        self.write_labelled("check", "\x1b[1;34m", text);
    }

    /// Raw check output, kept as the command wrote it (control characters stripped).
    pub fn check_output(&self, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let cleaned: String = clean(&text);
        self.append(cleaned.as_bytes());
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
}
