//! `mission.proof.get`, `mission.verify` (nagi extension) and `mission.close`.

use std::sync::Arc;

use nagi_schema::mission::{MissionStatus, MissionTarget, MissionVerifyParams};
use nagi_schema::results::ResponseResult;

use super::missions::{load_checked, view};
use crate::engine::Engine;
use crate::errors::EngineError;
use crate::runs::checks::{Purpose, claim_for_checks, spawn_claimed_worker};
use crate::runs::settle::settled_mission;
use nagi_mission::MissionError;
use nagi_mission::clock::now_millis;
use nagi_mission::model::Mission;
use nagi_proof::proof_receipt;

pub fn proof_get(
    engine: &Arc<Engine>,
    params: MissionTarget,
) -> Result<ResponseResult, EngineError> {
    let mission = load_checked(engine, &params.mission_id)?;
    Ok(ResponseResult::MissionProof {
        receipt: proof_receipt(&mission)?,
    })
}

/// Runs the declared command checks now (contract preface item 5), with the consent that
/// `execute_declared_checks` gives at start.
pub async fn verify(
    engine: &Arc<Engine>,
    params: MissionVerifyParams,
) -> Result<ResponseResult, EngineError> {
    let mission = settled_mission(engine, &params.mission_id).await?;
    if !params.execute_declared_checks {
        return Err(MissionError::ConsentRequired(
            "mission.verify runs the declared commands with your OS permissions; consent with execute_declared_checks: true".into(),
        )
        .into());
    }
    let run = mission.run.clone().ok_or_else(|| {
        MissionError::NotReady(format!(
            "mission {} has no run yet; start one first (mission.start)",
            mission.mission_id
        ))
    })?;
    if engine.runs.checks_running(&mission.mission_id, &run.run_id) {
        // Checks after a turn or another verify are the verification asked for.
        return match checks_purpose(&mission) {
            Some("turn_completed" | "verify") => Ok(ResponseResult::MissionVerifyAccepted {
                mission: view(engine, &mission),
            }),
            purpose => Err(checks_busy(&mission, &run.run_id, purpose, "verify")),
        };
    }
    if engine.runs.get(&mission.mission_id, &run.run_id).is_some() {
        return Err(MissionError::Busy(format!("run {} is still live", run.run_id)).into());
    }
    let mission = if mission.status == MissionStatus::Blocked {
        // nagi extension: a blocked mission whose run is over is verified again.
        nagi_mission::run::decide_reverify_blocked(&mission, now_millis())?;
        let id = mission.mission_id.to_string();
        engine
            .missions
            .mutate(&mission.mission_id, move |current| {
                let current = current.ok_or_else(|| MissionError::no_mission(&id))?;
                Ok((
                    nagi_mission::run::decide_reverify_blocked(current, now_millis())?,
                    (),
                ))
            })
            .await?
            .mission
            .unwrap_or(mission)
    } else {
        mission
    };
    if mission.status != MissionStatus::ReviewRequired {
        return Err(MissionError::NotReady(format!(
            "mission {} is {}; checks can be verified while it is review_required or blocked",
            mission.mission_id,
            mission.status.as_str()
        ))
        .into());
    }
    let key = claim_for_checks(engine, &mission, &format!("verify:{}", run.run_id)).await?;
    spawn_claimed_worker(
        engine,
        mission.mission_id.clone(),
        run.run_id.clone(),
        Purpose::Verify,
        key,
    );
    Ok(ResponseResult::MissionVerifyAccepted {
        mission: view(engine, &mission),
    })
}

/// §2.10: a second, fresh verification of the same subject, in the background.
pub async fn close(
    engine: &Arc<Engine>,
    params: MissionTarget,
) -> Result<ResponseResult, EngineError> {
    let mission = settled_mission(engine, &params.mission_id).await?;
    match mission.status {
        MissionStatus::Archived => {
            return Ok(ResponseResult::MissionCloseAccepted {
                mission: view(engine, &mission),
            });
        }
        MissionStatus::ReadyToClose => {}
        status => {
            return Err(MissionError::NotReady(format!(
                "mission {} is {}; only a ready_to_close mission can be closed",
                mission.mission_id,
                status.as_str()
            ))
            .into());
        }
    }
    let run = mission
        .run
        .clone()
        .ok_or_else(|| MissionError::Runtime("a ready mission without a run".into()))?;
    if engine.runs.checks_running(&mission.mission_id, &run.run_id) {
        // Only a close already under way answers for this one: the checks that sealed
        // `ready_to_close` have finished, and a landing is not a close.
        return match checks_purpose(&mission) {
            Some("close") => Ok(ResponseResult::MissionCloseAccepted {
                mission: view(engine, &mission),
            }),
            purpose => Err(checks_busy(&mission, &run.run_id, purpose, "close")),
        };
    }
    if engine.runs.get(&mission.mission_id, &run.run_id).is_some() {
        return Err(MissionError::Busy(format!("run {} is still live", run.run_id)).into());
    }
    engine
        .checkouts
        .canonical_checkout(&run.worktree_path)
        .await
        .map_err(MissionError::InvalidRepository)?;
    let key = claim_for_checks(engine, &mission, &format!("close:{}", run.run_id)).await?;
    spawn_claimed_worker(
        engine,
        mission.mission_id.clone(),
        run.run_id.clone(),
        Purpose::Close,
        key,
    );
    Ok(ResponseResult::MissionCloseAccepted {
        mission: view(engine, &mission),
    })
}

/// What the checks in flight were started for, as the store records it.
fn checks_purpose(mission: &Mission) -> Option<&str> {
    mission
        .checks_in_flight
        .as_ref()
        .map(|checks| checks.purpose.as_str())
}

/// Checks of the run are running for another purpose than the one `asked` would join.
fn checks_busy(mission: &Mission, run_id: &str, purpose: Option<&str>, asked: &str) -> EngineError {
    let running = match purpose {
        Some(purpose) => format!("the {purpose} checks of run {run_id} are running"),
        None => format!("the checks of run {run_id} are finishing"),
    };
    MissionError::Busy(format!(
        "{running}; {asked} mission {} again when they have ended",
        mission.mission_id
    ))
    .into()
}
