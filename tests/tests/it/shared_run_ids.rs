//! A run id names one run in a server. The contract makes `run_conflict` only a run id
//! that is live in another mission, but attention ids are derived from the run id and the
//! provider's request id alone, so nagi refuses a run id that any other mission used.
//! Stores written before that may already hold two missions with runs of one id: their
//! live runs stay apart too, so that nothing asked of one reaches the other's provider and
//! neither's view borrows the other's state.

use nagi_tests::*;
use serde_json::json;

use crate::runs::{runs_with, start_params, status_is};

/// Creates mission m2 on a repository of its own (so that no checkout claim stands between
/// the two missions) and answers it with the params of its start as run `run_id`.
fn second_mission(env: &TestEnv, run_id: &str) -> (TestRepo, serde_json::Value) {
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m2", &repo.path_text()));
    env.ok(
        "mission.configure",
        configure_params("m2", "test", &["-f", "README.md"]),
    );
    let mut start = start_params("claude_code", run_id);
    start["mission_id"] = json!("m2");
    (repo, start)
}

#[test]
fn a_run_id_that_another_mission_used_is_refused_before_anything_is_written() {
    let mut runs = runs_with(json!([{"text": "done"}]), &[]);
    runs.env.ok("mission.start", start_params("codex", "r1"));
    wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close",
        status_is("ready_to_close"),
    );
    let (_repo, mut m2_start) = second_mission(&runs.env, "r1");
    // Also across a restart: the run ids are in the store.
    runs.env.kill_server();
    runs.env.start_server();
    let before = runs.env.store_fingerprint();
    let refused = runs.env.call("mission.start", m2_start.clone());
    assert_eq!(refused["error"]["code"], "run_conflict", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("names a run of mission m1"),
        "the message says whose run it is: {message}"
    );
    assert_eq!(runs.env.store_fingerprint(), before, "nothing was written");
    // The cockpit says so before a person is asked to consent to such a start.
    let consent = json!({"kind": "start_run", "mission_id": "m2", "run_id": "r1",
                         "provider": "codex", "write_scope": true});
    assert_eq!(
        runs.env
            .error_code("cockpit.preview", json!({"action": consent})),
        "run_conflict"
    );
    // Another id starts.
    m2_start["run_id"] = json!("r2");
    runs.env.ok("mission.start", m2_start);
    wait_for_mission(
        &runs.env,
        "m2",
        "ready_to_close",
        status_is("ready_to_close"),
    );
}

/// Makes the store as one written before run ids were unique across missions: `run_id`
/// is no longer recorded as any mission's, so another mission may start a run of that id.
fn forget_run_id(env: &mut TestEnv, run_id: &str) {
    env.kill_server();
    let connection = rusqlite::Connection::open(env.database_path()).unwrap();
    let removed = connection
        .execute("DELETE FROM runs WHERE run_id = ?1", [run_id])
        .unwrap();
    assert_eq!(removed, 1, "the store recorded {run_id}");
    drop(connection);
    env.start_server();
}

#[test]
fn in_a_store_where_two_missions_share_a_run_id_steering_one_never_reaches_the_others_provider() {
    let go = tempfile::NamedTempFile::new().unwrap().into_temp_path();
    let go_path = go.to_str().unwrap().to_string();
    std::fs::write(&go_path, "go").unwrap();
    let mut runs = runs_with(
        json!([{"text": "working on it"}, {"wait_file": go_path}, {"text": "done"}]),
        &[("NAGI_FAKE_RESUMED_SCRIPT", r#"[{"text": "m1 again"}]"#)],
    );
    runs.env.ok("mission.start", start_params("codex", "r1"));
    wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close",
        status_is("ready_to_close"),
    );
    forget_run_id(&mut runs.env, "r1");
    let env = &runs.env;

    // m2's run r1 waits for the go file, live, while m1's run r1 is over.
    std::fs::remove_file(&go_path).unwrap();
    let (_repo, m2_start) = second_mission(env, "r1");
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
