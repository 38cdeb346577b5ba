//! The first message a provider receives: the mission prompt of a fresh run (§2.5) and the
//! continuation prompt of a handoff (§2.9).
//!
//! The continuation prompt is built from the artifact alone, which is already redacted, so
//! no unredacted mission text can reach the next provider through it. The mission prompt
//! of a fresh run carries the objective verbatim: it is the task itself, written by the
//! mission's owner for the agent.

use std::fmt::Write;

use nagi_schema::attention::AttentionDecisionV1;
use nagi_schema::handoff::{MissionHandoffArtifactV1, MissionHandoffDecisionStateV1};
use nagi_schema::mission::{MissionCheckKindV1, MissionCheckStatusV1};

use nagi_mission::model::Mission;

/// The continuation prompt lists at most this many changed paths, then counts the rest.
pub const MAX_PROMPT_CHANGED_PATHS: usize = 200;

/// §2.5: an "Objective" section with the objective verbatim, then the acceptance criteria
/// as a numbered list (1-based, in order).
pub fn mission_prompt(mission: &Mission) -> String {
    let mut prompt = String::new();
    prompt.push_str("Objective:\n");
    prompt.push_str(&mission.objective);
    prompt.push_str("\n\nAcceptance criteria:\n");
    for (index, criterion) in mission.criteria.iter().enumerate() {
        let _ = writeln!(prompt, "{}. {}", index + 1, criterion.description);
    }
    prompt
}

/// §2.9: the handoff prompt, from the (redacted) artifact only.
pub fn handoff_prompt(artifact: &MissionHandoffArtifactV1) -> String {
    let mut prompt = String::new();
    let _ = writeln!(
        prompt,
        "You are taking over mission {} from run {} ({}). Another agent worked on it before you; continue from where it stopped.",
        artifact.mission_id,
        artifact.source_run_id,
        artifact.source_provider.as_str()
    );
    prompt.push_str("\nObjective:\n");
    prompt.push_str(&artifact.objective);
    prompt.push_str("\n\nAcceptance criteria:\n");
    for (index, criterion) in artifact.acceptance_criteria.iter().enumerate() {
        let _ = writeln!(prompt, "{}. {criterion}", index + 1);
    }

    prompt.push_str("\nWorkspace at handoff:\n");
    let _ = writeln!(prompt, "- base revision: {}", artifact.base_revision);
    let _ = writeln!(prompt, "- head revision: {}", artifact.head_revision);
    let _ = writeln!(
        prompt,
        "- uncommitted or committed changes since the base: {}",
        if artifact.diff.dirty { "yes" } else { "no" }
    );
    let _ = writeln!(
        prompt,
        "- workspace digest: {}",
        artifact.diff.workspace_digest
    );
    if artifact.diff.changed_paths.is_empty() {
        prompt.push_str("- changed paths: none\n");
    } else {
        prompt.push_str("- changed paths:\n");
        for path in artifact
            .diff
            .changed_paths
            .iter()
            .take(MAX_PROMPT_CHANGED_PATHS)
        {
            let _ = writeln!(prompt, "  - {path}");
        }
        let more = artifact
            .diff
            .changed_paths
            .len()
            .saturating_sub(MAX_PROMPT_CHANGED_PATHS);
        if more > 0 {
            let _ = writeln!(prompt, "  - … and {more} more");
        }
    }

    if !artifact.decisions.is_empty() {
        prompt.push_str("\nDecisions a person already made on the previous run's requests:\n");
        for decision in &artifact.decisions {
            let _ = writeln!(
                prompt,
                "- {}: {} ({})",
                decision.attention_id,
                decision_words(decision.decision),
                decision_state_words(decision.state)
            );
        }
    }

    if !artifact.checks.is_empty() {
        prompt.push_str("\nDeclared checks and their status before the handoff:\n");
        for check in &artifact.checks {
            let kind = match check.kind {
                MissionCheckKindV1::Command => "command",
                MissionCheckKindV1::Manual => "manual",
            };
            let required = if check.required {
                "required"
            } else {
                "optional"
            };
            let _ = writeln!(
                prompt,
                "- {} ({kind}, {required}): {}",
                check.check_id,
                check_status_words(check.status)
            );
        }
    }

    prompt.push_str(
        "\nBefore you change anything, read the workspace again: the files on disk are the only state that carried over. \
         The previous agent's hidden reasoning and session were not transferred, so do not assume anything it did not leave in the files. \
         Evidence from the previous run does not count for this run: the required checks must run again before you declare the mission complete.\n",
    );
    prompt
}

fn decision_words(decision: AttentionDecisionV1) -> &'static str {
    match decision {
        AttentionDecisionV1::ApproveOnce => "approved once",
        AttentionDecisionV1::ApproveForSession => "approved for the session",
        AttentionDecisionV1::AllowForMission => "allowed for the mission",
        AttentionDecisionV1::Deny => "denied",
        AttentionDecisionV1::Answer => "answered",
    }
}

fn decision_state_words(state: MissionHandoffDecisionStateV1) -> &'static str {
    match state {
        MissionHandoffDecisionStateV1::Requested => "sent, not yet acknowledged",
        MissionHandoffDecisionStateV1::Acknowledged => "acknowledged",
        MissionHandoffDecisionStateV1::Failed => "not delivered",
        MissionHandoffDecisionStateV1::ReconciliationRequired => "delivery uncertain",
    }
}

fn check_status_words(status: MissionCheckStatusV1) -> &'static str {
    match status {
        MissionCheckStatusV1::Passed => "passed (for the previous run)",
        MissionCheckStatusV1::Failed => "failed",
        MissionCheckStatusV1::Stale => "stale",
        MissionCheckStatusV1::Missing => "not run yet",
        MissionCheckStatusV1::ManualMissing => "waiting for a reviewer",
        MissionCheckStatusV1::ProviderClaimOnly => "only claimed by a provider",
        MissionCheckStatusV1::DeclarationMismatch => "recorded under another declaration",
        MissionCheckStatusV1::IdentityMismatch => "recorded for another run",
        MissionCheckStatusV1::ArtifactMissingOrChanged => {
            "a required artifact is missing or changed"
        }
        MissionCheckStatusV1::ManualNotAuthorized => "reviewed by someone not authorised",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handoff::test_support::vector_mission;

    #[test]
    fn the_mission_prompt_has_the_objective_verbatim_and_numbered_criteria() {
        let mut mission = vector_mission();
        mission.objective = "Fix login\n  keep `redirect` intact".into();
        mission.criteria.push(nagi_mission::model::Criterion {
            criterion_id: "x".into(),
            description: "No regression".into(),
        });
        let prompt = mission_prompt(&mission);
        assert!(prompt.starts_with(
            "Objective:\nFix login\n  keep `redirect` intact\n\nAcceptance criteria:\n"
        ));
        assert!(prompt.contains("1. Redirect test passes\n2. No regression\n"));
    }
}
