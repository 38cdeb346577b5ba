//! `mission.sync` (nagi extension): rebase a mission branch onto a branch's current tip,
//! carrying the worktree's uncommitted changes over (`worktrees::sync`), and record it: the
//! worktree's base moves, and a mission whose proof had verified is `blocked` until it is
//! verified again. The worktree is held with a claim while git works, so no run starts in
//! it meanwhile. Like landing, syncing needs a person's consent: on the public socket
//! `mission.sync` checks the request and answers `interactive_consent_required`.

use std::path::PathBuf;
use std::sync::Arc;

use nagi_mission::MissionError;
use nagi_mission::clock::now_millis;
use nagi_mission::model::Mission;
use nagi_schema::land::MissionSyncParams;
use nagi_schema::results::ResponseResult;

use super::HeldClaim;
use super::checks::claim_for_checks;
use super::worktree::{blocking, require_present};
use crate::engine::Engine;
use crate::errors::EngineError;
use crate::worktrees::sync::{SyncOutcome, SyncRequest, inspect, sync as sync_in_git};

/// The git request for syncing `mission` as `params` asks.
pub fn sync_request(
    mission: &Mission,
    params: &MissionSyncParams,
) -> Result<SyncRequest, EngineError> {
    let worktree = nagi_mission::land::check_syncable(mission)?;
    let onto = nagi_mission::land::target_branch(mission, worktree, params.onto.as_deref())?;
    Ok(SyncRequest {
        repository_root: PathBuf::from(&mission.repository_path),
        worktree_path: PathBuf::from(&worktree.path),
        mission_branch: worktree.branch.clone(),
        onto,
    })
}

/// `mission.sync` on the public socket: checked, then refused for want of consent.
pub fn refuse_without_consent(
    engine: &Arc<Engine>,
    params: MissionSyncParams,
) -> Result<ResponseResult, EngineError> {
    let mission = engine.missions.get_existing(&params.mission_id)?;
    let request = sync_request(&mission, &params)?;
    Err(MissionError::ConsentRequired(format!(
        "syncing mission {} rewrites its branch onto `{}`, so a person must approve it: run `nagi mission sync {}` in a terminal of your own",
        mission.mission_id, request.onto, mission.mission_id
    ))
    .into())
}

/// What a sync would do now (for the consent preview).
pub async fn inspect_now(
    engine: &Arc<Engine>,
    params: &MissionSyncParams,
) -> Result<(Mission, SyncRequest, SyncOutcome), EngineError> {
    let mission = engine.missions.get_existing(&params.mission_id)?;
    let request = sync_request(&mission, params)?;
    require_present(engine, &params.mission_id, "nothing can be synced").await?;
    let for_thread = request.clone();
    let outcome = blocking(move || inspect(&for_thread)).await?;
    Ok((mission, request, outcome))
}

/// Syncs the mission after a person approved it. Returns the one-line summary.
pub async fn sync(engine: &Arc<Engine>, params: &MissionSyncParams) -> Result<String, EngineError> {
    // The approval just rebuilt the preview; the sync itself plans again under the claim.
    let mission = super::settle::settled_mission(engine, &params.mission_id).await?;
    let request = sync_request(&mission, params)?;
    require_present(engine, &params.mission_id, "nothing can be synced").await?;
    let run = mission.run.clone().ok_or_else(|| {
        MissionError::NotReady(format!("mission {} has no run yet", mission.mission_id))
    })?;
    if engine.runs.get(&mission.mission_id, &run.run_id).is_some()
        || engine.runs.checks_running(&mission.mission_id, &run.run_id)
    {
        return Err(MissionError::Busy(format!(
            "run {} of mission {} is still working in the worktree; sync when it has ended",
            run.run_id, mission.mission_id
        ))
        .into());
    }
    let claim_key = claim_for_checks(engine, &mission, &format!("sync:{}", run.run_id)).await?;
    let for_thread = request.clone();
    let recorded = match blocking(move || sync_in_git(&for_thread)).await {
        Ok(outcome) if outcome.up_to_date => Ok(outcome),
        Ok(outcome) => {
            let (onto, base) = (request.onto.clone(), outcome.onto_revision.clone());
            engine
                .missions
                .mutate(&mission.mission_id, move |current| {
                    let current = current.ok_or_else(|| {
                        MissionError::Runtime("the mission disappeared during the sync".into())
                    })?;
                    Ok((
                        nagi_mission::land::decide_synced(current, &onto, &base, now_millis())?,
                        (),
                    ))
                })
                .await
                .map(|_| outcome)
        }
        Err(error) => Err(error.into()),
    };
    let _ = super::release_claim(
        engine,
        HeldClaim {
            mission_id: &mission.mission_id,
            run_id: &run.run_id,
            checkout_key: &claim_key,
        },
    )
    .await;
    let outcome = recorded?;
    if outcome.up_to_date {
        return Ok(format!(
            "{} already contains {} ({}); nothing to sync",
            request.mission_branch,
            request.onto,
            &outcome.onto_revision[..12]
        ));
    }
    Ok(format!(
        "{} rebased onto {} ({}): {} commit{} replayed, uncommitted changes carried over{}",
        request.mission_branch,
        request.onto,
        &outcome.onto_revision[..12],
        outcome.commits,
        if outcome.commits == 1 { "" } else { "s" },
        if mission.status == nagi_schema::mission::MissionStatus::ReadyToClose {
            "; the proof must be verified again (nagi mission verify)"
        } else {
            ""
        }
    ))
}
