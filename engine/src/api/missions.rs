//! Handlers of the `mission.*` methods that need no provider.

use std::sync::Arc;

use nagi_schema::mission::*;
use nagi_schema::results::ResponseResult;

use crate::engine::Engine;
use crate::errors::EngineError;
use crate::missions::repository::path_text;
use nagi_mission::clock::now_millis;
use nagi_mission::create::{ConfigureDecision, CreateDecision, decide_configure, decide_create};
use nagi_mission::view::mission_summary;
use nagi_mission::{Mission, MissionError};

pub fn view(engine: &Engine, mission: &Mission) -> MissionViewV1 {
    engine.view(mission)
}

fn committed_mission(mission: Option<Mission>) -> Result<Mission, EngineError> {
    mission.ok_or_else(|| {
        MissionError::Runtime("the mission vanished during its own mutation".into()).into()
    })
}

pub async fn create(
    engine: &Arc<Engine>,
    params: MissionCreateParams,
) -> Result<ResponseResult, EngineError> {
    let (mission, created) = create_local(engine, params).await?;
    Ok(ResponseResult::MissionCreated { mission, created })
}

/// Creates the mission in this host's store (idempotent: the same params again answer the
/// stored mission, `created: false`). Fleet mode's create activity calls this too.
pub async fn create_local(
    engine: &Arc<Engine>,
    mut params: MissionCreateParams,
) -> Result<(MissionViewV1, bool), EngineError> {
    // Where the mission lives is the fleet's fact, not the mission's content.
    params.host = None;
    let checkout = engine
        .checkouts
        .canonical_checkout(&params.repository_path)
        .await
        .map_err(MissionError::InvalidRepository)?;
    let canonical = path_text(&checkout.root).map_err(MissionError::InvalidRepository)?;
    let now = now_millis();
    let mission_id = params.mission_id.clone();
    let committed = engine
        .missions
        .mutate_concurrently(&mission_id, move |existing| {
            match decide_create(existing, &params, &canonical, now)? {
                CreateDecision::Unchanged => Ok((Vec::new(), false)),
                CreateDecision::Create(event) => Ok((vec![event], true)),
            }
        })
        .await?;
    let created = committed.outcome;
    let mission = committed_mission(committed.mission)?;
    Ok((view(engine, &mission), created))
}

pub fn list(engine: &Arc<Engine>) -> Result<ResponseResult, EngineError> {
    let rows = engine.missions.read(|reader| reader.mission_summaries())?;
    let missions = rows
        .into_iter()
        .map(|row| {
            Ok(MissionSummary {
                status: MissionStatus::from_wire(&row.status).ok_or_else(|| {
                    MissionError::Runtime(format!(
                        "mission {} has an unknown stored status",
                        row.mission_id
                    ))
                })?,
                mission_id: row.mission_id,
                title: row.title,
                repository_path: row.repository_path,
                unresolved_attention_count: row.unresolved_attention_count,
                updated_at_millis: row.updated_at_millis,
                host: None,
            })
        })
        .collect::<Result<Vec<_>, EngineError>>()?;
    Ok(ResponseResult::MissionList { missions })
}

/// Loads a mission for a read method: the id must follow the ID rule (`invalid_mission`)
/// and exist (`mission_not_found`).
pub fn load_checked(engine: &Engine, mission_id: &str) -> Result<Mission, EngineError> {
    engine.missions.get_checked(mission_id)
}

pub fn get(engine: &Arc<Engine>, params: MissionTarget) -> Result<ResponseResult, EngineError> {
    let mission = load_checked(engine, &params.mission_id)?;
    Ok(ResponseResult::MissionInfo {
        mission: view(engine, &mission),
    })
}

/// `mission.delete` (nagi extension): a draft that never ran goes, and its id is free.
pub async fn delete(
    engine: &Arc<Engine>,
    params: MissionTarget,
) -> Result<ResponseResult, EngineError> {
    load_checked(engine, &params.mission_id)?;
    let mission_id = params.mission_id.clone();
    engine
        .missions
        .mutate(&params.mission_id, move |current| {
            let mission = current.ok_or_else(|| MissionError::no_mission(&mission_id))?;
            let event = nagi_mission::delete::decide_delete(mission, now_millis())?;
            Ok((vec![event], ()))
        })
        .await?;
    Ok(ResponseResult::MissionDeleted {
        mission_id: params.mission_id,
    })
}

/// `mission.session` (nagi extension): the current run's native session and the vendor's
/// command that resumes it by hand. The mission view never carries the id; this answers
/// only a person's own terminal (the consent rule), never a process the server started.
pub fn session(
    engine: &Arc<Engine>,
    params: MissionTarget,
    peer: super::Peer,
) -> Result<ResponseResult, EngineError> {
    let mission = load_checked(engine, &params.mission_id)?;
    if let crate::consent::peer::ConsentVerdict::Refused(reason) = peer.consent {
        return Err(MissionError::ConsentForbidden(format!(
            "the native session id is shown only to a person's own terminal: {reason}"
        ))
        .into());
    }
    let run = mission.run.as_ref().ok_or_else(|| {
        MissionError::RunNotActive(format!("mission {} has no run yet", mission.mission_id))
    })?;
    let id = run.provider_session_id.as_deref().ok_or_else(|| {
        MissionError::RunNotActive(format!(
            "run {} has no provider session (the provider never reported one)",
            run.run_id
        ))
    })?;
    Ok(ResponseResult::MissionSession {
        mission_id: mission.mission_id.to_string(),
        run_id: run.run_id.to_string(),
        provider: run.provider,
        worktree_path: run.worktree_path.clone(),
        session: nagi_mission::view::provider_session(run.provider, id),
    })
}

pub fn summary(mission: &Mission) -> MissionSummary {
    mission_summary(mission)
}

pub async fn configure(
    engine: &Arc<Engine>,
    params: MissionConfigureParams,
) -> Result<ResponseResult, EngineError> {
    let now = now_millis();
    let mission_id = params.mission_id.clone();
    let committed = engine
        .missions
        .mutate_concurrently(&mission_id, move |existing| {
            let mission = existing.ok_or_else(|| MissionError::no_mission(&params.mission_id))?;
            match decide_configure(mission, &params.checks, now)? {
                ConfigureDecision::Unchanged => Ok((Vec::new(), false)),
                ConfigureDecision::Configure(event) => Ok((vec![event], true)),
            }
        })
        .await?;
    let configured = committed.outcome;
    let mission = committed_mission(committed.mission)?;
    Ok(ResponseResult::MissionConfigured {
        mission: view(engine, &mission),
        configured,
    })
}

/// `mission.start` over the public socket: steps 2–4 of §2.5 come before anything is
/// looked up; the rest is `runs::start`.
pub async fn start(
    engine: &Arc<Engine>,
    params: MissionStartParams,
) -> Result<ResponseResult, EngineError> {
    if params.execute_project_recipe {
        return Err(MissionError::ConsentRequired(
            "running the project recipe (.nagi/project.toml setup and services) needs a person's consent in the              local cockpit (nagi cockpit); nothing was started"
                .into(),
        )
        .into());
    }
    if params.provider == MissionProvider::Acp {
        return Err(MissionError::ConsentRequired(
            "an ACP agent runs only with write scope that a person grants in the local cockpit (nagi cockpit);              nothing was started"
                .into(),
        )
        .into());
    }
    if params.mode == MissionProviderMode::Passthrough {
        return Err(MissionError::ProviderModeUnavailable(
            "passthrough mode is not offered; use mode \"managed\"".into(),
        )
        .into());
    }
    crate::runs::start::start(
        engine,
        params,
        crate::runs::start::StartAuthority::PublicSocket,
    )
    .await
}

/// The public socket never answers attention: only the cockpit can. Nothing is written.
pub async fn respond(
    _engine: &Arc<Engine>,
    _params: MissionRespondParams,
) -> Result<ResponseResult, EngineError> {
    Err(MissionError::ConsentRequired(
        "answering a provider's request needs a person's decision in the local cockpit (nagi cockpit); \
         the public socket cannot grant it, and nothing was sent or recorded"
            .into(),
    )
    .into())
}
