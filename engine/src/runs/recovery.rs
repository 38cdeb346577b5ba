//! Restart recovery (contract §9 and contract preface items 3 and 9), run once when the
//! server starts, before it serves.
//!
//! For every mission the store says has a live run:
//! - leftover processes of the previous server are ended first (`leftovers`);
//! - a run still `preparing` (its session was never confirmed), or without a stored native
//!   session, becomes `blocked` with a reason;
//! - an `active` run with a stored session is resumed with an empty input (no prompt
//!   replayed), under the sandbox it was started with (a cockpit consent survives);
//! - its attention items are settled: open ones expire with a reason (the resumed provider
//!   asks again if it still needs an answer, which reopens them), and ones whose response
//!   was in flight become `reconciliation_required` (never retried automatically);
//! - check runs that were in flight are run again;
//! - claims of runs that are not resumed are released, and resumed runs take their OS lock
//!   again.

use crate::runs::HeldClaim;
use nagi_schema::ids::{MissionId, RunId};
use std::sync::Arc;

use nagi_schema::mission::MissionStatus;

use super::launch_run::{LaunchRun, launch_run};
use super::supervisor::commit;
use crate::engine::Engine;
use crate::errors::EngineError;
use crate::runs::release_claim;
use nagi_mission::MissionEvent;
use nagi_mission::clock::now_millis;
use nagi_mission::model::Mission;
use nagi_mission::model::SandboxGrant;
use nagi_mission::run::status_change;

/// What recovery did (or, with `dry_run`, would do) for one mission.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RecoveryAction {
    pub mission_id: MissionId,
    pub run_id: Option<RunId>,
    pub action: RecoveryKind,
    pub reason: String,
}

/// The one thing recovery does for a mission that had a live run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryKind {
    /// Resume the provider's session and ask it to continue.
    Resume,
    /// Block the mission: there is nothing to resume.
    Block,
    /// Run the checks that were running when the server stopped again.
    RerunChecks,
    /// The run is no longer live: release its claim.
    ReleaseClaim,
}

impl std::fmt::Display for RecoveryKind {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.pad(match self {
            RecoveryKind::Resume => "resume",
            RecoveryKind::Block => "block",
            RecoveryKind::RerunChecks => "rerun_checks",
            RecoveryKind::ReleaseClaim => "release_claim",
        })
    }
}

/// Decides what to do with one mission that had a live run. Pure.
pub fn plan_for(mission: &Mission) -> RecoveryAction {
    let run = mission.run.as_ref();
    let run_id = run.map(|run| run.run_id.clone());
    let action = |action: RecoveryKind, reason: &str| RecoveryAction {
        mission_id: mission.mission_id.clone(),
        run_id: run_id.clone(),
        action,
        reason: reason.into(),
    };
    if let Some(checks) = &mission.checks_in_flight
        && matches!(
            mission.status,
            MissionStatus::ReviewRequired | MissionStatus::ReadyToClose
        )
    {
        return action(
            RecoveryKind::RerunChecks,
            &format!(
                "its {} checks were running when the server stopped",
                checks.purpose
            ),
        );
    }
    match (mission.status, run) {
        (MissionStatus::Preparing, _) => action(
            RecoveryKind::Block,
            "the server restarted before the provider confirmed its session",
        ),
        (MissionStatus::Active, Some(run)) if run.provider_session_id.is_none() => action(
            RecoveryKind::Block,
            "the server restarted and the run has no provider session to resume",
        ),
        (MissionStatus::Active, Some(run)) => action(
            RecoveryKind::Resume,
            match run.sandbox {
                SandboxGrant::ReadOnly => {
                    "the provider session is resumed read-only and asked to continue; its prompt is not sent again"
                }
                SandboxGrant::WorkspaceWrite => {
                    "the provider session is resumed with the write scope it was granted and asked to continue; its prompt is not sent again"
                }
            },
        ),
        _ => action(RecoveryKind::ReleaseClaim, "the run is no longer live"),
    }
}

/// The next command of a mission recovery blocked.
fn start_again(mission_id: &str) -> String {
    format!("start another run with `nagi mission start {mission_id} --provider PROVIDER`")
}

/// Whether the worktree the mission's run works in, its own, was deleted while the server
/// was down.
fn worktree_gone(mission: &Mission) -> bool {
    mission.worktree.as_ref().is_some_and(|worktree| {
        worktree.state == nagi_schema::worktree::MissionWorktreeState::Present
            && mission
                .run
                .as_ref()
                .is_some_and(|run| run.worktree_path == worktree.path)
            && !crate::worktrees::git::worktree_is_present(std::path::Path::new(&worktree.path))
    })
}

/// [`plan_for`], but a run whose mission worktree is gone is blocked: there is nothing to
/// resume it in.
pub fn plan_with_worktree(mission: &Mission, worktree_gone: bool) -> RecoveryAction {
    match (&mission.worktree, worktree_gone) {
        (Some(worktree), true) => RecoveryAction {
            mission_id: mission.mission_id.clone(),
            run_id: mission.run.as_ref().map(|run| run.run_id.clone()),
            action: RecoveryKind::Block,
            reason: crate::worktrees::missing_reason(worktree),
        },
        _ => plan_for(mission),
    }
}

/// What recovery would do, without doing it (`nagi mission recover --dry-run`): reads the
/// session's database without opening a writer.
pub fn recovery_plan(database: &std::path::Path) -> Result<Vec<RecoveryAction>, EngineError> {
    let docs = nagi_store::read_existing(database, |reader| reader.live_run_mission_docs())?;
    docs.iter()
        .map(|doc| {
            Mission::from_document(doc)
                .map(|mission| plan_with_worktree(&mission, worktree_gone(&mission)))
                .map_err(EngineError::from)
        })
        .collect()
}

/// Reconciles every run the store says was live. Called before the socket is bound.
pub async fn recover(engine: &Arc<Engine>) -> Result<Vec<RecoveryAction>, EngineError> {
    let started = std::time::Instant::now();
    let session_dir = engine.config.current().paths.data_dir.clone();
    let paths = engine.config.current().paths.clone();
    // Once the previous server's processes are ended, no run of this session is live: the
    // scratch folders they left go too (a resumed run gets a fresh one).
    tokio::task::spawn_blocking(move || {
        crate::leftovers::end_leftovers(&session_dir);
        crate::launch::scratch::remove_session_scratch(&paths);
    })
    .await
    .map_err(|error| nagi_mission::MissionError::Runtime(error.to_string()))?;
    let leftovers_done = started.elapsed();
    let missions = engine.missions.missions_with_live_runs()?;
    let mut actions = Vec::new();
    let mut launches = Vec::new();
    let mut reruns = Vec::new();
    for mission in missions {
        let gone = worktree_gone(&mission);
        let plan = plan_with_worktree(&mission, gone);
        let mission_id = mission.mission_id.clone();
        let now = now_millis();
        let attention_events = nagi_mission::attention::settle_after_restart(&mission, now);
        match plan.action {
            RecoveryKind::Resume => {
                let run = mission.run.clone().expect("a resumable mission has a run");
                // The turn in flight died with the old server, and with it any follow-up
                // queued behind it; the resumed session is asked to carry on.
                let cut_short =
                    nagi_mission::run::TurnEnd::Failed("cut short by a server restart".into());
                let run_id = run.run_id.to_string();
                commit(engine, &mission_id, move |mission| {
                    let mut events = attention_events;
                    events.extend(nagi_mission::steer::on_turn_ended(
                        mission, &run_id, &cut_short, false, None, now,
                    ));
                    events
                })
                .await?;
                launches.push((mission_id, run));
            }
            RecoveryKind::RerunChecks => {
                let run_id = mission
                    .run
                    .as_ref()
                    .map(|run| run.run_id.to_string())
                    .unwrap_or_default();
                let purpose = mission
                    .checks_in_flight
                    .as_ref()
                    .map(|checks| checks.purpose.clone())
                    .unwrap_or_default();
                let finished = MissionEvent::ChecksFinished {
                    run_id: run_id.to_string(),
                    outcome: Some(
                        "the server restarted while the checks were running; they run again".into(),
                    ),
                    at_millis: now,
                };
                commit(engine, &mission_id, move |_| {
                    let mut events = attention_events;
                    events.push(finished);
                    events
                })
                .await?;
                let _ = run_id;
                reruns.push((mission_id, purpose));
            }
            RecoveryKind::Block => {
                let reason = plan.reason.clone();
                commit(engine, &mission_id, move |mission| {
                    let mut events = attention_events;
                    if gone {
                        events.extend(nagi_mission::worktree::on_worktree_missing(
                            mission,
                            &reason,
                            Some("blocked by recovery".into()),
                            now,
                        ));
                    } else {
                        events.extend(status_change(
                            mission,
                            MissionStatus::Blocked,
                            format!("{reason}; {}", start_again(&mission.mission_id)),
                            Some("blocked by recovery".into()),
                            now,
                        ));
                    }
                    events
                })
                .await?;
            }
            RecoveryKind::ReleaseClaim => {}
        }
        actions.push(plan);
    }
    let settled = started.elapsed();
    release_stale_claims(
        engine,
        &launches
            .iter()
            .map(|(_, run)| run.run_id.clone())
            .collect::<Vec<_>>(),
    )
    .await?;
    // The resumed runs are independent (each holds its own checkout's claim), so they start
    // side by side: each launch spends most of its time waiting on its provider, its
    // workspace fingerprint and its commit, and the writer group-commits what they write.
    let mut resuming = tokio::task::JoinSet::new();
    for (mission_id, run) in launches {
        let engine = engine.clone();
        resuming.spawn(async move { resume(&engine, &mission_id, run).await });
    }
    while let Some(joined) = resuming.join_next().await {
        if let Err(error) = joined {
            tracing::warn!(%error, "resuming a run panicked");
        }
    }
    let resumed = started.elapsed();
    for (mission_id, purpose) in reruns {
        if let Err(error) = super::checks::rerun_after_restart(engine, &mission_id, &purpose).await
        {
            tracing::warn!(%mission_id, %error, "re-running interrupted checks failed");
            let reason = format!(
                "the checks interrupted by the restart could not run again: {error}; run them with `nagi mission verify {mission_id} --execute-checks`"
            );
            let _ = commit(engine, &mission_id, move |mission| {
                status_change(mission, MissionStatus::Blocked, reason, None, now_millis())
            })
            .await;
        }
    }
    tracing::info!(
        runs = actions.len(),
        leftovers_ms = leftovers_done.as_millis() as u64,
        settled_ms = settled.as_millis() as u64,
        resumed_ms = resumed.as_millis() as u64,
        total_ms = started.elapsed().as_millis() as u64,
        "recovery finished"
    );
    Ok(actions)
}

/// Releases every stored claim whose run is not about to be resumed.
async fn release_stale_claims(
    engine: &Arc<Engine>,
    resumed_runs: &[RunId],
) -> Result<(), EngineError> {
    let claims = engine.missions.read(|reader| reader.claims())?;
    for claim in claims {
        // Re-run checks take the claim again themselves.
        if !resumed_runs.iter().any(|run_id| *run_id == claim.run_id) {
            release_claim(
                engine,
                HeldClaim {
                    mission_id: &claim.mission_id,
                    run_id: &claim.run_id,
                    checkout_key: &claim.checkout_key,
                },
            )
            .await?;
        }
    }
    Ok(())
}

async fn resume(engine: &Arc<Engine>, mission_id: &MissionId, run: nagi_mission::model::Run) {
    let checkout = engine
        .checkouts
        .canonical_checkout(&run.worktree_path)
        .await;
    let claim_key = match &checkout {
        Ok(checkout) => checkout.claim_key(),
        Err(_) => String::new(),
    };
    let outcome = async {
        let checkout = checkout.map_err(nagi_mission::MissionError::InvalidRepository)?;
        engine
            .claim_locks
            .acquire(&checkout.claim_key())
            .map_err(|error| nagi_mission::MissionError::CheckoutClaimed(error.to_string()))?;
        // §9: a run of the project recipe gets its services adopted or restarted, never
        // its setup again.
        let service_env = if run.execute_project_recipe {
            let mission = engine
                .missions
                .get(mission_id)?
                .ok_or_else(|| nagi_mission::MissionError::NotFound(mission_id.to_string()))?;
            super::recipe::adopt_for_run(engine, &mission, &run).await?
        } else {
            Vec::new()
        };
        launch_run(
            engine,
            LaunchRun {
                mission_id: mission_id.clone(),
                run: run.clone(),
                claim_key: checkout.claim_key(),
                resolved: None,
                resume_session_id: run.provider_session_id.clone(),
                // The provider process that was working died with the old server, and with
                // it any turn in flight: the resumed session is asked to carry on (once
                // the workspace's "before" picture is taken, like any first turn). The
                // mission prompt is not sent again.
                initial_input: Some(super::supervisor::CONTINUE_AFTER_RESTART.into()),
                recovered: true,
                service_env,
                early_provider: None,
            },
        )
        .await
    }
    .await;
    if let Err(error) = outcome {
        let reason = format!(
            "the run could not be resumed after the restart: {error}; {}",
            start_again(mission_id)
        );
        tracing::warn!(%mission_id, %reason);
        super::steps::block_failed_relaunch(
            engine,
            mission_id,
            &run,
            &claim_key,
            reason,
            "blocked by recovery",
        )
        .await;
    }
}
