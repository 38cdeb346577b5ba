//! `mission.start` (contract §2.5 with nagi's extensions) and the launch of a run's
//! provider, shared by start, handoff and recovery.

use crate::runs::HeldClaim;
use nagi_schema::ids::{MissionId, RunId};
use std::path::PathBuf;
use std::sync::Arc;

use nagi_providers::ProviderCommand;
use nagi_schema::mission::{MissionProvider, MissionStartParams, MissionStatus};
use nagi_schema::results::ResponseResult;
use nagi_store::ClaimRow;

use super::release_claim;
use super::supervisor::{RunContext, StartDigest, commit, spawn_supervisor};
use crate::engine::Engine;
use crate::errors::EngineError;
use crate::launch::version::resolve_supported_provider;
use crate::launch::{LaunchInputs, landlock_version_for, plan_launch};
use crate::live::claims::ClaimLockError;
use crate::live::registry::LiveRun;
use crate::missions::repository::{Checkout, head_commit, path_text};
use crate::transcript::Transcript;
use nagi_mission::MissionError;
use nagi_mission::clock::now_millis;
use nagi_mission::model::{Mission, Run, SandboxGrant};
use nagi_mission::run::{
    self, StartRequest, check_can_start, decide_run_started, parse_start_run_id,
};
use nagi_pane::WorkspaceCreate;

/// Who asks for the start: the public socket grants only read-only runs.
#[derive(Debug, Clone)]
pub enum StartAuthority {
    PublicSocket,
    /// A consent recorded by the cockpit (issue: consent cockpit).
    Cockpit {
        consent_id: String,
        sandbox: SandboxGrant,
        /// The recipe scope digest the person approved, when the run executes the recipe.
        recipe_scope: Option<String>,
    },
}

pub use nagi_proof::handoff::mission_prompt;

fn checkout_of(engine: &Engine, raw: &str) -> Result<Checkout, EngineError> {
    engine
        .checkouts
        .canonical_checkout(raw)
        .map_err(|error| MissionError::InvalidRepository(error).into())
}

pub async fn start(
    engine: &Arc<Engine>,
    params: MissionStartParams,
    authority: StartAuthority,
) -> Result<ResponseResult, EngineError> {
    let mission = engine.missions.get_existing(&params.mission_id)?;
    let requested_worktree = params
        .worktree_path
        .clone()
        .unwrap_or_else(|| mission.repository_path.clone());
    // Step 7: a retry while the run is live is idempotent; anything else with that id conflicts.
    if let Some(live) = engine.runs.get(&params.run_id) {
        let stored = mission
            .run
            .as_ref()
            .filter(|run| run.run_id == params.run_id);
        let worktree = engine
            .checkouts
            .canonical_checkout(&requested_worktree)
            .ok()
            .and_then(|checkout| path_text(&checkout.root).ok());
        let same = live.mission_id == mission.mission_id
            && stored.is_some_and(|run| {
                run.provider == params.provider
                    && run.execute_declared_checks == params.execute_declared_checks
                    && run.execute_project_recipe == params.execute_project_recipe
                    && worktree.as_deref() == Some(run.worktree_path.as_str())
            });
        return if same {
            Ok(ResponseResult::MissionRunStarted {
                mission: engine.view(&mission),
            })
        } else {
            Err(MissionError::RunConflict(format!(
                "run {} is live for mission {} with other parameters",
                params.run_id, live.mission_id
            ))
            .into())
        };
    }
    let run_id = parse_start_run_id(&params.run_id)?;
    check_can_start(&mission, &params.run_id)?;
    let repository = checkout_of(engine, &mission.repository_path)?;
    let worktree = checkout_of(engine, &requested_worktree)?;
    if worktree.common_dir != repository.common_dir {
        return Err(MissionError::InvalidRepository(format!(
            "{} is not a checkout of the mission's repository {}",
            worktree.root.display(),
            repository.root.display()
        ))
        .into());
    }
    let worktree_text = path_text(&worktree.root).map_err(MissionError::InvalidRepository)?;
    let resolved =
        resolve_supported_provider(&engine.config, &engine.provider_versions, params.provider)
            .await
            .map_err(MissionError::ProviderUnavailable)?;
    let claim_key = worktree.claim_key();
    engine
        .claim_locks
        .acquire(&claim_key)
        .map_err(|error| match error {
            ClaimLockError::HeldHere | ClaimLockError::HeldElsewhere(_) => {
                MissionError::CheckoutClaimed(format!(
                    "the checkout {} is claimed by another live run: {error}",
                    worktree.root.display()
                ))
            }
            ClaimLockError::Io { .. } => MissionError::Runtime(error.to_string()),
        })?;
    // Step 13 reads HEAD on a blocking thread while the provider's process starts.
    let root = worktree.root.clone();
    let base_revision = tokio::task::spawn_blocking(move || head_commit(&root));
    // The provider's process starts, on a blocking thread, while `RunStarted` commits, so
    // that its start-up (the larger part of the time to a bound session) overlaps the
    // commit. Its adapter runs the protocol handshake, but it gets no turn and the
    // supervisor that acts on its reports exists only once the commit has returned; a
    // failed commit ends it. A run that executes the project recipe starts its provider
    // only once the services are up.
    // A read-only run the kernel does not confine (Codex, or Landlock off) could write during
    // its start-up, so its provider starts only after the workspace's "before" picture is
    // taken, in `launch_run`.
    let (sandbox, _) = granted_sandbox(&authority);
    let guarded_before_start = sandbox == SandboxGrant::ReadOnly
        && landlock_version_for(&engine.config, params.provider, sandbox).is_none();
    let early_spawn = (!params.execute_project_recipe && !guarded_before_start).then(|| {
        let engine = engine.clone();
        let spawn = ProviderSpawn {
            run_id: run_id.clone(),
            provider: params.provider,
            worktree: worktree.root.clone(),
            sandbox: granted_sandbox(&authority).0,
            resolved: resolved.clone(),
            resume_session_id: None,
            service_env: Vec::new(),
        };
        tokio::task::spawn_blocking(move || spawn_provider(&engine, spawn))
    });
    let prepared = prepare_and_commit(
        engine,
        &params,
        &authority,
        base_revision,
        &worktree_text,
        &claim_key,
    )
    .await;
    let early_provider = match early_spawn {
        Some(spawning) => Some(spawning.await.unwrap_or_else(|error| {
            Err(MissionError::ProviderStartFailed(format!(
                "the provider's spawn thread failed: {error}"
            ))
            .into())
        })),
        None => None,
    };
    let mission = match prepared {
        Ok(mission) => mission,
        Err(error) => {
            if let Some(Ok(early)) = early_provider {
                let _ = early.handle.commands.send(ProviderCommand::Shutdown).await;
            }
            engine.claim_locks.release(&claim_key);
            return Err(error);
        }
    };
    let run = mission
        .run
        .clone()
        .ok_or_else(|| MissionError::Runtime("the run vanished after it started".into()))?;
    let service_env = if run.execute_project_recipe {
        let recipe_scope = match &authority {
            StartAuthority::Cockpit { recipe_scope, .. } => recipe_scope.as_deref(),
            StartAuthority::PublicSocket => None,
        };
        match super::recipe::provision_for_start(engine, &mission, &run, recipe_scope).await {
            Ok(env) => env,
            Err(error) => {
                let reason =
                    format!("the project recipe failed before the provider started: {error}");
                fail_recipe_run(engine, &mission.mission_id, &run.run_id, &claim_key, reason)
                    .await?;
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
            initial_input: Some(mission_prompt(&mission)),
            recovered: false,
            service_env,
            early_provider,
        },
    )
    .await;
    if let Err(error) = launched {
        let reason = error.to_string();
        let run_id = run.run_id.clone();
        let reason_for_commit = reason.clone();
        commit(engine, &mission.mission_id, move |mission| {
            run::status_change(
                mission,
                MissionStatus::Failed,
                format!("the provider could not start: {reason_for_commit}"),
                Some("failed to start".into()),
                now_millis(),
            )
        })
        .await?;
        let _ = release_claim(
            engine,
            HeldClaim {
                mission_id: &mission.mission_id,
                run_id: &run_id,
                checkout_key: &claim_key,
            },
        )
        .await;
        if run.execute_project_recipe {
            super::recipe::stop_if_failed(engine, &mission.mission_id, &run_id).await;
        }
        return Err(MissionError::ProviderStartFailed(format!(
            "the provider could not start: {reason}"
        ))
        .into());
    }
    let current = engine.missions.get_existing(&mission.mission_id)?;
    Ok(ResponseResult::MissionRunStarted {
        mission: engine.view(&as_started(mission, &current)),
    })
}

/// The mission as `mission_run_started` shows it (contract §2.5 step 17, §2.9 step 13):
/// as committed with the run (`preparing`, no session id yet) plus the run's pane and
/// enforcement, which the launch recorded. The provider runs from the moment its
/// supervisor exists, so by now it may already have bound its session; that is reported
/// by the events that follow, not by this answer.
pub(super) fn as_started(mut at_start: Mission, current: &Mission) -> Mission {
    let launched = current.run.as_ref();
    if let Some(run) = at_start.run.as_mut()
        && let Some(launched) = launched.filter(|launched| launched.run_id == run.run_id)
    {
        run.pane_id = launched.pane_id.clone();
        run.enforcement = launched.enforcement.clone();
        run.workspace_digest_at_start = launched.workspace_digest_at_start.clone();
    }
    at_start
}

/// A run whose project recipe failed (its setup or services, at start or on handoff):
/// the mission becomes `failed` with `reason`, the claim is released and whatever
/// services were up are stopped.
pub(super) async fn fail_recipe_run(
    engine: &Arc<Engine>,
    mission_id: &str,
    run_id: &str,
    claim_key: &str,
    reason: String,
) -> Result<(), EngineError> {
    commit(engine, mission_id, move |mission| {
        run::status_change(
            mission,
            MissionStatus::Failed,
            reason,
            Some("project recipe failed".into()),
            now_millis(),
        )
    })
    .await?;
    let _ = release_claim(
        engine,
        HeldClaim {
            mission_id: mission_id,
            run_id: run_id,
            checkout_key: claim_key,
        },
    )
    .await;
    super::recipe::stop_if_failed(engine, mission_id, run_id).await;
    Ok(())
}

/// Steps 13–14: reads HEAD, then records the claim row and `RunStarted` in one transaction.
async fn prepare_and_commit(
    engine: &Arc<Engine>,
    params: &MissionStartParams,
    authority: &StartAuthority,
    base_revision: tokio::task::JoinHandle<Result<String, String>>,
    worktree_text: &str,
    claim_key: &str,
) -> Result<Mission, EngineError> {
    let base_revision = base_revision
        .await
        .map_err(|error| MissionError::Runtime(error.to_string()))?
        .map_err(MissionError::Runtime)?;
    let (sandbox, consent_id) = granted_sandbox(authority);
    let request = StartRequest {
        run_id: params.run_id.clone(),
        provider: params.provider,
        worktree_path: worktree_text.to_string(),
        execute_declared_checks: params.execute_declared_checks,
        execute_project_recipe: params.execute_project_recipe,
        sandbox,
        consent_id,
    };
    let claim = ClaimRow {
        checkout_key: claim_key.to_string(),
        checkout_root: worktree_text.to_string(),
        mission_id: params.mission_id.clone(),
        run_id: params.run_id.clone(),
        request_id: params.run_id.clone(),
        nonce: random_nonce(),
        claimed_at_millis: now_millis(),
    };
    let mission_id = params.mission_id.clone();
    let committed = engine
        .missions
        .mutate_writing(&mission_id.clone(), move |writer, mission| {
            let mission = mission.ok_or_else(|| MissionError::no_mission(&mission_id))?;
            let event = decide_run_started(mission, &request, &base_revision, now_millis())?;
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

/// The sandbox a start grants, and the consent that granted more than read-only.
fn granted_sandbox(authority: &StartAuthority) -> (SandboxGrant, Option<String>) {
    match authority {
        StartAuthority::PublicSocket => (SandboxGrant::ReadOnly, None),
        StartAuthority::Cockpit {
            consent_id,
            sandbox,
            ..
        } => (*sandbox, Some(consent_id.clone())),
    }
}

pub fn random_nonce() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

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
    pub run_id: RunId,
    pub provider: MissionProvider,
    pub worktree: PathBuf,
    pub sandbox: SandboxGrant,
    pub resolved: crate::launch::ResolvedProvider,
    pub resume_session_id: Option<String>,
    pub service_env: super::recipe::ServiceEnv,
}

/// Plans the provider's launch (sandbox, confinement, markers for leftover cleanup) and
/// starts its process and adapter.
pub fn spawn_provider(
    engine: &Engine,
    spawn: ProviderSpawn,
) -> Result<SpawnedProvider, EngineError> {
    let private_tmp = crate::launch::run_scratch_dir(&engine.config.paths, &spawn.run_id);
    let mut plan = plan_launch(LaunchInputs {
        config: &engine.config,
        provider: spawn.provider,
        resolved: spawn.resolved,
        worktree: &spawn.worktree,
        sandbox: spawn.sandbox,
        resume_session_id: spawn.resume_session_id,
        initial_input: None,
        private_tmp,
        protected: vec![
            engine.config.paths.config_dir.clone(),
            engine.config.paths.data_dir.clone(),
        ],
    });
    plan.spec.env.insert(
        crate::leftovers::SESSION_MARKER.into(),
        crate::leftovers::session_marker_value(&engine.config.paths.data_dir),
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
                    &engine.config,
                    &engine.provider_versions,
                    run.provider,
                )
                .await
                .map_err(MissionError::ProviderUnavailable)?,
            };
            spawn_provider(
                engine,
                ProviderSpawn {
                    run_id: run.run_id.clone(),
                    provider: run.provider,
                    worktree: worktree.clone(),
                    sandbox: run.sandbox,
                    resolved,
                    resume_session_id,
                    service_env,
                },
            )
        }
    }?;
    let SpawnedProvider {
        handle,
        enforcement: planned_enforcement,
    } = spawned;
    let commands = handle.commands.clone();
    engine.runs.insert(
        &run.run_id,
        LiveRun {
            mission_id: mission_id.to_string(),
            commands: handle.commands.clone(),
            recovered,
            claim_key: claim_key.clone(),
        },
    );
    let digest_at_start: StartDigest = Default::default();
    let session_settled = Arc::new(tokio::sync::Notify::new());
    let context = RunContext {
        mission_id: mission_id.to_string(),
        run_id: run.run_id.to_string(),
        worktree,
        sandbox: run.sandbox,
        execute_declared_checks: run.execute_declared_checks,
        recovered,
        claim_key,
        transcript: transcript.clone(),
        digest_at_start: digest_at_start.clone(),
        session_settled: session_settled.clone(),
        start_timeout: std::time::Duration::from_secs(
            engine.config.user.server.provider_start_timeout_seconds,
        ),
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
    let panes = engine.panes.clone();
    let pane_request = WorkspaceCreate {
        label: Some(format!("{mission_id} {}", run.run_id)),
        cwd: Some(run.worktree_path.clone()),
        command: Some(vec![
            "tail".into(),
            "-n".into(),
            "+1".into(),
            "-F".into(),
            transcript_file.display().to_string(),
        ]),
        env: [(
            crate::leftovers::SESSION_MARKER.to_string(),
            crate::leftovers::session_marker_value(&engine.config.paths.data_dir),
        )]
        .into_iter()
        .collect(),
        focus: false,
    };
    let pane = tokio::task::spawn_blocking(move || panes.create_workspace(pane_request))
        .await
        .map_err(|error| error.to_string())
        .and_then(|created| created.map_err(|error| error.to_string()))
        .map_err(|error| {
            MissionError::ProviderStartFailed(format!("cannot open the run's pane: {error}"))
        });
    let pane_id = match pane {
        Ok((_workspace, _tab, root_pane)) => root_pane.pane_id,
        Err(error) => {
            let _ = commands.send(ProviderCommand::Shutdown).await;
            return Err(error.into());
        }
    };
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
        crate::launch::landlock_version_for(&engine.config, run.provider, run.sandbox).is_some();
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
