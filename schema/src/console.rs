//! A run's console records: what the run's pane (`nagi run console`) draws, one JSON object
//! per line in a file beside the run's transcript. The server appends them as the run goes;
//! the console follows the file and draws each record to its pane's width.
//!
//! The transcript (`<run>.log`) stays the run's readable log; these records carry the same
//! run with its structure kept (a tool's output apart from its call, a turn's end with its
//! usage and the worktree's diff stat), so the console can fold, wrap and colour them.
//! Not a socket type: nothing here is sent on the wire.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::usage::TokenUsage;

/// One thing the console draws.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ConsoleRecord {
    /// A piece of the agent's message, as the provider streams it.
    AgentDelta { text: String },
    /// The agent's whole message. After streamed pieces it ends them (the console has drawn
    /// its text already); a provider that does not stream sends only this.
    AgentText { text: String },
    /// A tool the agent called: its command or name and input.
    ToolCall { title: String },
    /// A tool's end: its status line (exit code where known) and its output.
    ToolResult { title: String, output: String },
    /// An approval or question waits for a person.
    Waiting {
        attention_id: String,
        summary: String,
    },
    /// A turn starts: the first, or a follow-up with the text a person sent.
    TurnStarted {
        turn: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// A turn ended: how, what the provider reported it cost, and what the worktree holds
    /// changed against the run's base.
    TurnEnded {
        turn: u32,
        outcome: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<TokenUsage>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        files: Vec<FileStat>,
    },
    /// A note from the provider (its plan, a notice it printed).
    Info { text: String },
    /// What the provider wrote to its standard error.
    Stderr { text: String },
    /// A note from nagi itself (session bound, the server stopping, …).
    Nagi { text: String },
    /// A declared check starts or ends.
    Check { text: String },
    /// A check's own output.
    CheckOutput { text: String },
}

/// One changed file of a diff stat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStat {
    pub path: String,
    /// Lines added and removed; `None` for a binary file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<u64>,
}

/// Where a run's console records are: beside its transcript (`<run>.log` →
/// `<run>.console.jsonl`).
pub fn records_path(transcript: &Path) -> PathBuf {
    transcript.with_extension("console.jsonl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_sit_beside_the_transcript() {
        assert_eq!(
            records_path(Path::new("/data/transcripts/m-1/r-1.log")),
            PathBuf::from("/data/transcripts/m-1/r-1.console.jsonl")
        );
    }

    #[test]
    fn a_record_is_one_tagged_json_object() {
        let record = ConsoleRecord::TurnStarted {
            turn: 2,
            text: Some("and the tests?".into()),
        };
        let line = serde_json::to_string(&record).unwrap();
        assert_eq!(
            line,
            r#"{"kind":"turn_started","turn":2,"text":"and the tests?"}"#
        );
        assert_eq!(
            serde_json::from_str::<ConsoleRecord>(&line).unwrap(),
            record
        );
    }
}
