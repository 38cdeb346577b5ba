//! Managed panes: the terminal-server part of the daemon.
//!
//! A pane is a PTY (portable-pty) running one program, a vt100 screen with a compact,
//! bounded scrollback, and a bounded ring of session frames for attach clients. Panes
//! live in tabs, tabs in workspaces; [`PaneHost`] is the registry and answers the
//! `workspace.*`, `tab.*`, `pane.*` and `session.snapshot` methods through [`dispatch`],
//! and the attach protocol through [`handle_session_message`].
//!
//! Code map:
//! - `host`: the registry, config, lookups; `lifecycle`: create/close/rename/move/focus;
//!   `io`: reads, input, reports, sessions; `methods`: the method dispatcher.
//! - `core`: the per-pane shared state; `pty`: spawning, and the waiter thread; `output`:
//!   the reader (a runtime task while the pane is quiet, a thread while output streams)
//!   and the parser thread; `quiet_reading`: a direct controller's key thread taking the
//!   task's turn, so that a key and its echo wake one thread; `process`: subreaper,
//!   reaping, process-tree termination, /proc details.
//! - `screen`: the vt100 terminal and reads; `scrollback`: the compact row store;
//!   `fast_forward`: skipping rows nobody can see during floods; `scroll`: the view of a
//!   pane's history that the attach controller scrolls.
//! - `attach` and `ring`: the session protocol's members, frames and replay;
//!   `attach_direct`: the output of a member whose terminal the server serves, written
//!   by the pane's reader when nothing is queued for it; `attach_input`: the keys of an attached terminal (detach, scroll, UTF-8), decoded the
//!   same way by the attach client and by the server serving a terminal directly.
//! - `keys`: key-combo strings; `metadata`: agent state, metadata and tokens;
//!   `watch`: output matching; `events`: the live event bus; `expiry`: TTLs.

pub mod attach;
pub mod attach_direct;
pub mod attach_input;
mod core;
mod error;
mod events;
mod expiry;
pub mod fast_forward;
mod host;
mod io;
pub mod keys;
mod lifecycle;
pub mod metadata;
mod methods;
mod output;
pub mod process;
mod provenance;
mod pty;
pub mod quiet_reading;
mod request;
pub mod ring;
pub mod screen;
mod scroll;
pub mod scrollback;
mod watch;

pub use attach::{SessionFrameReceiver, SessionMembership};
pub use error::PaneError;
pub use host::{PaneHost, PaneHostConfig, TabCreate, WorkspaceCreate};
pub use methods::{SessionReply, answer, dispatch, handle_session_message, refusal};
pub use nagi_schema::pane_events::{event_match_matches, subscription_matches};
pub use nagi_schema::pane_methods::{PANE_METHODS, find_pane_method};
pub use process::{
    become_child_subreaper, reap_orphans, register_owned_child, unregister_owned_child,
};
pub use provenance::WorkspacePlace;
pub use request::PaneRequest;
pub use watch::OutputWatchGuard;

/// Names of protocol methods that nagi does not offer; [`dispatch`] answers them with
/// `feature_unavailable` naming the method.
pub fn unimplemented_pane_methods() -> impl Iterator<Item = &'static str> {
    PANE_METHODS
        .iter()
        .filter(|spec| !spec.implemented)
        .map(|spec| spec.name)
}

#[cfg(test)]
mod tests;
