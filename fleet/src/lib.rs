//! Fleet mode: every `nagi server` of a fleet is a Temporal worker, and a mission's
//! lifecycle across hosts is one workflow whose id is the mission id (ARCHITECTURE.md,
//! "Fleet mode").
//!
//! Each server polls two task queues: the shared [`FLEET_QUEUE`], where every host can run
//! the workflow code (so a workflow outlives any one host), and its own
//! `nagi-host-<name>` ([`host_queue`]), where only that host runs the activities of the
//! missions pinned to it. Activities delegate to the engine's own operations and are
//! idempotent against the host's store.
//!
//! The Temporal worker's future is not `Send`, so the workers run on their own thread with a
//! current-thread runtime (`worker.rs`).

mod activities;
mod connect;
mod lifecycle;
mod router;
mod worker;

pub use activities::HostActivities;
pub use connect::{FleetOptions, connect};
pub use lifecycle::{
    DEFAULT_HOST_GONE_AFTER_SECONDS, LifecycleInput, LifecycleState, MissionLifecycle,
};
pub use worker::FleetWorker;

/// The task queue every host polls for workflow tasks.
pub const FLEET_QUEUE: &str = "nagi-fleet";

/// The task queue of one host's activities.
pub fn host_queue(host: &str) -> String {
    format!("nagi-host-{host}")
}
