//! The steps that `mission.start` and `mission.handoff.start` share, each beside its undo.
//!
//! A start goes: validate (nothing held) → claim the checkout's lock ([`ClaimLock`]; undone
//! by dropping it) → commit the run and its claim row (from then on the claim is undone by
//! `release_claim`) → the project recipe's services ([`fail_recipe_run`]) → the provider,
//! its pane and its first turn ([`fail_launch`]). A step that fails undoes what the steps
//! before it left behind, and nothing else: the lock of a claim the store never recorded,
//! or the recorded run, its claim and its services.

use std::sync::Arc;

use nagi_mission::MissionError;
use nagi_mission::clock::now_millis;
use nagi_mission::model::Run;
use nagi_mission::run;
use nagi_schema::ids::MissionId;
use nagi_schema::mission::MissionStatus;

use super::supervisor::commit;
use super::{HeldClaim, release_claim};
use crate::engine::Engine;
use crate::errors::EngineError;
use crate::live::claims::ClaimLockError;
use crate::missions::repository::Checkout;

/// The OS lock of a checkout's claim, held from the claim step until the commit that
/// records the claim in the store. Dropping it before [`ClaimLock::recorded`] releases the
/// lock: the undo of the claim step when a later step fails first.
pub struct ClaimLock<'a> {
    engine: &'a Engine,
    key: String,
    recorded: bool,
}

impl<'a> ClaimLock<'a> {
    /// Takes the lock of `checkout`; `checkout_claimed` when a live run holds it.
    pub fn acquire(engine: &'a Engine, checkout: &Checkout) -> Result<ClaimLock<'a>, EngineError> {
        let key = checkout.claim_key();
        engine
            .claim_locks
            .acquire(&key)
            .map_err(|error| match error {
                ClaimLockError::HeldHere | ClaimLockError::HeldElsewhere(_) => {
                    MissionError::CheckoutClaimed(format!(
                        "the checkout {} is claimed by another live run: {error}",
                        checkout.root.display()
                    ))
                }
                ClaimLockError::Io { .. } => MissionError::Runtime(error.to_string()),
            })?;
        Ok(ClaimLock {
            engine,
            key,
            recorded: false,
        })
    }

    pub fn key(&self) -> &str {
        &self.key
    }

    /// The store recorded the claim: the lock stays held, and from now on it is released
    /// with the claim row (`release_claim`). Returns the claim's key.
    pub fn recorded(mut self) -> String {
        self.recorded = true;
        std::mem::take(&mut self.key)
    }
}

impl Drop for ClaimLock<'_> {
    fn drop(&mut self) {
        if !self.recorded {
            self.engine.claim_locks.release(&self.key);
        }
    }
}

/// Ends a recorded run that could not go on: the mission gets `status` with `reason`
/// (`outcome` names it in the run's history), the claim is released when one was taken
/// (`claim_key` not empty), and the run's project services stop. Returns the status
/// commit's error, if it failed.
async fn end_unstarted_run(
    engine: &Arc<Engine>,
    mission_id: &MissionId,
    run: &Run,
    claim_key: &str,
    status: MissionStatus,
    reason: String,
    outcome: String,
) -> Result<(), EngineError> {
    let committed = commit(engine, mission_id, move |mission| {
        run::status_change(mission, status, reason, Some(outcome), now_millis())
    })
    .await;
    // The claim and the services go even when the status could not be written: the run
    // is over either way.
    if !claim_key.is_empty() {
        let _ = release_claim(
            engine,
            HeldClaim {
                mission_id,
                run_id: &run.run_id,
                checkout_key: claim_key,
            },
        )
        .await;
    }
    if run.execute_project_recipe
        && let Err(error) = super::recipe::stop_run_services(engine, mission_id, &run.run_id).await
    {
        tracing::warn!(%mission_id, %error, "the ended run's services could not be stopped");
    }
    committed
}

/// Undo of a run whose project recipe failed (its setup or services, at start or on
/// handoff): the mission becomes `failed` with `reason`, the claim is released and
/// whatever services were up are stopped.
pub async fn fail_recipe_run(
    engine: &Arc<Engine>,
    mission_id: &MissionId,
    run: &Run,
    claim_key: &str,
    reason: String,
) -> Result<(), EngineError> {
    let outcome = "project recipe failed".to_string();
    end_unstarted_run(
        engine,
        mission_id,
        run,
        claim_key,
        MissionStatus::Failed,
        reason,
        outcome,
    )
    .await
}

/// Undo of a launch that failed once the run was recorded: the mission becomes `failed`,
/// the claim is released and the run's services stop. Returns the error to answer,
/// `provider_start_failed` with `what` (such as "the provider could not start") and the
/// launch's own error.
pub async fn fail_launch(
    engine: &Arc<Engine>,
    mission_id: &MissionId,
    run: &Run,
    claim_key: &str,
    what: &str,
    launch_error: EngineError,
) -> EngineError {
    let reason = format!("{what}: {launch_error}");
    let outcome = "failed to start".to_string();
    match end_unstarted_run(
        engine,
        mission_id,
        run,
        claim_key,
        MissionStatus::Failed,
        reason.clone(),
        outcome,
    )
    .await
    {
        Ok(()) => MissionError::ProviderStartFailed(reason).into(),
        Err(error) => error,
    }
}

/// Undo of a run that could not be started again on its stored session (recovery after a
/// restart, or a follow-up after the run ended): the mission is `blocked` with `reason`,
/// `outcome` naming it in the run's history.
pub async fn block_failed_relaunch(
    engine: &Arc<Engine>,
    mission_id: &MissionId,
    run: &Run,
    claim_key: &str,
    reason: String,
    outcome: &str,
) {
    let outcome = outcome.to_string();
    let ended = end_unstarted_run(
        engine,
        mission_id,
        run,
        claim_key,
        MissionStatus::Blocked,
        reason,
        outcome,
    )
    .await;
    if let Err(error) = ended {
        tracing::warn!(%mission_id, %error, "the run that could not start again was not blocked");
    }
}
