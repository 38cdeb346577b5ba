//! The operating-system seam: the calls into the kernel that nagi makes about processes
//! and files, each in one place.
//!
//! - `procfs`: every parse of `/proc/<pid>/stat` (the command name in parentheses may hold
//!   spaces, so the field positions are handled once).
//! - `peer`: the pidfd of a Unix socket's peer.
//! - `children`: the child subreaper, the registry of owned children and the orphan reaper.
//! - `signals`: signals that hit only the process that was meant.
//! - `locks`: the server's `flock` and the byte-range locks of checkout claims.
//! - `fds`: non-blocking descriptors (a pane's PTY master) and waiting for them.
//! - `edges`: waiting on a few descriptors edge-triggered (epoll), so that a terminal is
//!   asked only when something arrived on it.
//! - `terminal`: another process's terminal, opened through `/proc` for a direct attach.
//! - `idle_spin`: keeping a CPU from halting, at idle priority, while a thread sleeps for
//!   an answer due within microseconds (a key's echo).
//! - `sched_slice`: a short scheduler slice for a thread that waits on a person.
//!
//! What is deliberately not here: spawning (each owner spawns through its library:
//! portable-pty, `std::process`, `tokio::process`) and Landlock, which belongs to the
//! provider launch that builds the ruleset.

pub mod children;
pub mod edges;
pub mod fds;
pub mod idle_spin;
pub mod locks;
pub mod peer;
pub mod procfs;
pub mod sched_slice;
pub mod signals;
pub mod terminal;
