//! A run's readable transcript: agent text, tool calls, approvals asked, provider stderr
//! and check output, appended to a file that the run's managed pane follows
//! (`tail -F`), so `nagi pane attach` shows it live and it outlives the server process.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nagi_providers::TranscriptLine;

pub struct Transcript {
    path: PathBuf,
    file: Mutex<std::fs::File>,
}

const RESET: &str = "\x1b[0m";

fn clean(text: &str) -> String {
    // Provider text must not drive the pane's terminal: drop control characters except
    // newlines and tabs.
    text.chars()
        .filter(|character| !character.is_control() || matches!(character, '\n' | '\t'))
        .collect()
}

impl Transcript {
    pub fn open(path: &Path) -> std::io::Result<Transcript> {
        use std::os::unix::fs::OpenOptionsExt;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        Ok(Transcript {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
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
        if let Ok(mut file) = self.file.lock() {
            let _ = file.write_all(block.as_bytes());
        }
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
        if let Ok(mut file) = self.file.lock() {
            let _ = file.write_all(cleaned.as_bytes());
        }
    }
}
