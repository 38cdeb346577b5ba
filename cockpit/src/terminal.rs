//! The person's terminal while the cockpit runs: raw mode and the alternate screen
//! (ratatui's `init`), always undone.
//!
//! [`TerminalSession`] restores the terminal when dropped, which covers quitting and
//! every error; ratatui's panic hook restores it before a panic message is printed; and
//! SIGTERM, SIGHUP, SIGINT and SIGQUIT are turned into a flag the main loop checks, so
//! they end the loop and the drop runs too.

use std::io;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ratatui::DefaultTerminal;

pub struct TerminalSession {
    terminal: DefaultTerminal,
}

impl TerminalSession {
    pub fn enter() -> io::Result<TerminalSession> {
        match ratatui::try_init() {
            Ok(terminal) => Ok(TerminalSession { terminal }),
            Err(error) => {
                // Raw mode may already be on when the alternate screen failed.
                ratatui::restore();
                Err(error)
            }
        }
    }
}

impl Deref for TerminalSession {
    type Target = DefaultTerminal;
    fn deref(&self) -> &DefaultTerminal {
        &self.terminal
    }
}

impl DerefMut for TerminalSession {
    fn deref_mut(&mut self) -> &mut DefaultTerminal {
        &mut self.terminal
    }
}

impl Drop for TerminalSession {
    fn drop(&mut self) {
        let _ = self.terminal.show_cursor();
        ratatui::restore();
    }
}

/// The number of the last terminating signal received, 0 while none was.
pub struct SignalFlag {
    received: Arc<AtomicUsize>,
}

impl SignalFlag {
    pub fn register() -> io::Result<SignalFlag> {
        let received = Arc::new(AtomicUsize::new(0));
        for signal in [
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGHUP,
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGQUIT,
        ] {
            signal_hook::flag::register_usize(signal, received.clone(), signal as usize)?;
        }
        Ok(SignalFlag { received })
    }

    pub fn received(&self) -> Option<i32> {
        match self.received.load(Ordering::SeqCst) {
            0 => None,
            signal => Some(signal as i32),
        }
    }
}

/// Ends the process when the person's terminal goes away (its window closed, the tmux
/// session killed, the ssh connection dropped), with the exit status of SIGHUP.
///
/// The main loop cannot notice this itself: on a hung-up terminal every read returns end
/// of file, and crossterm's reader retries such reads without end, inside `event::poll`,
/// so the loop would spin there forever and never see the SIGHUP flag either. A thread
/// blocked in `poll(2)` on the terminal with no events requested wakes only for a hang-up
/// or an error. There is nothing left to restore on a terminal that is gone.
pub fn exit_when_terminal_hangs_up() {
    // crossterm reads keys from stdin when it is a terminal (else from /dev/tty, which
    // it opens itself and which is then not ours to watch).
    if unsafe { libc::isatty(libc::STDIN_FILENO) } != 1 {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("cockpit-hangup".to_string())
        .spawn(|| {
            loop {
                let mut descriptor = libc::pollfd {
                    fd: libc::STDIN_FILENO,
                    events: 0,
                    revents: 0,
                };
                let ready = unsafe { libc::poll(&mut descriptor, 1, -1) };
                let gone = libc::POLLHUP | libc::POLLERR | libc::POLLNVAL;
                if ready > 0 && descriptor.revents & gone != 0 {
                    std::process::exit(128 + libc::SIGHUP);
                }
                if ready < 0 && std::io::Error::last_os_error().kind() != io::ErrorKind::Interrupted
                {
                    return;
                }
            }
        });
    // Without the watchdog the cockpit still works; it only misses a vanished terminal.
    drop(spawned);
}
