//! The digest-bound handoff artifact (contract §3.10, §6.2–§6.6).
//!
//! Everything that leaves the server through the artifact is redacted *before* hashing, so
//! the digest a client sees, the preview it inspects and the prompt the next provider reads
//! are all built from the same redacted text. The digest covers every field (§6.4), so any
//! change to the mission (even one that only bumps `updated_at_millis`, through the
//! suggested run id), the workspace, the decisions, the check statuses or the target gives
//! a different `artifact_sha256`.

use std::borrow::Cow;

use nagi_schema::handoff::{
    MissionHandoffArtifactV1, MissionHandoffDecisionStateV1, MissionHandoffDecisionV1,
    MissionHandoffDiffV1,
};
use nagi_schema::mission::MissionProvider;

use super::error::HandoffError;
use nagi_exec::workspace::HandoffDiff;
use nagi_mission::digest::{artifact_sha256_of_value, suggested_handoff_run_id};
use nagi_mission::model::{AttemptState, Mission, Run};
use nagi_mission::redact::redact;
use nagi_mission::status::run_can_follow;
use nagi_mission::view::check_summaries;

/// Character limits of the redacted fields (§3.10; JSON Schema counts characters).
pub const MAX_OBJECTIVE_CHARS: usize = 8192;
pub const MAX_CRITERION_CHARS: usize = 1024;
pub const MAX_CHANGED_PATH_CHARS: usize = 4096;
pub const MAX_STAT_CHARS: usize = 32768;
pub const MAX_ACTOR_CHARS: usize = 128;
pub const MAX_DECISIONS: usize = 128;
pub const MAX_WARNINGS: usize = 16;

const STAT_TRUNCATED: &str = "\n… (diff stat truncated)";

/// What the builder adds besides the mission and the diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandoffArtifactConfig {
    /// The advisory strings of `warnings`; [`default_warnings`] unless a test injects others.
    pub warnings: Vec<String>,
}

impl Default for HandoffArtifactConfig {
    fn default() -> HandoffArtifactConfig {
        HandoffArtifactConfig {
            warnings: default_warnings(),
        }
    }
}

/// The three fixed advisories of §6.2.
pub fn default_warnings() -> Vec<String> {
    vec![
        "The source provider's hidden reasoning and its private session state are not part of this handoff.".to_string(),
        "No provider log is included; a log excerpt is exported, redacted, only after a person selects it.".to_string(),
        "Proof recorded for the source run does not carry over: the required checks must run again before the mission can close."
            .to_string(),
    ]
}

/// The slug of §6.5 for a target provider.
pub fn provider_slug(provider: MissionProvider) -> &'static str {
    match provider {
        MissionProvider::Codex => "codex",
        MissionProvider::ClaudeCode => "claude",
        MissionProvider::OpenCode => "opencode",
        MissionProvider::Acp => "acp",
    }
}

/// §2.8 preconditions (after the mission was found): a status a run can follow, a current
/// run, and a target other than its provider. Returns the source run.
pub fn check_handoff_preconditions(
    mission: &Mission,
    target: MissionProvider,
) -> Result<&Run, HandoffError> {
    if !run_can_follow(mission.status) {
        return Err(HandoffError::InvalidState {
            mission_id: mission.mission_id.to_string(),
            status: mission.status.as_str().to_string(),
        });
    }
    let run = mission.run.as_ref().ok_or_else(|| HandoffError::NoRun {
        mission_id: mission.mission_id.to_string(),
    })?;
    if run.provider == target {
        return Err(HandoffError::SameProvider {
            provider: target.as_str().to_string(),
        });
    }
    Ok(run)
}

/// Builds the artifact of a handoff of `mission` to `target` (§6.2), with its digest.
/// `diff` comes from `workspace::handoff_diff` over the run's worktree and base revision;
/// its paths and stat are not redacted yet, this does it.
pub fn build_handoff_artifact(
    mission: &Mission,
    target: MissionProvider,
    generated_at_millis: u64,
    diff: &HandoffDiff,
    config: &HandoffArtifactConfig,
) -> Result<MissionHandoffArtifactV1, HandoffError> {
    let run = check_handoff_preconditions(mission, target)?;
    let (decisions, left_out_decisions) = decisions(mission);
    let mut warnings = config.warnings.clone();
    if left_out_decisions > 0 {
        warnings.push(format!(
            "{left_out_decisions} further attention decision(s) were left out; the artifact lists {MAX_DECISIONS}."
        ));
    }
    warnings.truncate(MAX_WARNINGS);
    let mut artifact = MissionHandoffArtifactV1 {
        schema_version: 1,
        artifact_sha256: String::new(),
        generated_at_millis,
        mission_id: mission.mission_id.to_string(),
        source_run_id: run.run_id.to_string(),
        suggested_run_id: suggested_handoff_run_id(
            &mission.mission_id,
            mission.updated_at_millis,
            provider_slug(target),
            &diff.workspace_digest,
        ),
        source_provider: run.provider,
        target_provider: target,
        repository_path: mission.repository_path.clone(),
        worktree_path: run.worktree_path.clone(),
        base_revision: run.base_revision.clone(),
        head_revision: diff.head_revision.clone(),
        objective: redacted_within(&mission.objective, MAX_OBJECTIVE_CHARS),
        acceptance_criteria: mission
            .criteria
            .iter()
            .map(|criterion| redacted_within(&criterion.description, MAX_CRITERION_CHARS))
            .collect(),
        diff: MissionHandoffDiffV1 {
            workspace_digest: diff.workspace_digest.clone(),
            dirty: diff.dirty,
            changed_paths: diff
                .changed_paths
                .iter()
                .map(|path| redacted_within(path, MAX_CHANGED_PATH_CHARS))
                .collect(),
            stat: redacted_stat(&diff.stat, &diff.changed_paths),
        },
        decisions,
        checks: check_summaries(mission),
        selected_logs: Vec::new(),
        warnings,
    };
    artifact.artifact_sha256 = handoff_artifact_sha256(&artifact)?;
    Ok(artifact)
}

/// §6.4: SHA-256 of the compact JSON of the artifact with an empty `artifact_sha256`, keys
/// in the wire types' field order.
pub fn handoff_artifact_sha256(
    artifact: &MissionHandoffArtifactV1,
) -> Result<String, HandoffError> {
    let value = serde_json::to_value(artifact).map_err(|error| HandoffError::Serialization {
        detail: error.to_string(),
    })?;
    artifact_sha256_of_value(&value).ok_or_else(|| HandoffError::Serialization {
        detail: "the artifact is not a JSON object".into(),
    })
}

/// The latest response attempt of every attention item that has one, in attention-id order;
/// at most [`MAX_DECISIONS`], with the number left out.
fn decisions(mission: &Mission) -> (Vec<MissionHandoffDecisionV1>, usize) {
    let all: Vec<MissionHandoffDecisionV1> = mission
        .attention
        .values()
        .filter_map(|item| {
            let attempt = item.attempts.last()?;
            Some(MissionHandoffDecisionV1 {
                attention_id: item.attention_id.clone(),
                decision: attempt.decision,
                actor_id: redacted_within(&attempt.actor, MAX_ACTOR_CHARS),
                state: match attempt.state {
                    AttemptState::Requested => MissionHandoffDecisionStateV1::Requested,
                    AttemptState::Acknowledged => MissionHandoffDecisionStateV1::Acknowledged,
                    AttemptState::DefinitelyNotApplied { .. } => {
                        MissionHandoffDecisionStateV1::Failed
                    }
                    AttemptState::DeliveryUnknown { .. } => {
                        MissionHandoffDecisionStateV1::ReconciliationRequired
                    }
                },
                updated_at_millis: attempt.updated_at_millis,
            })
        })
        .collect();
    let left_out = all.len().saturating_sub(MAX_DECISIONS);
    (all.into_iter().take(MAX_DECISIONS).collect(), left_out)
}

/// Redacts, then cuts to `max_chars` characters (a redaction may lengthen the text).
pub(super) fn redacted_within(text: &str, max_chars: usize) -> String {
    let redacted = redact(text);
    truncate_chars(&redacted, max_chars).into_owned()
}

fn truncate_chars(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        Some((end, _)) => Cow::Owned(text[..end].to_string()),
        None => Cow::Borrowed(text),
    }
}

/// Redacts the diff stat. Git shortens long names in a stat to their end behind `...`
/// (`.../of/the/path`, or mid-name `...end_of_name.txt`), which can cut a secret in a path
/// name below the length a redaction rule recognises; so every
/// stat line naming a path whose name needed redaction is rewritten with the redacted full
/// name first, then the whole text is redacted, then it is cut to [`MAX_STAT_CHARS`].
fn redacted_stat(stat: &str, raw_changed_paths: &[String]) -> String {
    let sensitive: Vec<(&str, String)> = raw_changed_paths
        .iter()
        .filter_map(|path| {
            let redacted = redact(path);
            (redacted != path.as_str()).then(|| (path.as_str(), redacted.into_owned()))
        })
        .collect();
    let rewritten: String = if sensitive.is_empty() {
        stat.to_string()
    } else {
        stat.split('\n')
            .map(|line| rewrite_stat_line(line, &sensitive))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let redacted = redact(&rewritten);
    if redacted.chars().count() <= MAX_STAT_CHARS {
        return redacted.into_owned();
    }
    let keep = MAX_STAT_CHARS - STAT_TRUNCATED.chars().count();
    format!("{}{STAT_TRUNCATED}", truncate_chars(&redacted, keep))
}

fn rewrite_stat_line<'a>(line: &'a str, sensitive: &[(&str, String)]) -> Cow<'a, str> {
    let Some((name_part, rest)) = line.split_once(" | ") else {
        return Cow::Borrowed(line);
    };
    let name = name_part.trim();
    let shortened_tail = name.strip_prefix("...");
    let matched = sensitive.iter().find(|(raw, _)| match shortened_tail {
        Some(tail) => raw.ends_with(tail),
        None => *raw == name,
    });
    match matched {
        Some((_, redacted)) => {
            let indent = &name_part[..name_part.len() - name_part.trim_start().len()];
            Cow::Owned(format!("{indent}{redacted} | {rest}"))
        }
        None => Cow::Borrowed(line),
    }
}

#[cfg(test)]
#[path = "artifact_tests.rs"]
mod tests;
