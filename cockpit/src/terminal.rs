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
