//! The terminal of a direct attach (`terminal: "direct"` in `join_session`): the server
//! reads the keys from the client's terminal and writes the pane's output to it itself,
//! so that neither crosses the attach client process.
//!
//! The terminal is found from the connection's peer credentials alone (the client names
//! no path): its stdin, opened again through `/proc` (see `nagi_os::terminal`).
//!
//! The keys are read by a thread of their own, which writes what the controller typed to
//! the pane's terminal itself (`PaneHost::session_input_on_this_thread`) and, while the
//! pane's output is quiet, reads that output too (`nagi_pane::quiet_reading`): a key and
//! its echo wake that one thread, as they wake tmux's server, rather than runtime workers.
//! It waits on its descriptors edge-triggered (`nagi_os::edges`), so that no wait of it
//! stands behind the kernel worker that has just woken it.
//! While it sleeps for a typed key's echo, an idle-priority spinner keeps its CPU from
//! halting (`nagi_os::idle_spin`), and the thread asks for a short scheduler slice, so
//! that its wake-ups preempt a long-running task rather than wait for that task's slice to
//! end (`nagi_os::sched_slice`; a wake-up right after the thread's own run may still wait
//! for the tick, as tmux's server's does). Only what the connection must answer (a
//! refusal, a leave, a terminal gone) goes to the connection's reader. The runtime never
//! polls the terminal for reads; a write that finds it full waits on a registration of a
//! duplicate for writability, made for that wait only (a terminal becomes writable each
//! time its output drains, which would wake the runtime after every echo).

use std::fs::File;
use std::io::{PipeWriter, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

use nagi_os::edges::{ReadableEdges, Watched};
use nagi_os::idle_spin::IdleSpinners;
use nagi_pane::PaneHost;
use nagi_pane::attach_direct::DirectOutput;
use nagi_pane::attach_input::{InputDecoder, KeyboardAction, observer_leaves};
use nagi_pane::quiet_reading::QuietReading;
use nagi_schema::session_protocol::{SessionRole, SessionServerMessage};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::mpsc;

use crate::api::Peer;

fn register(terminal: File, interest: Interest) -> std::io::Result<AsyncFd<File>> {
    // SAFETY: the AsyncFd owns the File, whose descriptor stays open and the same until
    // the AsyncFd is dropped.
    unsafe { AsyncFd::register_with_interest(terminal, interest) }
        .map_err(|error| error.into_parts().1)
}

/// The client's terminal (non-blocking), shared by the key thread (a duplicate) and the
/// connection's writer (output).
pub struct DirectTerminal {
    terminal: File,
}

impl DirectTerminal {
    /// Opens the terminal of the connection's peer.
    pub fn open(peer: &Peer) -> std::io::Result<Arc<DirectTerminal>> {
        let Some(pid) = peer.pid else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the connection's peer has no process id",
            ));
        };
        let terminal = nagi_os::terminal::open_process_terminal(pid, peer.uid)?;
        Ok(Arc::new(DirectTerminal { terminal }))
    }

    /// The terminal as the pane's reader writes to it while nothing is queued for the
    /// member (`nagi_pane::attach_direct`): a duplicate of the same non-blocking open file.
    pub fn output(&self) -> std::io::Result<Arc<DirectOutput>> {
        Ok(Arc::new(DirectOutput::new(self.terminal.try_clone()?)))
    }

    /// Writes all of `bytes`, waiting while the terminal takes no more (must run inside
    /// the runtime).
    pub async fn write_all(&self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            match (&self.terminal).write(bytes) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(count) => bytes = &bytes[count..],
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    let duplicate = register(self.terminal.try_clone()?, Interest::WRITABLE)?;
                    duplicate.writable().await?.retain_ready();
                }
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}

/// The keys of a direct session: the thread that reads them, and what it passes on to the
/// connection's reader. Dropping it ends the thread (its stop pipe hangs up), so the
/// terminal is no longer read.
pub struct DirectKeys {
    pub session_id: String,
    passed_on: mpsc::UnboundedReceiver<Keys>,
    _stop: PipeWriter,
}

/// What the key thread passes on to the connection's reader.
pub enum Keys {
    /// A refusal of typing or scrolling (a member that is no longer the controller, a pane
    /// that ended), for the client.
    Reply(SessionServerMessage),
    /// Leave the session (the controller's detach key; an observer's q, Ctrl-C or
    /// Ctrl-\). The thread has stopped reading.
    Leave,
    /// The terminal is gone: the thread has stopped reading it.
    Gone,
}

/// Who the key thread types for.
pub struct KeyReader {
    pub session_id: String,
    pub role: SessionRole,
    pub client_id: String,
    pub panes: Arc<PaneHost>,
}

impl DirectKeys {
    /// Starts the thread that reads `terminal` for `reader`.
    pub fn start(reader: KeyReader, terminal: &DirectTerminal) -> std::io::Result<DirectKeys> {
        let (stop_reader, stop) = std::io::pipe()?;
        let terminal = terminal.terminal.try_clone()?;
        let (pass_on, passed_on) = mpsc::unbounded_channel();
        let session_id = reader.session_id.clone();
        std::thread::Builder::new()
            .name("nagi-direct-keys".into())
            .spawn(move || {
                // A kernel that refuses only costs latency on a busy machine.
                if let Some(slice) = key_thread_slice() {
                    let _ = nagi_os::sched_slice::request_short_slice(slice);
                }
                let last = read_keys(&reader, &terminal, &stop_reader, &pass_on);
                // Let go of the terminal before the connection hears of the leave: the
                // client restores the terminal once it is told, and no server descriptor
                // of it may outlive that.
                drop(terminal);
                if let Some(last) = last {
                    let _ = pass_on.send(last);
                }
            })?;
        Ok(DirectKeys {
            session_id,
            passed_on,
            _stop: stop,
        })
    }

    /// Waits for what the thread passes on (cancel-safe).
    pub async fn next(&mut self) -> Keys {
        self.passed_on.recv().await.unwrap_or(Keys::Gone)
    }
}

/// How long, after a typed key, the key thread's CPU is kept from halting while the thread
/// sleeps for the echo (`nagi_os::idle_spin`), unless `NAGI_ECHO_BUSY_WAIT_MICROS` says
/// otherwise (0: never). A shell's echo comes within 50-300 µs; on a virtual machine a
/// thread whose CPU halted takes 100-200 µs more to wake. The spinner runs at idle
/// priority, so this takes no CPU from anything else that wants it.
const ECHO_WAIT_SPIN: std::time::Duration = std::time::Duration::from_micros(500);

fn echo_wait_spin() -> std::time::Duration {
    static CHOSEN: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        micros_from_env("NAGI_ECHO_BUSY_WAIT_MICROS")
            .map(|wait| wait.min(std::time::Duration::from_millis(10)))
            .unwrap_or(ECHO_WAIT_SPIN)
    })
}

/// A duration in microseconds from the server's environment; `None` when unset or not a
/// number.
fn micros_from_env(name: &str) -> Option<std::time::Duration> {
    std::env::var(name)
        .ok()
        .and_then(|text| text.trim().parse::<u64>().ok())
        .map(std::time::Duration::from_micros)
}

/// The scheduler slice the key thread asks for (`nagi_os::sched_slice`), unless
/// `NAGI_KEY_SLICE_MICROS` says otherwise (0: the default slice). A key's work on this
/// thread takes tens of microseconds; with the default slice (0.7 ms times 1 + log2 of the
/// CPUs), its wake-up for a key or an echo on a CPU that runs a long task of another
/// session may wait for that task's slice to end, up to a scheduler tick.
const KEY_THREAD_SLICE: std::time::Duration = std::time::Duration::from_micros(100);

fn key_thread_slice() -> Option<std::time::Duration> {
    let slice = micros_from_env("NAGI_KEY_SLICE_MICROS").unwrap_or(KEY_THREAD_SLICE);
    (!slice.is_zero()).then_some(slice)
}

/// The key thread: reads, decodes and types until the session is left, the terminal is
/// gone, or the stop pipe hangs up. Answers what to pass on last (`None` when stopped).
fn read_keys(
    reader: &KeyReader,
    terminal: &File,
    stop: &std::io::PipeReader,
    pass_on: &mpsc::UnboundedSender<Keys>,
) -> Option<Keys> {
    let mut decoder = InputDecoder::default();
    let mut buffer = vec![0u8; 4096];
    // A controller's thread reads the pane's output too while it is quiet, so that a key
    // and its echo wake this one thread. Without the claim (another key thread holds it),
    // the pane's reader task reads, and each typed key asks for the claim again.
    let mut output = match reader.role {
        SessionRole::Controller => reader
            .panes
            .claim_quiet_reading(&reader.session_id)
            .ok()
            .flatten(),
        _ => None,
    };
    // Set after a typed key while this thread reads the pane's output: until then its CPU
    // is kept from halting while it sleeps for the echo (echo_wait_spin).
    let mut echo_expected_until: Option<std::time::Instant> = None;
    // The wait is edge-triggered (`nagi_os::edges` says why): a descriptor whose last read
    // filled the buffer is read again without waiting.
    let Ok(mut edges) = ReadableEdges::<4>::new() else {
        return Some(Keys::Gone);
    };
    let mut read_again = [false; 4];
    loop {
        let unchanging = |fd: RawFd| Some(Watched { fd, generation: 0 });
        let of_claim = |output: &QuietReading, fd: RawFd| {
            Some(Watched {
                fd,
                generation: output.claim_id(),
            })
        };
        let master = output.as_ref().and_then(|output| {
            let fd = output.master_to_wait_on()?;
            of_claim(output, fd)
        });
        let wanted = [
            unchanging(stop.as_raw_fd()),
            unchanging(terminal.as_raw_fd()),
            output
                .as_ref()
                .and_then(|output| of_claim(output, output.signal_fd())),
            master,
        ];
        // The spinner stops by itself once something arrives (the epoll instance becomes
        // readable); the guard ends it at the latest when this turn of the loop ends.
        let _spinning = match echo_expected_until.take() {
            Some(until) if master.is_some() => IdleSpinners::global().spin_here(
                until.saturating_duration_since(std::time::Instant::now()),
                &[stop.as_raw_fd(), edges.as_raw_fd()],
            ),
            _ => None,
        };
        let ready = edges.wait(wanted, std::mem::take(&mut read_again));
        let Ok([stopped, typed, signalled, echoed]) = ready else {
            return Some(Keys::Gone);
        };
        if stopped {
            return None;
        }
        if let Some(output) = &mut output {
            if signalled {
                output.signalled();
            }
            if echoed {
                read_again[3] = output.read_master();
            }
        }
        if !typed {
            continue;
        }
        let count = match (&*terminal).read(&mut buffer) {
            // A hung-up terminal reads as EOF or EIO.
            Ok(0) => return Some(Keys::Gone),
            Ok(count) => count,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {
                read_again[1] = true;
                continue;
            }
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(_) => return Some(Keys::Gone),
        };
        read_again[1] = count == buffer.len();
        let bytes = &buffer[..count];
        if reader.role != SessionRole::Controller {
            if observer_leaves(bytes) {
                return Some(Keys::Leave);
            }
            continue;
        }
        let chunk = decoder.feed(bytes);
        for action in chunk.actions {
            let (session_id, client_id) = (&reader.session_id, &reader.client_id);
            let outcome = match action {
                KeyboardAction::Input(data) => {
                    let spin = echo_wait_spin();
                    echo_expected_until =
                        (!spin.is_zero()).then(|| std::time::Instant::now() + spin);
                    reader.panes.session_input_on_this_thread(
                        session_id,
                        client_id,
                        &data,
                        &mut output,
                    )
                }
                KeyboardAction::Scroll(step) => {
                    reader.panes.session_scroll(session_id, client_id, step)
                }
            };
            if let Err(error) = outcome
                && let Some(message) = nagi_pane::refusal(session_id, error).message
                && pass_on.send(Keys::Reply(message)).is_err()
            {
                return None;
            }
        }
        if chunk.detach {
            return Some(Keys::Leave);
        }
    }
}
