//! A two-turn conversation with each real CLI against the mock model (issue 16): the first
//! turn completes and the provider is shut down (no idle processes); `mission.send` starts it
//! again on its stored session with the follow-up as the next turn. The model then sees the
//! whole conversation — the mission prompt once, the first answer, the follow-up — and the
//! mission is proved again.

use serde_json::json;

use super::*;

const FIRST_ANSWER: &str = "The README says hello.";
const FOLLOW_UP: &str = "Now say it once more, in other words.";
const SECOND_ANSWER: &str = "Hello again, said differently.";

fn two_turn_conversation(provider: RealProvider) {
    let Some(cli) = installed_cli(provider.cli_name()) else {
        return;
    };
    let mut session = RealSession::new(provider, &cli, |workspace| {
        let scenario = json!({
            "workspace": workspace,
            "title": "Mock session",
            "steps": [{"text": FIRST_ANSWER}, {"text": SECOND_ANSWER}]
        });
        Scenario::from_json(&scenario.to_string()).expect("a valid scenario")
    });
    session.start_server();
    session.create_configured_mission("talk-m");
    session.start_run("talk-m", "run-1");
    let first = session.wait_for_review_with_evidence("talk-m");
    session.wait_for_pane_text(&first, FIRST_ANSWER);
    assert_eq!(
        first["run"]["live"], false,
        "no idle provider after a turn: {first}"
    );
    if provider == RealProvider::OpenCodeAcp {
        // `opencode acp` counts the turn's tokens in its prompt response (no cost per turn).
        assert_usage_is_what_the_mock_reported(&session, "talk-m", false);
    }

    let sent = session.env.ok(
        "mission.send",
        json!({"mission_id": "talk-m", "text": FOLLOW_UP}),
    );
    assert_eq!(sent["delivery"], "resumed", "{sent}");
    let deadline = Instant::now() + TURN_DEADLINE;
    let second = loop {
        let mission = session.mission("talk-m");
        if mission["run"]["turns"] == 2
            && mission["run"]["last_turn_outcome"] == "completed"
            && mission["status"] == "ready_to_close"
        {
            break mission;
        }
        assert!(
            Instant::now() < deadline,
            "the follow-up never completed and proved again:\n{}\n--- transcript\n{}",
            serde_json::to_string_pretty(&mission).unwrap(),
            session.transcript_text(&mission)
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    session.wait_for_pane_text(&second, SECOND_ANSWER);
    // The CLI streamed both answers, and the console drew them as they came.
    let streamed = session.streamed_agent_text("talk-m", "run-1");
    assert!(
        streamed.contains(FIRST_ANSWER) && streamed.contains(SECOND_ANSWER),
        "streamed: {streamed:?}"
    );
    assert_eq!(
        second["run"]["run_id"], "run-1",
        "the same run goes on: {second}"
    );
    assert_eq!(
        second["run"]["live"], false,
        "the provider stopped again: {second}"
    );

    // The model got the follow-up in the same conversation: the last request carries the
    // first answer and the follow-up, and the mission prompt once.
    let requests = session.mock.main_requests();
    let last = requests.last().expect("model requests");
    let body = last.body_text();
    assert!(
        body.contains(FOLLOW_UP),
        "the follow-up reached the model: {body}"
    );
    assert!(
        body.contains(FIRST_ANSWER),
        "the resumed session carries the first turn: {body}"
    );
    assert_eq!(objective_count(last, OBJECTIVE), 1, "{body}");
}

#[test]
fn a_codex_conversation_goes_on_in_its_thread_after_the_first_turn() {
    two_turn_conversation(RealProvider::Codex);
}

#[test]
fn a_claude_conversation_goes_on_in_its_session_after_the_first_turn() {
    two_turn_conversation(RealProvider::ClaudeCode);
}

#[test]
fn an_opencode_conversation_goes_on_in_its_session_after_the_first_turn() {
    two_turn_conversation(RealProvider::OpenCode);
}

#[test]
fn an_opencode_acp_conversation_goes_on_in_its_session_after_the_first_turn() {
    two_turn_conversation(RealProvider::OpenCodeAcp);
}
