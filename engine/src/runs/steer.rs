//! `mission.send`, `mission.interrupt` and `mission.stop` (nagi extensions): talking to a
//! run's agent, interrupting its turn and stopping it. The decisions are the state
//! machine's (`nagi_mission::steer`); this module delivers them to the live provider, or
//! starts the provider again on its stored session for a follow-up to a run that ended.
//!
//! None of them grants authority: a follow-up runs under the run's own sandbox and
//! consent. Each is recorded with its actor, the connection's peer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use nagi_mission::clock::now_millis;
use nagi_mission::model::Mission;
use nagi_mission::steer::{FollowUp, decide_interrupt, decide_send, decide_stop};
use nagi_mission::{MissionError, MissionEvent};
use nagi_providers::{ProviderCommand, TranscriptLine};
use nagi_schema::mission::MissionStatus;
use nagi_schema::results::ResponseResult;
use nagi_schema::steer::{FollowUpDelivery, MissionSendParams, MissionSteerParams, RunActorV1};

use super::launch_run::{LaunchRun, launch_run};
use super::steps::ClaimLock;
use crate::engine::Engine;
use crate::errors::EngineError;
use crate::live::registry::LiveRun;

/// How long an interrupt or a stop waits for the turn or the run to end before it answers
/// with the mission as it is.
const END_WAIT: Duration = Duration::from_secs(10);

/// The mission's current run, when its provider is live in this server.
fn live_run(engine: &Engine, mission: &Mission) -> Option<(String, LiveRun)> {
    let run = mission.run.as_ref()?;
    engine
        .runs
        .get(&mission.mission_id, &run.run_id)
        .map(|live| (run.run_id.to_string(), live))
}

/// Waits until `done` holds for the stored mission, or `END_WAIT` passed.
async fn wait_for(engine: &Engine, mission_id: &str, done: impl Fn(&Engine, &Mission) -> bool) {
    let deadline = Instant::now() + END_WAIT;
    let mut head = engine.missions.head();
    loop {
        if let Ok(mission) = engine.missions.get_existing(mission_id)
            && done(engine, &mission)
        {
            return;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        // A commit moves the head; a run leaving the registry commits its end first. The
        // short bound covers the registry change that follows its last commit.
        let _ = tokio::time::timeout(left.min(Duration::from_millis(50)), head.changed()).await;
    }
}

fn run_is_live(engine: &Engine, mission: &Mission) -> bool {
    live_run(engine, mission).is_some()
}

/// Whether the mission is between a turn's end and its settled status: its checks run, or
/// it is still active while its provider is no longer live.
fn is_settling(engine: &Engine, mission: &Mission) -> bool {
    mission.checks_in_flight.is_some()
        || matches!(
            mission.status,
            MissionStatus::Preparing | MissionStatus::Active
        ) && mission.run.is_some()
            && !run_is_live(engine, mission)
}

fn follow_up(params: &MissionSendParams) -> FollowUp {
    FollowUp {
        text: params.text.clone(),
        model: params.model.clone(),
        reasoning_effort: params.reasoning_effort.clone(),
    }
}

/// `mission.send`: queued behind the running turn, or the provider started again on its
/// session with the text as its turn.
pub async fn send(
    engine: &Arc<Engine>,
    params: MissionSendParams,
    actor: RunActorV1,
) -> Result<ResponseResult, EngineError> {
    let mut mission = engine.missions.get_checked(&params.mission_id)?;
    let claim_key = match mission.run.as_ref() {
        Some(run) => engine
            .checkouts
            .canonical_checkout(&run.worktree_path)
            .await
            .ok()
            .map(|checkout| checkout.claim_key()),
        None => None,
    };
    let settling = |engine: &Engine, mission: &Mission| {
        is_settling(engine, mission)
            || !run_is_live(engine, mission)
                && claim_key
                    .as_ref()
                    .is_some_and(|key| engine.claim_locks.is_held(key))
    };
    if settling(engine, &mission) {
        // A line typed as a turn ends lands while the run finishes (its checks, its
        // proof, the release of its checkout): it goes on once the mission has settled
        // rather than being refused.
        wait_for(engine, &params.mission_id, |engine, mission| {
            !settling(engine, mission)
        })
        .await;
        mission = engine.missions.get_checked(&params.mission_id)?;
    }
    // Every refusal comes before anything is written or started.
    let live = live_run(engine, &mission);
    decide_send(
        &mission,
        &follow_up(&params),
        &actor,
        live.is_some(),
        now_millis(),
    )?;
    if let Some((run_id, live)) = live {
        if let Some(answer) = queue_follow_up(engine, &params, &actor, &run_id, &live).await? {
            return Ok(answer);
        }
        // The provider is stopping after its last turn: the follow-up starts it again.
        wait_for(engine, &params.mission_id, |engine, mission| {
            !run_is_live(engine, mission)
        })
        .await;
    }
    resume_with_follow_up(engine, &params, &actor).await
}

/// Queues the follow-up behind the running turn; `None` when the run takes no more.
async fn queue_follow_up(
    engine: &Arc<Engine>,
    params: &MissionSendParams,
    actor: &RunActorV1,
    run_id: &str,
    live: &LiveRun,
) -> Result<Option<ResponseResult>, EngineError> {
    // Under the steering lock the supervisor cannot decide the run's end meanwhile: the
    // follow-up is either queued here and sent by it, or refused here and resumed below.
    let mut steering = live.steering.lock().await;
    if !steering.accepts_follow_ups() {
        return Ok(None);
    }
    let (said, actor_for_commit, run) = (follow_up(params), actor.clone(), run_id.to_string());
    let committed = engine
        .missions
        .mutate(&params.mission_id, move |current| {
            let current =
                current.ok_or_else(|| MissionError::Runtime("the mission vanished".into()))?;
            if current
                .run
                .as_ref()
                .is_none_or(|current| current.run_id != run)
            {
                return Err(
                    MissionError::Busy("the mission's run changed; send again".into()).into(),
                );
            }
            let (events, _) = decide_send(current, &said, &actor_for_commit, true, now_millis())?;
            Ok((events, ()))
        })
        .await?;
    steering.queue(params.text.clone());
    drop(steering);
    live.transcript.line(&TranscriptLine::Info(format!(
        "follow-up queued from {} (sent when this turn completes): {}",
        actor.describe(),
        params.text
    )));
    let mission = committed
        .mission
        .ok_or_else(|| MissionError::no_mission(&params.mission_id))?;
    Ok(Some(ResponseResult::MissionSendAccepted {
        mission: engine.view(&mission),
        delivery: FollowUpDelivery::Queued,
    }))
}

/// Starts the run's provider again on its stored session, with the follow-up as its turn:
/// the claim is taken again and recorded with the follow-up, then the launch that start
/// and recovery use. A launch that fails blocks the mission with the reason.
async fn resume_with_follow_up(
    engine: &Arc<Engine>,
    params: &MissionSendParams,
    actor: &RunActorV1,
) -> Result<ResponseResult, EngineError> {
    let mission = engine.missions.get_checked(&params.mission_id)?;
    decide_send(
        &mission,
        &follow_up(params),
        actor,
        run_is_live(engine, &mission),
        now_millis(),
    )?;
    let run = mission
        .run
        .clone()
        .ok_or_else(|| MissionError::Runtime("the run vanished".into()))?;
    super::start::model_fits_provider(
        run.provider,
        params.model.as_deref(),
        params.reasoning_effort.as_deref(),
    )?;
    if let Some(worktree) = &mission.worktree
        && worktree.path == run.worktree_path
        && !crate::worktrees::git::worktree_is_present(std::path::Path::new(&worktree.path))
    {
        return Err(
            MissionError::WorktreeMissing(crate::worktrees::missing_reason(worktree)).into(),
        );
    }
    let checkout = engine
        .checkouts
        .canonical_checkout(&run.worktree_path)
        .await
        .map_err(MissionError::InvalidRepository)?;
    let resolved = crate::launch::version::resolve_supported_provider(
        &engine.config.current(),
        &engine.provider_versions,
        run.provider,
    )
    .await
    .map_err(MissionError::ProviderUnavailable)?;
    let claim = ClaimLock::acquire(engine, &checkout)?;
    let claim_row = nagi_store::ClaimRow {
        checkout_key: claim.key().to_string(),
        checkout_root: run.worktree_path.clone(),
        mission_id: params.mission_id.clone(),
        run_id: run.run_id.to_string(),
        request_id: run.run_id.to_string(),
        nonce: super::start::random_nonce(),
        claimed_at_millis: now_millis(),
    };
    let (said, actor_for_commit) = (follow_up(params), actor.clone());
    let committed = engine
        .missions
        .mutate_writing(&params.mission_id, move |writer, current| {
            let current =
                current.ok_or_else(|| MissionError::Runtime("the mission vanished".into()))?;
            let (events, _) = decide_send(current, &said, &actor_for_commit, false, now_millis())?;
            if let nagi_store::ClaimOutcome::HeldByOther(holder) =
                writer.claim_checkout(&claim_row)?
            {
                return Err(MissionError::CheckoutClaimed(format!(
                    "the checkout {} is claimed by mission {} run {}",
                    holder.checkout_root, holder.mission_id, holder.run_id
                ))
                .into());
            }
            Ok((events, ()))
        })
        .await?;
    let claim_key = claim.recorded();
    let mission = committed
        .mission
        .ok_or_else(|| MissionError::no_mission(&params.mission_id))?;
    let run = mission
        .run
        .clone()
        .ok_or_else(|| MissionError::Runtime("the run vanished".into()))?;
    let launched = async {
        let service_env = if run.execute_project_recipe {
            super::recipe::adopt_for_run(engine, &mission, &run).await?
        } else {
            Vec::new()
        };
        launch_run(
            engine,
            LaunchRun {
                mission_id: mission.mission_id.clone(),
                run: run.clone(),
                claim_key: claim_key.clone(),
                resolved: Some(resolved),
                resume_session_id: run.provider_session_id.clone(),
                initial_input: Some(params.text.clone()),
                recovered: false,
                service_env,
                early_provider: None,
            },
        )
        .await
    }
    .await;
    if let Err(error) = launched {
        let reason = format!(
            "the follow-up could not be delivered: {error}; send it again with `nagi mission send {} TEXT`",
            mission.mission_id
        );
        super::steps::block_failed_relaunch(
            engine,
            &mission.mission_id,
            &run,
            &claim_key,
            reason.clone(),
            "follow-up failed to start",
        )
        .await;
        return Err(MissionError::ProviderStartFailed(reason).into());
    }
    let current = engine.missions.get_existing(&mission.mission_id)?;
    Ok(ResponseResult::MissionSendAccepted {
        mission: engine.view(&current),
        delivery: FollowUpDelivery::Resumed,
    })
}

/// A steering decision of `nagi_mission::steer` (`decide_interrupt`, `decide_stop`).
type SteerDecision =
    fn(&Mission, &RunActorV1, bool, u64) -> Result<Vec<MissionEvent>, MissionError>;

/// What an interrupt or a stop does to the live run once it is recorded.
enum LiveSteer {
    Interrupt,
    Stop,
}

/// Refuses, records, then delivers an interrupt or a stop to the mission's live run, and
/// waits (bounded) until `ended` holds. The decision is committed before the run is told,
/// so a refused commit leaves the run as it was.
async fn steer_live_run(
    engine: &Arc<Engine>,
    mission_id: &str,
    actor: RunActorV1,
    decide: SteerDecision,
    steer: LiveSteer,
    ended: impl Fn(&Engine, &Mission, &str) -> bool,
) -> Result<Mission, EngineError> {
    let mission = engine.missions.get_checked(mission_id)?;
    let live = live_run(engine, &mission);
    decide(&mission, &actor, live.is_some(), now_millis())?;
    let (run_id, live) = live.expect("a steering decision refuses a run that is not live");
    let actor_for_commit = actor.clone();
    engine
        .missions
        .mutate(mission_id, move |current| {
            let current =
                current.ok_or_else(|| MissionError::Runtime("the mission vanished".into()))?;
            Ok((decide(current, &actor_for_commit, true, now_millis())?, ()))
        })
        .await?;
    let by = actor.describe();
    let (note, command) = match steer {
        LiveSteer::Interrupt => {
            live.steering.lock().await.interrupt_by(by.clone());
            (
                format!("interrupt requested by {by}"),
                ProviderCommand::Interrupt,
            )
        }
        LiveSteer::Stop => {
            live.steering.lock().await.stop_by(by.clone());
            (format!("stopped by {by}"), ProviderCommand::Shutdown)
        }
    };
    live.transcript.nagi(&note);
    let _ = live.commands.send(command).await;
    wait_for(engine, mission_id, |engine, mission| {
        ended(engine, mission, &run_id)
    })
    .await;
    engine.missions.get_existing(mission_id)
}

/// `mission.interrupt`: the provider's own interrupt of the turn in progress. The turn
/// ends `interrupted` and the mission becomes `blocked` with who asked for it.
pub async fn interrupt(
    engine: &Arc<Engine>,
    params: MissionSteerParams,
    actor: RunActorV1,
) -> Result<ResponseResult, EngineError> {
    let current = steer_live_run(
        engine,
        &params.mission_id,
        actor,
        decide_interrupt,
        LiveSteer::Interrupt,
        |engine, mission, run_id| {
            mission.run.as_ref().is_none_or(|run| run.run_id != run_id)
                || !matches!(
                    mission.status,
                    MissionStatus::Preparing | MissionStatus::Active
                )
                || !run_is_live(engine, mission)
        },
    )
    .await?;
    Ok(ResponseResult::MissionInterruptAccepted {
        mission: engine.view(&current),
    })
}

/// `mission.stop`: the provider's process tree is stopped, the run and its claim are
/// released, and the mission is `blocked` with who stopped it.
pub async fn stop(
    engine: &Arc<Engine>,
    params: MissionSteerParams,
    actor: RunActorV1,
) -> Result<ResponseResult, EngineError> {
    let current = steer_live_run(
        engine,
        &params.mission_id,
        actor,
        decide_stop,
        LiveSteer::Stop,
        |engine, mission, _| {
            !run_is_live(engine, mission)
                && !matches!(
                    mission.status,
                    MissionStatus::Preparing | MissionStatus::Active
                )
        },
    )
    .await?;
    Ok(ResponseResult::MissionStopped {
        mission: engine.view(&current),
    })
}
