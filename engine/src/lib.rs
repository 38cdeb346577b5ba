//! The nagi daemon: mission state machine, socket server, managed panes, proof,
//! handoff and recovery. See ARCHITECTURE.md for the code map.

pub mod api;
pub mod config;
pub mod consent;
pub mod daemon;
pub mod engine;
pub mod errors;
pub mod faults;
pub mod fleet;
pub mod launch;
pub mod leftovers;
pub mod live;
pub mod missions;
pub mod notify;
pub mod paths;
pub mod recipe;
pub mod runs;
pub mod server;
pub mod transcript;
pub mod worktrees;
