//! Mission events from the durable log, for `events.subscribe` and `events.wait`.

use nagi_schema::events::{MissionEventEnvelope, MissionEventMatch, MissionEventV1};
use nagi_store::EventRow;

use crate::engine::Engine;
use crate::errors::EngineError;
use nagi_mission::StoredEvent;
use nagi_mission::event_view::wire_event;

pub const BATCH: u64 = 512;

/// Refuses a mission filter that can never match: an id that breaks the ID rule
/// (`invalid_mission`, as `mission.get` answers it) or an event kind nagi does not have
/// (`invalid_params`). A filter on a mission that does not exist yet is fine: it may be
/// created while the subscriber waits.
pub fn check_mission_filter(mission_id: Option<&str>, kinds: &[String]) -> Result<(), EngineError> {
    if let Some(mission_id) = mission_id {
        nagi_mission::validate::check_id("mission_id", mission_id)
            .map_err(nagi_mission::MissionError::InvalidMission)?;
    }
    if let Some(unknown) = kinds
        .iter()
        .find(|kind| !nagi_schema::events::MISSION_EVENT_KINDS.contains(&kind.as_str()))
    {
        return Err(EngineError::InvalidParams(format!(
            "unknown mission event kind {unknown:?}; the kinds are {}",
            nagi_schema::events::MISSION_EVENT_KINDS.join(", ")
        )));
    }
    Ok(())
}

/// Reads the next logged events after `after` and converts them. Returns the new cursor.
pub fn read_after(
    engine: &Engine,
    after: u64,
) -> Result<(Vec<MissionEventV1>, u64, bool), EngineError> {
    let rows: Vec<EventRow> = engine
        .missions
        .read(|reader| reader.events_after(after, BATCH))?;
    let more = rows.len() as u64 == BATCH;
    let mut cursor = after;
    let mut events = Vec::with_capacity(rows.len());
    for row in rows {
        cursor = row.seq;
        match serde_json::from_str::<StoredEvent>(&row.payload) {
            Ok(stored) => events.push(wire_event(row.seq, &row.mission_id, &stored)),
            Err(error) => {
                tracing::warn!(seq = row.seq, %error, "skipping an unreadable logged event")
            }
        }
    }
    Ok((events, cursor, more))
}

pub fn envelope_line(event: MissionEventV1) -> String {
    serde_json::to_string(&MissionEventEnvelope::new(event)).unwrap_or_default()
}

/// Waits for the first logged event matching `matcher`.
pub async fn wait_for_mission_event(
    engine: &Engine,
    matcher: &MissionEventMatch,
) -> Result<MissionEventV1, EngineError> {
    let mut head = engine.missions.head();
    let mut cursor = matcher.after_seq.unwrap_or(*head.borrow_and_update());
    loop {
        let (events, next, more) = read_after(engine, cursor)?;
        cursor = next;
        if let Some(found) = events.into_iter().find(|event| matcher.matches(event)) {
            return Ok(found);
        }
        if more {
            continue;
        }
        if head.changed().await.is_err() {
            return Err(EngineError::ServerUnavailable(
                "the server is shutting down".into(),
            ));
        }
    }
}
