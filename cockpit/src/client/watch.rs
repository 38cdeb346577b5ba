//! Watching a run's pane live: a session connection that joins the pane's terminal as an
//! observer (it never types or resizes) and feeds its keyframe and output frames into a
//! vt100 parser the renderer draws from. An observer evicted for falling behind joins
//! again with `replay_from`, like `nagi pane attach`.

use std::io::{BufRead, BufReader, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use nagi_schema::client::Client;
use nagi_schema::session_protocol::{
    SessionClientMessage, SessionFramePayload, SessionRole, SessionServerMessage,
};
use serde_json::{Value, json};

use crate::request::{ServerUpdate, WatchStatus};

/// The mirrored screen; `None` until the first frame arrived.
pub type PaneMirror = Arc<Mutex<Option<vt100::Parser>>>;

/// Size used when a frame names none (the server's keyframes do).
const FALLBACK_ROWS: u16 = 40;
const FALLBACK_COLS: u16 = 120;

pub struct Watch {
    pub mirror: PaneMirror,
    stream: Option<UnixStream>,
    /// Set when the person stopped watching: the thread then reports nothing more.
    stopped: Arc<AtomicBool>,
}

impl Watch {
    /// Leaves the session: closing the connection ends the membership on the server and
    /// wakes the reader thread, which then ends.
    pub fn stop(mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        if let Some(stream) = self.stream.take() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        if let Some(stream) = self.stream.take() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

fn line(message: &SessionClientMessage) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(message).expect("session messages serialize");
    bytes.push(b'\n');
    bytes
}

fn terminal_id(socket_path: &Path, pane_id: &str) -> Result<String, String> {
    let mut client = Client::connect(socket_path).map_err(|error| error.to_string())?;
    let result = client
        .request("pane.get", json!({"pane_id": pane_id}))
        .map_err(|error| error.to_string())?;
    result
        .get("pane")
        .and_then(|pane| pane.get("terminal_id"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("pane.get {pane_id} named no terminal"))
}

fn size(rows: Option<u16>, cols: Option<u16>) -> (std::num::NonZeroU16, std::num::NonZeroU16) {
    let rows = rows
        .and_then(std::num::NonZeroU16::new)
        .unwrap_or(std::num::NonZeroU16::new(FALLBACK_ROWS).expect("non-zero"));
    let cols = cols
        .and_then(std::num::NonZeroU16::new)
        .unwrap_or(std::num::NonZeroU16::new(FALLBACK_COLS).expect("non-zero"));
    (rows, cols)
}

/// Feeds one frame into the mirror; `Some` when the watch ends with it.
fn apply(mirror: &PaneMirror, payload: SessionFramePayload) -> Option<Option<i32>> {
    let mut guard = mirror.lock().expect("the mirror lock is never poisoned");
    match payload {
        SessionFramePayload::Keyframe { data, cols, rows } => {
            let (rows, cols) = size(rows, cols);
            let parser = guard.get_or_insert_with(|| vt100::Parser::new(rows, cols, 0));
            if parser.screen().size() != (rows, cols) {
                parser.screen_mut().set_size(rows, cols);
            }
            parser.process(
                &base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap_or_default(),
            );
        }
        SessionFramePayload::Output { data, .. } => {
            let (rows, cols) = size(None, None);
            let parser = guard.get_or_insert_with(|| vt100::Parser::new(rows, cols, 0));
            parser.process(
                &base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap_or_default(),
            );
        }
        SessionFramePayload::Resize { cols, rows } => {
            let (rows, cols) = size(Some(rows), Some(cols));
            match guard.as_mut() {
                Some(parser) => parser.screen_mut().set_size(rows, cols),
                None => *guard = Some(vt100::Parser::new(rows, cols, 0)),
            }
        }
        SessionFramePayload::Closed { exit_code } => return Some(exit_code),
        SessionFramePayload::RoleAssigned { .. }
        | SessionFramePayload::MembershipChanged { .. }
        | SessionFramePayload::Error { .. } => {}
    }
    None
}

fn session_loop(
    socket_path: &Path,
    pane_id: &str,
    stream: UnixStream,
    mirror: &PaneMirror,
    updates: &Sender<ServerUpdate>,
) -> WatchStatus {
    let failed = |message: String| WatchStatus::Failed {
        pane_id: pane_id.to_string(),
        message,
    };
    let session_id = match terminal_id(socket_path, pane_id) {
        Ok(id) => id,
        Err(message) => return failed(message),
    };
    let mut writer = match stream.try_clone() {
        Ok(writer) => writer,
        Err(error) => return failed(error.to_string()),
    };
    let join = |replay_from| SessionClientMessage::JoinSession {
        session_id: session_id.clone(),
        role: SessionRole::Observer,
        replay_from,
        terminal: None,
    };
    if let Err(error) = writer.write_all(&line(&join(None))) {
        return failed(format!("cannot join the pane's session: {error}"));
    }
    let mut last_seq = 0;
    let mut reader = BufReader::new(stream);
    let mut text = String::new();
    loop {
        text.clear();
        match reader.read_line(&mut text) {
            Ok(0) | Err(_) => return failed("the attach connection ended".into()),
            Ok(_) => {}
        }
        let Ok(message) = serde_json::from_str::<SessionServerMessage>(&text) else {
            continue;
        };
        match message {
            SessionServerMessage::SessionJoined(_) => {
                let _ = updates.send(ServerUpdate::Watch(WatchStatus::Joined {
                    pane_id: pane_id.to_string(),
                }));
            }
            SessionServerMessage::SessionFrame(frame) => {
                last_seq = last_seq.max(frame.seq);
                if let SessionFramePayload::Error { .. } = frame.payload {
                    // Evicted for falling behind: resume right after the last frame seen.
                    if writer.write_all(&line(&join(Some(last_seq + 1)))).is_err() {
                        return failed("cannot rejoin the pane's session".into());
                    }
                    continue;
                }
                if let Some(exit_code) = apply(mirror, frame.payload) {
                    return WatchStatus::Closed {
                        pane_id: pane_id.to_string(),
                        exit_code,
                    };
                }
            }
            SessionServerMessage::SessionLeft(_) => {
                return failed("left the pane's session".into());
            }
            SessionServerMessage::Error { code, message, .. } => {
                return failed(format!("{code}: {message}"));
            }
        }
    }
}

/// Starts watching `pane_id`; what happens to the session is reported as
/// [`ServerUpdate::Watch`].
pub fn start(socket_path: &Path, pane_id: &str, updates: Sender<ServerUpdate>) -> Watch {
    let mirror: PaneMirror = Arc::new(Mutex::new(None));
    let stopped = Arc::new(AtomicBool::new(false));
    let stream = match UnixStream::connect(socket_path) {
        Ok(stream) => stream,
        Err(error) => {
            let message = format!("cannot reach the server to watch {pane_id}: {error}");
            let _ = updates.send(ServerUpdate::Watch(WatchStatus::Failed {
                pane_id: pane_id.to_string(),
                message,
            }));
            return Watch {
                mirror,
                stream: None,
                stopped,
            };
        }
    };
    let handle = stream.try_clone().ok();
    let (socket_path, pane_id, thread_mirror, thread_stopped) = (
        socket_path.to_path_buf(),
        pane_id.to_string(),
        mirror.clone(),
        stopped.clone(),
    );
    std::thread::Builder::new()
        .name("cockpit-watch".into())
        .spawn(move || {
            let status = session_loop(&socket_path, &pane_id, stream, &thread_mirror, &updates);
            if !thread_stopped.load(Ordering::SeqCst) {
                let _ = updates.send(ServerUpdate::Watch(status));
            }
        })
        .expect("the cockpit can start a thread");
    Watch {
        mirror,
        stream: handle,
        stopped,
    }
}
