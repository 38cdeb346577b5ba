//! The terminal of a direct attach (`terminal: "direct"` in `join_session`): the server
//! reads the keys from the client's terminal and writes the pane's output to it itself,
//! so that neither crosses the attach client process.
//!
//! The terminal is found from the connection's peer credentials alone (the client names
//! no path): its stdin, opened again through `/proc` (see `nagi_os::terminal`). It is
//! registered for readability only, like the socket (see `socket.rs`): a terminal becomes
//! writable each time its output drains, which would wake the runtime after every echo. A
//! write that finds the terminal full waits on a registration of a duplicate for
//! writability, made for that wait only.

use std::fs::File;
use std::io::{Read, Write};
use std::sync::Arc;

use nagi_pane::attach_direct::DirectOutput;
use nagi_pane::attach_input::{InputDecoder, KeyboardChunk, observer_leaves};
use nagi_schema::session_protocol::SessionRole;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use crate::api::Peer;

fn register(terminal: File, interest: Interest) -> std::io::Result<AsyncFd<File>> {
    // SAFETY: the AsyncFd owns the File, whose descriptor stays open and the same until
    // the AsyncFd is dropped.
    unsafe { AsyncFd::register_with_interest(terminal, interest) }
        .map_err(|error| error.into_parts().1)
}

/// The client's terminal, shared by the connection's reader (keys) and writer (output).
pub struct DirectTerminal {
    terminal: AsyncFd<File>,
}

impl DirectTerminal {
    /// Opens the terminal of the connection's peer (must run inside the runtime).
    pub fn open(peer: &Peer) -> std::io::Result<Arc<DirectTerminal>> {
        let Some(pid) = peer.pid else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "the connection's peer has no process id",
            ));
        };
        let terminal = nagi_os::terminal::open_process_terminal(pid, peer.uid)?;
        Ok(Arc::new(DirectTerminal {
            terminal: register(terminal, Interest::READABLE)?,
        }))
    }

    /// The terminal as the pane's reader writes to it while nothing is queued for the
    /// member (`nagi_pane::attach_direct`): a duplicate of the same non-blocking open file.
    pub fn output(&self) -> std::io::Result<Arc<DirectOutput>> {
        Ok(Arc::new(DirectOutput::new(
            self.terminal.get_ref().try_clone()?,
        )))
    }

    /// Reads what was typed; `Ok(0)` when the terminal hung up.
    pub async fn read(&self, buffer: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let mut ready = self.terminal.readable().await?;
            match ready.try_io(|terminal| terminal.get_ref().read(buffer)) {
                Ok(Err(error)) if error.kind() == std::io::ErrorKind::Interrupted => {}
                // A hung-up terminal reads as EIO.
                Ok(Err(error)) if error.raw_os_error() == Some(libc::EIO) => return Ok(0),
                Ok(result) => {
                    // A short read took everything typed so far: the next key comes with
                    // the next readiness, so no read is spent on learning that nothing is
                    // left.
                    if matches!(result, Ok(count) if count < buffer.len()) {
                        ready.clear_ready();
                    }
                    return result;
                }
                Err(_would_block) => {}
            }
        }
    }

    /// Writes all of `bytes`, waiting while the terminal takes no more.
    pub async fn write_all(&self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            match self.terminal.get_ref().write(bytes) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(count) => bytes = &bytes[count..],
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    let duplicate =
                        register(self.terminal.get_ref().try_clone()?, Interest::WRITABLE)?;
                    duplicate.writable().await?.retain_ready();
                }
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}

/// The keys of a direct session, read by the connection's reader.
pub struct DirectKeys {
    pub session_id: String,
    pub role: SessionRole,
    pub terminal: Arc<DirectTerminal>,
    decoder: InputDecoder,
    buffer: Box<[u8]>,
}

/// What a read from the terminal asks for.
pub enum Keys {
    /// Input and scrolls for the pane (the controller's), and whether to detach after.
    Chunk(KeyboardChunk),
    /// Leave the session (an observer's q, Ctrl-C or Ctrl-\).
    Leave,
    /// Nothing: an observer's other keys, which cannot type.
    Ignored,
    /// The terminal is gone: stop reading it.
    Gone,
}

impl DirectKeys {
    pub fn new(session_id: String, role: SessionRole, terminal: Arc<DirectTerminal>) -> Self {
        DirectKeys {
            session_id,
            role,
            terminal,
            decoder: InputDecoder::default(),
            buffer: vec![0; 4096].into_boxed_slice(),
        }
    }

    /// Waits for keys and decodes them (cancel-safe: nothing is read until it is decoded).
    pub async fn next(&mut self) -> Keys {
        let count = match self.terminal.read(&mut self.buffer).await {
            Ok(0) | Err(_) => return Keys::Gone,
            Ok(count) => count,
        };
        let bytes = &self.buffer[..count];
        if self.role != SessionRole::Controller {
            return if observer_leaves(bytes) {
                Keys::Leave
            } else {
                Keys::Ignored
            };
        }
        Keys::Chunk(self.decoder.feed(bytes))
    }
}
