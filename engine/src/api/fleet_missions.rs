//! `mission.create`, `mission.list` and `mission.get` as fleet mode changes them (contract
//! extension, README "Fleet mode"). On a lone host (no `Engine::fleet`) they
//! are the plain handlers of `missions.rs`, bar a `host` param, which is refused.
//!
//! In fleet mode every create goes through the mission's workflow, which creates the
//! mission on its pinned host (this one when `host` is absent); list and get answer for the
//! whole fleet: this host's missions from its own store, the others' as their workflows
//! last recorded them, each with its `host`.

use std::collections::BTreeSet;
use std::sync::Arc;

use nagi_mission::MissionError;
use nagi_mission::create::decide_create;
use nagi_schema::mission::{MissionCreateParams, MissionTarget};
use nagi_schema::results::ResponseResult;

use crate::engine::Engine;
use crate::errors::EngineError;

pub async fn create(
    engine: &Arc<Engine>,
    mut params: MissionCreateParams,
) -> Result<ResponseResult, EngineError> {
    let Some(fleet) = engine.fleet.get() else {
        if params.host.is_some() {
            return Err(EngineError::FeatureUnavailable(
                "`host` pins a mission to a host of a fleet, and this server is not in fleet \
                 mode (nagi server --fleet ADDRESS --host NAME); nothing was created"
                    .into(),
            ));
        }
        return super::missions::create(engine, params).await;
    };
    let host = params
        .host
        .take()
        .unwrap_or_else(|| fleet.host().to_string());
    if let Err(fault) = nagi_schema::ids::check_id_text(&host) {
        return Err(EngineError::InvalidParams(fault.describe("host", &host)));
    }
    // The field rules are checked here, before a workflow is started; the repository is
    // checked on the pinned host, where the path is.
    decide_create(None, &params, &params.repository_path, 0)?;
    let (mut mission, created) = fleet.create(params, host.clone()).await?;
    mission.host = Some(host);
    Ok(ResponseResult::MissionCreated { mission, created })
}

pub async fn list(engine: &Arc<Engine>) -> Result<ResponseResult, EngineError> {
    let local = super::on_blocking_pool(engine, super::missions::list).await?;
    let Some(fleet) = engine.fleet.get() else {
        return Ok(local);
    };
    let ResponseResult::MissionList { missions: mut own } = local else {
        return Err(MissionError::Runtime("mission.list answered no list".into()).into());
    };
    let host = fleet.host().to_string();
    for summary in &mut own {
        summary.host = Some(host.clone());
    }
    let own_ids: BTreeSet<String> = own.iter().map(|m| m.mission_id.clone()).collect();
    let mut missions = own;
    for summary in fleet.list().await? {
        if !own_ids.contains(&summary.mission_id) && summary.host.as_deref() != Some(&host) {
            missions.push(summary);
        }
    }
    missions.sort_by(|a, b| a.mission_id.cmp(&b.mission_id));
    Ok(ResponseResult::MissionList { missions })
}

pub async fn get(
    engine: &Arc<Engine>,
    params: MissionTarget,
) -> Result<ResponseResult, EngineError> {
    let Some(fleet) = engine.fleet.get() else {
        return super::missions::get(engine, params);
    };
    match super::missions::get(engine, params.clone()) {
        Ok(ResponseResult::MissionInfo { mut mission }) => {
            mission.host = Some(fleet.host().to_string());
            Ok(ResponseResult::MissionInfo { mission })
        }
        Err(error) if is_not_found(&error) => match fleet.get(params.mission_id).await? {
            Some(remote) => {
                let mut mission = remote.view;
                mission.host = Some(remote.host);
                Ok(ResponseResult::MissionInfo { mission })
            }
            None => Err(error),
        },
        other => other,
    }
}

pub(super) fn is_not_found(error: &EngineError) -> bool {
    matches!(error, EngineError::Mission(MissionError::NotFound(_)))
}
