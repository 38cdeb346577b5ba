//! `mission.abandon` (nagi extension): the mission is archived with the person's reason,
//! its live provider is stopped, and everything it held is let go — the checkout claim,
//! the project services, the run panes (after the usual linger) and its worktree (kept
//! when it holds work that was not landed). Its events, evidence and runs stay.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nagi_mission::MissionError;
use nagi_mission::abandon::decide_abandon;
use nagi_mission::clock::now_millis;
use nagi_providers::ProviderCommand;
use nagi_schema::mission::MissionAbandonParams;
use nagi_schema::results::ResponseResult;

use crate::engine::Engine;
use crate::errors::EngineError;

/// How long abandon waits for a stopped provider's run to end before it lets go of the
/// run's claim itself.
const RUN_END_WAIT: Duration = Duration::from_secs(10);

pub async fn abandon(
    engine: &Arc<Engine>,
    params: MissionAbandonParams,
) -> Result<ResponseResult, EngineError> {
    let mission = engine.missions.get_checked(&params.mission_id)?;
    // Every refusal comes before anything is stopped or written.
    decide_abandon(&mission, &params.reason, now_millis())?;
    let live = mission.run.as_ref().and_then(|run| {
        engine
            .runs
            .get(&mission.mission_id, &run.run_id)
            .map(|live| (run.run_id.clone(), live))
    });
    if let Some((_, live)) = &live {
        let _ = live.commands.send(ProviderCommand::Shutdown).await;
    }
    let reason = params.reason.clone();
    let id = mission.mission_id.to_string();
    let committed = engine
        .missions
        .mutate(&mission.mission_id, move |current| {
            let current = current.ok_or_else(|| MissionError::no_mission(&id))?;
            Ok((decide_abandon(current, &reason, now_millis())?, ()))
        })
        .await?;
    let mission_id = mission.mission_id.to_string();
    if let Some((run_id, _)) = &live {
        let deadline = Instant::now() + RUN_END_WAIT;
        while engine.runs.get(&mission_id, run_id).is_some() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    release_remaining_claims(engine, &mission_id).await;
    super::recipe::cleanup_on_archive(engine, &mission_id).await;
    if let Err(error) = super::worktree::settle_after_archive(engine, &mission_id).await {
        tracing::warn!(%mission_id, %error, "the abandoned mission's worktree could not be settled");
    }
    tokio::spawn(super::checks::close_panes_of_archived(
        engine.clone(),
        mission_id.clone(),
    ));
    let current = engine
        .missions
        .get_existing(&mission_id)
        .ok()
        .or(committed.mission)
        .ok_or_else(|| MissionError::no_mission(&mission_id))?;
    Ok(ResponseResult::MissionAbandoned {
        mission: engine.view(&current),
    })
}

/// Lets go of every checkout claim the mission still holds: the rows and their OS locks.
async fn release_remaining_claims(engine: &Arc<Engine>, mission_id: &str) {
    let held: Vec<String> = match engine.missions.read(|reader| reader.claims()) {
        Ok(claims) => claims
            .into_iter()
            .filter(|claim| claim.mission_id == mission_id)
            .map(|claim| claim.checkout_key)
            .collect(),
        Err(_) => return,
    };
    if held.is_empty() {
        return;
    }
    let id = mission_id.to_string();
    let released = engine
        .missions
        .transact(move |writer| Ok(writer.release_claims_of_mission(&id)?))
        .await;
    if let Err(error) = released {
        tracing::warn!(%mission_id, %error, "the abandoned mission's claims could not be released");
        return;
    }
    for key in held {
        engine.claim_locks.release(&key);
    }
}
