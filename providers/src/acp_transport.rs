//! The line transport between our ACP client and the agent's pipes.
//!
//! `agent_client_protocol::ByteStreams` reads lines without a length limit and tolerates
//! lines that are not JSON. We hand the SDK a `Lines` transport instead, built from our own
//! bounded reader: a line over 1 MiB, or one that is not a JSON object, ends the incoming
//! stream with an error (the connection fails closed) and is recorded as a protocol
//! violation so the driver can report `TransportFailed { kind: Protocol }`.

use std::sync::{Arc, Mutex};

use futures::{Sink, Stream};
use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, ChildStdout};

use crate::framing::{BoundedLine, LineReader, MAX_FRAME_BYTES, is_blank_frame};

/// Set when the agent broke the framing rules; read by the driver after the connection ends.
#[derive(Clone, Default)]
pub struct ViolationSlot(Arc<Mutex<Option<String>>>);

impl ViolationSlot {
    pub fn record(&self, reason: String) {
        let mut slot = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        slot.get_or_insert(reason);
    }

    pub fn take(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }
}

/// Checks that one ACP line is a JSON object (the SDK parses it again for its own use).
pub fn parse_acp_frame(bytes: &[u8]) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(serde_json::Value::Object(object)) => Ok(object),
        Ok(_) => Err("the agent sent a JSON value that is not an object".to_string()),
        Err(error) => Err(format!("the agent sent a line that is not JSON: {error}")),
    }
}

/// Incoming lines for the SDK, bounded and validated.
pub fn incoming_lines(
    stdout: ChildStdout,
    violations: ViolationSlot,
) -> impl Stream<Item = std::io::Result<String>> + Send + 'static {
    let reader = LineReader::new(stdout, MAX_FRAME_BYTES);
    futures::stream::unfold(Some(reader), move |state| {
        let violations = violations.clone();
        async move {
            let mut reader = state?;
            loop {
                let failure = match reader.next_line().await {
                    Ok(BoundedLine::Eof) => return None,
                    Err(error) => error,
                    Ok(BoundedLine::TooLong(_)) => {
                        let reason = format!("the agent sent a frame over {MAX_FRAME_BYTES} bytes");
                        violations.record(reason.clone());
                        std::io::Error::new(std::io::ErrorKind::InvalidData, reason)
                    }
                    Ok(BoundedLine::Line(line)) if is_blank_frame(&line) => continue,
                    Ok(BoundedLine::Line(line)) => match parse_acp_frame(&line) {
                        Ok(_) => match String::from_utf8(line) {
                            Ok(text) => return Some((Ok(text), Some(reader))),
                            Err(_) => {
                                std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8")
                            }
                        },
                        Err(reason) => {
                            violations.record(reason.clone());
                            std::io::Error::new(std::io::ErrorKind::InvalidData, reason)
                        }
                    },
                };
                // After an error the stream ends: nothing more from this agent is trusted.
                return Some((Err(failure), None));
            }
        }
    })
}

/// Outgoing lines from the SDK to the agent's stdin (each gets its newline here).
pub fn outgoing_lines(
    stdin: ChildStdin,
) -> impl Sink<String, Error = std::io::Error> + Send + 'static {
    futures::sink::unfold(stdin, |mut stdin, line: String| async move {
        stdin.write_all(line.as_bytes()).await?;
        stdin.write_all(b"\n").await?;
        stdin.flush().await?;
        Ok::<_, std::io::Error>(stdin)
    })
}
