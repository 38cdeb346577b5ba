//! Rendering snapshots on ratatui's `TestBackend`: each screen shows its keys and every
//! piece of what a consent covers.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;

use super::draw;
use crate::request::ServerUpdate;
use crate::state::App;
use crate::test_support::*;

/// The screen as text, one line per row.
fn render(app: &App, pane: Option<&vt100::Screen>) -> String {
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    terminal.draw(|frame| draw(frame, app, pane)).unwrap();
    let buffer = terminal.backend().buffer();
    let mut text = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            text.push_str(buffer[(x, y)].symbol());
        }
        text.push('\n');
    }
    text
}

fn assert_shows(screen: &str, needles: &[&str]) {
    for needle in needles {
        assert!(
            screen.contains(needle),
            "the screen does not show {needle:?}:\n{screen}"
        );
    }
}

/// In a fleet, each item names the host whose store and panes its ids belong to; on a
/// lone server, no host is shown.
#[test]
fn the_queue_names_each_items_host_in_a_fleet() {
    let mut on_b = approval_item();
    on_b.host = Some("b".into());
    let screen = render(&app_with(vec![on_b, question_item(false)]), None);
    assert_shows(&screen, &["m1 · approval · codex · on host b"]);
    assert_eq!(screen.matches("on host").count(), 1, "{screen}");
    // Its answer form names the host too.
    let mut on_b = approval_item();
    on_b.host = Some("b".into());
    let mut app = app_with(vec![on_b]);
    app.handle_key(key(KeyCode::Tab));
    app.handle_key(key(KeyCode::Enter));
    assert_shows(&render(&app, None), &["host: b", "pane: w1:p1"]);
}

#[test]
fn the_main_screen_shows_missions_the_run_evidence_and_the_queue_with_its_keys() {
    let app = app_with(vec![question_item(false), approval_item()]);
    let screen = render(&app, None);
    assert_shows(
        &screen,
        &[
            "Missions (1)",
            "m1",
            "active",
            "the provider is working",
            "unit",
            "passed",
            "exit 0",
            "review",
            "manual_missing",
            "r1 · codex",
            "pane w1:p1",
            "provider_sandbox",
            "Attention (2)",
            "[low]",
            "Which database?",
            "[high]",
            "run rm -rf build",
        ],
    );
    assert_shows(
        &screen,
        &[
            " s ",
            "start",
            " e ",
            "evidence",
            " h ",
            "handoff",
            " c ",
            "close",
            " w ",
            "watch pane",
            " ? ",
            "help",
            " q ",
            "quit",
        ],
    );
}

#[test]
fn the_consent_dialog_shows_every_line_the_recipe_scope_and_the_digest() {
    let mut app = app_with(vec![]);
    app.handle_key(char_key('s'));
    let requests = app.handle_key(key(KeyCode::Enter));
    let crate::request::Request::Preview(action) = requests[0].clone() else {
        panic!()
    };
    let waiting = render(&app, None);
    assert_shows(&waiting, &["asking the server what this covers"]);
    app.apply(ServerUpdate::Previewed {
        action,
        preview: recipe_preview(),
    });
    let screen = render(&app, None);
    assert_shows(
        &screen,
        &[
            "[high] Start r1",
            "Start run r1 of mission m1 (Fix login)",
            "MAY CHANGE FILES in /work/repo",
            "recipe setup: npm ci",
            "Project recipe /work/repo/.nagi/project.toml",
            "setup runs: npm ci",
            "service web starts: npm run dev",
            "port in $PORT, healthy when http://127.0.0.1:{port}/health answers",
            "copies ignored file .env.example",
            "cleanup runs: rm -rf tmp",
            &format!("scope digest {}", "5".repeat(64)),
            &format!("digest {}", "f".repeat(64)),
            "y  approve",
            " n  deny",
            "y approves exactly this",
        ],
    );
}

/// A refusal's whole message is readable in a small terminal: the dialog takes the
/// terminal's width and its status area grows with the wrapped message.
#[test]
fn a_long_refusal_is_shown_whole_in_a_small_terminal() {
    let mut app = app_with(vec![]);
    app.handle_key(char_key('s'));
    let requests = app.handle_key(key(KeyCode::Enter));
    let crate::request::Request::Preview(action) = requests[0].clone() else {
        panic!()
    };
    app.apply(ServerUpdate::Previewed {
        action,
        preview: recipe_preview(),
    });
    let decide = app.handle_key(char_key('y')).remove(0);
    let long = format!(
        "the handoff artifact changed since it was previewed ({}); the mission and workspace now give another digest END-OF-REFUSAL",
        "details ".repeat(20)
    );
    app.apply(ServerUpdate::Failed {
        request: decide,
        code: Some("handoff_artifact_changed".into()),
        message: long,
    });
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal.draw(|frame| draw(frame, &app, None)).unwrap();
    let buffer = terminal.backend().buffer();
    let mut screen = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            screen.push_str(buffer[(x, y)].symbol());
        }
        screen.push('\n');
    }
    assert!(
        screen.contains("END-OF-REFUSAL"),
        "the end of the message is on screen:\n{screen}"
    );
    assert!(screen.contains("handoff_artifact_changed"), "{screen}");
}

#[test]
fn the_answer_form_shows_options_free_text_and_the_approval_keys() {
    let mut app = app_with(vec![question_item(false)]);
    app.handle_key(key(KeyCode::Tab));
    app.handle_key(key(KeyCode::Enter));
    app.handle_key(char_key(' '));
    let screen = render(&app, None);
    assert_shows(
        &screen,
        &[
            "Answer the provider",
            "DB — Which database? (choose one)",
            "(•) sqlite — a file",
            "( ) postgres",
            "other:",
            "Enter",
            "preview consent",
        ],
    );

    let mut app = app_with(vec![approval_item()]);
    app.handle_key(key(KeyCode::Tab));
    app.handle_key(key(KeyCode::Enter));
    let screen = render(&app, None);
    assert_shows(
        &screen,
        &[
            "[high] approval",
            "run rm -rf build",
            "approve once",
            "approve for the session",
            " d ",
            "deny",
        ],
    );
}

#[test]
fn the_forms_show_their_fields() {
    let mut app = app_with(vec![]);
    app.handle_key(char_key('s'));
    for _ in 0..3 {
        app.handle_key(key(KeyCode::Right));
    }
    let screen = render(&app, None);
    assert_shows(
        &screen,
        &[
            "Start a run",
            "‹ acp ›",
            "run id",
            "r2",
            "[x] always, for an ACP agent",
            "project recipe",
            "declared checks",
        ],
    );

    let mut app = app_with(vec![]);
    app.handle_key(char_key('e'));
    type_text(&mut app, "");
    let screen = render(&app, None);
    assert_shows(
        &screen,
        &[
            "Manual evidence",
            "‹ review ›",
            "reviewer",
            "local-user",
            "reason",
            "override",
        ],
    );

    let mut app = app_with(vec![]);
    app.handle_key(char_key('c'));
    let screen = render(&app, None);
    assert_shows(
        &screen,
        &[
            "Close m1 — Title of m1?",
            "runs the declared command checks again",
            "y closes",
        ],
    );
}

#[test]
fn the_handoff_screen_shows_the_artifact_and_its_digest() {
    let mut app = app_with(vec![]);
    app.handle_key(char_key('h'));
    app.handle_key(key(KeyCode::Enter));
    app.apply(ServerUpdate::HandoffPreviewed {
        mission_id: "m1".into(),
        to: nagi_schema::mission::MissionProvider::ClaudeCode,
        artifact: artifact(),
    });
    let screen = render(&app, None);
    assert_shows(
        &screen,
        &[
            "‹ claude_code ›",
            "run r1 (codex) → claude_code as run r1-handoff-1",
            "changed src/login.rs",
            "1 file changed (uncommitted changes)",
            "warning: the proof is not verified",
            &format!("artifact sha256: {}", "a1".repeat(32)),
            "preview consent to start",
        ],
    );
}

#[test]
fn help_lists_the_keys_of_every_screen() {
    let mut app = app_with(vec![]);
    app.handle_key(char_key('?'));
    let screen = render(&app, None);
    assert_shows(
        &screen,
        &[
            "Help",
            "Main screen",
            "Forms",
            "Answering",
            "Consent dialog",
            "record manual evidence",
            "approve exactly what is shown",
        ],
    );
}

#[test]
fn long_operations_show_progress_and_a_watched_pane_shows_live() {
    let mut app = app_with(vec![]);
    app.missions[0].status = nagi_schema::mission::MissionStatus::Preparing;
    app.missions[0].status_reason = Some("the provider is starting".into());
    let screen = render(&app, None);
    assert_shows(&screen, &["preparing", "the provider is starting"]);

    app.handle_key(char_key('w'));
    let mut parser = vt100::Parser::new(10.try_into().unwrap(), 60.try_into().unwrap(), 0);
    parser.process(b"codex> reading the readme\r\ndone");
    let screen = render(&app, Some(parser.screen()));
    assert_shows(
        &screen,
        &[
            "Pane w1:p1 of m1",
            "joining",
            "codex> reading the readme",
            "done",
        ],
    );
}
