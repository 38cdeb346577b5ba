//! Limits and helpers every adapter shares: bounded line framing, UTF-8-safe truncation of
//! visible text, and the event sink that reports to the engine.
//!
//! The limits come from contract §8: a provider frame is at most 1 MiB, and text shown
//! in a transcript or an attention item is cut at 16 KiB on a character boundary.

use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc;

use crate::spec::{FailureKind, ProviderEvent, TranscriptLine};

/// Largest protocol frame (one line of JSON) accepted from a provider.
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;

/// Longest visible text (transcript line, attention description) passed to the engine.
pub const MAX_VISIBLE_TEXT_BYTES: usize = 16 * 1024;

/// Cuts `text` to at most `max_bytes` bytes without splitting a UTF-8 character.
pub fn truncate_utf8(text: &str, max_bytes: usize) -> &str {
    &text[..text.floor_char_boundary(max_bytes)]
}

/// [`truncate_utf8`] at the visible-text limit, returning an owned string.
pub fn visible_text(text: &str) -> String {
    truncate_utf8(text, MAX_VISIBLE_TEXT_BYTES).to_string()
}

/// One line read by [`LineReader::next_line`].
#[derive(Debug, PartialEq, Eq)]
pub enum BoundedLine {
    /// A complete line (without its `\n` or a trailing `\r`).
    Line(Vec<u8>),
    /// A line longer than the limit. Only the first `limit` bytes are kept; the rest of the
    /// line was consumed and dropped.
    TooLong(Vec<u8>),
    /// End of stream (a final unterminated line is returned as `Line` first).
    Eof,
}

/// Reads `\n`-terminated lines, never buffering more than `limit` bytes of one line.
///
/// A hostile or broken provider cannot make us allocate without bound: bytes past the limit
/// are consumed and discarded, and the caller learns that the line was too long.
/// [`LineReader::next_line`] is cancel-safe (a partial line survives a `select!` that drops
/// the future), so drivers can race it against commands and timers.
pub struct LineReader<R> {
    reader: tokio::io::BufReader<R>,
    limit: usize,
    line: Vec<u8>,
    overflowed: bool,
    saw_any_byte: bool,
}

impl<R: tokio::io::AsyncRead + Unpin> LineReader<R> {
    pub fn new(inner: R, limit: usize) -> LineReader<R> {
        LineReader {
            reader: tokio::io::BufReader::new(inner),
            limit,
            line: Vec::new(),
            overflowed: false,
            saw_any_byte: false,
        }
    }

    pub async fn next_line(&mut self) -> std::io::Result<BoundedLine> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                if !self.saw_any_byte {
                    return Ok(BoundedLine::Eof);
                }
                break;
            }
            self.saw_any_byte = true;
            let (chunk, consumed, finished) = match available.iter().position(|byte| *byte == b'\n')
            {
                Some(position) => (&available[..position], position + 1, true),
                None => (available, available.len(), false),
            };
            let room = self.limit.saturating_sub(self.line.len());
            if chunk.len() > room {
                self.overflowed = true;
            }
            self.line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            self.reader.consume(consumed);
            if finished {
                break;
            }
        }
        let mut line = std::mem::take(&mut self.line);
        let overflowed = std::mem::replace(&mut self.overflowed, false);
        self.saw_any_byte = false;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if overflowed {
            Ok(BoundedLine::TooLong(line))
        } else {
            Ok(BoundedLine::Line(line))
        }
    }
}

/// Whether a frame is blank (only whitespace): providers may emit empty keep-alive lines.
pub fn is_blank_frame(frame: &[u8]) -> bool {
    frame.iter().all(|byte| byte.is_ascii_whitespace())
}

/// Why an adapter's session ended. Decides what is reported before `Stopped`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionEnd {
    /// The engine sent `Shutdown`, or dropped its command sender.
    ShutdownRequested,
    /// The session failed; reported as `TransportFailed` before the process is stopped.
    Failed { kind: FailureKind, reason: String },
}

impl SessionEnd {
    pub fn failed(kind: FailureKind, reason: impl Into<String>) -> SessionEnd {
        SessionEnd::Failed {
            kind,
            reason: reason.into(),
        }
    }

    pub fn protocol(reason: impl Into<String>) -> SessionEnd {
        SessionEnd::failed(FailureKind::Protocol, reason)
    }
}

/// The sending side of a run's event stream, with the truncation rules applied.
#[derive(Clone)]
pub struct EventSink {
    sender: mpsc::Sender<ProviderEvent>,
}

/// How many events may wait for the engine before an adapter pauses reading its provider.
pub const EVENT_CHANNEL_CAPACITY: usize = 1024;

impl EventSink {
    pub fn channel() -> (EventSink, mpsc::Receiver<ProviderEvent>) {
        let (sender, receiver) = mpsc::channel(EVENT_CHANNEL_CAPACITY);
        (EventSink { sender }, receiver)
    }

    /// Sends one event. Returns `false` when the engine no longer listens.
    pub async fn send(&self, event: ProviderEvent) -> bool {
        self.sender.send(event).await.is_ok()
    }

    /// Sends a transcript line, truncating its text at the visible-text limit.
    pub async fn transcript(&self, line: TranscriptLine) -> bool {
        let line = match line {
            TranscriptLine::AgentText(text) => TranscriptLine::AgentText(visible_text(&text)),
            TranscriptLine::ToolCall(text) => TranscriptLine::ToolCall(visible_text(&text)),
            TranscriptLine::AgentDelta(text) => TranscriptLine::AgentDelta(visible_text(&text)),
            TranscriptLine::ToolResult { title, output } => TranscriptLine::ToolResult {
                title: visible_text(&title),
                output: visible_text(&output),
            },
            TranscriptLine::Approval(text) => TranscriptLine::Approval(visible_text(&text)),
            TranscriptLine::Stderr(text) => TranscriptLine::Stderr(visible_text(&text)),
            TranscriptLine::Info(text) => TranscriptLine::Info(visible_text(&text)),
        };
        self.send(ProviderEvent::Transcript(line)).await
    }

    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_never_splits_a_character() {
        let text = "aé"; // 'é' is two bytes
        assert_eq!(truncate_utf8(text, 2), "a");
        assert_eq!(truncate_utf8(text, 3), "aé");
        let long = "ü".repeat(MAX_VISIBLE_TEXT_BYTES);
        let cut = visible_text(&long);
        assert!(cut.len() <= MAX_VISIBLE_TEXT_BYTES);
        assert!(cut.len() >= MAX_VISIBLE_TEXT_BYTES - 1);
    }

    #[tokio::test]
    async fn bounded_lines_split_and_overflow() {
        let input: &[u8] = b"one\r\ntwo\n0123456789ABCDEF\nlast";
        let mut reader = LineReader::new(input, 10);
        assert_eq!(
            reader.next_line().await.unwrap(),
            BoundedLine::Line(b"one".to_vec())
        );
        assert_eq!(
            reader.next_line().await.unwrap(),
            BoundedLine::Line(b"two".to_vec())
        );
        assert_eq!(
            reader.next_line().await.unwrap(),
            BoundedLine::TooLong(b"0123456789".to_vec())
        );
        assert_eq!(
            reader.next_line().await.unwrap(),
            BoundedLine::Line(b"last".to_vec())
        );
        assert_eq!(reader.next_line().await.unwrap(), BoundedLine::Eof);
    }
}
