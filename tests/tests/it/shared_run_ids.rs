//! Two missions whose runs have the same id stay apart. A run id is unique only among the
//! runs that are live when `mission.start` begins one (contract: `run_conflict`), so a
//! mission that finished its run `r1` and another whose run `r1` is live are a case a
//! socket client or `--run-id` meets: nothing asked of the first may reach the second's
//! provider, and neither's view may borrow the other's state.

use nagi_tests::*;
use serde_json::json;

use crate::runs::{runs_with, start_params, status_is};

#[test]
fn steering_a_finished_run_never_reaches_another_missions_live_run_of_the_same_id() {
    let go = tempfile::NamedTempFile::new().unwrap().into_temp_path();
    let go_path = go.to_str().unwrap().to_string();
    std::fs::write(&go_path, "go").unwrap();
    let runs = runs_with(
        json!([{"text": "working on it"}, {"wait_file": go_path}, {"text": "done"}]),
        &[("NAGI_FAKE_RESUMED_SCRIPT", r#"[{"text": "m1 again"}]"#)],
    );
    let env = &runs.env;
    env.ok("mission.start", start_params("codex", "r1"));
    wait_for_mission(env, "m1", "ready_to_close", status_is("ready_to_close"));

    // m2's run r1 waits for the go file, live, while m1's run r1 is over.
    std::fs::remove_file(&go_path).unwrap();
    let other_repo = TestRepo::new();
    env.ok(
        "mission.create",
        create_params("m2", &other_repo.path_text()),
    );
    env.ok(
        "mission.configure",
        configure_params("m2", "test", &["-f", "README.md"]),
    );
    let mut m2_start = start_params("claude_code", "r1");
    m2_start["mission_id"] = json!("m2");
    env.ok("mission.start", m2_start);
    let m2 = wait_for_mission(env, "m2", "m2's run live and active", |mission| {
        mission["status"] == "active" && mission["run"]["live"] == true
    });

    let m1 = env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
    assert_eq!(m1["run"]["live"], false, "m1's own run is over: {m1}");
    // Stopping or interrupting m1 has nothing to act on; m2's provider is not touched.
    assert_eq!(
        env.error_code("mission.stop", json!({"mission_id": "m1"})),
        "run_not_active"
    );
    assert_eq!(
        env.error_code("mission.interrupt", json!({"mission_id": "m1"})),
        "run_not_active"
    );
    // A follow-up to m1 resumes m1's own session in m1's pane, not m2's turn.
    let sent = env.ok(
        "mission.send",
        json!({"mission_id": "m1", "text": "one more thing for m1"}),
    );
    assert_eq!(sent["delivery"], "resumed", "{sent}");
    let m1 = wait_for_mission(env, "m1", "m1's second turn", |mission| {
        mission["status"] == "ready_to_close" && mission["run"]["turns"] == 2
    });
    let m1_pane = m1["run"]["pane_id"].as_str().unwrap();
    let m1_screen = crate::runs::poll_pane_text(env, m1_pane, "m1 again");
    assert!(m1_screen.contains("m1 again"), "{m1_screen}");

    let m2_now = env.ok("mission.get", json!({"mission_id": "m2"}))["mission"].clone();
    assert_eq!(m2_now["status"], "active", "m2 is still working: {m2_now}");
    assert_eq!(m2_now["run"]["live"], true, "{m2_now}");
    assert_eq!(m2_now["run"]["turns"], m2["run"]["turns"], "{m2_now}");
    assert!(
        m2_now["run"].get("queued_follow_ups").is_none(),
        "nothing of m1's was queued on m2's run: {m2_now}"
    );
    // m1 closes (its closure checks run) though m2's run of the same id is live.
    let closed = env.ok("mission.close", json!({"mission_id": "m1"}));
    assert_eq!(closed["type"], "mission_close_accepted", "{closed}");
    wait_for_mission(env, "m1", "archived", status_is("archived"));

    // m2 goes on to its own end.
    std::fs::write(&go_path, "go").unwrap();
    let m2_done = wait_for_mission(env, "m2", "m2 done", status_is("ready_to_close"));
    assert_eq!(
        m2_done["run"]["turns"], 1,
        "no follow-up of m1's became a turn of m2's: {m2_done}"
    );
}
