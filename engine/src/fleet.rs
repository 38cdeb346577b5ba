//! What the engine asks of fleet mode, implemented by crate `nagi-fleet` (a higher layer)
//! and set once at start (`Engine::fleet`). Without it the server is a lone host: a
//! `mission.create` naming a `host` is refused with `feature_unavailable`.
//!
//! Which fact lives where: the host's SQLite store stays the truth for everything local (the
//! mission's projection and events, runs, panes, claims, evidence); the mission's workflow
//! (id = mission id) is the truth for which host the mission is pinned to and for the steps
//! of its lifecycle across hosts. A request for a mission pinned to another host goes
//! through that workflow to its host (`FleetRouter::act`), which serves it from its store.

use std::future::Future;
use std::pin::Pin;

use nagi_schema::fleet::{RelocationRequest, RoutedAnswer, RoutedRequest};
use nagi_schema::mission::{MissionCreateParams, MissionSummary, MissionViewV1};

use crate::errors::EngineError;

pub type FleetFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, EngineError>> + Send + 'a>>;

/// A mission as its workflow last recorded it.
#[derive(Debug, Clone)]
pub struct FleetMission {
    pub host: String,
    pub view: MissionViewV1,
}

pub trait FleetRouter: Send + Sync {
    /// This host's name.
    fn host(&self) -> &str;
    /// Starts the mission's workflow, which creates it on `host` (through that host's
    /// activity), and answers with the created view and whether it was new.
    fn create(
        &self,
        params: MissionCreateParams,
        host: String,
    ) -> FleetFuture<'_, (MissionViewV1, bool)>;
    /// Every mission of the fleet that has a workflow, with its host.
    fn list(&self) -> FleetFuture<'_, Vec<MissionSummary>>;
    /// One mission's workflow state, `None` when it has no workflow.
    fn get(&self, mission_id: String) -> FleetFuture<'_, Option<FleetMission>>;
    /// `get`, asked by this host at its start about a mission of its own store: this
    /// host's previous worker, which may still be bound to the mission's workflow, is gone,
    /// so the question goes to any host's worker at once instead of waiting for it.
    fn get_after_restart(&self, mission_id: String) -> FleetFuture<'_, Option<FleetMission>>;
    /// Carries `request` through the mission's workflow to the host it is pinned to, which
    /// serves it (`api::fleet_route::serve_routed`), and answers what that host answered.
    /// A request reaches the host at most once: one that may have been lost on the way
    /// back fails with `server_unavailable`, saying so.
    fn act(&self, mission_id: String, request: RoutedRequest) -> FleetFuture<'_, RoutedAnswer>;
    /// Hands a mission whose host is gone to `request.host`, through its workflow, which
    /// carries what the gone host last reported (`api::fleet_relocate`), and answers what the
    /// new host answered. A preview or start while the mission's host is in the fleet is
    /// refused (`invalid_handoff_state`). After a start, the mission is pinned to the new
    /// host.
    fn relocate(
        &self,
        mission_id: String,
        request: RelocationRequest,
    ) -> FleetFuture<'_, RoutedAnswer>;
}
