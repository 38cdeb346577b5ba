use nagi_schema::mission::{MissionProvider, MissionStatus};
use nagi_schema::steer::{FollowUpDelivery, RunActorV1};

use super::*;
use crate::apply::apply;
use crate::model::SandboxGrant;
use crate::run::{self, StartRequest, TurnEnd};

fn actor() -> RunActorV1 {
    RunActorV1 {
        uid: 1000,
        pid: Some(42),
        managed_pane: false,
        started_by_server: false,
    }
}

fn said(text: &str) -> FollowUp {
    FollowUp {
        text: text.to_string(),
        ..FollowUp::default()
    }
}

fn applied(mission: Mission, events: &[MissionEvent]) -> Mission {
    events
        .iter()
        .fold(mission, |mission, event| apply(Some(mission), event))
}

/// A mission whose first run bound its session and is working on its first turn.
fn working() -> Mission {
    let created = apply(
        None,
        &MissionEvent::MissionCreated {
            mission_id: nagi_schema::ids::MissionId::parse("m1").unwrap(),
            title: "t".into(),
            repository_path: "/repo".into(),
            objective: "o".into(),
            acceptance_criteria: vec!["c".into()],
            at_millis: 1,
        },
    );
    let configured = apply(
        Some(created),
        &MissionEvent::ClosureConfigured {
            declarations: Vec::new(),
            declaration_set_digest: "d".into(),
            at_millis: 2,
        },
    );
    let started = run::decide_run_started(
        &configured,
        &StartRequest {
            run_id: "r1".into(),
            provider: MissionProvider::Codex,
            worktree_path: "/repo".into(),
            execute_declared_checks: false,
            execute_project_recipe: false,
            sandbox: SandboxGrant::ReadOnly,
            consent_id: None,
            model: None,
            reasoning_effort: None,
        },
        "abc",
        3,
    )
    .unwrap();
    let preparing = apply(Some(configured), &started);
    let bound = run::on_session_bound(&preparing, "r1", "thread-1", 4);
    applied(preparing, &bound)
}

/// The first turn completed: `review_required`, the provider stopped.
fn ended_after_a_turn() -> Mission {
    let mission = working();
    let ended = on_turn_ended(&mission, "r1", &TurnEnd::Completed, false, None, 5);
    let mission = applied(mission, &ended);
    let status = run::on_turn_end(&mission, "r1", &TurnEnd::Completed, false, 6);
    applied(mission, &status)
}

#[test]
fn a_follow_up_to_a_running_turn_is_queued_and_starts_when_the_turn_completes() {
    let mission = working();
    assert_eq!(mission.run.as_ref().unwrap().turns, 1);
    let (events, delivery) =
        decide_send(&mission, &said("also add tests"), &actor(), true, 5).unwrap();
    assert_eq!(delivery, FollowUpDelivery::Queued);
    let mission = applied(mission, &events);
    assert_eq!(mission.status, MissionStatus::Active);
    assert_eq!(mission.run.as_ref().unwrap().queued_follow_ups, 1);
    let ended = on_turn_ended(&mission, "r1", &TurnEnd::Completed, true, None, 6);
    let mission = applied(mission, &ended);
    let run = mission.run.as_ref().unwrap();
    assert_eq!((run.turns, run.queued_follow_ups), (2, 0));
    assert_eq!(run.last_turn_outcome.as_deref(), Some("completed"));
}

#[test]
fn an_interrupted_turn_drops_the_queue_and_blocks_with_who_interrupted() {
    let mission = working();
    let (events, _) = decide_send(&mission, &said("next"), &actor(), true, 5).unwrap();
    let mission = applied(mission, &events);
    let interrupt = decide_interrupt(&mission, &actor(), true, 6).unwrap();
    let mission = applied(mission, &interrupt);
    let end = TurnEnd::Interrupted {
        by: Some(actor().describe()),
    };
    let ended = on_turn_ended(&mission, "r1", &end, true, None, 7);
    let mission = applied(mission, &ended);
    let mission = applied(
        mission.clone(),
        &run::on_turn_end(&mission, "r1", &end, false, 8),
    );
    assert_eq!(mission.status, MissionStatus::Blocked);
    let reason = mission.status_reason.clone().unwrap();
    assert!(
        reason.starts_with("interrupted by uid 1000 pid 42"),
        "{reason}"
    );
    assert!(reason.contains("nagi mission send m1 TEXT"), "{reason}");
    let run = mission.run.as_ref().unwrap();
    assert_eq!(run.queued_follow_ups, 0, "an interrupt drops the queue");
    assert_eq!(run.last_turn_outcome.as_deref(), Some("interrupted"));
}

#[test]
fn a_follow_up_after_the_run_ended_reopens_it_and_makes_the_evidence_stale() {
    let mission = ended_after_a_turn();
    assert_eq!(mission.status, MissionStatus::ReviewRequired);
    let (events, delivery) =
        decide_send(&mission, &said("fix the typo"), &actor(), false, 9).unwrap();
    assert_eq!(delivery, FollowUpDelivery::Resumed);
    let mission = applied(mission, &events);
    assert_eq!(mission.status, MissionStatus::Preparing);
    let run = mission.run.as_ref().unwrap();
    assert_eq!((run.turns, run.ended_at_millis), (2, None));
    assert_eq!(
        run.sandbox,
        SandboxGrant::ReadOnly,
        "no authority is granted"
    );
    // The resumed provider confirms the same session: the mission works again.
    let bound = run::on_session_bound(&mission, "r1", "thread-1", 10);
    assert_eq!(
        applied(mission, &bound).status,
        MissionStatus::Active,
        "the same session resumes"
    );
}

#[test]
fn steering_is_refused_with_a_reason_when_it_cannot_apply() {
    let ended = ended_after_a_turn();
    let error = decide_interrupt(&ended, &actor(), false, 9).unwrap_err();
    assert!(matches!(error, MissionError::RunNotActive(_)), "{error:?}");
    let error = decide_stop(&ended, &actor(), false, 9).unwrap_err();
    assert!(matches!(error, MissionError::RunNotActive(_)), "{error:?}");
    let error = decide_send(&ended, &said("   "), &actor(), false, 9).unwrap_err();
    assert!(
        matches!(error, MissionError::InvalidMission(_)),
        "{error:?}"
    );
    let long = "x".repeat(MAX_FOLLOW_UP_BYTES + 1);
    assert!(decide_send(&ended, &said(&long), &actor(), false, 9).is_err());
    // A run that never bound a session has no conversation to continue.
    let mut no_session = ended.clone();
    no_session.run.as_mut().unwrap().provider_session_id = None;
    let error = decide_send(&no_session, &said("go on"), &actor(), false, 9).unwrap_err();
    assert!(
        error.to_string().contains("never got a provider session"),
        "{error}"
    );
    // Checks in flight: the follow-up waits for them.
    let mut checking = ended;
    checking.checks_in_flight = Some(crate::model::ChecksInFlight {
        run_id: "r1".into(),
        purpose: "verify".into(),
        started_at_millis: 9,
    });
    let error = decide_send(&checking, &said("go on"), &actor(), false, 9).unwrap_err();
    assert!(matches!(error, MissionError::Busy(_)), "{error:?}");
}

#[test]
fn a_stopped_run_blocks_with_who_stopped_it() {
    let mission = working();
    let stop = decide_stop(&mission, &actor(), true, 5).unwrap();
    let mission = applied(mission, &stop);
    let end = TurnEnd::Stopped {
        by: actor().describe(),
    };
    let mission = applied(
        mission.clone(),
        &run::on_turn_end(&mission, "r1", &end, false, 6),
    );
    assert_eq!(mission.status, MissionStatus::Blocked);
    assert!(
        mission
            .status_reason
            .as_deref()
            .unwrap()
            .starts_with("stopped by uid 1000 pid 42"),
        "{:?}",
        mission.status_reason
    );
    assert_eq!(
        mission.run.as_ref().unwrap().outcome.as_deref(),
        Some("stopped")
    );
}

#[test]
fn a_follow_up_that_resumes_may_change_the_model_and_a_queued_one_may_not() {
    let ended = ended_after_a_turn();
    let switch = FollowUp {
        text: "try the bigger model".into(),
        model: Some("gpt-5.4".into()),
        reasoning_effort: Some("high".into()),
    };
    let (events, _) = decide_send(&ended, &switch, &actor(), false, 9).unwrap();
    let run = applied(ended, &events).run.unwrap();
    assert_eq!(run.model.as_deref(), Some("gpt-5.4"));
    assert_eq!(run.reasoning_effort.as_deref(), Some("high"));
    let error = decide_send(&working(), &switch, &actor(), true, 9).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("takes effect when the provider starts"),
        "{error}"
    );
    let bad = FollowUp {
        model: Some("gpt 5; rm -rf".into()),
        ..said("x")
    };
    assert!(matches!(
        decide_send(&working(), &bad, &actor(), true, 9),
        Err(MissionError::InvalidMission(_))
    ));
}
