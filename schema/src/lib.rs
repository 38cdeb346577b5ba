//! Wire types of the nagi socket protocol: every request, result, error code and event as
//! serde types, the JSON Schema generated from them, and a small blocking client.
//!
//! This crate knows nothing of SQL, PTYs or processes.

pub mod attention;
pub mod client;
pub mod cockpit;
pub mod codes;
pub mod console;
pub mod document;
pub mod envelope;
pub mod events;
pub mod evidence_pack;
pub mod fleet;
pub mod git_worktrees;
pub mod handoff;
pub mod ids;
pub mod land;
pub mod methods;
pub mod mission;
pub mod notification;
pub mod pane;
pub mod pane_document;
pub mod pane_events;
pub mod pane_methods;
pub mod proof;
pub mod results;
pub mod session_protocol;
pub mod steer;
pub mod usage;
pub mod worktree;
pub mod worktree_document;

/// The wire protocol version reported by `ping` (the reference contract's version; nagi
/// is a compatible superset).
pub const PROTOCOL_VERSION: u32 = 16;

/// The server version reported by `ping`.
pub const SERVER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Request lines longer than this are answered with `request_too_large`.
pub const MAX_REQUEST_LINE_BYTES: usize = 1024 * 1024;
