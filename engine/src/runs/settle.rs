//! The moment after a check run's outcome is committed and before its worker lets go of
//! the run. The store already says the checks finished (the mission may be
//! `ready_to_close`), while the registry still lists them as running. A request that
//! acts on the run's outcome (close, verify, land, sync, a handoff's start, manual
//! evidence) waits this moment out, so it neither mistakes the finished checks for its
//! own nor is refused as busy.

use std::sync::Arc;
use std::time::Duration;

use nagi_mission::model::Mission;

use crate::engine::Engine;
use crate::errors::EngineError;

/// A worker lets go right after its commit; this bounds the wait if it never does.
const LET_GO_WAIT: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(10);

/// Whether the registry still lists checks of the mission's run that are not (or not
/// yet) in flight in the store: a worker between its registry entry and its durable
/// start or end.
fn between_registry_and_store(engine: &Engine, mission: &Mission) -> bool {
    mission.checks_in_flight.is_none()
        && mission
            .run
            .as_ref()
            .is_some_and(|run| engine.runs.checks_running(&mission.mission_id, &run.run_id))
}

/// The mission as it is once no check worker is between the registry and the store.
/// Gives up after `LET_GO_WAIT` and returns the mission as it is then; the caller's own
/// `checks_running` test answers busy in that case.
pub async fn settled_mission(
    engine: &Arc<Engine>,
    mission_id: &str,
) -> Result<Mission, EngineError> {
    let deadline = tokio::time::Instant::now() + LET_GO_WAIT;
    loop {
        let mission = engine.missions.get_existing(mission_id)?;
        if !between_registry_and_store(engine, &mission) || tokio::time::Instant::now() >= deadline
        {
            return Ok(mission);
        }
        tokio::time::sleep(POLL).await;
    }
}
