//! The operating-system seam: what nagi reads from the kernel about processes. Every
//! parse of `/proc/<pid>/stat` is here, so the field positions (and the command name in
//! parentheses that may hold spaces) are handled once, and so is the pidfd of a socket's
//! peer (`peer.rs`).
//!
//! Not here yet: signals, the child subreaper, the owned-child registry and file locks
//! still live with their users (`nagi-pane`'s `process.rs`, the engine's `runs/claims.rs`).

pub mod peer;
pub mod procfs;
