//! `mission.land` (nagi extension): re-verify a ready mission like `mission.close`, and
//! when the fresh proof verifies, land its change before the archive seal: commit the
//! worktree on `mission/<id>`, integrate into the target branch, move the checkout that
//! has it, push. The archive seal and the `MissionLanded` record commit together; the
//! worktree is then removed (its branch stays) and the claim released.
//!
//! Landing writes the person's branch, so only an approved cockpit consent calls
//! [`land`]; on the public socket `mission.land` checks the request and answers
//! `interactive_consent_required` ([`refuse_without_consent`]).

use std::path::PathBuf;
use std::sync::Arc;

use nagi_mission::clock::now_millis;
use nagi_mission::model::Mission;
use nagi_mission::{MissionError, MissionEvent};
use nagi_proof::{AuthorityHead, Verdict, close_outcome};
use nagi_schema::land::{MissionLandParams, MissionLandingV1};
use nagi_schema::mission::MissionStatus;
use nagi_schema::results::ResponseResult;

use super::HeldClaim;
use super::checks::{Purpose, after_archive, claim_for_checks, run_proof_worker};
use super::worktree::{blocking, require_present};
use crate::engine::Engine;
use crate::errors::EngineError;
use crate::transcript::Transcript;
use crate::worktrees::land::{
    LandInspection, LandRequest, Recovered, apply, checkout_to_move, inspect,
    message_with_trailers, prepare, recover,
};

/// The landing a proof worker of purpose `land` carries out once the proof verified: a
/// new one, or one a crash interrupted (`resume`, from the mission's pending landing).
pub struct LandStep {
    request: Option<LandRequest>,
    resume: Option<MissionLandingV1>,
    landed: Option<MissionLandingV1>,
    /// The landing was recorded without a seal (recovered, but the proof no longer
    /// verifies): nothing is left to do.
    recorded_unsealed: bool,
}

/// The step of a landing check run that a restart interrupted: it finishes or rolls back
/// the mission's pending landing, if it has one.
pub fn resume_step(mission: &Mission) -> LandStep {
    LandStep {
        request: None,
        resume: mission.landing_pending.clone(),
        landed: None,
        recorded_unsealed: false,
    }
}

/// The git request for landing `mission` as `params` asks.
pub fn land_request(
    mission: &Mission,
    params: &MissionLandParams,
) -> Result<LandRequest, EngineError> {
    let worktree = nagi_mission::land::check_landable(mission)?;
    let target_branch =
        nagi_mission::land::target_branch(mission, worktree, params.into.as_deref())?;
    if params.pull_request && params.push_remote.is_none() {
        return Err(EngineError::InvalidParams(
            "a pull request needs the remote to push the mission branch to: give --push REMOTE"
                .into(),
        ));
    }
    if let Some(remote) = &params.push_remote
        && (remote.trim().is_empty() || remote.starts_with('-') || remote.contains(['\0', '\n']))
    {
        return Err(EngineError::InvalidParams(format!(
            "{remote:?} is not a remote name"
        )));
    }
    if params
        .message
        .as_ref()
        .is_some_and(|message| message.len() > 8192)
    {
        return Err(EngineError::InvalidParams(
            "the message is over 8192 bytes".into(),
        ));
    }
    Ok(LandRequest {
        repository_root: PathBuf::from(&mission.repository_path),
        worktree_path: PathBuf::from(&worktree.path),
        mission_branch: worktree.branch.clone(),
        mission_id: mission.mission_id.to_string(),
        target_branch,
        strategy: params.strategy,
        message: nagi_mission::land::land_message(mission, params.message.as_deref()),
        push_remote: params.push_remote.clone(),
        pull_request: params.pull_request,
    })
}

/// `mission.land` on the public socket: the request is checked (so a client learns of a
/// mission that cannot land), and then refused, because landing writes the person's branch.
pub fn refuse_without_consent(
    engine: &Arc<Engine>,
    params: MissionLandParams,
) -> Result<ResponseResult, EngineError> {
    let mission = engine.missions.get_existing(&params.mission_id)?;
    let request = land_request(&mission, &params)?;
    Err(MissionError::ConsentRequired(format!(
        "landing mission {} writes the branch `{}`, so a person must approve it: run `nagi mission land {}` in a terminal of your own, or press L in `nagi cockpit`",
        mission.mission_id, request.target_branch, mission.mission_id
    ))
    .into())
}

/// What a landing would do now (for the consent preview), with the mission it lands.
pub async fn inspect_now(
    engine: &Arc<Engine>,
    params: &MissionLandParams,
) -> Result<(Mission, LandRequest, LandInspection), EngineError> {
    let mission = engine.missions.get_existing(&params.mission_id)?;
    let request = land_request(&mission, params)?;
    require_present(engine, &params.mission_id, "nothing can land").await?;
    let for_thread = request.clone();
    let inspection = blocking(move || inspect(&for_thread)).await?;
    Ok((mission, request, inspection))
}

/// Lands the mission after a person approved it. Returns the one-line summary.
pub async fn land(engine: &Arc<Engine>, params: &MissionLandParams) -> Result<String, EngineError> {
    // The approval just rebuilt the preview (the whole inspection); the landing's own
    // `prepare` checks everything again under the claim, so only the checkout is looked up.
    let mission = super::settle::settled_mission(engine, &params.mission_id).await?;
    let request = land_request(&mission, params)?;
    require_present(engine, &params.mission_id, "nothing can land").await?;
    let for_thread = request.clone();
    let checkout = blocking(move || checkout_to_move(&for_thread)).await?;
    let run = mission
        .run
        .clone()
        .ok_or_else(|| MissionError::Runtime("a ready mission without a run".into()))?;
    if engine.runs.get(&mission.mission_id, &run.run_id).is_some()
        || engine.runs.checks_running(&mission.mission_id, &run.run_id)
    {
        return Err(MissionError::Busy(format!(
            "run {} of mission {} is still working; land when it has ended",
            run.run_id, mission.mission_id
        ))
        .into());
    }
    if let Some(checkout) = &checkout {
        refuse_claimed_checkout(engine, checkout).await?;
    }
    let claim_key = claim_for_checks(engine, &mission, &format!("land:{}", run.run_id)).await?;
    let transcript = Transcript::open(&super::launch_run::transcript_path(
        engine,
        &mission.mission_id,
        &run.run_id,
    ))
    .ok()
    .map(Arc::new);
    if let Some(transcript) = &transcript {
        transcript.nagi(&format!(
            "landing into {} ({}): running the declared checks again first",
            request.target_branch,
            request.strategy.as_str()
        ));
    }
    let step = LandStep {
        request: Some(request),
        resume: None,
        landed: None,
        recorded_unsealed: false,
    };
    let worked = run_proof_worker(
        engine,
        &mission.mission_id,
        &run.run_id,
        Purpose::Land,
        &claim_key,
        transcript.clone(),
        Some(step),
    )
    .await;
    let _ = super::release_claim(
        engine,
        HeldClaim {
            mission_id: &mission.mission_id,
            run_id: &run.run_id,
            checkout_key: &claim_key,
        },
    )
    .await;
    after_archive(engine, &mission.mission_id).await;
    worked?;
    let after = engine.missions.get_existing(&mission.mission_id)?;
    match (&after.landing, after.status) {
        (Some(landing), MissionStatus::Archived) => {
            let summary = summary(landing, &after);
            if let Some(transcript) = &transcript {
                transcript.nagi(&summary);
            }
            Ok(summary)
        }
        _ => Err(MissionError::ProofNotReady(format!(
            "nothing was landed: the fresh proof of mission {} did not verify ({}); it is {} now",
            after.mission_id,
            after
                .status_reason
                .as_deref()
                .unwrap_or("no reason was recorded"),
            after.status.as_str()
        ))
        .into()),
    }
}

async fn refuse_claimed_checkout(
    engine: &Arc<Engine>,
    checkout: &std::path::Path,
) -> Result<(), EngineError> {
    let Ok(found) = engine
        .checkouts
        .canonical_checkout(&checkout.display().to_string())
        .await
    else {
        return Ok(());
    };
    let key = found.claim_key();
    if let Some(claim) = engine.missions.read(|reader| reader.claim(&key))? {
        return Err(MissionError::CheckoutClaimed(format!(
            "the checkout {} has the target branch checked out and mission {} run {} works in it; land when that run has ended",
            checkout.display(),
            claim.mission_id,
            claim.run_id
        ))
        .into());
    }
    Ok(())
}

fn summary(landing: &MissionLandingV1, mission: &Mission) -> String {
    let short = &landing.landed_revision[..landing.landed_revision.len().min(12)];
    let mut text = match &landing.pull_request {
        Some(pull_request) => format!(
            "mission {} pushed as {} ({short}) for a pull request into {}: {pull_request}",
            mission.mission_id,
            nagi_mission::worktree::mission_branch(mission.mission_id.as_str()),
            landing.target_branch
        ),
        None => format!(
            "mission {} landed in {} as {short} ({})",
            mission.mission_id,
            landing.target_branch,
            landing.strategy.as_str()
        ),
    };
    if let Some(checkout) = &landing.updated_checkout {
        text.push_str(&format!("; the checkout {checkout} was updated"));
    }
    if let (Some(remote), None) = (&landing.pushed_to, &landing.pull_request) {
        text.push_str(&format!("; pushed to {remote}"));
    }
    text.push_str("; the mission is archived");
    text
}

/// Called by the proof worker of purpose `land` with the fresh verdict: when the archive
/// seal would go through, lands the change (once, even if the seal is retried) and
/// returns the landing to commit with the seal. A verdict that does not verify lands
/// nothing (the seal blocks the mission, as a close does). A landing git refuses ends the
/// check run with the reason and leaves the mission `ready_to_close`.
///
/// The prepared landing is committed (`LandingPrepared`) before the target branch moves;
/// after a crash, the step resumes from it: a target branch that has the landed commit is
/// a finished landing (sealed now), one that does not is rolled back.
pub(super) async fn land_when_verified(
    engine: &Arc<Engine>,
    mission: &Mission,
    verdict: &Verdict,
    head: &AuthorityHead,
    run_id: &str,
    step: Option<&mut LandStep>,
) -> Result<Option<MissionLandingV1>, EngineError> {
    let Some(step) = step else {
        return Err(MissionError::Runtime("a landing check run without its landing".into()).into());
    };
    if let Some(landed) = &step.landed {
        return Ok(Some(landed.clone()));
    }
    if step.recorded_unsealed {
        return Ok(None);
    }
    if let Some(pending) = step.resume.clone() {
        return resume(engine, mission, verdict, head, run_id, step, pending).await;
    }
    let Some(request) = step.request.clone() else {
        let error = MissionError::LandFailed(
            "a server restart interrupted this landing before it moved any branch; nothing was landed: land again".into(),
        );
        end_checks(engine, mission, run_id, &error).await?;
        return Err(error.into());
    };
    let Verdict::Verified { receipt, .. } = verdict else {
        return Ok(None);
    };
    let would_seal = close_outcome(mission, verdict, head, now_millis())?;
    if !matches!(would_seal, MissionEvent::MissionSealed { .. }) {
        return Ok(None);
    }
    // The trailer names what was proven (the subject digest of the archive receipt): the
    // seal digest itself covers the event log, which records this landing, so it cannot be
    // known before the commit is written.
    let message = message_with_trailers(
        &request.message,
        mission.mission_id.as_str(),
        &receipt.subject_digest,
    );
    let for_thread = request.clone();
    let prepared = match blocking(move || prepare(&for_thread, &message)).await {
        Ok(prepared) => prepared,
        Err(error) => {
            end_checks(engine, mission, run_id, &error).await?;
            return Err(error.into());
        }
    };
    let mut landing = MissionLandingV1 {
        strategy: request.strategy,
        target_branch: request.target_branch.clone(),
        previous_target_revision: prepared.previous_target_revision.clone(),
        landed_revision: prepared.landed_revision.clone(),
        mission_revision: prepared.mission_revision.clone(),
        updated_checkout: prepared
            .checkout
            .as_ref()
            .map(|path| path.display().to_string()),
        pushed_to: None,
        pull_request: None,
        problem: None,
        landed_at_millis: now_millis(),
    };
    let pending = landing.clone();
    engine
        .missions
        .mutate(&mission.mission_id, move |_| {
            Ok((
                vec![MissionEvent::LandingPrepared {
                    landing: pending,
                    at_millis: now_millis(),
                }],
                (),
            ))
        })
        .await?;
    let applied = match blocking(move || {
        crate::faults::pause_at("land_prepared");
        let applied = apply(&request, &prepared);
        crate::faults::pause_at("land_applied");
        applied
    })
    .await
    {
        Ok(applied) => applied,
        Err(error) => {
            end_checks(engine, mission, run_id, &error).await?;
            return Err(error.into());
        }
    };
    landing.pushed_to = applied.pushed_to;
    landing.pull_request = applied.pull_request;
    landing.problem = applied.problem;
    step.landed = Some(landing.clone());
    Ok(Some(landing))
}

/// Finishes or rolls back the landing a crash interrupted, and says which in the run's
/// transcript and the mission's history.
async fn resume(
    engine: &Arc<Engine>,
    mission: &Mission,
    verdict: &Verdict,
    head: &AuthorityHead,
    run_id: &str,
    step: &mut LandStep,
    pending: MissionLandingV1,
) -> Result<Option<MissionLandingV1>, EngineError> {
    let repository = PathBuf::from(&mission.repository_path);
    let found = pending.clone();
    let outcome = blocking(move || {
        recover(
            &repository,
            &found.target_branch,
            &found.previous_target_revision,
            &found.landed_revision,
            found.updated_checkout.as_deref().map(std::path::Path::new),
        )
    })
    .await;
    match outcome {
        Ok(Recovered::Finished) => {
            tracing::info!(mission_id = %mission.mission_id, landed = %pending.landed_revision, "recovery finished an interrupted landing");
            let would_seal = close_outcome(mission, verdict, head, now_millis())?;
            if !matches!(would_seal, MissionEvent::MissionSealed { .. }) {
                // The branch has the landing but the proof no longer verifies: the
                // landing is recorded, and the seal blocks the mission with the reason.
                let landed = pending.clone();
                engine
                    .missions
                    .mutate(&mission.mission_id, move |_| {
                        Ok((
                            vec![MissionEvent::MissionLanded {
                                landing: landed,
                                at_millis: now_millis(),
                            }],
                            (),
                        ))
                    })
                    .await?;
                step.recorded_unsealed = true;
                return Ok(None);
            }
            let mut landing = pending;
            landing.problem = Some(
                "a server restart interrupted this landing after the branch moved; recovery finished it".into(),
            );
            step.landed = Some(landing.clone());
            Ok(Some(landing))
        }
        Ok(Recovered::RolledBack) => {
            tracing::info!(mission_id = %mission.mission_id, "recovery rolled back an interrupted landing");
            let error = MissionError::LandFailed(format!(
                "a server restart interrupted this landing before `{}` moved; it was rolled back and nothing was landed: land again",
                pending.target_branch
            ));
            end_checks(engine, mission, run_id, &error).await?;
            Err(error.into())
        }
        Err(error) => {
            end_checks(engine, mission, run_id, &error).await?;
            Err(error.into())
        }
    }
}

/// Ends the check run of a landing that did not happen, with the reason; the mission
/// keeps its status.
async fn end_checks(
    engine: &Arc<Engine>,
    mission: &Mission,
    run_id: &str,
    error: &MissionError,
) -> Result<(), EngineError> {
    let reason = format!("nothing was landed: {error}");
    let finished = MissionEvent::ChecksFinished {
        run_id: run_id.to_string(),
        outcome: Some(reason.clone()),
        at_millis: now_millis(),
    };
    engine
        .missions
        .mutate(&mission.mission_id, move |current| {
            let mut events = Vec::new();
            if current.is_some_and(|current| current.landing_pending.is_some()) {
                events.push(MissionEvent::LandingRolledBack {
                    reason,
                    at_millis: now_millis(),
                });
            }
            events.push(finished);
            Ok((events, ()))
        })
        .await?;
    Ok(())
}
