//! The launch of a run's provider, shared by start, handoff and recovery: its transcript,
//! the read-only guard's "before" picture, the provider's process and supervisor, and the
//! run's pane.

use std::path::PathBuf;
use std::sync::Arc;

use nagi_mission::MissionError;
use nagi_mission::clock::now_millis;
use nagi_mission::model::{Run, SandboxGrant};
use nagi_mission::run;
use nagi_pane::WorkspaceCreate;
use nagi_providers::ProviderCommand;
use nagi_schema::ids::{MissionId, RunId};
use nagi_schema::mission::MissionProvider;

use super::supervisor::{RunContext, StartDigest, commit, spawn_supervisor};
use crate::engine::Engine;
use crate::errors::EngineError;
use crate::launch::version::resolve_supported_provider;
use crate::launch::{LaunchInputs, plan_launch};
use crate::live::registry::LiveRun;
use crate::transcript::Transcript;

/// Longest wait for a session binding before the run's pane opens anyway.
const PANE_AFTER_BIND_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

/// Longest wait for a session binding before the workspace fingerprint starts anyway.
const FINGERPRINT_START_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// A run to launch (fresh, continued after a handoff, or resumed by recovery).
pub struct LaunchRun {
    pub mission_id: MissionId,
    pub run: Run,
    pub claim_key: String,
    /// Resolved by the caller when it must report `provider_unavailable` itself.
    pub resolved: Option<crate::launch::ResolvedProvider>,
    pub resume_session_id: Option<String>,
    pub initial_input: Option<String>,
    pub recovered: bool,
    /// `<port_env>=<port>` of the run's project services, given to the provider.
    pub service_env: super::recipe::ServiceEnv,
    /// The provider, when `mission.start` started it alongside its `RunStarted` commit.
    pub early_provider: Option<Result<SpawnedProvider, EngineError>>,
}

/// A provider's process and adapter, started but not yet supervised.
pub struct SpawnedProvider {
    pub handle: nagi_providers::ProviderHandle,
    /// Which read-only enforcement applies, for the run view.
    pub enforcement: crate::launch::Enforcement,
}

/// What starting a provider needs.
pub struct ProviderSpawn {
    pub mission_id: String,
    pub run_id: RunId,
    pub provider: MissionProvider,
    pub worktree: PathBuf,
    pub sandbox: SandboxGrant,
    pub resolved: crate::launch::ResolvedProvider,
    pub resume_session_id: Option<String>,
    pub service_env: super::recipe::ServiceEnv,
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
}

/// Plans the provider's launch (sandbox, confinement, markers for leftover cleanup) and
/// starts its process and adapter.
pub fn spawn_provider(
    engine: &Engine,
    spawn: ProviderSpawn,
) -> Result<SpawnedProvider, EngineError> {
    let private_tmp = crate::launch::scratch::run_scratch_dir(
        &engine.config.current().paths,
        &spawn.mission_id,
        spawn.run_id.path_segment(),
    );
    let mut plan = plan_launch(LaunchInputs {
        config: &engine.config.current(),
        provider: spawn.provider,
        resolved: spawn.resolved,
        worktree: &spawn.worktree,
        sandbox: spawn.sandbox,
        resume_session_id: spawn.resume_session_id,
        initial_input: None,
        model: spawn.model,
        reasoning_effort: spawn.reasoning_effort,
        private_tmp,
        protected: vec![
            engine.config.current().paths.config_dir.clone(),
            engine.config.current().paths.data_dir.clone(),
        ],
    });
    plan.spec.env.insert(
        crate::leftovers::SESSION_MARKER.into(),
        crate::leftovers::session_marker_value(&engine.config.current().paths.data_dir),
    );
    plan.spec.env.insert(
        crate::leftovers::RUN_MARKER.into(),
        spawn.run_id.to_string(),
    );
    for (name, value) in spawn.service_env {
        plan.spec.env.insert(name, value);
    }
    let handle = nagi_providers::launch(plan.spec)
        .map_err(|error| MissionError::ProviderStartFailed(error.to_string()))?;
    Ok(SpawnedProvider {
        handle,
        enforcement: plan.enforcement,
    })
}

pub fn transcript_path(engine: &Engine, mission_id: &MissionId, run_id: &RunId) -> PathBuf {
    engine
        .config
        .current()
        .paths
        .transcript_dir()
        .join(mission_id.path_segment())
        .join(format!("{}.log", run_id.path_segment()))
}

/// Opens the run's transcript and pane, starts the provider and its supervisor, and records
/// the pane and the enforcement that applies.
pub async fn launch_run(engine: &Arc<Engine>, launch: LaunchRun) -> Result<(), EngineError> {
    let LaunchRun {
        mission_id,
        run,
        claim_key,
        resolved,
        resume_session_id,
        initial_input,
        recovered,
        service_env,
        early_provider,
    } = launch;
    let worktree = PathBuf::from(&run.worktree_path);
    let transcript_file = transcript_path(engine, &mission_id, &run.run_id);
    // The transcript's file is created once the session is bound (see `Transcript`);
    // until then its lines are kept in memory.
    let transcript = Arc::new(Transcript::deferred(&transcript_file));
    transcript.nagi(&format!(
        "mission {mission_id}, run {} — {} in {} ({})",
        run.run_id,
        run.provider.display_name(),
        run.worktree_path,
        if resume_session_id.is_some() {
            "resuming its session"
        } else {
            "fresh session"
        }
    ));
    let baseline = read_only_baseline(
        engine,
        &mission_id,
        &run,
        recovered,
        early_provider.is_some(),
        &transcript,
    )
    .await?;
    let spawned = match early_provider {
        Some(spawned) => spawned,
        None => {
            let resolved = match resolved {
                Some(resolved) => resolved,
                None => resolve_supported_provider(
                    &engine.config.current(),
                    &engine.provider_versions,
                    run.provider,
                )
                .await
                .map_err(MissionError::ProviderUnavailable)?,
            };
            spawn_provider(
                engine,
                ProviderSpawn {
                    mission_id: mission_id.to_string(),
                    run_id: run.run_id.clone(),
                    provider: run.provider,
                    worktree: worktree.clone(),
                    sandbox: run.sandbox,
                    resolved,
                    resume_session_id,
                    service_env,
                    model: run.model.clone(),
                    reasoning_effort: run.reasoning_effort.clone(),
                },
            )
        }
    }?;
    let SpawnedProvider {
        handle,
        enforcement: planned_enforcement,
    } = spawned;
    let commands = handle.commands.clone();
    let steering = Arc::new(crate::live::steering::RunSteering::default());
    engine.runs.insert(
        &run.run_id,
        LiveRun {
            mission_id: mission_id.to_string(),
            commands: handle.commands.clone(),
            recovered,
            claim_key: claim_key.clone(),
            steering: steering.clone(),
            transcript: transcript.clone(),
        },
    );
    let digest_at_start: StartDigest = Default::default();
    let session_settled = Arc::new(tokio::sync::Notify::new());
    let run_turns = run.turns;
    let (provider_pid, run_pane) = (handle.pid, Arc::new(std::sync::OnceLock::new()));
    let context = RunContext {
        mission_id: mission_id.to_string(),
        run_id: run.run_id.to_string(),
        worktree,
        base_revision: run.base_revision.clone(),
        sandbox: run.sandbox,
        execute_declared_checks: run.execute_declared_checks,
        recovered,
        claim_key,
        transcript: transcript.clone(),
        digest_at_start: digest_at_start.clone(),
        session_settled: session_settled.clone(),
        steering,
        start_timeout: std::time::Duration::from_secs(
            engine
                .config
                .current()
                .user
                .server
                .provider_start_timeout_seconds,
        ),
        pane_id: run_pane.clone(),
    };
    spawn_supervisor(engine.clone(), context, handle);
    // The read-only guard's fingerprint of the workspace (it runs `git` several times,
    // more in a large checkout) starts once the session is bound, or
    // FINGERPRINT_START_WAIT after the provider started, whichever comes first: a fast
    // provider binds without it competing for the CPU, and a slow one (hundreds of
    // milliseconds) gets it scanned during its start-up. It runs at a lower CPU priority
    // and the first turn is held back until it is recorded: the provider is given nothing
    // to act on before the "before" picture is complete.
    let settled_early = tokio::time::timeout(FINGERPRINT_START_WAIT, session_settled.notified())
        .await
        .is_ok();
    let digest_scan = match &baseline {
        Baseline::DuringStart => Some(fingerprint_in_background(PathBuf::from(&run.worktree_path))),
        Baseline::Unguarded | Baseline::Known(_) => None,
    };
    // The pane only shows the transcript. It opens once the session is bound (or after
    // PANE_AFTER_BIND_WAIT at most), on a blocking thread: opening a PTY forks this
    // process, which would otherwise stall the threads binding the session.
    if !settled_early {
        let _ = tokio::time::timeout(
            PANE_AFTER_BIND_WAIT.saturating_sub(FINGERPRINT_START_WAIT),
            session_settled.notified(),
        )
        .await;
    }
    if let Err(error) = transcript.open_file() {
        let _ = commands.send(ProviderCommand::Shutdown).await;
        return Err(MissionError::ProviderStartFailed(format!(
            "cannot open the transcript {}: {error}",
            transcript_file.display()
        ))
        .into());
    }
    // A follow-up to a run that ended goes on in the pane that shows its transcript, while
    // that pane is open.
    let open_pane = run
        .pane_id
        .as_ref()
        .filter(|pane_id| {
            engine
                .panes
                .pane_info(pane_id)
                .is_ok_and(|info| info.exit_status.is_none())
        })
        .cloned();
    let panes = engine.panes.clone();
    let pane_request = WorkspaceCreate {
        label: Some(format!("{mission_id} {}", run.run_id)),
        cwd: Some(run.worktree_path.clone()),
        command: Some(run_pane_command(
            engine,
            &mission_id,
            &run.run_id,
            &transcript_file,
        )),
        env: [(
            crate::leftovers::SESSION_MARKER.to_string(),
            crate::leftovers::session_marker_value(&engine.config.current().paths.data_dir),
        )]
        .into_iter()
        .collect(),
        focus: false,
        worktree: None,
    };
    let pane = match open_pane {
        Some(pane_id) => Ok(pane_id),
        None => open_run_pane(panes, pane_request).await,
    };
    let pane_id = match pane {
        Ok(pane_id) => pane_id,
        Err(error) => {
            let _ = commands.send(ProviderCommand::Shutdown).await;
            return Err(error.into());
        }
    };
    // The pane shows the provider's console; `pane.process_info` names the provider too.
    let _ = engine.panes.set_agent_process(&pane_id, Some(provider_pid));
    let _ = run_pane.set(pane_id.clone());
    let digest = match (baseline, digest_scan) {
        (Baseline::Known(digest), _) => digest,
        (_, None) => None,
        (_, Some(scan)) => match scan.await {
            Ok(scanned) => fingerprint_digest(scanned, &transcript),
            Err(_) => {
                transcript.nagi("the workspace fingerprint failed, so changes cannot be detected: the fingerprint thread ended without an answer");
                None
            }
        },
    };
    let _ = digest_at_start.set(digest.clone());
    let enforcement = if digest.is_none() {
        planned_enforcement.without_workspace_digest()
    } else {
        planned_enforcement
    }
    .to_string();
    transcript.nagi(&format!(
        "enforcement: {enforcement}; transcript {}",
        transcript_file.display()
    ));
    let run_id = run.run_id.clone();
    commit(engine, &mission_id, move |mission| {
        run::on_pane_attached(
            mission,
            &run_id,
            &pane_id,
            &enforcement,
            digest,
            now_millis(),
        )
    })
    .await?;
    if let Some(text) = initial_input {
        if !recovered {
            // A later turn of the run is a follow-up: its text is what a person sent.
            let follow_up = (run_turns > 1).then_some(text.as_str());
            transcript.turn_started(run_turns, follow_up);
        }
        // The adapters queue a turn until their session is ready. A provider that is already
        // gone has reported it to the supervisor, which ends the run.
        let _ = commands.send(ProviderCommand::SendTurn(text)).await;
    }
    Ok(())
}

/// The read-only guard's "before" picture of the workspace.
enum Baseline {
    /// A write-scope run: nothing to guard.
    Unguarded,
    /// Taken while the provider starts: only for a run the kernel keeps from writing the
    /// worktree (Landlock), whose start-up therefore cannot change it.
    DuringStart,
    /// Taken before the provider started, or kept by the run from before a restart (`None`:
    /// it could not be taken, and the transcript says so).
    Known(Option<String>),
}

fn fingerprint_digest(
    scanned: Result<nagi_exec::workspace::WorkspaceSnapshot, nagi_exec::workspace::WorkspaceError>,
    transcript: &Transcript,
) -> Option<String> {
    match scanned {
        Ok(snapshot) => Some(snapshot.digest),
        Err(error) => {
            transcript.nagi(&format!(
                "the workspace cannot be fingerprinted, so changes cannot be detected: {error}"
            ));
            None
        }
    }
}

/// Fingerprints the workspace on a blocking thread and waits for it.
async fn fingerprint_now(root: &str, transcript: &Transcript) -> Option<String> {
    let root = PathBuf::from(root);
    match tokio::task::spawn_blocking(move || {
        nagi_exec::workspace::scan_workspace(&root, &Default::default())
    })
    .await
    {
        Ok(scanned) => fingerprint_digest(scanned, transcript),
        Err(error) => {
            transcript.nagi(&format!(
                "the workspace fingerprint failed, so changes cannot be detected: {error}"
            ));
            None
        }
    }
}

/// Decides the baseline of a read-only run before its provider is spawned. An unconfined
/// provider could write during its start-up, so its picture is taken first. A resumed run
/// keeps the picture of its first start (a fresh one would absorb whatever changed while
/// the server was down) and is compared with the workspace now: a change raises the
/// security warning before the provider runs again.
async fn read_only_baseline(
    engine: &Arc<Engine>,
    mission_id: &str,
    run: &Run,
    recovered: bool,
    already_spawned: bool,
    transcript: &Transcript,
) -> Result<Baseline, EngineError> {
    if run.sandbox != SandboxGrant::ReadOnly {
        return Ok(Baseline::Unguarded);
    }
    if recovered {
        let now = fingerprint_now(&run.worktree_path, transcript).await;
        return Ok(match (&run.workspace_digest_at_start, now) {
            (Some(before), Some(now)) => {
                if *before != now {
                    super::supervisor::warn_workspace_changed(
                        engine,
                        mission_id,
                        &run.run_id,
                        &now,
                        transcript,
                    )
                    .await?;
                }
                Baseline::Known(Some(before.clone()))
            }
            (None, now) => {
                transcript.nagi("no picture of the workspace was kept from before the restart; changes are detected from now on");
                Baseline::Known(now)
            }
            (Some(before), None) => Baseline::Known(Some(before.clone())),
        });
    }
    let confined =
        crate::launch::landlock_version_for(&engine.config.current(), run.provider, run.sandbox)
            .is_some();
    if confined || already_spawned {
        return Ok(Baseline::DuringStart);
    }
    Ok(Baseline::Known(
        fingerprint_now(&run.worktree_path, transcript).await,
    ))
}

/// The fingerprint's nice value: enough to let a provider's start-up go first on a small
/// machine, not so much that a busy machine starves it (the first turn waits for it).
const FINGERPRINT_NICE: libc::c_int = 5;

/// Fingerprints the workspace on a thread of its own at a lower CPU priority
/// ([`FINGERPRINT_NICE`]; the `git` it runs inherits it). A dedicated thread, because a
/// raised nice value cannot be lowered again without privileges and pooled threads are
/// reused.
fn fingerprint_in_background(
    root: PathBuf,
) -> tokio::sync::oneshot::Receiver<
    Result<nagi_exec::workspace::WorkspaceSnapshot, nagi_exec::workspace::WorkspaceError>,
> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("nagi-fingerprint".into())
        .spawn(move || {
            // SAFETY: setpriority on the calling thread (Linux: a thread id is a process id
            // for PRIO_PROCESS) has no memory effects; a failure leaves the priority as is.
            unsafe {
                libc::setpriority(
                    libc::PRIO_PROCESS,
                    libc::gettid() as libc::id_t,
                    FINGERPRINT_NICE,
                );
            }
            let _ = sender.send(nagi_exec::workspace::scan_workspace(
                &root,
                &Default::default(),
            ));
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "cannot start the fingerprint thread");
    }
    receiver
}

/// Opens the run's pane on a blocking thread (opening a PTY forks this process); returns
/// its pane id.
async fn open_run_pane(
    panes: Arc<nagi_pane::PaneHost>,
    pane_request: WorkspaceCreate,
) -> Result<String, MissionError> {
    tokio::task::spawn_blocking(move || {
        // The run's workspace names the checkout it works in (its provenance).
        let place = crate::worktrees::checkouts::repository_of(std::path::Path::new(
            pane_request.cwd.as_deref().unwrap_or_default(),
        ));
        panes.create_workspace(WorkspaceCreate {
            worktree: place.ok().map(|place| place.provenance(&place.checkout)),
            ..pane_request
        })
    })
    .await
    .map_err(|error| error.to_string())
    .and_then(|created| created.map_err(|error| error.to_string()))
    .map(|(_workspace, _tab, root_pane)| root_pane.pane_id)
    .map_err(|error| {
        MissionError::ProviderStartFailed(format!("cannot open the run's pane: {error}"))
    })
}

/// What a run's pane runs: the run's console (`nagi run console`: the transcript as it
/// grows, and a line typed is the next turn), or `tail -F` of the transcript when the engine
/// runs inside a program that has no console.
fn run_pane_command(
    engine: &Engine,
    mission_id: &MissionId,
    run_id: &RunId,
    transcript: &std::path::Path,
) -> Vec<String> {
    let transcript = transcript.display().to_string();
    match &engine.config.current().console_program {
        Some(program) => vec![
            program.display().to_string(),
            "run".into(),
            "console".into(),
            mission_id.to_string(),
            "--run".into(),
            run_id.to_string(),
            "--transcript".into(),
            transcript,
        ],
        None => vec![
            "tail".into(),
            "-n".into(),
            "+1".into(),
            "-F".into(),
            transcript,
        ],
    }
}
