//! A real Codex (`codex app-server`) mission against the mock Responses API.

use serde_json::json;

use super::*;

const PROVIDER: RealProvider = RealProvider::Codex;

#[test]
fn codex_mission_reads_cannot_write_and_reaches_review_with_passing_evidence() {
    let Some(cli) = installed_cli(PROVIDER.cli_name()) else {
        return;
    };
    let final_text = "Codex mission: the README was read.";
    // A sandboxed shell write: Codex's read-only sandbox (and our Landlock ruleset) must make
    // it fail without asking anyone.
    let write_call =
        json!({"shell": {"command": format!("printf 'should not exist\\n' > {WRITTEN_FILE}")}});
    let mut session = RealSession::new(PROVIDER, &cli, |workspace| {
        read_write_scenario(workspace, write_call, final_text, 0)
    });
    session.start_server();
    session.create_configured_mission("codex-m");
    let before = snapshot(&session.repo.path);
    let started = session.start_mission("codex-m", "run-1");
    assert_eq!(started["type"], "mission_run_started", "{started}");
    assert_completed_read_only_mission(&session, "codex-m", final_text, &before);
    assert_usage_is_what_the_mock_reported(&session, "codex-m", false);
    let shell_result = session
        .tool_result_sent_to_model("call_mock_1")
        .unwrap_or_default();
    assert!(
        shell_result.contains("Read-only file system")
            || shell_result.contains("Permission denied")
            || shell_result.contains("denied"),
        "the sandboxed write should fail visibly to the model: {shell_result:?}"
    );
}

#[test]
fn a_codex_patch_in_a_read_only_run_waits_as_attention_that_the_public_socket_cannot_approve() {
    let Some(cli) = installed_cli(PROVIDER.cli_name()) else {
        return;
    };
    let session_for_scenario = |workspace: &Path| {
        let scenario = json!({
            "workspace": workspace,
            "steps": [
                {"text": "Patching now.", "call": {"write": {"path": WRITTEN_FILE, "content": "should not exist\n"}}},
                {"text": "Codex patch: done."}
            ]
        });
        Scenario::from_json(&scenario.to_string()).expect("a valid scenario")
    };
    let mut session = RealSession::new(PROVIDER, &cli, session_for_scenario);
    session.start_server();
    session.create_configured_mission("codex-patch");
    let before = snapshot(&session.repo.path);
    session.start_mission("codex-patch", "run-1");

    // Codex asks before applying a patch in a read-only thread; the ask becomes attention.
    let deadline = Instant::now() + TURN_DEADLINE;
    let mission = loop {
        let mission = session.mission("codex-patch");
        if mission["unresolved_attention_count"].as_u64().unwrap_or(0) > 0 {
            break mission;
        }
        assert!(
            mission["status"] == "preparing" || mission["status"] == "active",
            "the mission should wait for the approval:\n{}\n--- transcript\n{}",
            serde_json::to_string_pretty(&mission).unwrap(),
            session.transcript_text(&mission)
        );
        assert!(
            Instant::now() < deadline,
            "no attention item appeared:\n{}",
            session.transcript_text(&mission)
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(mission["status"], "active", "{mission}");
    let items = session
        .env
        .ok("attention.list", json!({"mission_id": "codex-patch"}));
    let item = items["items"]
        .as_array()
        .and_then(|items| items.first())
        .cloned()
        .unwrap_or_else(|| panic!("attention.list: {items}"));
    assert_eq!(item["kind"], "permission_request", "{item}");
    assert!(
        item["requested_action"]
            .as_str()
            .unwrap_or_default()
            .contains(WRITTEN_FILE),
        "the request names the file: {item}"
    );
    session.wait_for_pane_text(&mission, "answer it in `nagi cockpit`");

    // Approving would write the workspace: only the cockpit may, never the public socket.
    let store_before = session.env.store_fingerprint();
    let code = session.env.error_code(
        "mission.respond",
        json!({"mission_id": "codex-patch", "run_id": "run-1", "attention_id": item["attention_id"], "decision": "approve_once"}),
    );
    assert_eq!(code, "interactive_consent_required");
    assert_eq!(session.env.store_fingerprint(), store_before);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(session.mission("codex-patch")["status"], "active");
    assert_eq!(
        snapshot(&session.repo.path),
        before,
        "nothing is patched while the approval waits"
    );
}

#[test]
fn codex_works_read_only_in_the_missions_own_worktree_and_leaves_the_checkout_alone() {
    let Some(cli) = installed_cli(PROVIDER.cli_name()) else {
        return;
    };
    let final_text = "Codex mission: read in the mission worktree.";
    let write_call =
        json!({"shell": {"command": format!("printf 'should not exist\\n' > {WRITTEN_FILE}")}});
    // No workspace in the scenario: the README is read relative to the run's own cwd, which
    // must be the mission worktree.
    let mut session = RealSession::new(PROVIDER, &cli, |_| {
        let scenario = json!({
            "title": "Mock session",
            "steps": [
                {"call": {"read": {"path": "README.md"}}},
                {"text": "Now trying to write a file.", "call": write_call},
                {"text": final_text}
            ]
        });
        nagi_tests::mock_model::Scenario::from_json(&scenario.to_string()).unwrap()
    });
    session.start_server();
    session.create_configured_mission("codex-w");
    let mut params = session.start_params("codex-w", "run-w");
    params["worktree"] = json!(true);
    let started = session.env.ok("mission.start", params);
    // The picture of the person's checkout is taken once the start made the worktree (its
    // branch and git's record of it are the only things a start adds to the repository).
    let before = snapshot(&session.repo.path);
    assert_eq!(started["type"], "mission_run_started", "{started}");
    let worktree = started["mission"]["worktree"]["path"]
        .as_str()
        .unwrap_or_else(|| panic!("the start names the mission worktree: {started}"))
        .to_string();
    assert_eq!(started["mission"]["run"]["worktree_path"], worktree);
    assert_completed_read_only_mission(&session, "codex-w", final_text, &before);
    let worktree = std::path::Path::new(&worktree);
    assert!(
        !worktree.join(WRITTEN_FILE).exists(),
        "the sandbox kept the worktree read-only"
    );
    assert_eq!(
        nagi_tests::git(worktree, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "mission/codex-w"
    );
    assert_eq!(nagi_tests::git(worktree, &["status", "--porcelain"]), "");
}

/// Two missions of one repository at the same time with the real Codex CLI, read-only, each
/// in its own worktree on its own branch (issue 15): both runs are live at once, each reads
/// its own worktree's README, neither can write, and the person's checkout is untouched.
#[test]
fn two_codex_missions_of_one_repository_run_side_by_side_each_in_its_own_worktree() {
    let Some(cli) = installed_cli(PROVIDER.cli_name()) else {
        return;
    };
    let final_text = "Codex mission: done in my own worktree.";
    let write_call =
        json!({"shell": {"command": format!("printf 'should not exist\\n' > {WRITTEN_FILE}")}});
    // The last answer is held back, so that both turns are surely under way together.
    let mut session = RealSession::new(PROVIDER, &cli, |_| {
        let scenario = json!({
            "title": "Mock session",
            "steps": [
                {"call": {"read": {"path": "README.md"}}},
                {"text": "Now trying to write a file.", "call": write_call},
                {"text": final_text, "delay_ms": 4000}
            ]
        });
        nagi_tests::mock_model::Scenario::from_json(&scenario.to_string()).unwrap()
    });
    session.start_server();
    let missions = ["codex-a", "codex-b"];
    let mut worktrees = Vec::new();
    for mission_id in missions {
        session.create_configured_mission(mission_id);
        let mut params = session.start_params(mission_id, &format!("run-{mission_id}"));
        params["worktree"] = json!(true);
        let started = session.env.ok("mission.start", params);
        let worktree = started["mission"]["worktree"]["path"]
            .as_str()
            .unwrap_or_else(|| panic!("the start names the mission worktree: {started}"))
            .to_string();
        worktrees.push(std::path::PathBuf::from(worktree));
    }
    let before = snapshot(&session.repo.path);
    assert_ne!(worktrees[0], worktrees[1]);
    // Both runs live at the same moment: one run per worktree, not per checkout.
    let deadline = Instant::now() + TURN_DEADLINE;
    loop {
        let live: Vec<bool> = missions
            .iter()
            .map(|mission_id| session.mission(mission_id)["run"]["live"] == true)
            .collect();
        if live.iter().all(|live| *live) {
            break;
        }
        let settled = missions
            .iter()
            .any(|mission_id| session.mission(mission_id)["status"] == "ready_to_close");
        assert!(
            !settled && Instant::now() < deadline,
            "the two runs were never live together: {live:?}\n{}",
            session.env.server_log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    for mission_id in missions {
        assert_completed_read_only_mission(&session, mission_id, final_text, &before);
    }
    for (worktree, mission_id) in worktrees.iter().zip(missions) {
        assert!(
            !worktree.join(WRITTEN_FILE).exists(),
            "{mission_id} could not write"
        );
        assert_eq!(
            nagi_tests::git(worktree, &["rev-parse", "--abbrev-ref", "HEAD"]),
            format!("mission/{mission_id}")
        );
        assert_eq!(nagi_tests::git(worktree, &["status", "--porcelain"]), "");
    }
}
