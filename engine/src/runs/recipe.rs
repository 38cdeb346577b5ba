//! The runs' side of project recipe execution (contract §11 "Execution semantics", §7.2,
//! §2.9 steps 9 and 11, §9): when a run that has `execute_project_recipe` provisions its
//! setup and services, and when they are stopped again.
//!
//! - a cockpit-approved start runs setup and brings every service up before the provider
//!   launches ([`provision_for_start`]);
//! - a cockpit handoff stops the source run's services ([`stop_run_services`]) and brings
//!   them up for the new run without setup ([`adopt_for_run`]);
//! - recovery adopts or restarts a resumed run's services, never running setup
//!   ([`adopt_for_run`]);
//! - a run released while its mission is `failed` stops its services
//!   ([`stop_if_failed`]); archive stops them and runs `[[cleanup]]` ([`cleanup_on_archive`]).
//!
//! Progress lines go to the run's transcript (the pane the cockpit watches) as well as to
//! the recipe transcript the project pane follows.

use nagi_schema::ids::{MissionId, RunId};
use std::path::Path;
use std::sync::Arc;

use nagi_schema::mission::MissionStatus;

use crate::engine::Engine;
use crate::errors::EngineError;
use crate::recipe::exec::{
    ProvisionedServices, RecipeExecConfig, RunTarget, adopt_or_restart_services, archive_cleanup,
    provision_run, stop_services,
};
use crate::recipe::{ProjectRecipe, load_project_recipe, scope_digest};
use crate::transcript::Transcript;
use nagi_mission::MissionError;
use nagi_mission::model::{Mission, Run};

/// Environment variables a provider is given for the run's services (`<port_env>=<port>`).
pub type ServiceEnv = Vec<(String, String)>;

fn recipe_config() -> RecipeExecConfig {
    RecipeExecConfig::default()
}

/// Loads the recipe from the run's worktree; a run with the recipe but without a file (it
/// was removed since the consent) is a recipe failure, not an empty recipe.
pub fn load_run_recipe(worktree: &Path) -> Result<ProjectRecipe, EngineError> {
    match load_project_recipe(worktree) {
        Ok(Some(recipe)) => Ok(recipe),
        Ok(None) => Err(MissionError::ProjectRecipeFailed(format!(
            "{} has no .nagi/project.toml any more",
            worktree.display()
        ))
        .into()),
        Err(problems) => Err(MissionError::ProjectRecipeFailed(format!(
            "{}/.nagi/project.toml is not valid: {}",
            worktree.display(),
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ))
        .into()),
    }
}

fn service_env(provisioned: &ProvisionedServices) -> ServiceEnv {
    provisioned
        .services
        .iter()
        .map(|service| (service.port_env.clone(), service.port.to_string()))
        .collect()
}

/// The run's transcript, opened for progress lines (`None` when it cannot be opened: the
/// recipe transcript still has them).
fn run_transcript(
    engine: &Engine,
    mission_id: &MissionId,
    run_id: &RunId,
) -> Option<Arc<Transcript>> {
    Transcript::open(&super::launch_run::transcript_path(
        engine, mission_id, run_id,
    ))
    .ok()
    .map(Arc::new)
}

fn progress_into(transcript: Option<Arc<Transcript>>) -> impl Fn(&str) + Send + Sync {
    move |line: &str| {
        if let Some(transcript) = &transcript {
            transcript.nagi(&format!("recipe: {line}"));
        }
    }
}

/// The cockpit start: setup in the run's worktree, then every service healthy, before the
/// provider launches. `consented_scope` is the recipe scope digest the person approved;
/// a recipe that changed since then is refused (nothing runs). On failure nothing of the
/// recipe keeps running (the started services are stopped and their leases released).
pub async fn provision_for_start(
    engine: &Arc<Engine>,
    mission: &Mission,
    run: &Run,
    consented_scope: Option<&str>,
) -> Result<ServiceEnv, EngineError> {
    let target = RunTarget::of(mission, run);
    let recipe = load_run_recipe(&target.worktree)?;
    let current_scope = scope_digest(&recipe);
    if let Some(consented) = consented_scope
        && consented != current_scope
    {
        return Err(MissionError::ConsentStale(format!(
            "the project recipe changed after it was approved (approved scope {consented}, now {current_scope}); look at the new preview and decide again"
        ))
        .into());
    }
    let progress = progress_into(run_transcript(engine, &mission.mission_id, &run.run_id));
    progress("running the project recipe before the provider starts");
    let provisioned = provision_run(engine, &target, &recipe, &recipe_config(), &progress)
        .await
        .map_err(EngineError::from)?;
    progress(&format!("ready: {}", describe_services(&provisioned)));
    Ok(service_env(&provisioned))
}

/// Recovery and cockpit handoff: brings the run's services up again without setup,
/// adopting a healthy process its lease recorded.
pub async fn adopt_for_run(
    engine: &Arc<Engine>,
    mission: &Mission,
    run: &Run,
) -> Result<ServiceEnv, EngineError> {
    let target = RunTarget::of(mission, run);
    let recipe = load_run_recipe(&target.worktree)?;
    let progress = progress_into(run_transcript(engine, &mission.mission_id, &run.run_id));
    let provisioned =
        adopt_or_restart_services(engine, &target, &recipe, &recipe_config(), &progress)
            .await
            .map_err(EngineError::from)?;
    progress(&format!("ready: {}", describe_services(&provisioned)));
    Ok(service_env(&provisioned))
}

fn describe_services(provisioned: &ProvisionedServices) -> String {
    if provisioned.services.is_empty() {
        return "no services".into();
    }
    provisioned
        .services
        .iter()
        .map(|service| {
            format!(
                "{} on {}={} (pid {}{})",
                service.service_id,
                service.port_env,
                service.port,
                service.pid,
                if service.adopted { ", adopted" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Stops a run's services and releases their leases (handoff, failed runs). A run
/// without leases has nothing to stop.
pub async fn stop_run_services(
    engine: &Arc<Engine>,
    mission_id: &MissionId,
    run_id: &RunId,
) -> Result<(), EngineError> {
    let stopped = stop_services(engine, mission_id, run_id, &recipe_config())
        .await
        .map_err(EngineError::from)?;
    if !stopped.is_empty()
        && let Some(transcript) = run_transcript(engine, mission_id, run_id)
    {
        for service in &stopped {
            transcript.nagi(&format!(
                "recipe: service {} stopped (port {} released)",
                service.service_id, service.port
            ));
        }
    }
    Ok(())
}

/// When a run of the recipe is released and its mission is `failed`, its services stop
/// (contract §11). Failures are logged: the run has already ended.
pub async fn stop_if_failed(engine: &Arc<Engine>, mission_id: &str, run_id: &str) {
    let mission = match engine.missions.get(mission_id) {
        Ok(Some(mission)) => mission,
        _ => return,
    };
    let Some(run) = mission
        .run
        .as_ref()
        .filter(|run| run.run_id == run_id && run.execute_project_recipe)
    else {
        return;
    };
    if mission.status != MissionStatus::Failed {
        return;
    }
    if let Err(error) = stop_run_services(engine, &mission.mission_id, &run.run_id).await {
        tracing::warn!(%mission_id, %run_id, %error, "the failed run's services could not be stopped");
    }
}

/// After a close: when the mission is archived and its run used the recipe, stops the
/// services and runs `[[cleanup]]` in order. Failures are logged and written to the
/// transcripts; the archive stands.
pub async fn cleanup_on_archive(engine: &Arc<Engine>, mission_id: &str) {
    let mission = match engine.missions.get(mission_id) {
        Ok(Some(mission)) => mission,
        _ => return,
    };
    let Some(run) = mission.run.clone().filter(|run| run.execute_project_recipe) else {
        return;
    };
    if mission.status != MissionStatus::Archived {
        return;
    }
    let target = RunTarget::of(&mission, &run);
    let transcript = run_transcript(engine, &mission.mission_id, &run.run_id);
    let say = progress_into(transcript);
    // A recipe that can no longer be read still has services to stop.
    let recipe = match load_run_recipe(&target.worktree) {
        Ok(recipe) => recipe,
        Err(error) => {
            say(&format!(
                "archive: {error}; stopping the services without running cleanup"
            ));
            if let Err(error) = stop_run_services(engine, &mission.mission_id, &run.run_id).await {
                tracing::warn!(%mission_id, %error, "the archived run's services could not be stopped");
            }
            return;
        }
    };
    let report = archive_cleanup(engine, &target, &recipe, &recipe_config()).await;
    for service in &report.stopped {
        say(&format!(
            "archive: service {} stopped (port {} released)",
            service.service_id, service.port
        ));
    }
    if let Some(failure) = &report.stop_failure {
        say(&format!(
            "archive: the services could not all be stopped: {failure}"
        ));
    }
    for command in &report.commands {
        match &command.failure {
            None => say(&format!(
                "archive: cleanup `{}` finished",
                command.command.join(" ")
            )),
            Some(failure) => say(&format!(
                "archive: cleanup failed (the archive stands): {failure}"
            )),
        }
    }
}
