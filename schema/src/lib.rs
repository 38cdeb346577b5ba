//! Wire types of the nagi socket protocol, its JSON Schema, and a small client.

pub mod pane;
pub mod pane_events;
pub mod session_protocol;
