//! `mission.usage` (nagi extension): the tokens and cost the providers reported, summed
//! over the missions' turns (every `turn_ended` event in the window), per mission and in
//! all. A report: it scans the log.

use std::collections::BTreeMap;
use std::sync::Arc;

use nagi_mission::{MissionError, MissionEvent, StoredEvent};
use nagi_schema::results::ResponseResult;
use nagi_schema::usage::TokenUsage;
use nagi_schema::usage::{MissionUsageEntryV1, MissionUsageParams};

use crate::engine::Engine;
use crate::errors::EngineError;

pub fn usage(
    engine: &Arc<Engine>,
    params: MissionUsageParams,
) -> Result<ResponseResult, EngineError> {
    if let Some(mission_id) = &params.mission_id {
        engine.missions.get_checked(mission_id)?;
    }
    let since = params.since_millis.unwrap_or(0);
    let rows = engine
        .missions
        .read(|reader| reader.events_of_kind_since("turn_ended", since))?;
    let mut per_mission: BTreeMap<String, (u64, Option<TokenUsage>)> = BTreeMap::new();
    for row in rows {
        if params
            .mission_id
            .as_ref()
            .is_some_and(|wanted| *wanted != row.mission_id)
        {
            continue;
        }
        let stored: StoredEvent = serde_json::from_str(&row.payload).map_err(|error| {
            MissionError::Runtime(format!("event {} cannot be read: {error}", row.seq))
        })?;
        let MissionEvent::TurnEnded { usage, .. } = stored.event else {
            continue;
        };
        let entry = per_mission.entry(row.mission_id).or_default();
        entry.0 += 1;
        if let Some(usage) = usage {
            entry.1 = Some(entry.1.unwrap_or_default().plus(usage));
        }
    }
    let total =
        nagi_schema::usage::total(per_mission.values().filter_map(|(_, usage)| usage.as_ref()))
            .unwrap_or_default();
    Ok(ResponseResult::MissionUsage {
        since_millis: params.since_millis,
        usage: total.to_wire(),
        missions: per_mission
            .into_iter()
            .map(|(mission_id, (turns, usage))| MissionUsageEntryV1 {
                mission_id,
                turns,
                usage: usage.unwrap_or_default().to_wire(),
            })
            .collect(),
    })
}
