//! The recipe's run lifecycle: provisioning (setup + services), recovery (adopt or restart,
//! never setup), stopping, and archive cleanup (contract §11, §2.9 steps 9 and 11, §9).

use std::ffi::OsString;
use std::sync::Arc;

use super::panes::{ProjectPane, open_project_pane};
use super::ports::{leases_of_run, release_port_lease};
use super::services::{ProvisionedServices, Say, ensure_service, stop_lease_processes};
use super::setup::{describe_command, failure_message, run_recipe_command, run_setup};
use super::{RecipeExecConfig, RunTarget, recipe_transcript_path};
use crate::engine::Engine;
use crate::errors::RecipeExecError;
use crate::leftovers::{RUN_MARKER, SESSION_MARKER};
use crate::recipe::ProjectRecipe;
use crate::transcript::Transcript;

/// A service that was stopped and whose lease was released.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoppedService {
    pub service_id: String,
    pub port: u16,
    /// Processes that were signalled (0 when it had already ended).
    pub signalled: usize,
}

/// One `[[cleanup]]` command and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanupCommandReport {
    pub command: Vec<String>,
    /// `None` when it succeeded; otherwise why not (exit code and output excerpt).
    pub failure: Option<String>,
}

/// What archive cleanup did. Nothing in it is an error of the archive itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveCleanupReport {
    pub stopped: Vec<StoppedService>,
    /// Set when the services could not all be stopped (cleanup ran anyway).
    pub stop_failure: Option<String>,
    /// In recipe order.
    pub commands: Vec<CleanupCommandReport>,
}

/// The markers of setup and cleanup commands: a restarted server ends them as leftovers.
fn command_markers(engine: &Engine, target: &RunTarget) -> Vec<(OsString, OsString)> {
    vec![
        (
            SESSION_MARKER.into(),
            crate::leftovers::session_marker_value(&engine.config.current().paths.data_dir).into(),
        ),
        (RUN_MARKER.into(), target.run_id.to_string().into()),
    ]
}

fn open_transcript(
    engine: &Engine,
    target: &RunTarget,
) -> Result<Arc<Transcript>, RecipeExecError> {
    let path = recipe_transcript_path(engine, &target.mission_id, &target.run_id);
    Transcript::open(&path)
        .map(Arc::new)
        .map_err(|error| RecipeExecError::Io {
            detail: format!(
                "cannot open the recipe transcript {}: {error}",
                path.display()
            ),
        })
}

fn open_pane(
    engine: &Engine,
    target: &RunTarget,
    transcript: &Transcript,
    config: &RecipeExecConfig,
    say: Say<'_>,
) -> Option<ProjectPane> {
    if !config.open_panes {
        return None;
    }
    match open_project_pane(engine, target, transcript.path()) {
        Ok(pane) => Some(pane),
        Err(error) => {
            say(&format!(
                "the project pane could not be opened ({error}); the transcript is {}",
                transcript.path().display()
            ));
            None
        }
    }
}

/// Brings up every service of the recipe; on the first failure stops the run's services,
/// releases their leases and returns that failure.
async fn bring_up_services(
    engine: &Arc<Engine>,
    target: &RunTarget,
    recipe: &ProjectRecipe,
    config: &RecipeExecConfig,
    project_pane: Option<&ProjectPane>,
    say: Say<'_>,
) -> Result<Vec<super::RunningService>, RecipeExecError> {
    let mut running = Vec::new();
    for (service_id, service) in &recipe.services {
        match ensure_service(
            engine,
            target,
            service_id,
            service,
            config,
            project_pane,
            say,
        )
        .await
        {
            Ok(service) => running.push(service),
            Err(failure) => {
                if let Err(error) =
                    stop_services(engine, &target.mission_id, &target.run_id, config).await
                {
                    say(&format!(
                        "the other services could not all be stopped: {error}"
                    ));
                }
                return Err(failure);
            }
        }
    }
    Ok(running)
}

/// The cockpit's new-mission launch: runs `[setup]` in the worktree (failure aborts with
/// the exit code and an output excerpt), then starts every service and waits until each is
/// healthy. `progress` receives the lines the cockpit shows (they also go to the project
/// pane). On failure nothing of the recipe keeps running: started services are stopped and
/// their leases released.
pub async fn provision_run(
    engine: &Arc<Engine>,
    target: &RunTarget,
    recipe: &ProjectRecipe,
    config: &RecipeExecConfig,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<ProvisionedServices, RecipeExecError> {
    let transcript = open_transcript(engine, target)?;
    let say = |line: &str| {
        transcript.nagi(line);
        progress(line);
    };
    let has_work = recipe.setup.is_some() || !recipe.services.is_empty();
    let project_pane = if has_work {
        open_pane(engine, target, &transcript, config, &say)
    } else {
        None
    };
    say(&format!(
        "project recipe of mission {} run {} in {}",
        target.mission_id,
        target.run_id,
        target.worktree.display()
    ));
    let mut setup_ran = false;
    if let Some(setup) = &recipe.setup {
        say(&format!(
            "setup: `{}` (timeout {} s)",
            describe_command(&setup.command),
            setup.timeout_seconds
        ));
        let (worktree, setup_command, markers, transcript_for_setup) = (
            target.worktree.clone(),
            setup.clone(),
            command_markers(engine, target),
            transcript.clone(),
        );
        let outcome = tokio::task::spawn_blocking(move || {
            run_setup(
                &worktree,
                &setup_command,
                &markers,
                Some(&transcript_for_setup),
            )
        })
        .await
        .map_err(|error| RecipeExecError::Io {
            detail: format!("the setup task failed: {error}"),
        })?;
        match outcome {
            Ok(outcome) => say(&format!(
                "setup finished in {:.1} s",
                outcome.duration_millis as f64 / 1000.0
            )),
            Err(error) => {
                say(&error.to_string());
                return Err(error);
            }
        }
        setup_ran = true;
    }
    let services =
        bring_up_services(engine, target, recipe, config, project_pane.as_ref(), &say).await?;
    if !services.is_empty() {
        say(&format!("{} service(s) healthy", services.len()));
    }
    Ok(ProvisionedServices {
        transcript_path: transcript.path().to_path_buf(),
        project_pane,
        setup_ran,
        services,
    })
}

/// Recovery after a restart, and handoff provisioning: never runs setup. For each service
/// of the recipe, the process its lease recorded is adopted when it is alive (same pid and
/// start time, carrying the lease marker) and healthy; otherwise it is (re)started. Leases
/// of services the recipe no longer has are stopped and released. On failure the run's
/// services are stopped and their leases released.
pub async fn adopt_or_restart_services(
    engine: &Arc<Engine>,
    target: &RunTarget,
    recipe: &ProjectRecipe,
    config: &RecipeExecConfig,
    progress: &(dyn Fn(&str) + Send + Sync),
) -> Result<ProvisionedServices, RecipeExecError> {
    let transcript = open_transcript(engine, target)?;
    let say = |line: &str| {
        transcript.nagi(line);
        progress(line);
    };
    for lease in leases_of_run(engine, &target.mission_id, &target.run_id)? {
        if !recipe.services.contains_key(&lease.service_id) {
            say(&format!(
                "service {}: no longer in the recipe; stopping it",
                lease.service_id
            ));
            stop_lease_processes(&lease, config.stop_grace).await?;
            release_port_lease(engine, &lease.lease_id).await?;
        }
    }
    let project_pane = if recipe.services.is_empty() {
        None
    } else {
        open_pane(engine, target, &transcript, config, &say)
    };
    say(&format!(
        "project services of mission {} run {}: adopting or restarting (setup is not run again)",
        target.mission_id, target.run_id
    ));
    let services =
        bring_up_services(engine, target, recipe, config, project_pane.as_ref(), &say).await?;
    Ok(ProvisionedServices {
        transcript_path: transcript.path().to_path_buf(),
        project_pane,
        setup_ran: false,
        services,
    })
}

/// Stops every service of a run (its process group and every process with its lease
/// marker; SIGTERM, then SIGKILL after `config.stop_grace`) and releases its leases. Every
/// lease is attempted; the first failure is returned, and a lease whose processes survived
/// is kept so that a later stop can try again.
pub async fn stop_services(
    engine: &Arc<Engine>,
    mission_id: &str,
    run_id: &str,
    config: &RecipeExecConfig,
) -> Result<Vec<StoppedService>, RecipeExecError> {
    let mut stopped = Vec::new();
    let mut first_failure = None;
    for lease in leases_of_run(engine, mission_id, run_id)? {
        match stop_lease_processes(&lease, config.stop_grace).await {
            Ok(signalled) => {
                release_port_lease(engine, &lease.lease_id).await?;
                stopped.push(StoppedService {
                    service_id: lease.service_id.clone(),
                    port: lease.port,
                    signalled,
                });
            }
            Err(error) => {
                tracing::warn!(%mission_id, %run_id, service = %lease.service_id, %error, "a service could not be stopped");
                first_failure.get_or_insert(error);
            }
        }
    }
    match first_failure {
        Some(failure) => Err(failure),
        None => Ok(stopped),
    }
}

/// On archive: stops the run's services, then runs `[[cleanup]]` in order in the worktree
/// through the trusted runner. Failures (of stopping or of a command) are logged, written to
/// the recipe transcript and reported, never returned: the archive stands.
pub async fn archive_cleanup(
    engine: &Arc<Engine>,
    target: &RunTarget,
    recipe: &ProjectRecipe,
    config: &RecipeExecConfig,
) -> ArchiveCleanupReport {
    let transcript = open_transcript(engine, target).ok();
    let say = |line: &str| {
        if let Some(transcript) = &transcript {
            transcript.nagi(line);
        }
    };
    let (stopped, stop_failure) =
        match stop_services(engine, &target.mission_id, &target.run_id, config).await {
            Ok(stopped) => (stopped, None),
            Err(error) => {
                say(&format!(
                    "archive: the services could not all be stopped: {error}"
                ));
                (Vec::new(), Some(error.to_string()))
            }
        };
    let mut commands = Vec::new();
    for cleanup in &recipe.cleanup {
        say(&format!(
            "cleanup: `{}` (timeout {} s)",
            describe_command(&cleanup.command),
            cleanup.timeout_seconds
        ));
        let (worktree, command, markers, transcript_for_command) = (
            target.worktree.clone(),
            cleanup.clone(),
            command_markers(engine, target),
            transcript.clone(),
        );
        let ran = tokio::task::spawn_blocking(move || {
            run_recipe_command(
                &worktree,
                &command,
                &markers,
                transcript_for_command.as_deref(),
            )
        })
        .await;
        let failure = match ran {
            Ok(Ok(outcome)) => failure_message(&cleanup.command, &outcome),
            Ok(Err(message)) => Some(message),
            Err(error) => Some(format!("the cleanup task failed: {error}")),
        };
        match &failure {
            Some(failure) => {
                tracing::warn!(mission_id = %target.mission_id, run_id = %target.run_id, %failure, "a cleanup command failed");
                say(&format!("cleanup failed (archive continues): {failure}"));
            }
            None => say("cleanup finished"),
        }
        commands.push(CleanupCommandReport {
            command: cleanup.command.clone(),
            failure,
        });
    }
    ArchiveCleanupReport {
        stopped,
        stop_failure,
        commands,
    }
}
