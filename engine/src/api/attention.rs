//! `attention.list` and `attention.get`.

use std::sync::Arc;

use nagi_schema::attention::AttentionItemV1;
use nagi_schema::mission::{AttentionListParams, AttentionTarget};
use nagi_schema::results::ResponseResult;

use crate::engine::Engine;
use crate::errors::EngineError;
use nagi_mission::MissionError;
use nagi_mission::view::attention_view;

pub fn list(
    engine: &Arc<Engine>,
    params: AttentionListParams,
) -> Result<ResponseResult, EngineError> {
    let mission_ids: Vec<String> = match &params.mission_id {
        Some(mission_id) => vec![mission_id.clone()],
        None => engine
            .missions
            .read(|reader| reader.attention_mission_ids())?,
    };
    let mut items: Vec<AttentionItemV1> = Vec::new();
    for mission_id in mission_ids {
        let Some(mission) = engine.missions.get(&mission_id)? else {
            continue;
        };
        if mission.run.is_none() {
            continue;
        }
        for item in mission.attention.values() {
            if params.include_closed || item.is_unresolved() {
                items.push(attention_view(&mission, item, engine.runs.as_ref()));
            }
        }
    }
    Ok(ResponseResult::AttentionList { items })
}

pub fn get(engine: &Arc<Engine>, params: AttentionTarget) -> Result<ResponseResult, EngineError> {
    let not_found = || {
        EngineError::from(MissionError::AttentionNotFound(format!(
            "no attention item {:?}",
            params.attention_id
        )))
    };
    let mission_id = engine
        .missions
        .attention_item_mission(&params.attention_id, params.mission_id.as_deref())?;
    let mission = engine.missions.get(&mission_id)?.ok_or_else(not_found)?;
    let item = mission
        .attention
        .get(&params.attention_id)
        .ok_or_else(not_found)?;
    Ok(ResponseResult::AttentionInfo {
        item: attention_view(&mission, item, engine.runs.as_ref()),
    })
}
