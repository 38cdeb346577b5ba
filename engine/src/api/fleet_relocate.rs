//! A mission taken over from a fleet host that is gone (fleet mode,
//! `mission.handoff.preview`/`start` with `host`): served on the new host, from what the
//! mission's workflow carries (`nagi_schema::fleet::Relocation`, all of it as the gone
//! host last reported it).
//!
//! The preview builds the artifact (`nagi_proof::handoff::build_relocation_artifact`) and
//! writes nothing. The start builds it again and goes on only if its digest is the one the
//! person inspected; then each step is one that a retry finds done: the repository's remote
//! is cloned into this host's `<data>/relocated/<mission_id>` at the source run's base
//! revision on branch `mission/<mission_id>`, the mission is created there with its
//! objective and criteria, configured with its frozen checks, the artifact is kept, and
//! the run starts in the clone (read-only unless the source run's mode says otherwise,
//! with the same consent to run the declared checks) with the artifact's prompt.

use std::path::PathBuf;
use std::sync::Arc;

use nagi_mission::MissionError;
use nagi_mission::clock::now_millis;
use nagi_proof::handoff::{
    RelocationSource, build_relocation_artifact, confirm_rebuilt_artifact, handoff_prompt,
};
use nagi_schema::fleet::Relocation;
use nagi_schema::handoff::MissionHandoffArtifactV1;
use nagi_schema::mission::{
    MissionConfigureParams, MissionCreateParams, MissionProvider, MissionStartParams,
};
use nagi_schema::results::ResponseResult;

use crate::engine::Engine;
use crate::errors::EngineError;
use crate::missions::repository::path_text;
use crate::runs::start::{StartAuthority, start_with_prompt};

/// Where this host keeps its clone for a mission it takes over.
fn checkout_path(engine: &Engine, mission_id: &str) -> Result<PathBuf, EngineError> {
    let data_dir = engine.config.current().paths.data_dir.clone();
    let data_dir = std::fs::canonicalize(&data_dir).unwrap_or(data_dir);
    Ok(data_dir.join("relocated").join(mission_id))
}

fn artifact(
    engine: &Engine,
    relocation: &Relocation,
    generated_at_millis: u64,
) -> Result<(MissionHandoffArtifactV1, PathBuf), EngineError> {
    let path = checkout_path(engine, &relocation.view.mission_id)?;
    let path_string = path_text(&path).map_err(MissionError::InvalidRepository)?;
    let artifact = build_relocation_artifact(
        RelocationSource {
            view: &relocation.view,
            from_host: &relocation.from_host,
            checkout_path: &path_string,
            remote_url: &relocation.remote_url,
        },
        relocation.to,
        generated_at_millis,
    )?;
    Ok((artifact, path))
}

/// A mission this host holds already is served as its own, not taken over again.
fn refuse_held_here(engine: &Engine, relocation: &Relocation) -> Result<(), EngineError> {
    let mission_id = &relocation.view.mission_id;
    if engine.missions.get(mission_id)?.is_some() {
        return Err(MissionError::InvalidHandoffState(format!(
            "this host already holds mission {mission_id}; hand it off here without a host"
        ))
        .into());
    }
    Ok(())
}

pub async fn preview(
    engine: &Arc<Engine>,
    relocation: Relocation,
) -> Result<ResponseResult, EngineError> {
    refuse_held_here(engine, &relocation)?;
    let (artifact, _) = artifact(engine, &relocation, now_millis())?;
    Ok(ResponseResult::MissionHandoffPreview { artifact })
}

pub async fn start(
    engine: &Arc<Engine>,
    relocation: Relocation,
) -> Result<ResponseResult, EngineError> {
    let (Some(generated_at_millis), Some(digest)) = (
        relocation.generated_at_millis,
        relocation.artifact_sha256.clone(),
    ) else {
        return Err(EngineError::InvalidParams(
            "a take-over needs the preview's generated_at_millis and artifact_sha256".into(),
        ));
    };
    if relocation.to == MissionProvider::Acp {
        return Err(MissionError::ConsentRequired(
            "an ACP agent runs only with write scope that a person grants in the local cockpit; \
             hand the mission to another provider"
                .into(),
        )
        .into());
    }
    let (artifact, path) = artifact(engine, &relocation, generated_at_millis)?;
    let mission_id = relocation.view.mission_id.clone();
    let retried = engine
        .missions
        .get(&mission_id)?
        .and_then(|mission| mission.run)
        .is_some_and(|run| run.run_id.as_str() == artifact.suggested_run_id);
    if !retried {
        confirm_rebuilt_artifact(&artifact, &digest)?;
    }
    let source_run = relocation
        .view
        .run
        .clone()
        .ok_or_else(|| MissionError::InvalidHandoffState("the mission has no run".into()))?;
    crate::launch::version::resolve_supported_provider(
        &engine.config.current(),
        &engine.provider_versions,
        relocation.to,
    )
    .await
    .map_err(MissionError::ProviderUnavailable)?;
    let branch = nagi_mission::worktree::mission_branch(&mission_id);
    let (remote, target, base) = (
        relocation.remote_url.clone(),
        path.clone(),
        source_run.base_revision.clone(),
    );
    tokio::task::spawn_blocking(move || {
        crate::worktrees::remote::clone_at_base(&remote, &target, &base, &branch)
    })
    .await
    .map_err(|error| MissionError::Runtime(format!("the clone thread failed: {error}")))?
    .map_err(MissionError::WorktreeFailed)?;
    let view = &relocation.view;
    super::missions::create_local(
        engine,
        MissionCreateParams {
            mission_id: mission_id.clone(),
            title: view.title.clone(),
            repository_path: path_text(&path).map_err(MissionError::InvalidRepository)?,
            objective: view.objective.clone(),
            acceptance_criteria: view
                .criteria
                .iter()
                .map(|criterion| criterion.description.clone())
                .collect(),
            host: None,
        },
    )
    .await?;
    if !relocation.checks.is_empty() {
        super::missions::configure(
            engine,
            MissionConfigureParams {
                mission_id: mission_id.clone(),
                checks: relocation.checks.clone(),
            },
        )
        .await?;
    }
    keep_artifact(engine, &mission_id, &artifact).await?;
    start_with_prompt(
        engine,
        MissionStartParams {
            mission_id,
            run_id: artifact.suggested_run_id.clone(),
            provider: relocation.to,
            mode: source_run.mode,
            worktree_path: None,
            execute_declared_checks: source_run.execute_declared_checks,
            execute_project_recipe: false,
            worktree: false,
            base: None,
            model: None,
            reasoning_effort: None,
        },
        StartAuthority::PublicSocket,
        Some(handoff_prompt(&artifact)),
    )
    .await
}

/// The artifact is kept, content-addressed (`mission.handoff.get`, `nagi mission handoff
/// show`), before the run that starts from it.
async fn keep_artifact(
    engine: &Arc<Engine>,
    mission_id: &str,
    artifact: &MissionHandoffArtifactV1,
) -> Result<(), EngineError> {
    let body = serde_json::to_vec(artifact)
        .map_err(|error| MissionError::Runtime(format!("cannot keep the artifact: {error}")))?;
    let (id, digest) = (mission_id.to_string(), artifact.artifact_sha256.clone());
    engine
        .missions
        .mutate_writing(mission_id, move |writer, _| {
            writer.put_blob(
                &digest,
                nagi_store::HANDOFF_ARTIFACT_BLOB,
                Some(&id),
                &body,
                now_millis(),
            )?;
            Ok((Vec::new(), ()))
        })
        .await?;
    Ok(())
}
