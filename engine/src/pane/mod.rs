//! Managed panes: the terminal server part of the daemon.

pub mod error;
pub mod fast_forward;
pub mod keys;
pub mod scrollback;
pub mod screen;
pub mod attach;
pub mod ring;
