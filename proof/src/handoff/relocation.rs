//! The artifact of a mission handed from a fleet host that is gone to another host
//! (`mission.handoff.preview`/`start` with `host`). Nothing of the gone host's worktree can
//! be read, so the artifact is built from the mission as that host last reported it: its
//! objective, criteria, checks and run; its diff is empty and a warning says why. The new
//! host clones the repository's remote into `checkout_path` and its run starts there, from
//! the source run's base revision.

use nagi_schema::handoff::{MissionHandoffArtifactV1, MissionHandoffDiffV1};
use nagi_schema::mission::{MissionProvider, MissionStatus, MissionViewV1};

use super::artifact::{
    MAX_CRITERION_CHARS, MAX_OBJECTIVE_CHARS, default_warnings, handoff_artifact_sha256,
    provider_slug, redacted_within,
};
use super::error::HandoffError;
use nagi_mission::digest::{sha256_hex, suggested_handoff_run_id};

/// What the relocation artifact is built of.
#[derive(Debug, Clone, Copy)]
pub struct RelocationSource<'a> {
    /// The mission as its gone host last reported it.
    pub view: &'a MissionViewV1,
    pub from_host: &'a str,
    /// The new host's clone of the repository's remote, where the run works.
    pub checkout_path: &'a str,
    pub remote_url: &'a str,
}

/// Builds the artifact; the same source, target and timestamp give the same digest.
pub fn build_relocation_artifact(
    source: RelocationSource<'_>,
    target: MissionProvider,
    generated_at_millis: u64,
) -> Result<MissionHandoffArtifactV1, HandoffError> {
    let view = source.view;
    if matches!(view.status, MissionStatus::Draft | MissionStatus::Archived) {
        return Err(HandoffError::InvalidState {
            mission_id: view.mission_id.clone(),
            status: view.status.as_str().to_string(),
        });
    }
    let run = view.run.as_ref().ok_or_else(|| HandoffError::NoRun {
        mission_id: view.mission_id.clone(),
    })?;
    // Stands for the (unreadable) workspace in the suggested run id: the mission's state
    // as reported, and where it goes on.
    let workspace_digest = sha256_hex(
        format!(
            "relocated:{}:{}:{}",
            source.from_host, run.run_id, source.checkout_path
        )
        .as_bytes(),
    );
    let mut warnings = default_warnings();
    warnings.push(format!(
        "Host {} is gone: its worktree could not be read, so changes it held that were not pushed \
         to the repository's remote are not in this continuation. The new run starts from the \
         base revision {} in a clone of {}.",
        source.from_host, run.base_revision, source.remote_url
    ));
    let mut artifact = MissionHandoffArtifactV1 {
        schema_version: 1,
        artifact_sha256: String::new(),
        generated_at_millis,
        mission_id: view.mission_id.clone(),
        source_run_id: run.run_id.clone(),
        suggested_run_id: suggested_handoff_run_id(
            &view.mission_id,
            view.updated_at_millis,
            provider_slug(target),
            &workspace_digest,
        ),
        source_provider: run.provider,
        target_provider: target,
        repository_path: source.checkout_path.to_string(),
        worktree_path: source.checkout_path.to_string(),
        base_revision: run.base_revision.clone(),
        head_revision: run.base_revision.clone(),
        objective: redacted_within(&view.objective, MAX_OBJECTIVE_CHARS),
        acceptance_criteria: view
            .criteria
            .iter()
            .map(|criterion| redacted_within(&criterion.description, MAX_CRITERION_CHARS))
            .collect(),
        diff: MissionHandoffDiffV1 {
            workspace_digest,
            dirty: false,
            changed_paths: Vec::new(),
            stat: String::new(),
        },
        decisions: Vec::new(),
        checks: view.checks.clone(),
        selected_logs: Vec::new(),
        warnings,
    };
    artifact.artifact_sha256 = handoff_artifact_sha256(&artifact)?;
    Ok(artifact)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handoff::test_support::vector_mission;
    use nagi_mission::view::mission_view;

    fn reported() -> MissionViewV1 {
        mission_view(&vector_mission(), &nagi_mission::view::NoLiveRuns)
    }

    fn source(view: &MissionViewV1) -> RelocationSource<'_> {
        RelocationSource {
            view,
            from_host: "b",
            checkout_path: "/var/lib/nagi/relocated/mission-handoff",
            remote_url: "git@example.org:team/app.git",
        }
    }

    #[test]
    fn the_same_report_target_and_time_give_the_same_digest_and_another_time_another() {
        let view = reported();
        let first =
            build_relocation_artifact(source(&view), MissionProvider::ClaudeCode, 7).unwrap();
        let again =
            build_relocation_artifact(source(&view), MissionProvider::ClaudeCode, 7).unwrap();
        assert_eq!(first, again);
        assert_eq!(
            first.artifact_sha256,
            handoff_artifact_sha256(&first).unwrap()
        );
        let later =
            build_relocation_artifact(source(&view), MissionProvider::ClaudeCode, 8).unwrap();
        assert_ne!(first.artifact_sha256, later.artifact_sha256);
        assert_eq!(first.source_run_id, "run-codex");
        assert_eq!(
            first.worktree_path,
            "/var/lib/nagi/relocated/mission-handoff"
        );
        assert_eq!(first.head_revision, first.base_revision);
        assert!(first.diff.changed_paths.is_empty() && !first.diff.dirty);
        assert_eq!(first.checks, view.checks);
        let last = first.warnings.last().unwrap();
        assert!(
            last.starts_with("Host b is gone") && last.contains("git@example.org:team/app.git"),
            "{last}"
        );
    }

    #[test]
    fn a_mission_that_never_ran_or_is_archived_is_not_relocated() {
        let mut view = reported();
        view.status = MissionStatus::Archived;
        assert!(matches!(
            build_relocation_artifact(source(&view), MissionProvider::ClaudeCode, 7),
            Err(HandoffError::InvalidState { .. })
        ));
        let mut view = reported();
        view.run = None;
        assert!(matches!(
            build_relocation_artifact(source(&view), MissionProvider::ClaudeCode, 7),
            Err(HandoffError::NoRun { .. })
        ));
    }
}
