//! `nagi cockpit`: the consent cockpit, a full-screen ratatui program in the person's own
//! terminal.
//!
//! The cockpit holds no authority of its own. Every consent is two requests on the
//! server's cockpit channel: `cockpit.preview` shows exactly what an action would
//! authorise (its lines, the recipe's scope and a digest), and, after the person
//! confirmed, `cockpit.decide` carries that digest back. The server checks the peer.
//!
//! Map: `state/` is the pure reducer (keys and server updates in, state and requests
//! out); `ui/` draws it, one screen per file; `client/` carries requests and updates over
//! the socket on background threads; `terminal.rs` owns the terminal modes; `run.rs` is
//! the main loop that ties them together.

pub mod request;
pub mod state;
pub mod ui;

pub mod client;
mod run;
pub mod terminal;
#[cfg(test)]
mod test_support;

pub use run::{CockpitConfig, CockpitError, CockpitExit, run};
