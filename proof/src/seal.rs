//! The sealing rules of contract §5.8 as pure checks, and the events to commit.
//!
//! The caller evaluates (`verify`) on the mission read at some authority head, then commits
//! the seal in a store write job. Inside that job it passes the head *as it is now*: if any
//! event was committed since the evaluation, the head moved and the seal is refused as stale
//! (evaluate again). The same check runs for both sealed transitions.

use nagi_schema::mission::MissionStatus;
use nagi_schema::proof::{ProofClosureDecisionV1, ProofReceiptV1};

use super::binding::{AuthorityHead, current_identity, identity_to_wire};
use super::error::ProofError;
use super::verify::Verdict;
use nagi_mission::event::MissionEvent;
use nagi_mission::model::Mission;

/// The actor recorded for seals the verifier makes.
pub const VERIFIER_ACTOR: &str = "nagi-verifier";

/// `review_required → ready_to_close`: the receipt must be a ready receipt for the current
/// run, bound to the current authority head, and not verified in the future of `now_millis`.
pub fn seal_ready(
    mission: &Mission,
    receipt: &ProofReceiptV1,
    current_head: &AuthorityHead,
    now_millis: u64,
) -> Result<MissionEvent, ProofError> {
    if mission.status != MissionStatus::ReviewRequired {
        return Err(ProofError::StatusNotSealable {
            mission_id: mission.mission_id.to_string(),
            status: mission.status.as_str().into(),
        });
    }
    if receipt.decision != ProofClosureDecisionV1::ReadyToClose {
        return Err(ProofError::SealRefused {
            detail: "an archive receipt cannot seal readiness".into(),
        });
    }
    check_common(mission, receipt, current_head, now_millis)?;
    Ok(MissionEvent::MissionSealed {
        receipt: receipt.clone(),
        at_millis: now_millis,
    })
}

/// `ready_to_close → archived`: additionally the ready receipt must exist, the archive proof
/// must prove the same subject, at a strictly later authority sequence, verified no earlier
/// than the ready proof. A later clock alone is not enough.
pub fn seal_archive(
    mission: &Mission,
    receipt: &ProofReceiptV1,
    current_head: &AuthorityHead,
    now_millis: u64,
) -> Result<MissionEvent, ProofError> {
    if mission.status != MissionStatus::ReadyToClose {
        return Err(ProofError::StatusNotSealable {
            mission_id: mission.mission_id.to_string(),
            status: mission.status.as_str().into(),
        });
    }
    if receipt.decision != ProofClosureDecisionV1::Archived {
        return Err(ProofError::SealRefused {
            detail: "a ready receipt cannot archive".into(),
        });
    }
    let ready = mission
        .ready_receipt
        .as_ref()
        .ok_or_else(|| ProofError::SealRefused {
            detail: "the mission has no ready receipt to archive against".into(),
        })?;
    if receipt.subject_digest != ready.subject_digest {
        let detail = if receipt.workspace_digest != ready.workspace_digest {
            "the workspace changed since the mission became ready to close"
        } else {
            "the run identity or the closure plan changed since the mission became ready to close"
        };
        return Err(ProofError::ArchiveSubjectChanged {
            detail: detail.into(),
        });
    }
    if receipt.authority_sequence <= ready.authority_sequence {
        return Err(ProofError::SealRefused {
            detail: format!(
                "the archive proof's authority sequence {} does not advance past the ready receipt's {}",
                receipt.authority_sequence, ready.authority_sequence
            ),
        });
    }
    if receipt.verified_at_millis < ready.verified_at_millis {
        return Err(ProofError::SealRefused {
            detail: "the archive proof was verified before the ready proof".into(),
        });
    }
    check_common(mission, receipt, current_head, now_millis)?;
    Ok(MissionEvent::MissionSealed {
        receipt: receipt.clone(),
        at_millis: now_millis,
    })
}

/// Head currency, identity and time, shared by both seals.
fn check_common(
    mission: &Mission,
    receipt: &ProofReceiptV1,
    current_head: &AuthorityHead,
    now_millis: u64,
) -> Result<(), ProofError> {
    if receipt.authority_sequence != current_head.sequence
        || receipt.authority_head_digest != current_head.digest()
    {
        return Err(ProofError::SealStale {
            detail: format!(
                "the proof was evaluated at event {}, but the last committed event is now {}",
                receipt.authority_sequence, current_head.sequence
            ),
        });
    }
    let identity = current_identity(mission)?;
    if receipt.identity != identity_to_wire(&identity) {
        return Err(ProofError::SealStale {
            detail: "the receipt is bound to another run than the mission's current run".into(),
        });
    }
    if receipt.verified_at_millis > now_millis {
        return Err(ProofError::SealRefused {
            detail: format!(
                "the proof claims to be verified at {} ms, after the seal time {now_millis} ms",
                receipt.verified_at_millis
            ),
        });
    }
    Ok(())
}

/// What the closure worker commits after evaluating a `review_required` mission.
pub fn readiness_outcome(
    mission: &Mission,
    verdict: &Verdict,
    current_head: &AuthorityHead,
    now_millis: u64,
) -> Result<Option<MissionEvent>, ProofError> {
    match verdict {
        Verdict::Verified { receipt, .. } => {
            seal_ready(mission, receipt, current_head, now_millis).map(Some)
        }
        // The mission stays review_required; the summaries already say why.
        Verdict::ReviewRequired { .. } => Ok(None),
    }
}

/// The next command of a mission that a close blocked.
fn verify_again(mission: &Mission) -> String {
    format!(
        "when the workspace is as it should be, verify it again with `nagi mission verify {} --execute-checks`, or start another run with `nagi mission start {} --provider PROVIDER`",
        mission.mission_id, mission.mission_id
    )
}

/// What the `mission.close` worker commits: the archive seal, or `blocked` with the reason
/// when the fresh proof does not verify or proves another subject (§2.10). A stale head is
/// still an error: evaluate again rather than block on a race.
pub fn close_outcome(
    mission: &Mission,
    verdict: &Verdict,
    current_head: &AuthorityHead,
    now_millis: u64,
) -> Result<MissionEvent, ProofError> {
    let blocked = |reason: String| MissionEvent::StatusChanged {
        status: MissionStatus::Blocked,
        reason: Some(reason),
        run_outcome: None,
        at_millis: now_millis,
    };
    match verdict {
        Verdict::Verified { receipt, .. } => {
            match seal_archive(mission, receipt, current_head, now_millis) {
                Ok(event) => Ok(event),
                Err(ProofError::ArchiveSubjectChanged { detail }) => Ok(blocked(format!(
                    "close re-verification refused to archive: {detail}; {}",
                    verify_again(mission)
                ))),
                Err(other) => Err(other),
            }
        }
        Verdict::ReviewRequired {
            reasons,
            evaluated_head,
            ..
        } => {
            if evaluated_head != current_head {
                return Err(ProofError::SealStale {
                    detail: format!(
                        "the proof was evaluated at event {}, but the last committed event is now {}",
                        evaluated_head.sequence, current_head.sequence
                    ),
                });
            }
            if mission.status != MissionStatus::ReadyToClose {
                return Err(ProofError::StatusNotSealable {
                    mission_id: mission.mission_id.to_string(),
                    status: mission.status.as_str().into(),
                });
            }
            Ok(blocked(format!(
                "close re-verification failed: {}; {}",
                reasons.join("; "),
                verify_again(mission)
            )))
        }
    }
}

#[cfg(test)]
#[path = "seal_tests.rs"]
mod tests;
