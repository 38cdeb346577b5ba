//! The mission and diff of the §6.4 test vector, built through the real decisions and fold.

use nagi_schema::mission::{
    CommandCheck, MissionCheck, MissionCreateParams, MissionPathRule, MissionProvider,
    MissionProviderMode, MissionStatus,
};

use nagi_exec::workspace::HandoffDiff;
use nagi_mission::apply::apply;
use nagi_mission::create::{ConfigureDecision, CreateDecision, decide_configure, decide_create};
use nagi_mission::event::MissionEvent;
use nagi_mission::model::{Mission, Run, SandboxGrant};

/// `mission-handoff` on `/repo`, run `run-codex` (Codex), `review_required`, updated at 42.
pub fn vector_mission() -> Mission {
    let params = MissionCreateParams {
        mission_id: "mission-handoff".into(),
        title: "Handoff".into(),
        repository_path: "/repo".into(),
        objective: "Fix login".into(),
        acceptance_criteria: vec!["Redirect test passes".into()],
        host: None,
    };
    let CreateDecision::Create(created) = decide_create(None, &params, "/repo", 10).unwrap() else {
        panic!("created")
    };
    let mut mission = apply(None, &created);
    let checks = vec![MissionCheck::Command(CommandCheck {
        id: "redirect-test".into(),
        program: "true".into(),
        args: vec![],
        cwd: ".".into(),
        relevant_paths: vec![MissionPathRule::All],
        required_artifacts: vec![],
        include_ignored: false,
        required: true,
        covers: vec![0],
    })];
    let ConfigureDecision::Configure(configured) = decide_configure(&mission, &checks, 11).unwrap()
    else {
        panic!("configured")
    };
    mission = apply(Some(mission), &configured);
    mission = apply(
        Some(mission),
        &MissionEvent::RunStarted {
            run: vector_run(),
            at_millis: 20,
        },
    );
    apply(
        Some(mission),
        &MissionEvent::StatusChanged {
            status: MissionStatus::ReviewRequired,
            reason: None,
            run_outcome: None,
            at_millis: 42,
        },
    )
}

pub fn vector_run() -> Run {
    Run {
        run_id: nagi_schema::ids::RunId::parse("run-codex").unwrap(),
        provider: MissionProvider::Codex,
        mode: MissionProviderMode::Managed,
        worktree_path: "/repo".into(),
        base_revision: "a".repeat(40),
        execute_declared_checks: true,
        execute_project_recipe: false,
        handoff_from_run_id: None,
        handoff_artifact_sha256: None,
        provider_session_id: Some("thread-1".into()),
        sandbox: SandboxGrant::ReadOnly,
        consent_id: None,
        pane_id: None,
        enforcement: None,
        workspace_digest_at_start: None,
        started_at_millis: 20,
        ended_at_millis: None,
        outcome: None,
        turns: 1,
        last_turn_outcome: None,
        queued_follow_ups: 0,
        usage: None,
        model: None,
        reasoning_effort: None,
    }
}

pub fn vector_diff() -> HandoffDiff {
    HandoffDiff {
        head_revision: "b".repeat(40),
        workspace_digest: "c".repeat(64),
        dirty: true,
        changed_paths: vec!["src/lib.rs".into()],
        stat: " src/lib.rs | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)".into(),
    }
}

pub fn vector_config() -> crate::handoff::HandoffArtifactConfig {
    crate::handoff::HandoffArtifactConfig {
        warnings: vec!["w1".into(), "w2".into(), "w3".into()],
    }
}
