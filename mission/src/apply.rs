//! The projection: `Mission` as a pure fold of its events. Deciding whether an event is
//! allowed happens before (in the command handlers); applying never fails, so replaying the
//! log always rebuilds the same projection.

use nagi_schema::mission::{MissionEvidenceAssessmentV1, MissionStatus};
use nagi_schema::proof::ProofClosureDecisionV1;

use super::event::MissionEvent;
use super::model::*;
use crate::digest::criterion_id;

/// Folds one event: [`apply`], except that `MissionDeleted` ends the mission (`None`), and
/// a later `MissionCreated` of the same id starts a new one. Replaying a mission id's whole
/// log with `fold` rebuilds its projection, or `None` when it was deleted last.
pub fn fold(mission: Option<Mission>, event: &MissionEvent) -> Option<Mission> {
    match event {
        MissionEvent::MissionDeleted { .. } => None,
        _ => Some(apply(mission, event)),
    }
}

/// Applies one event. `mission` is `None` only for `MissionCreated`.
pub fn apply(mission: Option<Mission>, event: &MissionEvent) -> Mission {
    let at = event.at_millis();
    let mut mission = match (mission, event) {
        (
            None,
            MissionEvent::MissionCreated {
                mission_id,
                title,
                repository_path,
                objective,
                acceptance_criteria,
                ..
            },
        ) => Mission {
            mission_id: mission_id.clone(),
            title: title.clone(),
            repository_path: repository_path.clone(),
            objective: objective.clone(),
            criteria: acceptance_criteria
                .iter()
                .enumerate()
                .map(|(index, text)| Criterion {
                    criterion_id: criterion_id(index as u64, text),
                    description: text.clone(),
                })
                .collect(),
            plan: None,
            status: MissionStatus::Draft,
            status_reason: None,
            run: None,
            run_history: Vec::new(),
            attention: Default::default(),
            evidence: Default::default(),
            evidence_pack_digest: None,
            ready_receipt: None,
            archive_receipt: None,
            checks_in_flight: None,
            worktree: None,
            abandoned_reason: None,
            landing: None,
            landing_pending: None,
            created_at_millis: at,
            updated_at_millis: at,
            revision: 1,
        },
        (Some(mission), MissionEvent::MissionCreated { .. }) => {
            // A second creation is never decided; keep the projection as it is.
            return mission;
        }
        (None, _) => panic!("an event other than mission_created cannot start a mission"),
        (Some(mut mission), event) => {
            apply_to_existing(&mut mission, event);
            mission.revision += 1;
            mission
        }
    };
    // A recorded consent is the person's decision about the mission, not a change of it:
    // `updated_at_millis` (which the handoff artifact's suggested run id is derived from)
    // stays, so a consent does not invalidate the preview it approves.
    if !matches!(event, MissionEvent::ConsentRecorded { .. }) {
        mission.updated_at_millis = mission.updated_at_millis.max(at);
    }
    mission
}

fn apply_to_existing(mission: &mut Mission, event: &MissionEvent) {
    match event {
        MissionEvent::MissionCreated { .. } => {}
        MissionEvent::ClosureConfigured {
            declarations,
            declaration_set_digest,
            ..
        } => {
            mission.plan = Some(ClosurePlan {
                declarations: declarations.clone(),
                declaration_set_digest: declaration_set_digest.clone(),
            });
        }
        MissionEvent::RunStarted { run, .. } => {
            if let Some(previous) = mission.run.take() {
                mission.run_history.push(previous);
            }
            mission.run = Some(Run {
                turns: run.turns.max(1),
                ..run.clone()
            });
            mission.status = MissionStatus::Preparing;
            mission.status_reason = Some("the provider is starting".into());
            mark_evidence_stale(mission);
        }
        MissionEvent::RunContinued { run, .. } => {
            if let Some(previous) = mission.run.take() {
                mission.run_history.push(previous);
            }
            mission.run = Some(Run {
                turns: run.turns.max(1),
                ..run.clone()
            });
            mission.status = MissionStatus::Preparing;
            mission.status_reason = Some("the handoff target provider is starting".into());
            mark_evidence_stale(mission);
        }
        MissionEvent::RunPaneAttached {
            run_id,
            pane_id,
            enforcement,
            workspace_digest_at_start,
            ..
        } => {
            if let Some(run) = mission.run.as_mut().filter(|run| &run.run_id == run_id) {
                run.pane_id = Some(pane_id.clone());
                run.enforcement = Some(enforcement.clone());
                if workspace_digest_at_start.is_some() {
                    run.workspace_digest_at_start = workspace_digest_at_start.clone();
                }
            }
        }
        MissionEvent::ProviderSessionBound {
            run_id,
            provider_session_id,
            ..
        } => {
            if let Some(run) = mission.run.as_mut().filter(|run| &run.run_id == run_id) {
                run.provider_session_id = Some(provider_session_id.clone());
            }
            mission.status = MissionStatus::Active;
            mission.status_reason = Some("the provider is working".into());
        }
        MissionEvent::StatusChanged {
            status,
            reason,
            run_outcome,
            at_millis,
        } => {
            mission.status = *status;
            mission.status_reason = reason.clone();
            if let Some(outcome) = run_outcome
                && let Some(run) = mission.run.as_mut()
            {
                run.outcome = Some(outcome.clone());
                run.ended_at_millis = Some(*at_millis);
            }
        }
        MissionEvent::AttentionOpened { attention, .. } => {
            mission
                .attention
                .insert(attention.attention_id.clone(), attention.clone());
        }
        MissionEvent::ResponseRequested {
            attention_id,
            attempt,
            at_millis,
        } => {
            if let Some(item) = mission.attention.get_mut(attention_id) {
                item.attempts.push(attempt.clone());
                item.lifecycle = AttentionLifecycle::PendingResponse;
                item.updated_at_millis = *at_millis;
            }
        }
        MissionEvent::ResponseSettled {
            attention_id,
            attempt,
            state,
            at_millis,
        } => {
            if let Some(item) = mission.attention.get_mut(attention_id) {
                if let Some(entry) = item
                    .attempts
                    .iter_mut()
                    .find(|entry| entry.attempt == *attempt)
                {
                    entry.state = *state;
                    entry.updated_at_millis = *at_millis;
                }
                item.lifecycle = match state {
                    AttemptState::Requested => AttentionLifecycle::PendingResponse,
                    AttemptState::Acknowledged => AttentionLifecycle::Resolved,
                    AttemptState::DefinitelyNotApplied { .. } => AttentionLifecycle::Open,
                    AttemptState::DeliveryUnknown { .. } => {
                        AttentionLifecycle::ReconciliationRequired
                    }
                };
                item.updated_at_millis = *at_millis;
            }
        }
        MissionEvent::AttentionClosed {
            attention_id,
            expired,
            actor,
            reason,
            at_millis,
        } => {
            if let Some(item) = mission.attention.get_mut(attention_id) {
                item.lifecycle = if *expired {
                    AttentionLifecycle::Expired
                } else {
                    AttentionLifecycle::Dismissed
                };
                item.closed_reason = Some(reason.clone());
                item.closed_by = Some(actor.clone());
                item.updated_at_millis = *at_millis;
            }
        }
        MissionEvent::ChecksStarted {
            run_id,
            purpose,
            at_millis,
            ..
        } => {
            mission.checks_in_flight = Some(ChecksInFlight {
                run_id: run_id.clone(),
                purpose: purpose.clone(),
                started_at_millis: *at_millis,
            });
        }
        MissionEvent::ChecksFinished { outcome, .. } => {
            mission.checks_in_flight = None;
            if let Some(outcome) = outcome
                && mission.status == MissionStatus::ReviewRequired
            {
                mission.status_reason = Some(outcome.clone());
            }
        }
        MissionEvent::EvidenceRecorded { evidence, .. } => {
            mission
                .evidence
                .insert(evidence.check_id.clone(), evidence.clone());
        }
        MissionEvent::EvidencePackRecorded { pack_digest, .. } => {
            mission.evidence_pack_digest = Some(pack_digest.clone());
        }
        MissionEvent::MissionSealed { receipt, .. } => match receipt.decision {
            ProofClosureDecisionV1::ReadyToClose => {
                mission.ready_receipt = Some(receipt.clone());
                mission.status = MissionStatus::ReadyToClose;
                mission.status_reason = Some(if mission.worktree.is_some() {
                    format!(
                        "the proof verified: land the change with `nagi mission land {id}`, or archive it with `nagi mission close {id}` (both verify it again first)",
                        id = mission.mission_id
                    )
                } else {
                    format!(
                        "the proof verified: close it with `nagi mission close {}` (close verifies it again and archives)",
                        mission.mission_id
                    )
                });
            }
            ProofClosureDecisionV1::Archived => {
                mission.archive_receipt = Some(receipt.clone());
                mission.status = MissionStatus::Archived;
                mission.status_reason = None;
            }
        },
        MissionEvent::ConsentRecorded { .. } => {}
        MissionEvent::WorktreeSynced { base_revision, .. } => {
            if let Some(worktree) = mission.worktree.as_mut() {
                worktree.base_revision = base_revision.clone();
            }
        }
        MissionEvent::LandingPrepared { landing, .. } => {
            mission.landing_pending = Some(landing.clone());
        }
        MissionEvent::LandingRolledBack { .. } => {
            mission.landing_pending = None;
        }
        MissionEvent::MissionLanded { landing, .. } => {
            mission.landing_pending = None;
            mission.landing = Some(landing.clone());
            if let Some(receipt) = mission.archive_receipt.as_mut() {
                receipt.landing = Some(Box::new(landing.clone()));
            }
        }
        MissionEvent::MissionAbandoned { reason, at_millis } => {
            mission.status = MissionStatus::Archived;
            mission.status_reason = Some(format!("abandoned: {reason}"));
            mission.abandoned_reason = Some(reason.clone());
            mission.checks_in_flight = None;
            if let Some(run) = mission.run.as_mut()
                && run.ended_at_millis.is_none()
            {
                run.outcome = Some("abandoned".into());
                run.ended_at_millis = Some(*at_millis);
            }
        }
        MissionEvent::WorktreeCreated { worktree, .. } => {
            mission.worktree = Some(worktree.clone());
        }
        MissionEvent::RunSteered {
            run_id,
            steer,
            actor,
            ..
        } => apply_steer(mission, run_id, steer, actor),
        MissionEvent::TurnEnded {
            run_id,
            outcome,
            next_turn_starts,
            usage,
            ..
        } => {
            if let Some(run) = mission.run.as_mut().filter(|run| &run.run_id == run_id) {
                run.last_turn_outcome = Some(outcome.clone());
                if let Some(usage) = usage {
                    run.usage = Some(run.usage.unwrap_or_default().plus(*usage));
                }
                if *next_turn_starts {
                    run.queued_follow_ups = run.queued_follow_ups.saturating_sub(1);
                    run.turns += 1;
                } else {
                    run.queued_follow_ups = 0;
                }
            }
        }
        // `fold` ends the mission; on its own the deletion changes nothing.
        MissionEvent::MissionDeleted { .. } => {}
        MissionEvent::WorktreeSettled { state, reason, .. } => {
            if let Some(worktree) = mission.worktree.as_mut() {
                worktree.state = *state;
                worktree.kept_reason = match state {
                    nagi_schema::worktree::MissionWorktreeState::Kept => reason.clone(),
                    _ => None,
                };
            }
        }
    }
}

/// A follow-up queues behind the running turn, or reopens the run that ended: the
/// provider starts again on its session (`preparing` until it confirms it), and the proof
/// needs fresh evidence. An interrupt or a stop changes the mission when the turn ends.
fn apply_steer(
    mission: &mut Mission,
    run_id: &str,
    steer: &crate::event::Steer,
    actor: &nagi_schema::steer::RunActorV1,
) {
    use nagi_schema::steer::FollowUpDelivery;
    let crate::event::Steer::Send {
        delivery,
        model,
        reasoning_effort,
        ..
    } = steer
    else {
        return;
    };
    let Some(run) = mission.run.as_mut().filter(|run| run.run_id == run_id) else {
        return;
    };
    match delivery {
        FollowUpDelivery::Queued => run.queued_follow_ups += 1,
        FollowUpDelivery::Resumed => {
            if model.is_some() {
                run.model = model.clone();
            }
            if reasoning_effort.is_some() {
                run.reasoning_effort = reasoning_effort.clone();
            }
            run.turns += 1;
            run.queued_follow_ups = 0;
            run.ended_at_millis = None;
            run.outcome = None;
            mission.status = MissionStatus::Preparing;
            mission.status_reason = Some(format!(
                "the provider is resuming its session for a follow-up from {}",
                actor.describe()
            ));
            mark_evidence_stale(mission);
        }
    }
}

/// A new run invalidates every earlier proof: evidence becomes stale, receipts go.
fn mark_evidence_stale(mission: &mut Mission) {
    for evidence in mission.evidence.values_mut() {
        evidence.assessment = MissionEvidenceAssessmentV1::Stale;
    }
    mission.evidence_pack_digest = None;
    mission.ready_receipt = None;
    mission.archive_receipt = None;
}
