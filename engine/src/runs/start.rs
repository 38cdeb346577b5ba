//! `mission.start` (contract §2.5 with nagi's extensions), step by step. The launch of
//! the provider itself is `launch_run`, shared with handoff and recovery.

use std::sync::Arc;

use nagi_mission::MissionError;
use nagi_mission::clock::now_millis;
use nagi_mission::model::{Mission, SandboxGrant};
use nagi_mission::run::{StartRequest, check_can_start, decide_run_started, parse_start_run_id};
use nagi_providers::ProviderCommand;
use nagi_schema::ids::RunId;
use nagi_schema::mission::MissionStartParams;
use nagi_schema::results::ResponseResult;
use nagi_store::ClaimRow;

use super::launch_run::{LaunchRun, ProviderSpawn, SpawnedProvider, launch_run, spawn_provider};
use super::steps::{ClaimLock, fail_launch, fail_recipe_run};
use crate::engine::Engine;
use crate::errors::EngineError;
use crate::launch::ResolvedProvider;
use crate::launch::landlock_version_for;
use crate::launch::version::resolve_supported_provider;
use crate::missions::repository::{Checkout, head_commit, path_text};
use crate::worktrees;
use std::path::Path;

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

async fn checkout_of(engine: &Engine, raw: &str) -> Result<Checkout, EngineError> {
    engine
        .checkouts
        .canonical_checkout(raw)
        .await
        .map_err(|error| MissionError::InvalidRepository(error).into())
}

/// What the validation steps (8–11) established: nothing is held yet.
struct ValidatedStart {
    run_id: RunId,
    executes_recipe: bool,
    repository: Checkout,
    worktree: StartWorktree,
    resolved: ResolvedProvider,
}

/// The checkout a start runs in, once validated.
enum StartWorktree {
    /// An existing checkout root (the given one, the repository, or the mission's worktree).
    Checkout(Checkout),
    /// The mission's worktree, made by the next step.
    ToMake {
        planned: worktrees::PlannedWorktree,
        recipe: Option<crate::recipe::ProjectRecipe>,
    },
}

/// A worktree made by this start: removed again (with a branch it made) if the start fails
/// before its commit; kept once [`MadeWorktree::committed`] says the store recorded it.
struct MadeWorktree(Option<worktrees::MadeForStart>);

impl MadeWorktree {
    fn committed(mut self) -> Option<nagi_mission::model::MissionWorktree> {
        self.0.take().map(|made| made.worktree)
    }
}

impl Drop for MadeWorktree {
    fn drop(&mut self) {
        if let Some(made) = self.0.take() {
            worktrees::undo_make(&made);
        }
    }
}

/// `mission.start`, as its steps: each step that holds something hands it to the next, and
/// a failing step undoes what the steps before it left behind (see [`super::steps`]).
pub async fn start(
    engine: &Arc<Engine>,
    params: MissionStartParams,
    authority: StartAuthority,
) -> Result<ResponseResult, EngineError> {
    start_with_prompt(engine, params, authority, None).await
}

/// [`start`], with the first turn's text given (a mission taken over from a fleet host
/// that is gone starts from its handoff artifact's prompt) instead of the mission's own.
pub async fn start_with_prompt(
    engine: &Arc<Engine>,
    params: MissionStartParams,
    authority: StartAuthority,
    first_prompt: Option<String>,
) -> Result<ResponseResult, EngineError> {
    let mission = engine.missions.get_existing(&params.mission_id)?;
    if let Some(answer) = answer_retry(engine, &mission, &params).await? {
        return Ok(answer);
    }
    let validated = validate(engine, &mission, &params).await?;
    let (worktree, made) = make_worktree(engine, &mission, &validated).await?;
    let worktree_text = path_text(&worktree.root).map_err(MissionError::InvalidRepository)?;
    let claim = ClaimLock::acquire(engine, &worktree)?;
    // Step 13 reads HEAD on a blocking thread while the provider's process starts.
    let root = worktree.root.clone();
    let base_revision = tokio::task::spawn_blocking(move || head_commit(&root));
    let early_spawn = spawn_early(engine, &params, &authority, &validated, &worktree);
    let committed = prepare_and_commit(
        engine,
        &params,
        &authority,
        base_revision,
        &worktree_text,
        claim.key(),
        made.0.as_ref().map(|made| made.worktree.clone()),
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
    let mission = match committed {
        Ok(mission) => mission,
        Err(error) => {
            // Undo: the provider that started alongside the commit, then (on drop) the lock
            // and a worktree this start made.
            if let Some(Ok(early)) = early_provider {
                let _ = early.handle.commands.send(ProviderCommand::Shutdown).await;
            }
            return Err(error);
        }
    };
    let claim_key = claim.recorded();
    let _ = made.committed();
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
            resolved: Some(validated.resolved),
            resume_session_id: None,
            initial_input: Some(first_prompt.unwrap_or_else(|| mission_prompt(&mission))),
            recovered: false,
            service_env,
            early_provider,
        },
    )
    .await;
    if let Err(error) = launched {
        let what = "the provider could not start";
        return Err(fail_launch(engine, &mission.mission_id, &run, &claim_key, what, error).await);
    }
    let current = engine.missions.get_existing(&mission.mission_id)?;
    Ok(ResponseResult::MissionRunStarted {
        mission: engine.view(&as_started(mission, &current)),
    })
}

/// The provider-specific model rules, checked before anything starts (the adapters check
/// them again at launch): ACP agents choose their model themselves, and OpenCode names one
/// `provider/model`.
pub fn model_fits_provider(
    provider: nagi_schema::mission::MissionProvider,
    model: Option<&str>,
    effort: Option<&str>,
) -> Result<(), MissionError> {
    use nagi_schema::mission::MissionProvider;
    match provider {
        MissionProvider::Acp if model.is_some() || effort.is_some() => Err(MissionError::InvalidMission(
            "choosing a model or a reasoning effort is not supported for ACP agents yet; configure it in the agent's own settings".into(),
        )),
        MissionProvider::OpenCode if model.is_some_and(|model| !model.contains('/')) => {
            Err(MissionError::InvalidMission(
                "OpenCode names a model as provider/model (for example anthropic/claude-sonnet-4-5)".into(),
            ))
        }
        _ => Ok(()),
    }
}

/// Step 7: a retry while the run is live is idempotent (the current view); anything else
/// with that id conflicts. `None` when the run id is not live.
async fn answer_retry(
    engine: &Engine,
    mission: &Mission,
    params: &MissionStartParams,
) -> Result<Option<ResponseResult>, EngineError> {
    // The mission's own run first: in a store from before run ids were unique across
    // missions, another mission may have a live run of this id too.
    let live = engine
        .runs
        .get(&mission.mission_id, &params.run_id)
        .or_else(|| engine.runs.get_in_any_mission(&params.run_id));
    let Some(live) = live else {
        return Ok(None);
    };
    let requested_worktree = params
        .worktree_path
        .as_deref()
        .unwrap_or(&mission.repository_path);
    let stored = mission
        .run
        .as_ref()
        .filter(|run| run.run_id == params.run_id);
    let worktree = engine
        .checkouts
        .canonical_checkout(requested_worktree)
        .await
        .ok()
        .and_then(|checkout| path_text(&checkout.root).ok());
    let same = live.mission_id == mission.mission_id
        && stored.is_some_and(|run| {
            run.provider == params.provider
                && run.execute_declared_checks == params.execute_declared_checks
                && run.execute_project_recipe == params.execute_project_recipe
                && worktree.as_deref() == Some(run.worktree_path.as_str())
        });
    if same {
        Ok(Some(ResponseResult::MissionRunStarted {
            mission: engine.view(mission),
        }))
    } else {
        Err(MissionError::RunConflict(format!(
            "run {} is live for mission {} with other parameters",
            params.run_id, live.mission_id
        ))
        .into())
    }
}

/// nagi extension of `run_conflict`: a run id names one run in this server. Attention ids
/// are derived from the run id and the provider's request id alone (contract §5.10), so
/// two missions' runs of one id would give their requests one attention id, and a decision
/// on one would find the other. Also asked by the cockpit's preview of a start.
pub(crate) fn check_run_id_is_free(
    engine: &Engine,
    mission_id: &str,
    run_id: &str,
) -> Result<(), EngineError> {
    match engine.missions.read(|reader| reader.run_mission(run_id))? {
        Some(owner) if owner != mission_id => Err(MissionError::RunConflict(format!(
            "run id {run_id} names a run of mission {owner}; a run id names one run in this server (attention ids are derived from it): choose another (`nagi mission start` picks one when --run-id is left out)"
        ))
        .into()),
        _ => Ok(()),
    }
}

/// Steps 8–11: the run id, whether the mission may start, the checkouts and the provider's
/// executable and version. Nothing is held, written or spawned before they all pass.
async fn validate(
    engine: &Arc<Engine>,
    mission: &Mission,
    params: &MissionStartParams,
) -> Result<ValidatedStart, EngineError> {
    let run_id = parse_start_run_id(&params.run_id)?;
    check_can_start(mission, &params.run_id)?;
    nagi_mission::run::check_model_choice(
        params.model.as_deref(),
        params.reasoning_effort.as_deref(),
    )?;
    model_fits_provider(
        params.provider,
        params.model.as_deref(),
        params.reasoning_effort.as_deref(),
    )?;
    if params.worktree && params.worktree_path.is_some() {
        return Err(EngineError::InvalidParams(
            "give worktree_path (a checkout to run in) or worktree (the mission's own worktree), not both".into(),
        ));
    }
    if params.base.is_some() && !params.worktree {
        return Err(EngineError::InvalidParams(
            "base applies only to the mission's own worktree (worktree: true)".into(),
        ));
    }
    check_run_id_is_free(engine, mission.mission_id.as_str(), &params.run_id)?;
    let repository = checkout_of(engine, &mission.repository_path).await?;
    let worktree = if params.worktree {
        let chosen = worktrees::choose_for_start(
            &engine.config.current(),
            &repository,
            mission,
            params.base.as_deref(),
        );
        match chosen {
            Ok(worktrees::WorktreeForStart::Existing(path)) => {
                StartWorktree::Checkout(same_repository(engine, &repository, &path).await?)
            }
            Ok(worktrees::WorktreeForStart::ToMake { planned, recipe }) => {
                StartWorktree::ToMake { planned, recipe }
            }
            Err(MissionError::WorktreeMissing(reason)) => {
                super::worktree::block_missing(engine, &mission.mission_id).await?;
                return Err(MissionError::WorktreeMissing(reason).into());
            }
            Err(error) => return Err(error.into()),
        }
    } else {
        let requested = params
            .worktree_path
            .as_deref()
            .unwrap_or(&mission.repository_path);
        StartWorktree::Checkout(same_repository(engine, &repository, Path::new(requested)).await?)
    };
    let resolved = resolve_supported_provider(
        &engine.config.current(),
        &engine.provider_versions,
        params.provider,
    )
    .await
    .map_err(MissionError::ProviderUnavailable)?;
    Ok(ValidatedStart {
        run_id,
        executes_recipe: params.execute_project_recipe,
        repository,
        worktree,
        resolved,
    })
}

/// The checkout root at `path`, which must belong to the mission's repository.
async fn same_repository(
    engine: &Engine,
    repository: &Checkout,
    path: &Path,
) -> Result<Checkout, EngineError> {
    let text = path.to_str().ok_or_else(|| {
        MissionError::InvalidRepository(format!("{} is not UTF-8", path.display()))
    })?;
    let worktree = checkout_of(engine, text).await?;
    if worktree.common_dir != repository.common_dir {
        return Err(MissionError::InvalidRepository(format!(
            "{} is not a checkout of the mission's repository {}",
            worktree.root.display(),
            repository.root.display()
        ))
        .into());
    }
    Ok(worktree)
}

/// Makes the mission's worktree when this is its first start (on a blocking thread: git
/// and the copies of ignored files), and returns the checkout the run works in.
async fn make_worktree(
    engine: &Engine,
    mission: &Mission,
    validated: &ValidatedStart,
) -> Result<(Checkout, MadeWorktree), EngineError> {
    let (planned, recipe) = match &validated.worktree {
        StartWorktree::Checkout(checkout) => return Ok((checkout.clone(), MadeWorktree(None))),
        StartWorktree::ToMake { planned, recipe } => (planned.clone(), recipe.clone()),
    };
    // Copying the recipe's ignored files is part of the recipe's consented scope: only a
    // start that runs the recipe copies them.
    let recipe = recipe.filter(|_| validated.executes_recipe);
    let repository = validated.repository.clone();
    let mission_id = mission.mission_id.clone();
    let made = tokio::task::spawn_blocking(move || {
        worktrees::make_for_start(
            &repository,
            &mission_id,
            &planned,
            recipe.as_ref(),
            now_millis(),
        )
    })
    .await
    .map_err(|error| MissionError::Runtime(format!("the worktree thread failed: {error}")))??;
    let made = MadeWorktree(Some(made));
    let path = made
        .0
        .as_ref()
        .map(|made| made.worktree.path.clone())
        .unwrap_or_default();
    let checkout = same_repository(engine, &validated.repository, Path::new(&path)).await?;
    Ok((checkout, made))
}

/// The provider's process starts, on a blocking thread, while `RunStarted` commits, so
/// that its start-up (the larger part of the time to a bound session) overlaps the commit.
/// Its adapter runs the protocol handshake, but it gets no turn and the supervisor that
/// acts on its reports exists only once the commit has returned; a failed commit ends it.
/// `None` (the launch starts it later) for a run that executes the project recipe, whose
/// provider starts once the services are up, and for a read-only run the kernel does not
/// confine (Codex, or Landlock off), which could write during its start-up: its provider
/// starts only after the workspace's "before" picture is taken, in `launch_run`.
fn spawn_early(
    engine: &Arc<Engine>,
    params: &MissionStartParams,
    authority: &StartAuthority,
    validated: &ValidatedStart,
    worktree: &Checkout,
) -> Option<tokio::task::JoinHandle<Result<SpawnedProvider, EngineError>>> {
    let (sandbox, _) = granted_sandbox(authority);
    let guarded_before_start = sandbox == SandboxGrant::ReadOnly
        && landlock_version_for(&engine.config.current(), params.provider, sandbox).is_none();
    if params.execute_project_recipe || guarded_before_start {
        return None;
    }
    let engine = engine.clone();
    let spawn = ProviderSpawn {
        mission_id: params.mission_id.to_string(),
        run_id: validated.run_id.clone(),
        provider: params.provider,
        worktree: worktree.root.clone(),
        sandbox,
        resolved: validated.resolved.clone(),
        resume_session_id: None,
        service_env: Vec::new(),
        model: params.model.clone(),
        reasoning_effort: params.reasoning_effort.clone(),
    };
    Some(tokio::task::spawn_blocking(move || {
        spawn_provider(&engine, spawn)
    }))
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

/// Steps 13–14: reads HEAD, then records the claim row and `RunStarted` in one transaction.
async fn prepare_and_commit(
    engine: &Arc<Engine>,
    params: &MissionStartParams,
    authority: &StartAuthority,
    base_revision: tokio::task::JoinHandle<Result<String, String>>,
    worktree_text: &str,
    claim_key: &str,
    new_worktree: Option<nagi_mission::model::MissionWorktree>,
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
        model: params.model.clone(),
        reasoning_effort: params.reasoning_effort.clone(),
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
            let now = now_millis();
            let mut events = Vec::new();
            if let Some(worktree) = new_worktree {
                events.push(nagi_mission::worktree::decide_worktree_created(
                    mission, worktree, now,
                )?);
            }
            events.push(decide_run_started(mission, &request, &base_revision, now)?);
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
            Ok((events, ()))
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
