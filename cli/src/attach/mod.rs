//! `nagi pane attach`: mirrors a pane in the user's terminal over the session protocol
//! (`join_session` on the server's socket), and types into it as the controller.
//!
//! The terminal goes into raw mode and the alternate screen; the pane's keyframe and
//! output frames are written to it as they come. Resizes of the terminal (SIGWINCH) are
//! passed on while this client controls the pane, and so are Shift+PageUp/PageDown, as
//! `session_scroll`: the server then draws the pane's history in the keyframes it sends.
//! A client evicted for falling behind joins again with `replay_from`, so the mirror
//! resumes where it stopped. The terminal is restored on every way out (see
//! `terminal.rs`).
//!
//! Direct mode (the default on a terminal): once the terminal is in raw mode and the
//! alternate screen, the client joins again with `terminal: "direct"`, and the server
//! reads the keys from this terminal and writes the pane's output to it itself, as tmux
//! does; this process no longer reads the keyboard and only passes resizes on, handles
//! signals and restores the terminal, after the server said (`session_left`) that it let
//! go of it. When the server cannot open the terminal it says so in `session_joined` and
//! the session goes on as a stream: this process reads the keyboard, decodes the keys
//! (`nagi_pane::attach_input`) and writes the output. `NAGI_ATTACH_STREAM=1` asks for the
//! stream from the start.

mod connection;
mod keyboard;
pub(crate) mod remote;
mod terminal;

use std::io::Write;
use std::time::Duration;

use base64::Engine as _;
use nagi_pane::attach_input::{self as input, InputDecoder, KeyboardAction};
use nagi_schema::session_protocol::{
    MIN_SESSION_COLS, MIN_SESSION_ROWS, SessionClientMessage, SessionFrame, SessionFramePayload,
    SessionRole, SessionServerMessage, SessionTerminal,
};
use serde_json::{Value, json};
use tokio::signal::unix::{SignalKind, signal};

use crate::CommandResult;
use crate::connect::session_paths;
use crate::context::Context;
use crate::exit::{CliError, EXIT_OK};
use connection::{LineReader, LineWriter};
use keyboard::Keyboard;
use terminal::RawTerminal;

pub const ATTACH_LONG_HELP: &str = "Mirror a pane live in this terminal and type into it.

The terminal is switched to raw mode: every key goes to the pane (Ctrl-C and Ctrl-Z too), and \
resizing the terminal resizes the pane. Only one client controls a pane at a time; when another \
client already does, or with --observe, this one watches without typing or resizing.

Shift+PageUp and Shift+PageDown scroll through the pane's history (the top right corner shows \
how far up, of how far it goes); typing returns to the live screen. Every client attached to \
the pane sees the same view.

The server reads this terminal's keys and writes the pane's output to it directly (the quickest \
echo); with NAGI_ATTACH_STREAM=1 in the environment, or where the server cannot open the \
terminal, both go through this process instead.";

pub const DETACH_HELP: &str = "Detach: press Ctrl-\\ (Ctrl and backslash). The pane keeps running; attach again at any time.
The terminal is restored when you detach, when the pane's process ends, when the server goes away, and on SIGTERM, SIGHUP or SIGINT.";

/// How long the server may take to let go of the terminal (`session_left`) before the
/// terminal is restored anyway.
const RELEASE_TIMEOUT: Duration = Duration::from_secs(2);

/// Whether the environment asks for the stream mode (`NAGI_ATTACH_STREAM=1`).
fn stream_requested() -> bool {
    std::env::var_os("NAGI_ATTACH_STREAM").is_some_and(|value| value == "1")
}

/// How an attach ended.
enum Outcome {
    Detached,
    PaneExited(Option<i32>),
    ServerGone,
    Signal(i32),
    Refused { code: String, message: String },
}

struct Attach {
    session_id: String,
    requested: SessionRole,
    role: SessionRole,
    last_seq: u64,
    writer: LineWriter,
    /// The terminal mode asked for at the next join.
    terminal: Option<SessionTerminal>,
}

/// Who reads the keyboard and writes the output.
enum Mode {
    /// A join asking for direct mode is under way; nobody reads the keyboard yet.
    Pending,
    /// This process does (the keyboard is opened when the mode is granted).
    Stream(Keyboard, InputDecoder),
    /// The server does.
    Direct,
}

fn to_line(message: &SessionClientMessage) -> String {
    let mut line = serde_json::to_string(message).expect("session messages always serialize");
    line.push('\n');
    line
}

impl Attach {
    async fn send(&mut self, message: &SessionClientMessage) -> std::io::Result<()> {
        self.writer.write_all(to_line(message).as_bytes()).await
    }

    async fn join(&mut self, replay_from: Option<u64>) -> std::io::Result<()> {
        let message = SessionClientMessage::JoinSession {
            session_id: self.session_id.clone(),
            role: self.requested,
            replay_from,
            terminal: self.terminal,
        };
        self.send(&message).await
    }

    /// Passes the terminal's size on, when this client controls the pane and the size is
    /// one the pane accepts.
    async fn send_size(&mut self) -> std::io::Result<()> {
        if self.role != SessionRole::Controller {
            return Ok(());
        }
        match RawTerminal::size() {
            Some((cols, rows)) if cols >= MIN_SESSION_COLS && rows >= MIN_SESSION_ROWS => {
                self.send(&SessionClientMessage::SessionResize {
                    session_id: self.session_id.clone(),
                    cols,
                    rows,
                })
                .await
            }
            _ => Ok(()),
        }
    }

    /// Handles one frame; `Some` when the attach ends with it. Output is drawn only when
    /// `draw` (in stream mode; while the join that asks for direct mode is under way, its
    /// replay is about to redraw the whole screen).
    async fn frame(&mut self, frame: SessionFrame, draw: bool) -> std::io::Result<Option<Outcome>> {
        self.last_seq = self.last_seq.max(frame.seq);
        match frame.payload {
            SessionFramePayload::Output { data, .. }
            | SessionFramePayload::Keyframe { data, .. } => {
                if !draw {
                    return Ok(None);
                }
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap_or_default();
                let mut stdout = std::io::stdout().lock();
                stdout.write_all(&bytes)?;
                stdout.flush()?;
            }
            SessionFramePayload::RoleAssigned { role } => {
                let gained_control =
                    role == SessionRole::Controller && self.role != SessionRole::Controller;
                self.role = role;
                if gained_control {
                    self.send_size().await?;
                }
            }
            SessionFramePayload::Closed { exit_code } => {
                return Ok(Some(Outcome::PaneExited(exit_code)));
            }
            // We fell behind and were removed: resume right after the last frame we saw.
            SessionFramePayload::Error { .. } => self.join(Some(self.last_seq + 1)).await?,
            SessionFramePayload::Resize { .. } | SessionFramePayload::MembershipChanged { .. } => {}
        }
        Ok(None)
    }
}

async fn read_message(lines: &mut LineReader) -> Option<SessionServerMessage> {
    loop {
        let line = lines.next_line().await?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        return serde_json::from_slice(&line).ok();
    }
}

/// The next keys typed, while this process reads the keyboard; pending otherwise.
async fn next_keys(mode: &mut Mode) -> Option<Vec<u8>> {
    match mode {
        Mode::Stream(keyboard, _) => keyboard.read().await,
        Mode::Pending | Mode::Direct => std::future::pending().await,
    }
}

/// Sends the keys read in stream mode; `Some` when they end the attach.
async fn typed(
    attach: &mut Attach,
    decoder: &mut InputDecoder,
    bytes: &[u8],
) -> std::io::Result<Option<Outcome>> {
    let leave = SessionClientMessage::LeaveSession {
        session_id: attach.session_id.clone(),
    };
    if attach.role != SessionRole::Controller && input::observer_leaves(bytes) {
        let _ = attach.send(&leave).await;
        return Ok(Some(Outcome::Detached));
    }
    let chunk = decoder.feed(bytes);
    // Only the controller types and scrolls; the server would refuse an observer.
    if attach.role == SessionRole::Controller {
        for action in chunk.actions {
            let session_id = attach.session_id.clone();
            let message = match action {
                KeyboardAction::Input(data) => {
                    SessionClientMessage::SessionInput { session_id, data }
                }
                KeyboardAction::Scroll(scroll) => {
                    SessionClientMessage::SessionScroll { session_id, scroll }
                }
            };
            attach.send(&message).await?;
        }
    }
    if chunk.detach {
        let _ = attach.send(&leave).await;
        return Ok(Some(Outcome::Detached));
    }
    Ok(None)
}

/// In direct mode, asks the server to let go of the terminal and waits (briefly) until it
/// did: only then may the terminal be restored without the server's output or key reads
/// mixing in.
async fn release_terminal(attach: &mut Attach, lines: &mut LineReader) {
    let leave = SessionClientMessage::LeaveSession {
        session_id: attach.session_id.clone(),
    };
    if attach.send(&leave).await.is_err() {
        return;
    }
    let released = async {
        loop {
            match read_message(lines).await {
                None
                | Some(SessionServerMessage::SessionLeft(_))
                | Some(SessionServerMessage::Error { .. }) => return,
                Some(_) => {}
            }
        }
    };
    let _ = tokio::time::timeout(RELEASE_TIMEOUT, released).await;
}

async fn attach_loop(
    attach: &mut Attach,
    lines: &mut LineReader,
    mut mode: Mode,
) -> std::io::Result<Outcome> {
    let mut resized = signal(SignalKind::window_change())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    attach.send_size().await?;
    let outcome = loop {
        tokio::select! {
            message = read_message(lines) => match message {
                None => return Ok(Outcome::ServerGone),
                Some(SessionServerMessage::SessionFrame(frame)) => {
                    let draw = matches!(mode, Mode::Stream(..));
                    if let Some(outcome) = attach.frame(frame, draw).await? {
                        break outcome;
                    }
                }
                Some(SessionServerMessage::SessionJoined(joined)) => {
                    attach.role = joined.role;
                    if joined.terminal == Some(SessionTerminal::Direct) {
                        mode = Mode::Direct;
                    } else if matches!(mode, Mode::Pending | Mode::Direct) {
                        // The server could not open the terminal: this process serves it.
                        attach.terminal = None;
                        mode = Mode::Stream(Keyboard::open(), InputDecoder::default());
                    }
                }
                // The server let go of the terminal (the detach key, or an observer's q).
                Some(SessionServerMessage::SessionLeft(_)) => return Ok(Outcome::Detached),
                // A refused rejoin means the pane is gone; refused input or resizes are not fatal.
                Some(SessionServerMessage::Error { code, message, .. }) if code == "session_not_found" => {
                    return Ok(Outcome::Refused { code, message });
                }
                Some(SessionServerMessage::Error { .. }) => {}
            },
            bytes = next_keys(&mut mode) => {
                let Some(bytes) = bytes else { return Ok(Outcome::Detached) };
                let Mode::Stream(_, decoder) = &mut mode else { continue };
                if let Some(outcome) = typed(attach, decoder, &bytes).await? {
                    return Ok(outcome);
                }
            }
            _ = resized.recv() => attach.send_size().await?,
            _ = terminate.recv() => break Outcome::Signal(libc::SIGTERM),
            _ = hangup.recv() => break Outcome::Signal(libc::SIGHUP),
            _ = interrupt.recv() => break Outcome::Signal(libc::SIGINT),
        }
    };
    if matches!(mode, Mode::Pending | Mode::Direct) {
        release_terminal(attach, lines).await;
    }
    Ok(outcome)
}

async fn attach_to(
    socket: &std::path::Path,
    pane_id: &str,
    session_id: String,
    observe: bool,
) -> Result<Outcome, CliError> {
    let unreachable = |error: std::io::Error| {
        CliError::Unreachable(format!("the attach connection failed: {error}"))
    };
    let (mut lines, writer) = connection::connect(socket).map_err(unreachable)?;
    let requested = if observe {
        SessionRole::Observer
    } else {
        SessionRole::Controller
    };
    let mut attach = Attach {
        session_id,
        requested,
        role: requested,
        last_seq: 0,
        writer,
        terminal: None,
    };
    // The first join learns the role (said before the pane's screen covers the terminal);
    // the server takes the terminal over only at the join after the terminal is raw.
    attach.join(None).await.map_err(unreachable)?;
    let joined = match read_message(&mut lines).await {
        Some(SessionServerMessage::SessionJoined(joined)) => joined,
        Some(SessionServerMessage::Error { code, message, .. }) => {
            return Err(CliError::Remote { code, message });
        }
        Some(other) => {
            return Err(CliError::Unreachable(format!(
                "unexpected reply to join_session: {other:?}"
            )));
        }
        None => return Ok(Outcome::ServerGone),
    };
    attach.role = joined.role;
    if requested == SessionRole::Controller && joined.role == SessionRole::Observer {
        eprintln!("nagi: another client controls {pane_id}; watching only (Ctrl-\\ detaches)");
        tokio::time::sleep(Duration::from_millis(800)).await;
    }
    // Said before the pane's screen covers the terminal (it is there again after the
    // detach), and kept in the terminal's title while attached.
    let how_to_leave = match attach.role {
        SessionRole::Controller => "Ctrl-\\ detaches".to_string(),
        _ => "q, Ctrl-C or Ctrl-\\ detaches".to_string(),
    };
    let role = match attach.role {
        SessionRole::Controller => "controlling",
        _ => "watching",
    };
    eprintln!("nagi: {role} {pane_id}; {how_to_leave}");
    let terminal = RawTerminal::enter(&format!("nagi {pane_id} ({role}): {how_to_leave}"))
        .map_err(|error| {
            CliError::Usage(format!("cannot switch the terminal to raw mode: {error}"))
        })?;
    let mode = if stream_requested() {
        Mode::Stream(Keyboard::open(), InputDecoder::default())
    } else {
        // Joined again, now served on the terminal: the replay redraws the screen.
        attach.terminal = Some(SessionTerminal::Direct);
        attach.join(None).await.map_err(unreachable)?;
        Mode::Pending
    };
    let outcome = attach_loop(&mut attach, &mut lines, mode).await;
    drop(terminal);
    outcome.map_err(|error| CliError::Unreachable(format!("the attach connection failed: {error}")))
}

/// Runs `nagi pane attach PANE [--observe] [--host NAME]`.
pub fn run(context: &Context, pane_id: &str, observe: bool, host: Option<&str>) -> CommandResult {
    if !terminal::is_interactive() {
        return Err(CliError::Usage(
            "nagi pane attach needs a terminal on stdin and stdout".into(),
        ));
    }
    let (socket_path, result) = match host {
        None => (
            session_paths(context.session.as_deref())?.socket_path,
            context.request("pane.get", json!({"pane_id": pane_id}))?,
        ),
        Some(host) => {
            let socket = remote::host_socket(context, host)?;
            let result = remote::request(&socket, host, "pane.get", json!({"pane_id": pane_id}))?;
            (socket, result)
        }
    };
    let pane = result.get("pane").cloned().unwrap_or(Value::Null);
    let Some(session_id) = pane
        .get("terminal_id")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return Err(CliError::Unreachable(format!(
            "the server's pane.get answer has no terminal_id: {result}"
        )));
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| {
            CliError::Unreachable(format!("cannot start the attach runtime: {error}"))
        })?;
    let outcome = runtime.block_on(attach_to(&socket_path, pane_id, session_id, observe))?;
    // The keyboard thread may still sit in a read; it is abandoned with the process.
    runtime.shutdown_background();
    match outcome {
        Outcome::Detached => {
            eprintln!("nagi: detached from {pane_id}");
            Ok(EXIT_OK)
        }
        Outcome::PaneExited(exit_code) => {
            match exit_code {
                Some(code) => eprintln!("nagi: the process of {pane_id} exited with code {code}"),
                None => eprintln!("nagi: the process of {pane_id} ended"),
            }
            Ok(EXIT_OK)
        }
        Outcome::ServerGone => Err(CliError::Unreachable(
            "the nagi server closed the attach connection".into(),
        )),
        Outcome::Signal(number) => {
            eprintln!("nagi: attach to {pane_id} ended by signal {number}");
            Ok(128 + number)
        }
        Outcome::Refused { code, message } => Err(CliError::Remote { code, message }),
    }
}
