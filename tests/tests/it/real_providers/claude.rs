//! A real Claude Code (`claude -p --input-format stream-json`) mission against the mock
//! Messages API.

use serde_json::json;

use super::*;

const PROVIDER: RealProvider = RealProvider::ClaudeCode;

#[test]
fn claude_mission_reads_cannot_write_and_reaches_review_with_passing_evidence() {
    let Some(cli) = installed_cli(PROVIDER.cli_name()) else {
        return;
    };
    let final_text = "Claude mission: the README was read.";
    // In plan mode with the read-only tool list, Write is not even offered.
    let write_call = json!({"write": {"path": WRITTEN_FILE, "content": "should not exist\n"}});
    let mut session = RealSession::new(PROVIDER, &cli, |workspace| {
        read_write_scenario(workspace, write_call, final_text, 0)
    });
    session.start_server();
    session.create_configured_mission("claude-m");
    let before = snapshot(&session.repo.path);
    let started = session.start_mission("claude-m", "run-1");
    assert_eq!(started["type"], "mission_run_started", "{started}");
    assert_completed_read_only_mission(&session, "claude-m", final_text, &before);
    assert_usage_is_what_the_mock_reported(&session, "claude-m", true);
    let write_result = session
        .tool_result_sent_to_model("call_mock_1")
        .unwrap_or_default();
    assert!(
        write_result.contains("No such tool available") || write_result.contains("disabled"),
        "Write must be unavailable: {write_result:?}"
    );
}

/// A write-scope run, consented in the cockpit: Claude Code asks before its Write, the
/// person approves it, the file is written and the mission reaches review.
fn claude_write_scope_mission_writes_after_an_approval(cli: &std::path::Path) {
    let final_text = "Claude mission: the file was written.";
    let written = "written-with-consent.txt";
    let write_call = json!({"write": {"path": written, "content": "approved\n"}});
    let mut session = RealSession::new(PROVIDER, cli, |workspace| {
        read_write_scenario(workspace, write_call, final_text, 0)
    });
    session.start_server();
    session.create_configured_mission("claude-w");
    let action = json!({"kind": "start_run", "mission_id": "claude-w", "run_id": "run-1",
                        "provider": PROVIDER.wire_name(), "write_scope": true,
                        "execute_declared_checks": true});
    decide_in_the_cockpit(&session, &action);
    let mission = wait_for_mission(
        &session.env,
        "claude-w",
        "the Write's approval request",
        |m| m["unresolved_attention_count"] == 1 || m["run"]["live"] == false,
    );
    assert_eq!(
        mission["unresolved_attention_count"],
        1,
        "the run should ask before writing; transcript:\n{}",
        session.transcript_text(&mission)
    );
    assert_eq!(
        mission["run"]["enforcement"], "workspace_write",
        "{mission}"
    );
    let item = session
        .env
        .ok("attention.list", json!({"mission_id": "claude-w"}))["items"][0]
        .clone();
    let respond = json!({"kind": "respond", "mission_id": "claude-w", "run_id": "run-1",
                         "attention_id": item["attention_id"], "decision": "approve_once"});
    decide_in_the_cockpit(&session, &respond);
    let mission = session.wait_for_review_with_evidence("claude-w");
    assert_eq!(
        std::fs::read_to_string(session.repo.path.join(written))
            .ok()
            .as_deref(),
        Some("approved\n"),
        "the approved Write changed the worktree; transcript:\n{}",
        session.transcript_text(&mission)
    );
    session.wait_for_pane_text(&mission, final_text);
}

fn decide_in_the_cockpit(session: &RealSession, action: &serde_json::Value) {
    let preview = session.env.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
    let decided = session.env.call(
        "cockpit.decide",
        json!({"action": action, "shown_digest": preview["digest"], "decision": "approve"}),
    );
    assert_eq!(decided["result"]["type"], "cockpit_decided", "{decided}");
}

#[test]
fn claude_write_scope_with_the_newest_supported_claude_code() {
    let Some(cli) = installed_cli(PROVIDER.cli_name()) else {
        return;
    };
    claude_write_scope_mission_writes_after_an_approval(&cli);
}

#[test]
fn claude_write_scope_with_the_oldest_supported_claude_code() {
    let Some(cli) = nagi_tests::real_cli::installed_oldest_cli(PROVIDER.cli_name()) else {
        return;
    };
    claude_write_scope_mission_writes_after_an_approval(&cli);
}

#[test]
fn claude_read_only_mission_with_the_oldest_supported_claude_code() {
    let Some(cli) = nagi_tests::real_cli::installed_oldest_cli(PROVIDER.cli_name()) else {
        return;
    };
    let final_text = "Claude mission (oldest): the README was read.";
    let write_call = json!({"write": {"path": WRITTEN_FILE, "content": "should not exist\n"}});
    let mut session = RealSession::new(PROVIDER, &cli, |workspace| {
        read_write_scenario(workspace, write_call, final_text, 0)
    });
    session.start_server();
    session.create_configured_mission("claude-old");
    let before = snapshot(&session.repo.path);
    let started = session.start_mission("claude-old", "run-1");
    assert_eq!(started["type"], "mission_run_started", "{started}");
    assert_completed_read_only_mission(&session, "claude-old", final_text, &before);
}
