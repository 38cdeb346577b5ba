//! The mission state machine, free of I/O: the aggregate, its events, the fold that
//! projects events onto it, the command decisions and the wire views.

pub mod abandon;
pub mod apply;
pub mod attention;
pub mod canonical;
pub mod create;
pub mod delete;
pub mod error;
pub mod event;
pub mod event_view;
pub mod land;
pub mod model;
pub mod plan;
pub mod run;
pub mod status;
pub mod steer;
pub mod validate;
pub mod view;
pub mod worktree;

pub mod clock;
pub mod digest;
pub mod redact;

pub use error::MissionError;
pub use event::{MissionEvent, StoredEvent};
pub use model::Mission;
