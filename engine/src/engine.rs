//! The engine context shared by every connection and background task.

use std::sync::Arc;

use tokio::sync::watch;

use crate::live::registry::RunRegistry;
use crate::missions::Missions;

/// Broadcast shutdown: `trigger` once; every task holding a receiver sees it.
#[derive(Clone)]
pub struct Shutdown {
    sender: watch::Sender<bool>,
}

impl Shutdown {
    pub fn new() -> Shutdown {
        let (sender, _) = watch::channel(false);
        Shutdown { sender }
    }

    pub fn trigger(&self) {
        self.sender.send_replace(true);
    }

    pub fn is_triggered(&self) -> bool {
        *self.sender.borrow()
    }

    /// Resolves once shutdown has been triggered.
    pub async fn wait(&self) {
        let mut receiver = self.sender.subscribe();
        let _ = receiver.wait_for(|triggered| *triggered).await;
    }
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

pub struct Engine {
    /// The configuration; `server.reload_config` replaces its user part.
    pub config: crate::config::ConfigCell,
    pub missions: Arc<Missions>,
    pub runs: Arc<RunRegistry>,
    pub panes: Arc<nagi_pane::PaneHost>,
    pub checkouts: crate::missions::repository::CheckoutCache,
    pub claim_locks: crate::live::claims::ClaimLocks,
    /// The vendor CLI versions already found supported.
    pub provider_versions: crate::launch::version::ProviderVersions,
    /// Every run's supervisor task, so that a shutdown waits for them to end.
    pub supervisors: tokio_util::task::TaskTracker,
    pub shutdown: Shutdown,
    /// The uid every peer must have.
    pub server_uid: u32,
    pub server_pid: u32,
    /// Fleet mode, set once at start by the fleet worker (`ServerAttachment`); empty on a
    /// lone host.
    pub fleet: std::sync::OnceLock<std::sync::Arc<dyn crate::fleet::FleetRouter>>,
}

impl Engine {
    /// A mission as the wire shows it, with what this process knows of its live run.
    pub fn view(&self, mission: &nagi_mission::Mission) -> nagi_schema::mission::MissionViewV1 {
        nagi_mission::view::mission_view(mission, self.runs.as_ref())
    }
}
