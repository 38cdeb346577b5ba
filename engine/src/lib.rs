//! The nagi daemon: mission state machine, socket server, managed panes, proof,
//! handoff and recovery. See ARCHITECTURE.md for the code map.

pub mod pane;
