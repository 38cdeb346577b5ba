//! The attach connection to the server's socket, registered with the runtime for reading
//! only.
//!
//! Tokio's `UnixStream` asks to be woken when its socket can be written as well, and a Unix
//! socket becomes writable again each time its peer reads from it: every keystroke the
//! server read would wake this client, on the server's CPU and just when the server goes on
//! to type the key into the pane. Here the socket is non-blocking and registered for
//! readability alone; a write that finds it full waits on a registration for writability
//! made for that wait only.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// Reads the server's lines.
pub struct LineReader {
    socket: Arc<AsyncFd<UnixStream>>,
    /// What was read and not yet taken as lines.
    buffer: Vec<u8>,
    /// How far `buffer` is known to hold no newline.
    scanned: usize,
    /// Where each read lands first.
    chunk: Box<[u8]>,
}

/// Writes lines to the server.
pub struct LineWriter {
    socket: Arc<AsyncFd<UnixStream>>,
}

fn register(socket: UnixStream, interest: Interest) -> std::io::Result<AsyncFd<UnixStream>> {
    // SAFETY: the AsyncFd owns the socket, whose descriptor stays open and the same until
    // the AsyncFd is dropped.
    unsafe { AsyncFd::register_with_interest(socket, interest) }
        .map_err(|error| error.into_parts().1)
}

/// Connects to the server's socket (must run inside the runtime).
pub fn connect(path: &Path) -> std::io::Result<(LineReader, LineWriter)> {
    let socket = UnixStream::connect(path)?;
    socket.set_nonblocking(true)?;
    let socket = Arc::new(register(socket, Interest::READABLE)?);
    Ok((
        LineReader {
            socket: socket.clone(),
            buffer: Vec::new(),
            scanned: 0,
            chunk: vec![0; 64 * 1024].into_boxed_slice(),
        },
        LineWriter { socket },
    ))
}

impl LineReader {
    /// The next line, without its newline; `None` once the server closed the connection
    /// (or it failed).
    pub async fn next_line(&mut self) -> Option<Vec<u8>> {
        loop {
            if let Some(end) = self.buffer[self.scanned..]
                .iter()
                .position(|byte| *byte == b'\n')
                .map(|at| self.scanned + at)
            {
                let line = self.buffer[..end].to_vec();
                self.buffer.drain(..=end);
                self.scanned = 0;
                return Some(line);
            }
            self.scanned = self.buffer.len();
            let mut ready = self.socket.readable().await.ok()?;
            match ready.try_io(|socket| socket.get_ref().read(&mut self.chunk)) {
                Ok(Ok(0)) => return None,
                Ok(Ok(count)) => {
                    self.buffer.extend_from_slice(&self.chunk[..count]);
                    // A short read emptied the socket: wait for the next line, without a
                    // read that would only say so.
                    if count < self.chunk.len() {
                        ready.clear_ready();
                    }
                }
                Ok(Err(error)) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(Err(_)) => return None,
                Err(_would_block) => {}
            }
        }
    }
}

impl LineWriter {
    pub async fn write_all(&self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            match self.socket.get_ref().write(bytes) {
                Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
                Ok(count) => bytes = &bytes[count..],
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    // The server is not reading: wait until it does, on a registration of
                    // a duplicate of the socket for writability, dropped after.
                    let duplicate =
                        register(self.socket.get_ref().try_clone()?, Interest::WRITABLE)?;
                    duplicate.writable().await?.retain_ready();
                }
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}
