//! The pure part of `mission.handoff.start` (contract §2.9 steps 4–10, §6.7).
//!
//! The method interleaves decisions with side effects, so the decisions come in three
//! pieces, called in this order:
//!
//! 1. [`precheck_handoff_start`] (steps 2, 4–6): an idempotent retry, or go on and rebuild.
//! 2. The caller scans the worktree (`workspace::handoff_diff`), rebuilds the artifact with
//!    the *supplied* `generated_at_millis` (`build_handoff_artifact`, step 7) and checks it
//!    with [`confirm_rebuilt_artifact`] (step 8).
//! 3. After shutting the source provider down (step 9, the caller's), inside the store write
//!    job: [`decide_run_continued`] (step 10) checks the mission as it is then and returns
//!    the `RunContinued` event to commit.

use nagi_schema::mission::{MissionProvider, MissionProviderMode};

use super::error::HandoffError;
use nagi_mission::event::MissionEvent;
use nagi_mission::model::{Mission, Run, SandboxGrant};
use nagi_mission::status::run_can_follow;
use nagi_mission::view::LiveRuns;
use nagi_schema::handoff::MissionHandoffArtifactV1;

/// Who asks for the handoff: the public socket cannot grant consent, the local cockpit can.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandoffAuthority {
    PublicSocket,
    LocalCockpit,
}

/// What the caller does after the precheck.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandoffStartPrecheck {
    /// The continuation this request describes is already the live current run: answer
    /// `mission_run_started` with the current view and change nothing.
    AlreadyStarted,
    /// Rebuild the artifact and compare (steps 7–8).
    Rebuild,
}

/// Steps 2 and 4–6 (step 3, the missing mission, is the caller's).
pub fn precheck_handoff_start(
    mission: &Mission,
    to: MissionProvider,
    artifact_sha256: &str,
    authority: HandoffAuthority,
    live_runs: &dyn LiveRuns,
) -> Result<HandoffStartPrecheck, HandoffError> {
    if to == MissionProvider::Acp && authority == HandoffAuthority::PublicSocket {
        return Err(HandoffError::ConsentRequired {
            detail: "a handoff to an ACP agent needs consent in the local cockpit".into(),
        });
    }
    if let Some(run) = &mission.run
        && run.provider == to
        && run.mode == MissionProviderMode::Managed
        && run.handoff_artifact_sha256.as_deref() == Some(artifact_sha256)
        && live_runs.is_live(&mission.mission_id, &run.run_id)
    {
        return Ok(HandoffStartPrecheck::AlreadyStarted);
    }
    let run = mission.run.as_ref().ok_or_else(|| HandoffError::NoRun {
        mission_id: mission.mission_id.to_string(),
    })?;
    if run.execute_project_recipe && authority == HandoffAuthority::PublicSocket {
        return Err(HandoffError::ConsentRequired {
            detail: format!(
                "run {} used the project recipe; continuing it needs consent in the local cockpit",
                run.run_id
            ),
        });
    }
    Ok(HandoffStartPrecheck::Rebuild)
}

/// Step 8: the rebuilt artifact must hash to exactly what the client inspected.
pub fn confirm_rebuilt_artifact(
    rebuilt: &MissionHandoffArtifactV1,
    supplied_artifact_sha256: &str,
) -> Result<(), HandoffError> {
    if rebuilt.artifact_sha256 == supplied_artifact_sha256 {
        return Ok(());
    }
    Err(HandoffError::ArtifactChanged {
        detail: format!(
            "the inspected artifact was {supplied_artifact_sha256}, the mission and workspace now give {}",
            rebuilt.artifact_sha256
        ),
    })
}

/// Step 10 against the mission as the write job reads it: the durable `RunContinued` that
/// makes the artifact's suggested run the current run (§6.7).
/// More than read-only access that a person granted in the cockpit for the continuation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteGrant {
    pub sandbox: nagi_mission::model::SandboxGrant,
    pub consent_id: String,
}

/// [`decide_run_continued`], with the access a person granted: the new run carries it
/// from the decision on, so nothing patches the event after it was decided.
pub fn decide_run_continued_with(
    mission: &Mission,
    artifact: &MissionHandoffArtifactV1,
    grant: Option<WriteGrant>,
    now_millis: u64,
) -> Result<MissionEvent, HandoffError> {
    let mut event = decide_run_continued(mission, artifact, now_millis)?;
    if let (Some(grant), MissionEvent::RunContinued { run, .. }) = (grant, &mut event) {
        run.sandbox = grant.sandbox;
        run.consent_id = Some(grant.consent_id);
    }
    Ok(event)
}

pub fn decide_run_continued(
    mission: &Mission,
    artifact: &MissionHandoffArtifactV1,
    now_millis: u64,
) -> Result<MissionEvent, HandoffError> {
    if artifact.mission_id != mission.mission_id {
        return Err(HandoffError::ArtifactChanged {
            detail: format!("the artifact belongs to mission {}", artifact.mission_id),
        });
    }
    if !run_can_follow(mission.status) {
        return Err(HandoffError::InvalidState {
            mission_id: mission.mission_id.to_string(),
            status: mission.status.as_str().to_string(),
        });
    }
    let unresolved = mission.unresolved_attention_count();
    if unresolved > 0 {
        return Err(HandoffError::AttentionUnresolved { count: unresolved });
    }
    let source = mission.run.as_ref().ok_or_else(|| HandoffError::NoRun {
        mission_id: mission.mission_id.to_string(),
    })?;
    if source.run_id != artifact.source_run_id {
        return Err(HandoffError::RunMismatch {
            artifact_run_id: artifact.source_run_id.clone(),
            current_run_id: source.run_id.to_string(),
        });
    }
    if artifact.target_provider == source.provider {
        return Err(HandoffError::SameProvider {
            provider: source.provider.as_str().to_string(),
        });
    }
    let run_id = &artifact.suggested_run_id;
    if *run_id == source.run_id
        || mission
            .run_history
            .iter()
            .any(|earlier| earlier.run_id == *run_id)
    {
        return Err(HandoffError::RunConflict {
            run_id: run_id.clone(),
        });
    }
    let Ok(run_id) = nagi_schema::ids::RunId::parse(run_id) else {
        return Err(HandoffError::InvalidRun {
            run_id: run_id.clone(),
        });
    };
    let run = Run {
        run_id,
        provider: artifact.target_provider,
        mode: MissionProviderMode::Managed,
        worktree_path: source.worktree_path.clone(),
        base_revision: source.base_revision.clone(),
        execute_declared_checks: source.execute_declared_checks,
        execute_project_recipe: source.execute_project_recipe,
        handoff_from_run_id: Some(source.run_id.to_string()),
        handoff_artifact_sha256: Some(artifact.artifact_sha256.clone()),
        provider_session_id: None,
        sandbox: SandboxGrant::ReadOnly,
        consent_id: None,
        pane_id: None,
        enforcement: None,
        workspace_digest_at_start: None,
        started_at_millis: now_millis,
        ended_at_millis: None,
        outcome: None,
        turns: 1,
        last_turn_outcome: None,
        queued_follow_ups: 0,
        usage: None,
        // A model belongs to the provider it was chosen for; the target starts on its own default.
        model: None,
        reasoning_effort: None,
    };
    Ok(MissionEvent::RunContinued {
        source_run_id: source.run_id.to_string(),
        run,
        at_millis: now_millis,
    })
}

#[cfg(test)]
#[path = "start_tests.rs"]
mod tests;
