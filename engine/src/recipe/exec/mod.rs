//! Executing a project recipe for a mission (contract §11 "Execution semantics", §7.2,
//! §2.9 step 11, §9): the mission worktree and its copied ignored files, setup, services on
//! leased ports with health checks, adoption after a restart, stopping, and cleanup.
//!
//! Only the local cockpit may execute a recipe (the public socket answers
//! `interactive_consent_required`); this module does not check consent, its caller does.
//!
//! The API, in the order a mission meets it:
//! - The mission worktree is made by `crate::worktrees` (which calls [`copy_ignored`]).
//! - [`provision_run`]: setup (once, at the cockpit's new-mission launch), then every
//!   service started and healthy. On failure the run's services are stopped and their
//!   leases released.
//! - [`adopt_or_restart_services`]: recovery and handoff provisioning; never runs setup.
//!   A service whose recorded process is alive and healthy is adopted (same pid); any other
//!   is restarted.
//! - [`stop_services`]: on handoff, when a run is released while its mission is `failed`,
//!   and (through [`archive_cleanup`]) on archive.
//! - [`archive_cleanup`]: stop the services, then run `[[cleanup]]` in order; failures are
//!   logged and reported, never returned as errors.
//!
//! Where things run:
//! - setup and cleanup go through the trusted runner (`nagi_exec::runner`), their output
//!   streamed into the run's recipe transcript (`<transcripts>/<mission>/<run>.project.log`);
//! - services are supervised child processes, detached from the server's lifetime (see
//!   [`process`] for why not panes and for the `NAGI_SERVICE_LEASE` marker), logging to
//!   `<session>/services/<mission>/<run>/<service>.log`;
//! - the project pane ([`panes`]) follows the transcript and each service log with
//!   `tail -F`.

mod copy;
pub mod health;
pub mod panes;
pub mod ports;
pub mod process;
mod provision;
mod services;
mod setup;

use nagi_schema::ids::{MissionId, RunId};
use std::path::PathBuf;
use std::time::Duration;

pub use crate::errors::RecipeExecError;
pub use copy::{CopiedFile, CopyOutcome, MAX_COPY_FILE_BYTES, MAX_COPY_TOTAL_BYTES, copy_ignored};
pub use ports::{PortRange, port_is_free};
pub use process::SERVICE_LEASE_MARKER;
pub use provision::{
    ArchiveCleanupReport, CleanupCommandReport, StoppedService, adopt_or_restart_services,
    archive_cleanup, provision_run, stop_services,
};
pub use services::{ProvisionedServices, RunningService};
pub use setup::{
    FAILURE_EXCERPT_CHARS, describe_command, describe_command_briefly, excerpt, failure_message,
    run_recipe_command, run_setup,
};

use crate::engine::Engine;
use nagi_mission::model::{Mission, Run};

/// The run a recipe executes for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunTarget {
    pub mission_id: MissionId,
    pub run_id: RunId,
    /// The run's checkout root (its linked worktree).
    pub worktree: PathBuf,
}

impl RunTarget {
    pub fn of(mission: &Mission, run: &Run) -> RunTarget {
        RunTarget {
            mission_id: mission.mission_id.clone(),
            run_id: run.run_id.clone(),
            worktree: PathBuf::from(&run.worktree_path),
        }
    }
}

/// Knobs of recipe execution; `Default` gives the contract's values.
#[derive(Debug, Clone)]
pub struct RecipeExecConfig {
    /// Default 41000–49000.
    pub port_range: PortRange,
    /// How long a stopped service gets between SIGTERM and SIGKILL; default 3 s.
    pub stop_grace: Duration,
    /// Open the project pane (tests of headless use turn it off); default on.
    pub open_panes: bool,
}

impl Default for RecipeExecConfig {
    fn default() -> RecipeExecConfig {
        RecipeExecConfig {
            port_range: PortRange::default(),
            stop_grace: Duration::from_secs(3),
            open_panes: true,
        }
    }
}

/// The run's recipe transcript, followed by the project pane.
pub fn recipe_transcript_path(engine: &Engine, mission_id: &MissionId, run_id: &RunId) -> PathBuf {
    engine
        .config
        .current()
        .paths
        .transcript_dir()
        .join(mission_id.path_segment())
        .join(format!("{}.project.log", run_id.path_segment()))
}

/// Where a service of a run writes its output.
pub fn service_log_path(engine: &Engine, target: &RunTarget, service_id: &str) -> PathBuf {
    engine
        .config
        .current()
        .paths
        .data_dir
        .join("services")
        .join(target.mission_id.path_segment())
        .join(target.run_id.path_segment())
        .join(format!("{}.log", crate::paths::path_segment(service_id)))
}
