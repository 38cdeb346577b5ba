//! Domain events as subscribers see them (`MissionEventV1`): no session ids, no answers.

use nagi_schema::events::{MissionEventDetail, MissionEventV1};

use super::event::{MissionEvent, StoredEvent};
use super::model::AttemptState;

fn attempt_state_name(state: &AttemptState) -> &'static str {
    match state {
        AttemptState::Requested => "pending_response",
        AttemptState::Acknowledged => "resolved",
        AttemptState::DefinitelyNotApplied { .. } => "open",
        AttemptState::DeliveryUnknown { .. } => "reconciliation_required",
    }
}

fn attention_changed(attention_id: &str, state: &str) -> MissionEventDetail {
    MissionEventDetail::MissionAttentionChanged {
        attention_id: attention_id.to_string(),
        state: state.to_string(),
        kind: None,
        risk: None,
    }
}

/// The wire form of one logged event.
pub fn wire_event(seq: u64, mission_id: &str, stored: &StoredEvent) -> MissionEventV1 {
    let detail = match &stored.event {
        MissionEvent::MissionCreated { title, .. } => MissionEventDetail::MissionCreated {
            title: title.clone(),
        },
        MissionEvent::ClosureConfigured { declarations, .. } => {
            MissionEventDetail::MissionConfigured {
                declared_check_count: declarations.len() as u32,
            }
        }
        MissionEvent::RunStarted { run, .. } => MissionEventDetail::MissionRunStarted {
            run_id: run.run_id.to_string(),
            provider: run.provider,
        },
        MissionEvent::RunContinued {
            source_run_id, run, ..
        } => MissionEventDetail::MissionRunContinued {
            run_id: run.run_id.to_string(),
            source_run_id: source_run_id.clone(),
            provider: run.provider,
        },
        MissionEvent::RunPaneAttached {
            run_id,
            pane_id,
            enforcement,
            ..
        } => MissionEventDetail::MissionRunPaneAttached {
            run_id: run_id.clone(),
            pane_id: pane_id.clone(),
            enforcement: enforcement.clone(),
        },
        MissionEvent::ProviderSessionBound { run_id, .. } => {
            MissionEventDetail::MissionSessionBound {
                run_id: run_id.clone(),
            }
        }
        MissionEvent::StatusChanged { reason, .. } => MissionEventDetail::MissionStatusChanged {
            reason: reason.clone(),
        },
        MissionEvent::MissionAbandoned { reason, .. } => MissionEventDetail::MissionStatusChanged {
            reason: Some(format!("abandoned: {reason}")),
        },
        MissionEvent::MissionDeleted { .. } => MissionEventDetail::MissionDeleted {},
        MissionEvent::AttentionOpened { attention, .. } => {
            MissionEventDetail::MissionAttentionChanged {
                attention_id: attention.attention_id.clone(),
                state: "open".into(),
                kind: Some(attention.kind),
                risk: Some(attention.risk),
            }
        }
        MissionEvent::ResponseRequested { attention_id, .. } => {
            attention_changed(attention_id, "pending_response")
        }
        MissionEvent::ResponseSettled {
            attention_id,
            state,
            ..
        } => attention_changed(attention_id, attempt_state_name(state)),
        MissionEvent::AttentionClosed {
            attention_id,
            expired,
            ..
        } => attention_changed(attention_id, if *expired { "expired" } else { "dismissed" }),
        MissionEvent::ChecksStarted {
            run_id,
            purpose,
            check_count,
            ..
        } => MissionEventDetail::MissionChecksStarted {
            run_id: run_id.clone(),
            purpose: purpose.clone(),
            check_count: *check_count,
        },
        MissionEvent::ChecksFinished { run_id, .. } => MissionEventDetail::MissionChecksFinished {
            run_id: run_id.clone(),
        },
        MissionEvent::EvidenceRecorded { evidence, .. } => {
            MissionEventDetail::MissionEvidenceChanged {
                check_id: evidence.check_id.clone(),
                assessment: evidence.assessment,
            }
        }
        MissionEvent::EvidencePackRecorded {
            run_id,
            pack_digest,
            ..
        } => MissionEventDetail::MissionEvidencePackRecorded {
            run_id: run_id.clone(),
            pack_digest: pack_digest.clone(),
        },
        MissionEvent::MissionSealed { receipt, .. } => MissionEventDetail::MissionProofSealed {
            decision: receipt.decision,
        },
        MissionEvent::WorktreeCreated { worktree, .. } => {
            MissionEventDetail::MissionWorktreeChanged {
                path: worktree.path.clone(),
                branch: worktree.branch.clone(),
                state: worktree.state,
                reason: None,
            }
        }
        MissionEvent::WorktreeSettled {
            path,
            state,
            reason,
            ..
        } => MissionEventDetail::MissionWorktreeChanged {
            path: path.clone(),
            branch: crate::worktree::mission_branch(mission_id),
            state: *state,
            reason: reason.clone(),
        },
        MissionEvent::ConsentRecorded {
            consent_id,
            subject,
            decision,
            ..
        } => MissionEventDetail::MissionConsentRecorded {
            consent_id: consent_id.clone(),
            subject: subject.clone(),
            decision: decision.clone(),
        },
        MissionEvent::WorktreeSynced {
            path,
            onto,
            base_revision,
            ..
        } => MissionEventDetail::MissionWorktreeChanged {
            path: path.clone(),
            branch: crate::worktree::mission_branch(mission_id),
            state: nagi_schema::worktree::MissionWorktreeState::Present,
            reason: Some(format!("synced onto {onto} at {base_revision}")),
        },
        MissionEvent::LandingPrepared { landing, .. } => {
            MissionEventDetail::MissionWorktreeChanged {
                path: String::new(),
                branch: crate::worktree::mission_branch(mission_id),
                state: nagi_schema::worktree::MissionWorktreeState::Present,
                reason: Some(format!(
                    "landing into {} as {}",
                    landing.target_branch, landing.landed_revision
                )),
            }
        }
        MissionEvent::LandingRolledBack { reason, .. } => {
            MissionEventDetail::MissionWorktreeChanged {
                path: String::new(),
                branch: crate::worktree::mission_branch(mission_id),
                state: nagi_schema::worktree::MissionWorktreeState::Present,
                reason: Some(reason.clone()),
            }
        }
        MissionEvent::MissionLanded { landing, .. } => MissionEventDetail::MissionLanded {
            landing: landing.clone(),
        },
        // The follow-up's text stays in the log and the transcript; subscribers see who
        // steered and how.
        MissionEvent::RunSteered {
            run_id,
            steer,
            actor,
            ..
        } => MissionEventDetail::MissionRunSteered {
            run_id: run_id.clone(),
            action: steer.action().to_string(),
            delivery: match steer {
                crate::event::Steer::Send { delivery, .. } => Some(*delivery),
                _ => None,
            },
            actor: actor.clone(),
        },
        MissionEvent::TurnEnded {
            run_id,
            turn,
            outcome,
            ..
        } => MissionEventDetail::MissionTurnEnded {
            run_id: run_id.clone(),
            turn: *turn,
            outcome: outcome.clone(),
        },
    };
    MissionEventV1 {
        seq,
        mission_id: mission_id.to_string(),
        at_millis: stored.event.at_millis(),
        status: stored.status_after,
        detail,
    }
}
