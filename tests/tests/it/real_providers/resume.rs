//! A real provider's run survives a server restart (contract §9, issue 5 §9): the server
//! dies while the provider is mid-turn (the mock holds the model's answer back), a new server
//! starts, and the run — `active`, with a stored native session — is resumed read-only with
//! the same session and no input, so the mission prompt reaches the model only once.

use std::collections::BTreeSet;

use serde_json::json;

use super::*;

/// How the first server goes away.
#[derive(Debug, Clone, Copy)]
enum ServerEnd {
    /// SIGKILL: no drain, the providers lose their parent. Codex and Claude Code read stdin,
    /// so they see end of file and exit by themselves.
    Killed,
    /// SIGKILL, and the provider outlives the server: OpenCode's `opencode serve` has its
    /// stdin closed. The next server ends it as a leftover of the killed one (its session
    /// marker) before it resumes the run with a new one.
    KilledLeavingTheProvider,
}

/// What the model says to a resumed session whose held-back answer it already got.
const CONTINUED_TEXT: &str = "Continuing after the restart.";

/// How long the mock holds back the answer the server dies waiting for.
const HELD_BACK_MS: u64 = 8_000;

fn wait_until_no_provider_process(home: &Path, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let alive = provider_processes(home);
        if alive.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: provider processes {alive:?} are still running 30 s after the server died"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn resume_after_restart(provider: RealProvider, server_end: ServerEnd) {
    let Some(cli) = installed_cli(provider.cli_name()) else {
        return;
    };
    let held_back_text = format!(
        "{} resume: this answer was held back.",
        provider.wire_name()
    );
    let mut session = RealSession::new(provider, &cli, |workspace| {
        let scenario = json!({
            "workspace": workspace,
            "title": "Mock session",
            "steps": [
                {"call": {"read": {"path": "README.md"}}},
                {"text": held_back_text, "delay_ms": HELD_BACK_MS},
                // A CLI that outlived its server long enough to receive the held-back
                // answer (Claude Code finishes the request it started) has it in its
                // session: the resumed session's next request is answered by this step.
                {"text": CONTINUED_TEXT}
            ]
        });
        Scenario::from_json(&scenario.to_string()).expect("a valid scenario")
    });
    let _sweep = ProviderSweep {
        home: session.home.home.clone(),
    };
    session.start_server();
    session.create_configured_mission("resume-m");
    let before = snapshot(&session.repo.path);
    // An ACP agent runs with the write scope a person grants in the cockpit (the test
    // process may: it is not the server's descendant); the others read-only.
    let sandbox = if provider == RealProvider::OpenCodeAcp {
        let action = json!({"kind": "start_run", "mission_id": "resume-m", "run_id": "run-1",
                            "provider": "acp", "write_scope": true, "execute_declared_checks": true});
        let shown = session.env.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
        session.env.ok(
            "cockpit.decide",
            json!({"action": action, "shown_digest": shown["digest"], "decision": "approve"}),
        );
        "workspace_write"
    } else {
        session.start_mission("resume-m", "run-1");
        "read_only"
    };
    session.wait_for_status("resume-m", "active");
    let session_id = session.stored_run("resume-m")["provider_session_id"]
        .as_str()
        .expect("a stored session id")
        .to_string();

    // Mid-turn: the read is done and the model is "thinking" on the held-back step.
    let deadline = Instant::now() + TURN_DEADLINE;
    while !session
        .mock
        .main_requests()
        .iter()
        .any(|request| request.step == Some(1))
    {
        assert!(
            Instant::now() < deadline,
            "the provider never asked for the held-back step; requests: {:?}",
            session.mock.requests().len()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    session.env.kill_server();
    let survivors = match server_end {
        ServerEnd::Killed => {
            wait_until_no_provider_process(&session.home.home, "after the first server ended");
            BTreeSet::new()
        }
        ServerEnd::KilledLeavingTheProvider => provider_processes(&session.home.home),
    };
    let requests_before_restart = session.mock.requests().len();
    let stored_before = session.stored_run("resume-m");
    assert_eq!(stored_before["provider_session_id"], session_id.as_str());

    session.start_server();
    // The run is resumed: same session, read-only, and its pane says it resumed the session
    // and the provider bound it again. The mission stays active while it resumes — or, when
    // the resumed session answers at once (a CLI that already had the held-back answer), has
    // finished that turn by the time the pane shows it; never blocked or failed.
    let resumed_statuses = ["active", "review_required", "ready_to_close"];
    let deadline = Instant::now() + Duration::from_secs(120);
    let mission = loop {
        let mission = session.mission("resume-m");
        let transcript = session.transcript_text(&mission);
        let resumed_and_bound = transcript
            .split("resuming its session")
            .nth(1)
            .is_some_and(|after_resume| after_resume.contains("the provider session is bound"));
        let finished_already = mission["status"] != "active" && mission["run"]["live"] == false;
        if resumed_and_bound && (mission["run"]["live"] == true || finished_already) {
            break mission;
        }
        assert!(
            resumed_statuses.contains(&mission["status"].as_str().unwrap_or_default()),
            "after the restart the mission should stay active while its run resumes:\n{}\n--- transcript\n{transcript}",
            serde_json::to_string_pretty(&mission).unwrap()
        );
        assert!(
            Instant::now() < deadline,
            "the run was not resumed after the restart:\n{}\n--- transcript\n{transcript}",
            serde_json::to_string_pretty(&mission).unwrap()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        resumed_statuses.contains(&mission["status"].as_str().unwrap_or_default()),
        "{mission}"
    );
    // What the killed server left running was ended by the new one.
    for pid in &survivors {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            stat.is_empty()
                || stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|rest| rest.trim_start().starts_with('Z')),
            "provider process {pid} of the killed server is still running"
        );
    }
    let stored = session.stored_run("resume-m");
    assert_eq!(
        stored["provider_session_id"],
        session_id.as_str(),
        "the same native session is resumed"
    );
    assert_eq!(
        stored["sandbox"], sandbox,
        "a recovered run keeps the scope it had: {stored}"
    );
    assert_eq!(stored["run_id"], "run-1");
    assert_nowhere_in(&mission, &session_id, "mission.get");

    // No prompt replay: give a replay time to reach the model, then every model request —
    // before and after the restart — carries the mission prompt exactly once.
    std::thread::sleep(Duration::from_secs(3));
    for request in session.mock.main_requests() {
        assert_eq!(
            objective_count(&request, OBJECTIVE),
            1,
            "request {} carries the mission prompt {} times (requests before the restart: {requests_before_restart})",
            request.sequence,
            objective_count(&request, OBJECTIVE)
        );
    }
    // The resumed session finishes its turn like a run that never stopped: the held-back
    // answer arrives, the turn completes and the declared checks run (issue 14, item 5).
    let finished = session.wait_for_review_with_evidence("resume-m");
    assert_eq!(finished["run"]["run_id"], "run-1", "{finished}");
    let shown = session.transcript_text(&finished);
    assert!(
        shown
            .split("resuming its session")
            .nth(1)
            .is_some_and(|after| after.contains(&held_back_text) || after.contains(CONTINUED_TEXT)),
        "the resumed session's answer is in the pane:\n{shown}"
    );
    if sandbox == "read_only" {
        assert_eq!(
            snapshot(&session.repo.path),
            before,
            "a read-only run leaves the workspace unchanged"
        );
    } else {
        // With write scope the agent may keep state of its own in the checkout; the
        // scenario only read, so the project's files are as they were.
        let after = snapshot(&session.repo.path);
        for file in ["README.md", "src/lib.rs"] {
            assert_eq!(
                after.get(Path::new(file)),
                before.get(Path::new(file)),
                "{file} changed"
            );
        }
    }
}

#[test]
fn a_codex_run_resumes_its_thread_read_only_after_the_server_is_killed_mid_turn() {
    resume_after_restart(RealProvider::Codex, ServerEnd::Killed);
}

#[test]
fn a_claude_run_resumes_its_session_read_only_after_the_server_is_killed_mid_turn() {
    resume_after_restart(RealProvider::ClaudeCode, ServerEnd::Killed);
}

#[test]
fn an_opencode_run_resumes_its_session_read_only_after_the_server_is_killed_mid_turn() {
    resume_after_restart(RealProvider::OpenCode, ServerEnd::KilledLeavingTheProvider);
}

#[test]
fn an_opencode_acp_run_resumes_its_session_after_the_server_is_killed_mid_turn() {
    resume_after_restart(
        RealProvider::OpenCodeAcp,
        ServerEnd::KilledLeavingTheProvider,
    );
}
