//! `mission.handoff.preview` and `mission.handoff.start` (contract §2.8, §2.9, §6): the
//! pure decisions are in `nagi_proof::handoff`; this adds the Git scan, the claim and the launch
//! of the target provider.

use std::path::PathBuf;
use std::sync::Arc;

use nagi_schema::handoff::MissionHandoffArtifactV1;
use nagi_schema::mission::{MissionHandoffPreviewParams, MissionHandoffStartParams};
use nagi_schema::results::ResponseResult;
use nagi_store::ClaimRow;

use super::launch_run::{LaunchRun, launch_run};
use super::start::{as_started, random_nonce};
use super::steps::{ClaimLock, fail_launch, fail_recipe_run};
use crate::engine::Engine;
use crate::errors::EngineError;
use nagi_exec::workspace::{ScanConfig, handoff_diff};
use nagi_mission::MissionError;
use nagi_mission::clock::now_millis;
use nagi_mission::model::Mission;
use nagi_proof::handoff::{
    HandoffArtifactConfig, HandoffAuthority, HandoffStartPrecheck, WriteGrant,
    build_handoff_artifact, check_handoff_preconditions, confirm_rebuilt_artifact,
    decide_run_continued_with, handoff_prompt, precheck_handoff_start,
};

/// Scans the current run's worktree against its base and builds the artifact.
pub async fn build(
    mission: &Mission,
    to: nagi_schema::mission::MissionProvider,
    generated_at_millis: u64,
) -> Result<MissionHandoffArtifactV1, EngineError> {
    let run = check_handoff_preconditions(mission, to)?.clone();
    let root = PathBuf::from(&run.worktree_path);
    let base = run.base_revision.clone();
    let (_, diff) =
        tokio::task::spawn_blocking(move || handoff_diff(&root, &base, &ScanConfig::default()))
            .await
            .map_err(|error| MissionError::HandoffSnapshotFailed(error.to_string()))?
            .map_err(|error| {
                MissionError::HandoffSnapshotFailed(format!(
                    "the workspace cannot be scanned: {error}"
                ))
            })?;
    Ok(build_handoff_artifact(
        mission,
        to,
        generated_at_millis,
        &diff,
        &HandoffArtifactConfig::default(),
    )?)
}

pub async fn preview(
    engine: &Arc<Engine>,
    params: MissionHandoffPreviewParams,
) -> Result<ResponseResult, EngineError> {
    let mission = engine.missions.get_checked(&params.mission_id)?;
    let artifact = build(&mission, params.to, now_millis()).await?;
    Ok(ResponseResult::MissionHandoffPreview { artifact })
}

/// Authority a cockpit consent grants the continuation.
#[derive(Debug, Clone)]
pub struct CockpitGrant {
    pub consent_id: String,
    pub sandbox: nagi_mission::model::SandboxGrant,
}

pub async fn start(
    engine: &Arc<Engine>,
    params: MissionHandoffStartParams,
    authority: HandoffAuthority,
) -> Result<ResponseResult, EngineError> {
    start_with(engine, params, authority, None).await
}

pub async fn start_with(
    engine: &Arc<Engine>,
    params: MissionHandoffStartParams,
    authority: HandoffAuthority,
    grant: Option<CockpitGrant>,
) -> Result<ResponseResult, EngineError> {
    if params.to == nagi_schema::mission::MissionProvider::Acp
        && authority == HandoffAuthority::PublicSocket
    {
        return Err(MissionError::ConsentRequired(
            "a handoff to an ACP agent needs write scope that a person grants in the local cockpit (nagi cockpit)".into(),
        )
        .into());
    }
    // The source run's checks may have sealed a moment ago without yet letting go.
    let mission = super::settle::settled_mission(engine, &params.mission_id).await?;
    match precheck_handoff_start(
        &mission,
        params.to,
        &params.artifact_sha256,
        authority,
        engine.runs.as_ref(),
    )? {
        HandoffStartPrecheck::AlreadyStarted => {
            return Ok(ResponseResult::MissionRunStarted {
                mission: engine.view(&mission),
            });
        }
        HandoffStartPrecheck::Rebuild => {}
    }
    let artifact = build(&mission, params.to, params.generated_at_millis).await?;
    confirm_rebuilt_artifact(&artifact, &params.artifact_sha256)?;
    let source = mission
        .run
        .clone()
        .ok_or_else(|| MissionError::InvalidHandoffState("the mission has no run".into()))?;
    if engine
        .runs
        .get(&mission.mission_id, &source.run_id)
        .is_some()
        || engine
            .runs
            .checks_running(&mission.mission_id, &source.run_id)
    {
        return Err(MissionError::Busy(format!(
            "run {} is still working; wait for it to end",
            source.run_id
        ))
        .into());
    }
    let resolved = crate::launch::version::resolve_supported_provider(
        &engine.config.current(),
        &engine.provider_versions,
        params.to,
    )
    .await
    .map_err(MissionError::ProviderUnavailable)?;
    let checkout = engine
        .checkouts
        .canonical_checkout(&source.worktree_path)
        .await
        .map_err(MissionError::InvalidRepository)?;
    // Step 9: the source run's project services stop before the run continues.
    if source.execute_project_recipe {
        super::recipe::stop_run_services(engine, &mission.mission_id, &source.run_id).await?;
    }
    let claim = ClaimLock::acquire(engine, &checkout)?;
    // Step 10; a failure drops the lock.
    let mission = continue_run(engine, &mission.mission_id, &artifact, claim.key(), grant).await?;
    let claim_key = claim.recorded();
    let run = mission
        .run
        .clone()
        .ok_or_else(|| MissionError::Runtime("the continued run vanished".into()))?;
    // Step 11 (cockpit path with the recipe): the new run's services, without setup.
    let service_env = if run.execute_project_recipe {
        match super::recipe::adopt_for_run(engine, &mission, &run).await {
            Ok(env) => env,
            Err(error) => {
                let reason = format!("the project services of the continued run failed: {error}");
                fail_recipe_run(engine, &mission.mission_id, &run, &claim_key, reason).await?;
                return Err(error);
            }
        }
    } else {
        Vec::new()
    };
    let launched = launch_run(
        engine,
        LaunchRun {
            mission_id: mission.mission_id.clone(),
            run: run.clone(),
            claim_key: claim_key.clone(),
            resolved: Some(resolved),
            resume_session_id: None,
            initial_input: Some(handoff_prompt(&artifact)),
            recovered: false,
            service_env,
            early_provider: None,
        },
    )
    .await;
    if let Err(error) = launched {
        let what = "the handoff target could not start";
        return Err(fail_launch(engine, &mission.mission_id, &run, &claim_key, what, error).await);
    }
    let current = engine.missions.get_existing(&mission.mission_id)?;
    Ok(ResponseResult::MissionRunStarted {
        mission: engine.view(&as_started(mission, &current)),
    })
}

/// Step 10: `RunContinued` and the new run's claim in one transaction.
async fn continue_run(
    engine: &Arc<Engine>,
    mission_id: &str,
    artifact: &MissionHandoffArtifactV1,
    claim_key: &str,
    grant: Option<CockpitGrant>,
) -> Result<Mission, EngineError> {
    let claim = ClaimRow {
        checkout_key: claim_key.to_string(),
        checkout_root: artifact.worktree_path.clone(),
        mission_id: mission_id.to_string(),
        run_id: artifact.suggested_run_id.clone(),
        request_id: artifact.suggested_run_id.clone(),
        nonce: random_nonce(),
        claimed_at_millis: now_millis(),
    };
    let (mission_id, artifact) = (mission_id.to_string(), artifact.clone());
    let committed = engine
        .missions
        .mutate_writing(&mission_id.clone(), move |writer, mission| {
            let mission = mission.ok_or_else(|| MissionError::no_mission(&mission_id))?;
            let grant = grant.map(|grant| WriteGrant {
                sandbox: grant.sandbox,
                consent_id: grant.consent_id,
            });
            let event = decide_run_continued_with(mission, &artifact, grant, now_millis())?;
            // The artifact the continuation starts from is kept, content-addressed, with
            // the continuation itself (`mission.handoff.get`, evidence packs).
            let body = serde_json::to_vec(&artifact).map_err(|error| {
                MissionError::Runtime(format!("cannot keep the artifact: {error}"))
            })?;
            writer.put_blob(
                &artifact.artifact_sha256,
                nagi_store::HANDOFF_ARTIFACT_BLOB,
                Some(&mission_id),
                &body,
                now_millis(),
            )?;
            match writer.claim_checkout(&claim)? {
                nagi_store::ClaimOutcome::Claimed | nagi_store::ClaimOutcome::AlreadyHeld(_) => {}
                nagi_store::ClaimOutcome::HeldByOther(holder) => {
                    return Err(MissionError::CheckoutClaimed(format!(
                        "the checkout {} is claimed by mission {} run {}",
                        holder.checkout_root, holder.mission_id, holder.run_id
                    ))
                    .into());
                }
            }
            Ok((vec![event], ()))
        })
        .await?;
    committed
        .mission
        .ok_or_else(|| MissionError::Runtime("the mission vanished".into()).into())
}
