//! The keyboard of an attach: the terminal read in the attach loop itself, so that a key
//! reaches the socket without waking another thread first.

use std::io::Read;
use std::os::unix::ffi::OsStrExt as _;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::mpsc;

/// Where the keys come from.
pub enum Keyboard {
    /// The terminal opened again by its name: a file description of our own, which may be
    /// made non-blocking without touching the one the shell that ran us shares.
    Terminal(AsyncFd<std::fs::File>),
    /// Where the terminal has no name to open: a thread of its own does a blocking read (a
    /// read that is simply abandoned at exit), handing the bytes over.
    Thread(mpsc::Receiver<Vec<u8>>),
}

impl Keyboard {
    pub fn open() -> Keyboard {
        let registered = open_terminal_nonblocking().ok().and_then(|terminal| {
            // SAFETY: the AsyncFd owns the File, whose descriptor stays open and the same
            // until the AsyncFd is dropped.
            unsafe { AsyncFd::register_with_interest(terminal, Interest::READABLE) }.ok()
        });
        match registered {
            Some(terminal) => Keyboard::Terminal(terminal),
            None => Keyboard::Thread(spawn_keyboard_reader()),
        }
    }

    /// The next bytes typed; `None` when the keyboard is gone.
    pub async fn read(&mut self) -> Option<Vec<u8>> {
        match self {
            Keyboard::Terminal(terminal) => {
                let mut buffer = [0u8; 4096];
                loop {
                    let mut ready = terminal.readable().await.ok()?;
                    match ready.try_io(|terminal| terminal.get_ref().read(&mut buffer)) {
                        Ok(Ok(0)) => return None,
                        Ok(Ok(count)) => {
                            // A short read took everything typed so far: the next key
                            // comes with the next readiness, so no read is spent on
                            // learning that nothing is left.
                            if count < buffer.len() {
                                ready.clear_ready();
                            }
                            return Some(buffer[..count].to_vec());
                        }
                        Ok(Err(error)) if error.kind() == std::io::ErrorKind::Interrupted => {}
                        Ok(Err(_)) => return None,
                        Err(_would_block) => {}
                    }
                }
            }
            Keyboard::Thread(receiver) => receiver.recv().await,
        }
    }
}

/// Opens the terminal on stdin again by its name, non-blocking (as tmux does).
fn open_terminal_nonblocking() -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut name = [0 as libc::c_char; 256];
    // SAFETY: ttyname_r writes a NUL-terminated name of at most `name.len()` bytes.
    let status = unsafe { libc::ttyname_r(0, name.as_mut_ptr(), name.len()) };
    if status != 0 {
        return Err(std::io::Error::from_raw_os_error(status));
    }
    // SAFETY: ttyname_r succeeded, so `name` holds a NUL-terminated string.
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(name.to_bytes()));
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(path)
}

/// Reads the keyboard in a thread of its own (a blocking read that is simply abandoned at
/// exit), handing the bytes to the attach loop.
fn spawn_keyboard_reader() -> mpsc::Receiver<Vec<u8>> {
    let (sender, receiver) = mpsc::channel(64);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buffer = [0u8; 4096];
        loop {
            match stdin.read(&mut buffer) {
                Ok(0) | Err(_) => return,
                Ok(count) => {
                    if sender.blocking_send(buffer[..count].to_vec()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    receiver
}
