//! The user's terminal during an attach: raw mode and the alternate screen, always undone.
//!
//! [`RawTerminal`] restores the terminal when it is dropped, which covers a normal detach,
//! the pane's exit, the server going away and errors; signals end the attach loop so that
//! the drop runs too; and a panic hook restores it before the panic message is printed.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, SetTitle, disable_raw_mode, enable_raw_mode,
};
use ratatui::crossterm::{execute, terminal};

/// Modes a program in the pane may have switched on in our terminal, switched off again:
/// attributes, scroll region, visible cursor, normal cursor keys and keypad, no bracketed
/// paste, no mouse reporting.
const RESET_MODES: &str =
    "\x1b[0m\x1b[r\x1b[?25h\x1b[?1l\x1b>\x1b[?2004l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l";

/// Saves the window title on xterm's title stack, and restores it.
const PUSH_TITLE: &str = "\x1b[22;0t";
const POP_TITLE: &str = "\x1b[23;0t";

static ACTIVE: AtomicBool = AtomicBool::new(false);

fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut stdout = std::io::stdout();
    let _ = stdout.write_all(RESET_MODES.as_bytes());
    let _ = execute!(stdout, LeaveAlternateScreen);
    // Back to the title saved when the attach began (xterm's title stack).
    let _ = stdout.write_all(POP_TITLE.as_bytes());
    let _ = stdout.flush();
    let _ = disable_raw_mode();
}

pub struct RawTerminal {
    _private: (),
}

impl RawTerminal {
    /// Enters raw mode and the alternate screen, with `title` as the window's title while
    /// attached.
    pub fn enter(title: &str) -> std::io::Result<RawTerminal> {
        let previous_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous_hook(info);
        }));
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let guard = RawTerminal { _private: () };
        let mut stdout = std::io::stdout();
        stdout.write_all(PUSH_TITLE.as_bytes())?;
        execute!(stdout, SetTitle(title), EnterAlternateScreen)?;
        Ok(guard)
    }

    /// The terminal's size as (cols, rows).
    pub fn size() -> Option<(u16, u16)> {
        terminal::size().ok()
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        restore();
    }
}

/// Whether stdin and stdout are both terminals.
pub fn is_interactive() -> bool {
    // SAFETY: isatty only inspects the descriptors.
    unsafe { libc::isatty(0) == 1 && libc::isatty(1) == 1 }
}
