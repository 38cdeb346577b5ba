//! Attach on the ordinary socket: the formal session protocol of seed 004 as JSON lines.
//!
//! A line that is a JSON object with a `type` and no `method` is a session message. From
//! the first one on, the connection is in attach mode and duplex: a reader handles the
//! client's `join_session`, `leave_session`, `session_input`, `session_resize` and
//! `session_scroll` lines while a writer pumps `session_joined`, `session_left`, `error`
//! and `session_frame` lines back. Requests (`method`) are refused on an attached connection.
//!
//! Back-pressure stays per member: the writer takes a frame from a membership's bounded
//! queue only when the socket accepted the previous one, so a client that stops reading
//! fills its own queue and is evicted by the pane host (with an `error` frame) while the
//! pane and the other members go on. The client may then join again with `replay_from`.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::Duration;

use nagi_schema::envelope::IdOnly;
use nagi_schema::session_protocol::{SessionClientMessage, SessionFrame, SessionServerMessage};
use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use super::connection::{Lines, Output, error_line};
use super::framing::Frame;
use crate::api::Peer;
use crate::engine::Engine;
use crate::errors::{EngineError, wire_error};
use nagi_pane::{PaneHost, SessionFrameReceiver, handle_session_message};

/// Replies the reader may queue ahead of a writer that is blocked on a slow client.
const PENDING_REPLIES: usize = 64;
/// How long the writer may take to send the last replies after the reader ended.
const FINAL_WRITE_GRACE: Duration = Duration::from_secs(2);

static NEXT_CLIENT: AtomicU64 = AtomicU64::new(1);

/// A connection-unique client id for session membership (shown to other members in
/// `membership_changed`).
pub fn new_client_id(peer: Peer) -> String {
    let number = NEXT_CLIENT.fetch_add(1, Ordering::Relaxed);
    match peer.pid {
        Some(pid) => format!("client-{number}-pid{pid}"),
        None => format!("client-{number}"),
    }
}

#[derive(Deserialize)]
struct SessionProbe {
    #[serde(rename = "type")]
    kind: Option<IgnoredAny>,
    method: Option<IgnoredAny>,
}

/// Whether a line is a session-protocol message: a JSON object with `type` and no `method`.
pub fn is_session_message(text: &str) -> bool {
    matches!(
        serde_json::from_str::<SessionProbe>(text),
        Ok(SessionProbe {
            kind: Some(_),
            method: None
        })
    )
}

#[derive(Deserialize)]
struct SessionIdOnly {
    #[serde(default)]
    session_id: Option<serde_json::Value>,
}

fn session_error_line(session_id: Option<String>, error: &EngineError) -> String {
    let (code, message) = wire_error(error);
    let line = SessionServerMessage::Error {
        session_id,
        code: code.as_str().to_string(),
        message,
    };
    serde_json::to_string(&line).expect("session messages always serialize")
}

fn message_line(message: &SessionServerMessage) -> String {
    serde_json::to_string(message).expect("session messages always serialize")
}

enum WriterCommand {
    Line(String),
    /// Start forwarding a membership's frames (after its `session_joined` line).
    Attach {
        session_id: String,
        frames: SessionFrameReceiver,
    },
    /// Stop forwarding, dropping what is queued (before its `session_left` line).
    Detach {
        session_id: String,
    },
}

/// Leaves every session of the client however the connection ends.
struct Membership<'a> {
    panes: &'a PaneHost,
    client_id: &'a str,
}

impl Drop for Membership<'_> {
    fn drop(&mut self) {
        self.panes.leave_all_sessions(self.client_id);
    }
}

/// Serves the rest of a connection in attach mode, starting with `first_line` (a session
/// message). Returns when the client goes away, sends an over-long line, stops reading for
/// good, or the server stops.
pub async fn serve_session(
    engine: &Arc<Engine>,
    client_id: &str,
    first_line: Vec<u8>,
    lines: &mut Lines,
    output: &mut Output,
) {
    let _membership = Membership {
        panes: &engine.panes,
        client_id,
    };
    let (commands, pending) = mpsc::channel(PENDING_REPLIES);
    let reader = read_messages(engine, client_id, first_line, lines, commands);
    let writer = write_messages(engine, pending, output);
    tokio::pin!(reader, writer);
    tokio::select! {
        () = &mut writer => {}
        () = &mut reader => {
            // The reader's sender is gone; the writer sends what is queued, then stops.
            let _ = tokio::time::timeout(FINAL_WRITE_GRACE, writer).await;
        }
    }
}

async fn read_messages(
    engine: &Arc<Engine>,
    client_id: &str,
    first_line: Vec<u8>,
    lines: &mut Lines,
    commands: mpsc::Sender<WriterCommand>,
) {
    let mut next = Some(first_line);
    loop {
        let bytes = match next.take() {
            Some(bytes) => bytes,
            None => {
                let frame = tokio::select! {
                    frame = lines.next_frame() => frame,
                    _ = engine.shutdown.wait() => return,
                };
                match frame {
                    Ok(Frame::Line(bytes)) => bytes,
                    Ok(Frame::TooLong) => {
                        let error =
                            EngineError::RequestTooLarge(nagi_schema::MAX_REQUEST_LINE_BYTES);
                        let _ = commands
                            .send(WriterCommand::Line(session_error_line(None, &error)))
                            .await;
                        return;
                    }
                    Ok(Frame::BudgetSpent) => {
                        let error = EngineError::ServerUnavailable(
                            "the server holds too many unfinished request lines; this session's line was dropped".into(),
                        );
                        let _ = commands
                            .send(WriterCommand::Line(session_error_line(None, &error)))
                            .await;
                        return;
                    }
                    Ok(Frame::End) | Err(_) => return,
                }
            }
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        for command in handle_line(engine, client_id, &bytes).await {
            if commands.send(command).await.is_err() {
                return;
            }
        }
    }
}

/// What one client line leads to, in the order the writer must carry it out.
async fn handle_line(engine: &Arc<Engine>, client_id: &str, bytes: &[u8]) -> Vec<WriterCommand> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        let error = EngineError::InvalidRequest("the line is not valid UTF-8".into());
        return vec![WriterCommand::Line(session_error_line(None, &error))];
    };
    if !is_session_message(text) {
        let error = EngineError::InvalidRequest(
            "this connection is attached to a session and takes only session messages \
             (join_session, leave_session, session_input, session_resize, session_scroll); send requests on another connection"
                .into(),
        );
        return vec![WriterCommand::Line(error_line(
            &IdOnly::salvage(text),
            &error,
        ))];
    }
    let message: SessionClientMessage = match serde_json::from_str(text) {
        Ok(message) => message,
        Err(decode_error) => {
            let session_id = serde_json::from_str::<SessionIdOnly>(text)
                .ok()
                .and_then(|probe| probe.session_id)
                .and_then(|id| id.as_str().map(str::to_string));
            let error =
                EngineError::InvalidRequest(format!("invalid session message: {decode_error}"));
            return vec![WriterCommand::Line(session_error_line(session_id, &error))];
        }
    };
    let leaving = match &message {
        SessionClientMessage::LeaveSession { session_id } => Some(session_id.clone()),
        _ => None,
    };
    let reply = handle_session_message(&engine.panes, client_id, message).await;
    let mut commands = Vec::new();
    if let Some(session_id) = leaving {
        commands.push(WriterCommand::Detach { session_id });
    }
    if let Some(message) = &reply.message {
        commands.push(WriterCommand::Line(message_line(message)));
    }
    if let (Some(frames), Some(SessionServerMessage::SessionJoined(joined))) =
        (reply.frames, &reply.message)
    {
        commands.push(WriterCommand::Attach {
            session_id: joined.session_id.clone(),
            frames,
        });
    }
    commands
}

/// The next frame of any membership, taking turns from `start` so none starves. `None` in
/// the frame means that membership's stream ended.
fn next_frame(
    members: &mut [(String, SessionFrameReceiver)],
    start: usize,
) -> impl Future<Output = (usize, Option<Arc<SessionFrame>>)> + '_ {
    std::future::poll_fn(move |context| {
        let count = members.len();
        for offset in 0..count {
            let index = (start + offset) % count;
            if let Poll::Ready(frame) = members[index].1.poll_recv(context) {
                return Poll::Ready((index, frame));
            }
        }
        Poll::Pending
    })
}

async fn write_line(output: &mut Output, line: &str) -> std::io::Result<()> {
    output.write_all(line.as_bytes()).await?;
    output.write_all(b"\n").await
}

async fn write_messages(
    engine: &Arc<Engine>,
    mut commands: mpsc::Receiver<WriterCommand>,
    output: &mut Output,
) {
    let mut members: Vec<(String, SessionFrameReceiver)> = Vec::new();
    let mut turn = 0usize;
    loop {
        let written = tokio::select! {
            biased;
            command = commands.recv() => match command {
                None => {
                    let _ = output.flush().await;
                    return;
                }
                Some(WriterCommand::Line(line)) => write_line(output, &line).await,
                Some(WriterCommand::Attach { session_id, frames }) => {
                    // A second join of the same session replaces the first membership.
                    members.retain(|(member, _)| *member != session_id);
                    members.push((session_id, frames));
                    Ok(())
                }
                Some(WriterCommand::Detach { session_id }) => {
                    members.retain(|(member, _)| *member != session_id);
                    Ok(())
                }
            },
            (index, frame) = next_frame(&mut members, turn), if !members.is_empty() => {
                turn = turn.wrapping_add(1);
                match frame {
                    Some(frame) => write_line(output, &frame.to_line()).await,
                    // Evicted after its error frame, or the pane closed after its closed frame.
                    None => {
                        members.remove(index);
                        Ok(())
                    }
                }
            }
            _ = engine.shutdown.wait() => {
                let _ = output.flush().await;
                return;
            }
        };
        if written.is_err() {
            return;
        }
        let idle = commands.is_empty() && members.iter().all(|(_, frames)| frames.is_empty());
        if idle && output.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_messages_are_objects_with_a_type_and_no_method() {
        assert!(is_session_message(
            r#"{"type":"join_session","session_id":"t","role":"observer"}"#
        ));
        assert!(
            is_session_message(r#"{"type":"nonsense"}"#),
            "an unknown type is still a session message, refused later"
        );
        assert!(!is_session_message(
            r#"{"id":"1","method":"ping","params":{},"type":"x"}"#
        ));
        assert!(!is_session_message(
            r#"{"id":"1","method":"ping","params":{}}"#
        ));
        assert!(!is_session_message(r#"["type"]"#));
        assert!(!is_session_message("garbage"));
    }
}
