//! The nagi daemon: mission state machine, socket server, managed panes, proof,
//! handoff and recovery. See ARCHITECTURE.md for the code map.

pub mod api;
pub mod clock;
pub mod config;
pub mod consent;
pub mod daemon;
pub mod digest;
pub mod engine;
pub mod errors;
pub mod handoff;
pub mod mission;
pub mod missions;
pub mod pane;
pub mod paths;
pub mod proof;
pub mod recipe;
pub mod redact;
pub mod runner;
pub mod runs;
pub mod server;
pub mod workspace;
