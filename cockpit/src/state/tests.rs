//! The reducer: keys and server updates in, state and requests out.

use std::collections::BTreeMap;

use nagi_schema::cockpit::{CockpitAction, CockpitDecision, CockpitOutcome};
use nagi_schema::events::{MissionEventDetail, MissionEventV1};
use nagi_schema::mission::{MissionProvider, MissionResponseDecision, MissionStatus};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::*;
use crate::test_support::*;

fn preview_of(requests: &[Request]) -> CockpitAction {
    match requests {
        [Request::Preview(action)] => action.clone(),
        other => panic!("expected one preview request, got {other:?}"),
    }
}

fn dialog(app: &App) -> &consent::ConsentDialog {
    match &app.screen {
        Screen::Consent(dialog) => dialog,
        other => panic!("expected the consent dialog, got {other:?}"),
    }
}

#[test]
fn starting_an_acp_run_previews_then_decides_with_the_shown_digest() {
    let mut app = app_with(vec![]);
    assert!(app.handle_key(char_key('s')).is_empty());
    assert!(matches!(app.screen, Screen::Start(_)));
    // codex → claude_code → open_code → acp
    for _ in 0..3 {
        app.handle_key(key(KeyCode::Right));
    }
    // Write scope switched off is ignored for ACP.
    for _ in 0..4 {
        app.handle_key(key(KeyCode::Down));
    }
    app.handle_key(char_key(' '));
    let action = preview_of(&app.handle_key(key(KeyCode::Enter)));
    assert_eq!(
        action,
        CockpitAction::StartRun {
            mission_id: "m1".into(),
            run_id: "r2".into(),
            provider: MissionProvider::Acp,
            worktree_path: None,
            worktree: true,
            base: None,
            write_scope: true,
            execute_project_recipe: false,
            execute_declared_checks: true,
            model: None,
            reasoning_effort: None,
        }
    );
    assert!(dialog(&app).preview.is_none());
    // No decision before the preview arrived.
    assert!(app.handle_key(char_key('y')).is_empty());
    app.apply(ServerUpdate::Previewed {
        action: action.clone(),
        preview: recipe_preview(),
    });
    let decide = app.handle_key(char_key('y'));
    assert_eq!(
        decide,
        vec![Request::Decide {
            action: action.clone(),
            shown_digest: "f".repeat(64),
            decision: CockpitDecision::Approve
        }]
    );
    assert!(
        app.handle_key(char_key('y')).is_empty(),
        "one decision at a time"
    );
    let outcome = CockpitOutcome {
        consent_id: "consent:1".into(),
        decision: CockpitDecision::Approve,
        summary: "run r2 started".into(),
        mission: None,
    };
    assert_eq!(
        app.apply(ServerUpdate::Decided { action, outcome }),
        vec![Request::Refresh]
    );
    assert_eq!(app.screen, Screen::Main);
    assert!(app.notice.as_ref().unwrap().text.contains("run r2 started"));
}

#[test]
fn the_start_form_is_read_only_by_default_except_for_an_acp_agent() {
    let mut app = app_with(vec![]);
    app.handle_key(char_key('s'));
    let codex = preview_of(&app.handle_key(key(KeyCode::Enter)));
    assert!(
        matches!(
            codex,
            CockpitAction::StartRun {
                provider: MissionProvider::Codex,
                write_scope: false,
                ..
            }
        ),
        "{codex:?}"
    );
    let mut app = app_with(vec![]);
    app.handle_key(char_key('s'));
    app.handle_key(key(KeyCode::Right));
    let claude = preview_of(&app.handle_key(key(KeyCode::Enter)));
    assert!(
        matches!(
            claude,
            CockpitAction::StartRun {
                provider: MissionProvider::ClaudeCode,
                write_scope: false,
                ..
            }
        ),
        "{claude:?}"
    );
    let mut app = app_with(vec![]);
    app.handle_key(char_key('s'));
    for _ in 0..3 {
        app.handle_key(key(KeyCode::Right));
    }
    let acp = preview_of(&app.handle_key(key(KeyCode::Enter)));
    assert!(
        matches!(
            acp,
            CockpitAction::StartRun {
                provider: MissionProvider::Acp,
                write_scope: true,
                ..
            }
        ),
        "{acp:?}"
    );
}

#[test]
fn denying_sends_a_deny_decision_and_escape_decides_nothing() {
    let mut app = app_with(vec![]);
    app.handle_key(char_key('s'));
    let action = preview_of(&app.handle_key(key(KeyCode::Enter)));
    app.apply(ServerUpdate::Previewed {
        action: action.clone(),
        preview: recipe_preview(),
    });
    assert!(app.handle_key(key(KeyCode::Esc)).is_empty());
    assert!(
        matches!(app.screen, Screen::Start(_)),
        "Esc goes back to the form"
    );
    let action = preview_of(&app.handle_key(key(KeyCode::Enter)));
    app.apply(ServerUpdate::Previewed {
        action: action.clone(),
        preview: recipe_preview(),
    });
    let requests = app.handle_key(char_key('n'));
    assert_eq!(
        requests,
        vec![Request::Decide {
            action,
            shown_digest: "f".repeat(64),
            decision: CockpitDecision::Deny
        }]
    );
}

#[test]
fn a_stale_consent_asks_for_the_new_preview_and_says_why() {
    let mut app = app_with(vec![]);
    app.handle_key(char_key('s'));
    let action = preview_of(&app.handle_key(key(KeyCode::Enter)));
    app.apply(ServerUpdate::Previewed {
        action: action.clone(),
        preview: recipe_preview(),
    });
    let decide = app.handle_key(char_key('y')).remove(0);
    let again = app.apply(ServerUpdate::Failed {
        request: decide,
        code: Some("consent_stale".into()),
        message: "the recipe changed".into(),
    });
    assert_eq!(again, vec![Request::Preview(action.clone())]);
    let shown = dialog(&app);
    assert!(shown.preview.is_none() && shown.deciding.is_none());
    assert!(shown.note.as_ref().unwrap().contains("the recipe changed"));
    // Any other refusal is shown in the dialog and nothing is retried.
    app.apply(ServerUpdate::Previewed {
        action: action.clone(),
        preview: recipe_preview(),
    });
    let decide = app.handle_key(char_key('y')).remove(0);
    let none = app.apply(ServerUpdate::Failed {
        request: decide,
        code: Some("consent_forbidden".into()),
        message: "a managed pane".into(),
    });
    assert!(none.is_empty());
    assert!(
        dialog(&app)
            .error
            .as_ref()
            .unwrap()
            .contains("consent_forbidden")
    );
}

#[test]
fn a_question_is_answered_with_an_option_or_free_text() {
    let mut app = app_with(vec![question_item(false)]);
    app.handle_key(key(KeyCode::Tab));
    app.handle_key(key(KeyCode::Enter));
    assert!(matches!(app.screen, Screen::Answer(_)));
    app.handle_key(key(KeyCode::Down));
    app.handle_key(char_key(' '));
    let action = preview_of(&app.handle_key(key(KeyCode::Enter)));
    let CockpitAction::Respond {
        attention_id,
        decision,
        answers,
        run_id,
        ..
    } = action
    else {
        panic!()
    };
    assert_eq!(
        (attention_id.as_str(), run_id.as_str(), decision),
        ("attention:q1", "r1", MissionResponseDecision::Answer)
    );
    assert_eq!(
        answers,
        BTreeMap::from([("q-db".to_string(), vec!["postgres".to_string()])])
    );

    // Free text on the "other" row replaces a chosen option of a single-choice question.
    let mut app = app_with(vec![question_item(false)]);
    app.handle_key(key(KeyCode::Tab));
    app.handle_key(key(KeyCode::Enter));
    app.handle_key(char_key(' '));
    app.handle_key(key(KeyCode::Up));
    assert!(app.screen.takes_text());
    type_text(&mut app, "mysql?");
    let CockpitAction::Respond { answers, .. } = preview_of(&app.handle_key(key(KeyCode::Enter)))
    else {
        panic!()
    };
    assert_eq!(answers["q-db"], vec!["mysql?".to_string()]);
}

#[test]
fn a_multiple_choice_question_needs_an_answer_and_takes_several() {
    let mut app = app_with(vec![question_item(true)]);
    app.handle_key(key(KeyCode::Tab));
    app.handle_key(key(KeyCode::Enter));
    assert!(app.handle_key(key(KeyCode::Enter)).is_empty());
    assert!(app.notice.as_ref().unwrap().is_error);
    app.handle_key(char_key(' '));
    app.handle_key(key(KeyCode::Down));
    app.handle_key(char_key(' '));
    let CockpitAction::Respond { answers, .. } = preview_of(&app.handle_key(key(KeyCode::Enter)))
    else {
        panic!()
    };
    assert_eq!(
        answers["q-db"],
        vec!["sqlite".to_string(), "postgres".to_string()]
    );
}

#[test]
fn approvals_are_once_for_the_session_or_denied() {
    for (letter, expected) in [
        ('o', MissionResponseDecision::ApproveOnce),
        ('s', MissionResponseDecision::ApproveForSession),
        ('d', MissionResponseDecision::Deny),
    ] {
        let mut app = app_with(vec![approval_item()]);
        app.handle_key(key(KeyCode::Tab));
        app.handle_key(key(KeyCode::Enter));
        let CockpitAction::Respond {
            decision, answers, ..
        } = preview_of(&app.handle_key(char_key(letter)))
        else {
            panic!()
        };
        assert_eq!(decision, expected);
        assert!(answers.is_empty());
    }
}

#[test]
fn warnings_can_only_be_dismissed_with_a_reason() {
    let mut app = app_with(vec![warning_item()]);
    app.handle_key(key(KeyCode::Tab));
    app.handle_key(key(KeyCode::Enter));
    assert!(matches!(app.screen, Screen::Dismiss(_)));
    assert!(
        app.handle_key(key(KeyCode::Enter)).is_empty(),
        "a reason is required"
    );
    type_text(&mut app, "expected: I edited it");
    let action = preview_of(&app.handle_key(key(KeyCode::Enter)));
    assert_eq!(
        action,
        CockpitAction::DismissAttention {
            attention_id: "attention:w1".into(),
            mission_id: Some("m1".into()),
            reason: "expected: I edited it".into()
        }
    );
}

/// In a fleet, two hosts' items can share an attention id; the one the person moved to is
/// the one dismissed, named with its mission so that the dismissal goes to its host.
#[test]
fn the_second_of_two_items_sharing_an_attention_id_is_the_one_selected_and_dismissed() {
    let mut on_b = warning_item();
    on_b.mission_id = "m0".into();
    on_b.host = Some("b".into());
    let mut on_a = warning_item();
    on_a.host = Some("a".into());
    let mut app = app_with(vec![on_b, on_a]);
    app.handle_key(key(KeyCode::Tab));
    assert_eq!(app.selected_attention().unwrap().mission_id, "m0");
    app.handle_key(key(KeyCode::Down));
    assert_eq!(app.selected_attention_index(), Some(1));
    assert_eq!(app.selected_attention().unwrap().mission_id, "m1");
    app.handle_key(key(KeyCode::Enter));
    assert!(matches!(app.screen, Screen::Dismiss(_)), "{:?}", app.screen);
    type_text(&mut app, "seen");
    let action = preview_of(&app.handle_key(key(KeyCode::Enter)));
    assert_eq!(
        action,
        CockpitAction::DismissAttention {
            attention_id: "attention:w1".into(),
            mission_id: Some("m1".into()),
            reason: "seen".into()
        }
    );
}

#[test]
fn manual_evidence_names_the_reviewer_and_a_reason() {
    let mut app = app_with(vec![]);
    app.handle_key(char_key('e'));
    let Screen::Evidence(form) = &app.screen else {
        panic!("{:?}", app.screen)
    };
    assert_eq!(form.check_ids, vec!["review".to_string()]);
    // Reviewer field: replace the default name.
    app.handle_key(key(KeyCode::Down));
    app.handle_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    type_text(&mut app, "alice");
    app.handle_key(key(KeyCode::Down));
    assert!(
        app.handle_key(key(KeyCode::Enter)).is_empty(),
        "a reason is required"
    );
    type_text(&mut app, "read the diff");
    app.handle_key(key(KeyCode::Down));
    app.handle_key(char_key(' '));
    let action = preview_of(&app.handle_key(key(KeyCode::Enter)));
    assert_eq!(
        action,
        CockpitAction::ManualEvidence {
            mission_id: "m1".into(),
            check_id: "review".into(),
            reviewer: "alice".into(),
            reason: "read the diff".into(),
            is_override: true,
        }
    );
}

#[test]
fn a_handoff_previews_the_artifact_then_consents_to_exactly_it() {
    let mut app = app_with(vec![]);
    app.handle_key(char_key('h'));
    let requests = app.handle_key(key(KeyCode::Enter));
    assert_eq!(
        requests,
        vec![Request::HandoffPreview {
            mission_id: "m1".into(),
            to: MissionProvider::ClaudeCode
        }]
    );
    app.apply(ServerUpdate::HandoffPreviewed {
        mission_id: "m1".into(),
        to: MissionProvider::ClaudeCode,
        artifact: artifact(),
    });
    let action = preview_of(&app.handle_key(key(KeyCode::Enter)));
    assert_eq!(
        action,
        CockpitAction::HandoffStart {
            mission_id: "m1".into(),
            to: MissionProvider::ClaudeCode,
            generated_at_millis: 42,
            artifact_sha256: "a1".repeat(32),
            write_scope: false,
        }
    );
    // Another target discards the artifact: it names its target.
    app.handle_key(key(KeyCode::Esc));
    app.handle_key(key(KeyCode::Right));
    let Screen::Handoff(form) = &app.screen else {
        panic!()
    };
    assert!(form.artifact.is_none());
}

#[test]
fn close_asks_first_and_watch_toggles() {
    let mut app = app_with(vec![]);
    app.handle_key(char_key('c'));
    assert!(app.handle_key(char_key('n')).is_empty());
    assert_eq!(app.screen, Screen::Main);
    app.handle_key(char_key('c'));
    assert_eq!(
        app.handle_key(char_key('y')),
        vec![Request::Close {
            mission_id: "m1".into()
        }]
    );
    assert_eq!(
        app.handle_key(char_key('w')),
        vec![Request::Watch {
            pane_id: "w1:p1".into()
        }]
    );
    app.apply(ServerUpdate::Watch(WatchStatus::Joined {
        pane_id: "w1:p1".into(),
    }));
    assert_eq!(app.watching.as_ref().unwrap().state, WatchState::Live);
    assert_eq!(
        app.handle_key(key(KeyCode::Esc)),
        vec![Request::StopWatching]
    );
    assert!(app.watching.is_none());
}

#[test]
fn help_opens_on_question_mark_except_in_text_fields() {
    let mut app = app_with(vec![]);
    app.handle_key(char_key('?'));
    assert!(app.help_open);
    app.handle_key(char_key('x'));
    assert!(
        !app.help_open && app.screen == Screen::Main,
        "any key closes help and does nothing else"
    );
    app.handle_key(char_key('s'));
    app.handle_key(key(KeyCode::Down));
    app.handle_key(char_key('?'));
    let Screen::Start(form) = &app.screen else {
        panic!()
    };
    assert_eq!(form.run_id.text, "r2?", "in a text field ? is text");
    app.handle_key(key(KeyCode::F(1)));
    assert!(app.help_open);
}

#[test]
fn check_runs_show_as_progress_until_they_finish() {
    let mut app = app_with(vec![]);
    let event = |detail| MissionEventV1 {
        seq: 9,
        mission_id: "m1".into(),
        at_millis: 1,
        status: MissionStatus::Active,
        detail,
    };
    let started = MissionEventDetail::MissionChecksStarted {
        run_id: "r1".into(),
        purpose: "turn".into(),
        check_count: 2,
    };
    assert_eq!(
        app.apply(ServerUpdate::MissionEvent(event(started))),
        vec![Request::Refresh]
    );
    let busy = app.busy_with(&app.missions[0]).unwrap();
    assert!(busy.contains("running 2 checks"), "{busy}");
    app.apply(ServerUpdate::MissionEvent(event(
        MissionEventDetail::MissionChecksFinished {
            run_id: "r1".into(),
        },
    )));
    assert_eq!(app.busy_with(&app.missions[0]), None);
    app.missions[0].status = MissionStatus::Preparing;
    app.missions[0].status_reason = Some("the provider is starting".into());
    assert_eq!(
        app.busy_with(&app.missions[0]).as_deref(),
        Some("the provider is starting")
    );
}

#[test]
fn selections_follow_ids_across_snapshots_and_quit_stops_watching() {
    let mut app = App::new();
    let missions = vec![
        mission("a", MissionStatus::Draft),
        mission("b", MissionStatus::Active),
    ];
    app.apply(ServerUpdate::Snapshot {
        missions: missions.clone(),
        attention: vec![],
    });
    app.handle_key(key(KeyCode::Down));
    assert_eq!(app.selected_mission.as_deref(), Some("b"));
    app.apply(ServerUpdate::Snapshot {
        missions: missions.into_iter().rev().collect(),
        attention: vec![],
    });
    assert_eq!(app.selected_mission.as_deref(), Some("b"));
    assert_eq!(app.selected_mission_index(), Some(0));
    app.handle_key(char_key('w'));
    assert_eq!(
        app.handle_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
        vec![Request::StopWatching]
    );
    assert!(app.quit);
}

#[test]
fn hello_and_lost_connections_are_shown() {
    let mut app = App::new();
    app.apply(ServerUpdate::Hello {
        consent_allowed: false,
        reason: Some("a managed pane".into()),
    });
    assert_eq!(
        app.consent,
        ConsentPermission::Refused("a managed pane".into())
    );
    app.apply(ServerUpdate::Unreachable {
        message: "connection refused".into(),
    });
    assert_eq!(
        app.connection,
        Connection::Unreachable("connection refused".into())
    );
    app.apply(ServerUpdate::Snapshot {
        missions: vec![],
        attention: vec![],
    });
    assert_eq!(app.connection, Connection::Connected);
}

#[test]
fn d_asks_for_the_selected_missions_diff_and_shows_it_until_esc() {
    let mut app = app_with(vec![]);
    let requests = app.handle_key(char_key('d'));
    assert_eq!(
        requests,
        vec![Request::Diff {
            mission_id: "m1".into()
        }]
    );
    assert!(matches!(&app.screen, Screen::Diff(view) if view.lines.is_none()));
    let diff = nagi_schema::worktree::MissionDiffV1 {
        mission_id: "m1".into(),
        worktree_path: "/trees/repo/m1".into(),
        branch: "mission/m1".into(),
        base_revision: "b".repeat(40),
        files: Vec::new(),
        additions: 0,
        deletions: 0,
        patch: String::new(),
        omitted_patch_bytes: 0,
    };
    app.apply(ServerUpdate::DiffShown { diff });
    match &app.screen {
        Screen::Diff(view) => assert_eq!(view.lines.as_ref().unwrap()[1], "no changes"),
        other => panic!("expected the diff view, got {other:?}"),
    }
    assert!(app.handle_key(key(KeyCode::Esc)).is_empty());
    assert!(matches!(app.screen, Screen::Main));
    // A refused diff names the code and goes back to the main screen.
    app.handle_key(char_key('d'));
    app.apply(ServerUpdate::Failed {
        request: Request::Diff {
            mission_id: "m1".into(),
        },
        code: Some("mission_not_ready".into()),
        message: "mission m1 has not started".into(),
    });
    assert!(matches!(app.screen, Screen::Main));
}

#[test]
fn v_verifies_the_selected_mission_and_refreshes_when_accepted() {
    let mut app = app_with(vec![]);
    assert_eq!(
        app.handle_key(char_key('v')),
        vec![Request::Verify {
            mission_id: "m1".into()
        }]
    );
    let mission = app.missions[0].clone();
    assert_eq!(
        app.apply(ServerUpdate::VerifyAccepted { mission }),
        vec![Request::Refresh]
    );
}

#[test]
fn l_asks_to_land_the_selected_mission_and_s_to_sync_it() {
    let mut app = app_with(vec![]);
    let action = preview_of(&app.handle_key(char_key('L')));
    assert_eq!(
        action,
        CockpitAction::Land {
            mission_id: "m1".into(),
            into: None,
            strategy: nagi_schema::land::LandStrategy::Squash,
            message: None,
            push_remote: None,
            pull_request: false,
        }
    );
    assert!(
        matches!(app.screen, Screen::Consent(_)),
        "the consent dialog is open"
    );
    app.handle_key(key(KeyCode::Esc));
    let action = preview_of(&app.handle_key(char_key('S')));
    assert_eq!(
        action,
        CockpitAction::Sync {
            mission_id: "m1".into(),
            onto: None
        }
    );
}

#[test]
fn an_opened_attention_item_and_a_mission_that_waits_ring_the_cockpit() {
    let mut app = app_with(vec![]);
    let event = |status, detail| MissionEventV1 {
        seq: 9,
        mission_id: "m1".into(),
        at_millis: 1,
        status,
        detail,
    };
    app.apply(ServerUpdate::MissionEvent(event(
        MissionStatus::Active,
        MissionEventDetail::MissionAttentionChanged {
            attention_id: "a1".into(),
            state: "open".into(),
            kind: None,
            risk: None,
        },
    )));
    app.apply(ServerUpdate::MissionEvent(event(
        MissionStatus::Active,
        MissionEventDetail::MissionChecksFinished {
            run_id: "r1".into(),
        },
    )));
    app.apply(ServerUpdate::MissionEvent(event(
        MissionStatus::Blocked,
        MissionEventDetail::MissionStatusChanged {
            reason: Some("stopped by uid 1000; continue with nagi mission send m1 TEXT".into()),
        },
    )));
    let titles: Vec<&str> = app
        .alerts
        .iter()
        .map(|alert| alert.title.as_str())
        .collect();
    assert_eq!(
        titles,
        ["nagi: mission m1 needs you", "nagi: mission m1 is blocked"]
    );
    let bytes = app.alerts[1].escape_sequences();
    assert!(bytes.starts_with('\x07'), "the bell first: {bytes:?}");
    assert!(
        bytes.contains("\x1b]9;nagi: mission m1 is blocked: stopped by uid 1000  continue"),
        "{bytes:?}"
    );
    assert!(
        bytes.contains("\x1b]777;notify;nagi: mission m1 is blocked;stopped by uid 1000  continue"),
        "{bytes:?}"
    );
}
