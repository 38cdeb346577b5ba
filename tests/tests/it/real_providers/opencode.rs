//! A real OpenCode (`opencode serve`) mission against the mock Chat Completions API.

use serde_json::json;

use super::*;

const PROVIDER: RealProvider = RealProvider::OpenCode;

#[test]
fn opencode_mission_reads_cannot_write_and_reaches_review_with_passing_evidence() {
    let Some(cli) = installed_cli(PROVIDER.cli_name()) else {
        return;
    };
    let final_text = "OpenCode mission: the README was read.";
    // `OPENCODE_PERMISSION` denies edits, so the write tool is not offered at all.
    let write_call = json!({"write": {"path": WRITTEN_FILE, "content": "should not exist\n"}});
    let mut session = RealSession::new(PROVIDER, &cli, |workspace| {
        read_write_scenario(workspace, write_call, final_text, 0)
    });
    session.start_server();
    session.create_configured_mission("opencode-m");
    let before = snapshot(&session.repo.path);
    let started = session.start_mission("opencode-m", "run-1");
    assert_eq!(started["type"], "mission_run_started", "{started}");
    assert_completed_read_only_mission(&session, "opencode-m", final_text, &before);
    assert_usage_is_what_the_mock_reported(&session, "opencode-m", false);
    let write_result = session
        .tool_result_sent_to_model("call_mock_1")
        .unwrap_or_default();
    assert!(
        write_result.contains("unavailable tool") || write_result.contains("invalid"),
        "write must be unavailable: {write_result:?}"
    );
}
