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
//!
//! A join with `terminal: "direct"` is served on the client's terminal (see `direct.rs`)
//! when the server can open it: a thread of the connection then reads the keys from the
//! terminal (typing goes to the pane as `session_input` would; the detach key leaves the
//! session, through the reader, which answers `session_left`), and the writer writes that membership's output and keyframes
//! to the terminal as raw bytes, in turn with its other frames, which still go over the
//! socket. A frame is taken from the queue only when the previous one was written, so a
//! slow terminal fills its member's queue exactly as a slow socket does.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Poll;
use std::time::Duration;

use base64::Engine as _;
use nagi_schema::envelope::IdOnly;
use nagi_schema::session_protocol::{
    SessionClientMessage, SessionFrame, SessionFramePayload, SessionServerMessage, SessionTerminal,
};
use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use super::connection::{Lines, Output, error_line};
use super::direct::{DirectKeys, DirectTerminal, KeyReader, Keys};
use super::framing::Frame;
use crate::api::Peer;
use crate::engine::Engine;
use crate::errors::{EngineError, wire_error};
use nagi_pane::attach_direct::DirectOutput;
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
    /// Start forwarding a membership's frames (after its `session_joined` line), its
    /// output to `terminal` when the membership is direct.
    Attach {
        session_id: String,
        frames: SessionFrameReceiver,
        terminal: Option<Arc<DirectTerminal>>,
        /// The same terminal as the pane's reader writes to it, when it may.
        output: Option<Arc<DirectOutput>>,
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
    peer: &Peer,
    first_line: Vec<u8>,
    lines: &mut Lines,
    output: &mut Output,
) {
    let _membership = Membership {
        panes: &engine.panes,
        client_id,
    };
    let (commands, pending) = mpsc::channel(PENDING_REPLIES);
    let client = Client {
        engine,
        client_id,
        peer,
    };
    let reader = read_messages(&client, first_line, lines, commands);
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

/// Who the connection serves.
struct Client<'a> {
    engine: &'a Arc<Engine>,
    client_id: &'a str,
    peer: &'a Peer,
}

/// What the reader got next.
enum Next {
    Frame(std::io::Result<Frame>),
    Keys(Keys),
    Shutdown,
}

async fn next_keys(direct: &mut Option<DirectKeys>) -> Keys {
    match direct {
        Some(keys) => keys.next().await,
        None => std::future::pending().await,
    }
}

async fn read_messages(
    client: &Client<'_>,
    first_line: Vec<u8>,
    lines: &mut Lines,
    commands: mpsc::Sender<WriterCommand>,
) {
    let mut next = Some(first_line);
    // The session served on the client's terminal, if any: its keys are read here.
    let mut direct: Option<DirectKeys> = None;
    loop {
        let bytes = match next.take() {
            Some(bytes) => bytes,
            None => {
                let got = tokio::select! {
                    frame = lines.next_frame() => Next::Frame(frame),
                    keys = next_keys(&mut direct) => Next::Keys(keys),
                    _ = client.engine.shutdown.wait() => Next::Shutdown,
                };
                let frame = match got {
                    Next::Frame(frame) => frame,
                    Next::Keys(keys) => {
                        for command in handle_keys(client, &mut direct, keys).await {
                            if commands.send(command).await.is_err() {
                                return;
                            }
                        }
                        continue;
                    }
                    Next::Shutdown => return,
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
        for command in handle_line(client, &mut direct, &bytes).await {
            if commands.send(command).await.is_err() {
                return;
            }
        }
    }
}

/// What the key thread of a direct session passed on leads to.
async fn handle_keys(
    client: &Client<'_>,
    direct: &mut Option<DirectKeys>,
    keys: Keys,
) -> Vec<WriterCommand> {
    let Some(session_id) = direct.as_ref().map(|keys| keys.session_id.clone()) else {
        return Vec::new();
    };
    match keys {
        Keys::Reply(message) => vec![WriterCommand::Line(message_line(&message))],
        Keys::Gone => {
            *direct = None;
            Vec::new()
        }
        Keys::Leave => leave_direct(client, direct, session_id).await,
    }
}

/// Leaves the direct session: the terminal is no longer read, and the writer drops the
/// membership (and its terminal) before it answers `session_left`.
async fn leave_direct(
    client: &Client<'_>,
    direct: &mut Option<DirectKeys>,
    session_id: String,
) -> Vec<WriterCommand> {
    *direct = None;
    let message = SessionClientMessage::LeaveSession {
        session_id: session_id.clone(),
    };
    let reply = handle_session_message(&client.engine.panes, client.client_id, message).await;
    let mut commands = vec![WriterCommand::Detach { session_id }];
    if let Some(message) = &reply.message {
        commands.push(WriterCommand::Line(message_line(message)));
    }
    commands
}

/// The terminal a join asks for: `None` without the extension, `Some(None)` when the
/// session is to be (or falls back to) a stream, `Some(Some(terminal))` when direct.
fn requested_terminal(
    client: &Client<'_>,
    message: &SessionClientMessage,
) -> Option<Option<Arc<DirectTerminal>>> {
    let SessionClientMessage::JoinSession {
        terminal: Some(mode),
        ..
    } = message
    else {
        return None;
    };
    if *mode == SessionTerminal::Stream {
        return Some(None);
    }
    // Opened before the join (opening writes nothing); used only once the join succeeded.
    match DirectTerminal::open(client.peer) {
        Ok(terminal) => Some(Some(terminal)),
        Err(error) => {
            tracing::debug!(%error, "cannot open the client's terminal; attaching as a stream");
            Some(None)
        }
    }
}

/// What one client line leads to, in the order the writer must carry it out.
async fn handle_line(
    client: &Client<'_>,
    direct: &mut Option<DirectKeys>,
    bytes: &[u8],
) -> Vec<WriterCommand> {
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
    let joining = matches!(message, SessionClientMessage::JoinSession { .. });
    // A leave or another join of the direct session ends the reading of its terminal.
    if (leaving.is_some() || joining)
        && direct
            .as_ref()
            .is_some_and(|keys| keys.session_id == message.session_id())
    {
        *direct = None;
    }
    let terminal = requested_terminal(client, &message);
    let mut reply = handle_session_message(&client.engine.panes, client.client_id, message).await;
    let mut commands = Vec::new();
    if let Some(session_id) = leaving {
        commands.push(WriterCommand::Detach { session_id });
    }
    let mut granted = None;
    let mut output = None;
    if let (Some(SessionServerMessage::SessionJoined(joined)), Some(terminal)) =
        (&mut reply.message, terminal)
    {
        // The keys are read by a thread of their own; a thread that cannot start leaves
        // the session a stream.
        let terminal = terminal.and_then(|terminal| {
            let reader = KeyReader {
                session_id: joined.session_id.clone(),
                role: joined.role,
                client_id: client.client_id.to_string(),
                panes: client.engine.panes.clone(),
            };
            match DirectKeys::start(reader, &terminal) {
                Ok(keys) => {
                    *direct = Some(keys);
                    Some(terminal)
                }
                Err(error) => {
                    tracing::warn!(%error, "cannot read the client's terminal; attaching as a stream");
                    None
                }
            }
        });
        joined.terminal = Some(match &terminal {
            Some(_) => SessionTerminal::Direct,
            None => SessionTerminal::Stream,
        });
        if let Some(terminal) = terminal {
            // The pane's reader writes the output itself while nothing is queued.
            output = terminal.output().ok().filter(|output| {
                client
                    .engine
                    .panes
                    .session_direct_output(&joined.session_id, client.client_id, output.clone())
                    .unwrap_or(false)
            });
            granted = Some(terminal);
        }
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
            terminal: granted,
            output,
        });
    }
    commands
}

/// A membership whose frames the writer forwards.
struct Forwarded {
    session_id: String,
    frames: SessionFrameReceiver,
    /// Where its output and keyframes go when the membership is direct.
    terminal: Option<Arc<DirectTerminal>>,
    /// Told of every frame written, when the pane's reader writes to the terminal too.
    output: Option<Arc<DirectOutput>>,
}

/// The next frame of any membership, taking turns from `start` so none starves. `None` in
/// the frame means that membership's stream ended.
fn next_frame(
    members: &mut [Forwarded],
    start: usize,
) -> impl Future<Output = (usize, Option<Arc<SessionFrame>>)> + '_ {
    std::future::poll_fn(move |context| {
        let count = members.len();
        for offset in 0..count {
            let index = (start + offset) % count;
            if let Poll::Ready(frame) = members[index].frames.poll_recv(context) {
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

/// Writes one frame of a membership: the output and keyframes of a direct one to its
/// terminal as raw bytes, everything else to the socket as a line.
async fn write_frame(
    output: &mut Output,
    member: &Forwarded,
    frame: &SessionFrame,
) -> std::io::Result<()> {
    if let Some(terminal) = &member.terminal
        && let SessionFramePayload::Output { data, .. } | SessionFramePayload::Keyframe { data, .. } =
            &frame.payload
    {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(std::io::Error::other)?;
        return terminal.write_all(&bytes).await;
    }
    write_line(output, &frame.to_line()).await
}

async fn write_messages(
    engine: &Arc<Engine>,
    mut commands: mpsc::Receiver<WriterCommand>,
    output: &mut Output,
) {
    let mut members: Vec<Forwarded> = Vec::new();
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
                Some(WriterCommand::Attach { session_id, frames, terminal, output }) => {
                    // A second join of the same session replaces the first membership.
                    members.retain(|member| member.session_id != session_id);
                    members.push(Forwarded { session_id, frames, terminal, output });
                    Ok(())
                }
                Some(WriterCommand::Detach { session_id }) => {
                    members.retain(|member| member.session_id != session_id);
                    Ok(())
                }
            },
            (index, frame) = next_frame(&mut members, turn), if !members.is_empty() => {
                turn = turn.wrapping_add(1);
                match frame {
                    Some(frame) => {
                        let member = &members[index];
                        let written = write_frame(output, member, &frame).await;
                        if let Some(direct) = &member.output {
                            direct.frame_written();
                        }
                        written
                    }
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
        let idle = commands.is_empty() && members.iter().all(|member| member.frames.is_empty());
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
