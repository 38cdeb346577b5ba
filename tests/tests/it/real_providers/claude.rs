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
    let write_result = session
        .tool_result_sent_to_model("call_mock_1")
        .unwrap_or_default();
    assert!(
        write_result.contains("No such tool available") || write_result.contains("disabled"),
        "Write must be unavailable: {write_result:?}"
    );
}
