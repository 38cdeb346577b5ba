use nagi_schema::mission::{MissionEvidenceAssessmentV1, MissionProvider, MissionStatus};

use super::*;
use crate::handoff::test_support::*;
use crate::handoff::{HandoffArtifactConfig, build_handoff_artifact};
use nagi_mission::apply::apply;
use nagi_mission::view::NoLiveRuns;

struct AllLive;

impl LiveRuns for AllLive {
    fn is_live(&self, _mission_id: &str, _run_id: &str) -> bool {
        true
    }
}

fn artifact(mission: &Mission, to: MissionProvider) -> MissionHandoffArtifactV1 {
    build_handoff_artifact(
        mission,
        to,
        100,
        &vector_diff(),
        &HandoffArtifactConfig::default(),
    )
    .unwrap()
}

#[test]
fn a_successful_continuation_copies_the_source_run_as_the_contract_says() {
    let mut mission = vector_mission();
    mission.run.as_mut().unwrap().execute_declared_checks = true;
    let artifact = artifact(&mission, MissionProvider::ClaudeCode);
    assert_eq!(
        precheck_handoff_start(
            &mission,
            MissionProvider::ClaudeCode,
            &artifact.artifact_sha256,
            HandoffAuthority::PublicSocket,
            &NoLiveRuns
        ),
        Ok(HandoffStartPrecheck::Rebuild)
    );
    assert_eq!(
        confirm_rebuilt_artifact(&artifact, &artifact.artifact_sha256),
        Ok(())
    );
    let event = decide_run_continued(&mission, &artifact, 500).unwrap();
    let MissionEvent::RunContinued {
        source_run_id,
        run,
        at_millis,
    } = &event
    else {
        panic!("run continued")
    };
    assert_eq!((source_run_id.as_str(), *at_millis), ("run-codex", 500));
    assert_eq!(run.run_id, artifact.suggested_run_id);
    assert_eq!(run.provider, MissionProvider::ClaudeCode);
    assert_eq!(run.worktree_path, "/repo");
    assert_eq!(run.base_revision, "a".repeat(40));
    assert!(run.execute_declared_checks && !run.execute_project_recipe);
    assert_eq!(run.handoff_from_run_id.as_deref(), Some("run-codex"));
    assert_eq!(
        run.handoff_artifact_sha256.as_deref(),
        Some(artifact.artifact_sha256.as_str())
    );
    assert_eq!(run.provider_session_id, None);
    assert_eq!(run.sandbox, SandboxGrant::ReadOnly);

    let continued = apply(Some(mission), &event);
    assert_eq!(continued.status, MissionStatus::Preparing);
    assert_eq!(continued.run_history.last().unwrap().run_id, "run-codex");
    assert_eq!(
        continued
            .run_history
            .last()
            .unwrap()
            .provider_session_id
            .as_deref(),
        Some("thread-1")
    );

    // The same request again while the continuation is live is an idempotent success.
    let retry = precheck_handoff_start(
        &continued,
        MissionProvider::ClaudeCode,
        &artifact.artifact_sha256,
        HandoffAuthority::PublicSocket,
        &AllLive,
    );
    assert_eq!(retry, Ok(HandoffStartPrecheck::AlreadyStarted));
    let not_live = precheck_handoff_start(
        &continued,
        MissionProvider::ClaudeCode,
        &artifact.artifact_sha256,
        HandoffAuthority::PublicSocket,
        &NoLiveRuns,
    );
    assert_eq!(not_live, Ok(HandoffStartPrecheck::Rebuild));
}

#[test]
fn evidence_goes_stale_when_the_run_continues() {
    let mut mission = vector_mission();
    let declaration_digest = mission.plan.as_ref().unwrap().declarations[0]
        .digest
        .clone();
    mission.evidence.insert(
        "redirect-test".into(),
        nagi_mission::model::Evidence {
            check_id: "redirect-test".into(),
            kind: nagi_schema::mission::MissionEvidenceKindV1::Command,
            assessment: MissionEvidenceAssessmentV1::Passed,
            workspace_digest: "c".repeat(64),
            relevant_digest: None,
            declaration_digest,
            run_id: "run-codex".into(),
            identity_digest: None,
            output_digest: None,
            recorded_at_millis: 30,
            duration_millis: None,
            exit_code: Some(0),
            source: None,
            artifacts: vec![],
            record_digest: None,
            detail: None,
            output_tail: None,
        },
    );
    let artifact = artifact(&mission, MissionProvider::OpenCode);
    let event = decide_run_continued(&mission, &artifact, 500).unwrap();
    let continued = apply(Some(mission), &event);
    assert_eq!(
        continued.evidence["redirect-test"].assessment,
        MissionEvidenceAssessmentV1::Stale
    );
    assert_eq!(continued.evidence_pack_digest, None);
}

#[test]
fn consent_bearing_handoffs_are_refused_on_the_public_socket() {
    let mut mission = vector_mission();
    let acp = precheck_handoff_start(
        &mission,
        MissionProvider::Acp,
        &"0".repeat(64),
        HandoffAuthority::PublicSocket,
        &NoLiveRuns,
    );
    assert!(matches!(acp, Err(HandoffError::ConsentRequired { .. })));
    assert_eq!(
        precheck_handoff_start(
            &mission,
            MissionProvider::Acp,
            &"0".repeat(64),
            HandoffAuthority::LocalCockpit,
            &NoLiveRuns
        ),
        Ok(HandoffStartPrecheck::Rebuild)
    );
    mission.run.as_mut().unwrap().execute_project_recipe = true;
    let recipe = precheck_handoff_start(
        &mission,
        MissionProvider::ClaudeCode,
        &"0".repeat(64),
        HandoffAuthority::PublicSocket,
        &NoLiveRuns,
    );
    assert!(matches!(recipe, Err(HandoffError::ConsentRequired { .. })));
    mission.run = None;
    let no_run = precheck_handoff_start(
        &mission,
        MissionProvider::ClaudeCode,
        &"0".repeat(64),
        HandoffAuthority::LocalCockpit,
        &NoLiveRuns,
    );
    assert!(matches!(no_run, Err(HandoffError::NoRun { .. })));
}

#[test]
fn a_changed_artifact_is_refused() {
    let mission = vector_mission();
    let inspected = artifact(&mission, MissionProvider::ClaudeCode);
    let mut touched = mission.clone();
    touched.updated_at_millis += 1;
    let rebuilt = artifact(&touched, MissionProvider::ClaudeCode);
    assert!(matches!(
        confirm_rebuilt_artifact(&rebuilt, &inspected.artifact_sha256),
        Err(HandoffError::ArtifactChanged { .. })
    ));
}

#[test]
fn step_ten_rechecks_state_attention_run_provider_and_run_ids() {
    let mission = vector_mission();
    let artifact = artifact(&mission, MissionProvider::ClaudeCode);

    let mut active = mission.clone();
    active.status = MissionStatus::Active;
    assert!(matches!(
        decide_run_continued(&active, &artifact, 500),
        Err(HandoffError::InvalidState { .. })
    ));

    let waiting = crate::test_support::open_attention(mission.clone(), "attention:1", "approve");
    assert_eq!(
        decide_run_continued(&waiting, &artifact, 500),
        Err(HandoffError::AttentionUnresolved { count: 1 })
    );

    let mut moved_on = mission.clone();
    moved_on.run.as_mut().unwrap().run_id = nagi_schema::ids::RunId::parse("run-other").unwrap();
    assert!(matches!(
        decide_run_continued(&moved_on, &artifact, 500),
        Err(HandoffError::RunMismatch { .. })
    ));

    let same_provider = MissionHandoffArtifactV1 {
        target_provider: MissionProvider::Codex,
        ..artifact.clone()
    };
    assert!(matches!(
        decide_run_continued(&mission, &same_provider, 500),
        Err(HandoffError::SameProvider { .. })
    ));

    let mut reused = mission.clone();
    let mut earlier = reused.run.clone().unwrap();
    earlier.run_id = nagi_schema::ids::RunId::parse(&artifact.suggested_run_id).unwrap();
    reused.run_history.push(earlier);
    assert!(matches!(
        decide_run_continued(&reused, &artifact, 500),
        Err(HandoffError::RunConflict { .. })
    ));
    let own_id = MissionHandoffArtifactV1 {
        suggested_run_id: "run-codex".into(),
        ..artifact.clone()
    };
    assert!(matches!(
        decide_run_continued(&mission, &own_id, 500),
        Err(HandoffError::RunConflict { .. })
    ));
    let blank = MissionHandoffArtifactV1 {
        suggested_run_id: String::new(),
        ..artifact.clone()
    };
    assert!(matches!(
        decide_run_continued(&mission, &blank, 500),
        Err(HandoffError::InvalidRun { .. })
    ));

    let foreign = MissionHandoffArtifactV1 {
        mission_id: "other".into(),
        ..artifact
    };
    assert!(matches!(
        decide_run_continued(&mission, &foreign, 500),
        Err(HandoffError::ArtifactChanged { .. })
    ));
}
