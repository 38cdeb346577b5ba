//! Steering a run (`mission.send`, `mission.interrupt`, `mission.stop`, and the CLI's
//! `nagi mission send|interrupt|stop`) with the fake provider programs: follow-ups queued
//! behind a turn or resuming the stored session, interrupts and stops through each
//! provider's own protocol, and what each records.

use nagi_tests::*;
use serde_json::{Value, json};

use crate::runs::{Runs, poll_pane_text, runs_with, start_params, status_is};

/// Providers a follow-up is tested with (ACP runs need the cockpit's consent to start).
const PROVIDERS: [&str; 3] = ["codex", "claude_code", "open_code"];

fn prompts(runs: &Runs) -> Vec<String> {
    log_entries(&runs.log)
        .iter()
        .filter(|entry| entry["event"] == "prompt")
        .map(|entry| entry["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn count_events(runs: &Runs, event: &str) -> usize {
    log_entries(&runs.log)
        .iter()
        .filter(|entry| entry["event"] == event)
        .count()
}

/// Waits until the fake logged `event` at least `count` times.
fn wait_for_fake(runs: &Runs, event: &str, count: usize) {
    crate::panes::eventually(&format!("{count} fake `{event}` event(s)"), || {
        count_events(runs, event) >= count
    });
}

/// The first `count` `mission_run_steered` events from the log (a subscription that
/// replays it from the start).
fn steered_events(runs: &Runs, count: usize) -> Vec<Value> {
    use std::io::Write;
    let mut stream = std::os::unix::net::UnixStream::connect(&runs.env.socket).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let line = json!({"id": "sub", "method": "events.subscribe", "params": {
        "subscriptions": [{"type": "mission", "mission_id": "m1", "kinds": ["mission_run_steered"]}],
        "after_seq": 0,
    }});
    stream.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut reader = std::io::BufReader::new(stream);
    TestEnv::read_line_from(&mut reader).expect("the subscription's acknowledgement");
    (0..count)
        .map(|_| {
            TestEnv::read_line_from(&mut reader).expect("a mission_run_steered event")["data"]
                .clone()
        })
        .collect()
}

#[test]
fn a_follow_up_after_a_completed_turn_resumes_the_session_in_the_same_pane_and_proves_again() {
    for provider in PROVIDERS {
        let runs = runs_with(
            json!([{"text": "first answer"}]),
            &[(
                "NAGI_FAKE_RESUMED_SCRIPT",
                r#"[{"text": "follow-up answer"}]"#,
            )],
        );
        runs.env.ok("mission.start", start_params(provider, "r1"));
        let first = wait_for_mission(
            &runs.env,
            "m1",
            "ready_to_close",
            status_is("ready_to_close"),
        );
        let pane = first["run"]["pane_id"].as_str().unwrap().to_string();
        // The native session is not in the mission view; a person's own terminal asks.
        assert!(!first.to_string().contains("fake-session-1"), "{first}");
        let session = runs.env.ok("mission.session", json!({"mission_id": "m1"}));
        assert_eq!(
            session["session"]["id"], "fake-session-1",
            "{provider}: {session}"
        );
        let shown = runs.env.nagi_ok(&["mission", "session", "m1"]);
        assert!(
            shown.stdout.contains("session fake-session-1"),
            "{}",
            shown.describe()
        );
        assert_eq!(first["run"]["turns"], 1);
        assert_eq!(first["run"]["last_turn_outcome"], "completed");

        let sent = runs
            .env
            .nagi_ok(&["mission", "send", "m1", "also check the licence"]);
        assert!(
            sent.stdout
                .contains("follow-up sent: the provider resumed its session"),
            "{provider}: {}",
            sent.describe()
        );
        let done = wait_for_mission(&runs.env, "m1", "ready_to_close again", |mission| {
            mission["status"] == "ready_to_close" && mission["run"]["turns"] == 2
        });
        assert_eq!(
            done["run"]["run_id"], "r1",
            "{provider}: the same run goes on"
        );
        assert_eq!(
            done["run"]["pane_id"],
            pane.as_str(),
            "{provider}: in its own pane"
        );
        assert_eq!(
            runs.env.ok("mission.session", json!({"mission_id": "m1"}))["session"],
            session["session"]
        );
        assert_eq!(
            done["checks"][0]["status"], "passed",
            "{provider}: checked again"
        );
        assert_ne!(
            first["evidence"][0]["recorded_at_millis"], done["evidence"][0]["recorded_at_millis"],
            "{provider}: new evidence: {first}\n{done}"
        );
        // The provider was started again on its stored session and given the text.
        assert_eq!(count_events(&runs, "resume"), 1, "{provider}");
        let said = prompts(&runs);
        assert_eq!(
            said.last().map(String::as_str),
            Some("also check the licence"),
            "{provider}: {said:?}"
        );
        assert_eq!(
            said.len(),
            2,
            "{provider}: the mission prompt is not sent again: {said:?}"
        );
        let transcript = poll_pane_text(&runs.env, &pane, "follow-up answer");
        assert!(
            transcript.contains("first answer"),
            "{provider}: {transcript}"
        );
        assert!(
            transcript.contains("follow-up answer"),
            "{provider}: {transcript}"
        );
        let steered = steered_events(&runs, 1);
        let data = &steered[0];
        assert_eq!(data["action"], "send");
        assert_eq!(data["delivery"], "resumed");
        assert_eq!(data["actor"]["uid"], unsafe { libc::getuid() });
        assert_eq!(data["actor"]["managed_pane"], false);
        assert_eq!(
            done["run"]["enforcement"], first["run"]["enforcement"],
            "{provider}: a follow-up grants nothing"
        );
    }
}

#[test]
fn a_follow_up_during_a_turn_is_queued_and_becomes_the_next_turn_of_the_same_process() {
    for provider in PROVIDERS {
        let go = tempfile::NamedTempFile::new().unwrap().into_temp_path();
        let go_path = go.to_str().unwrap().to_string();
        std::fs::remove_file(&go_path).unwrap();
        let runs = runs_with(
            json!([{"text": "working on it"}, {"wait_file": go_path}, {"text": "first turn done"}]),
            &[],
        );
        runs.env.ok("mission.start", start_params(provider, "r1"));
        wait_for_fake(&runs, "waiting", 1);
        // The fake can reach its wait before the commit that binds its session (the run is
        // `preparing` until then); on a loaded machine CI saw that.
        wait_for_mission(&runs.env, "m1", "active", status_is("active"));
        let queued = runs.env.ok(
            "mission.send",
            json!({"mission_id": "m1", "text": "then update the changelog"}),
        );
        assert_eq!(queued["type"], "mission_send_accepted");
        assert_eq!(queued["delivery"], "queued", "{provider}: {queued}");
        assert_eq!(queued["mission"]["run"]["queued_follow_ups"], 1);
        assert_eq!(queued["mission"]["status"], "active");
        std::fs::write(&go_path, "go").unwrap();
        let done = wait_for_mission(
            &runs.env,
            "m1",
            "ready_to_close",
            status_is("ready_to_close"),
        );
        assert_eq!(done["run"]["turns"], 2, "{provider}: {done}");
        assert!(done["run"].get("queued_follow_ups").is_none(), "{done}");
        assert_eq!(
            prompts(&runs).last().map(String::as_str),
            Some("then update the changelog"),
            "{provider}"
        );
        assert_eq!(
            count_events(&runs, "started"),
            1,
            "{provider}: one provider process"
        );
        assert_eq!(count_events(&runs, "resume"), 0, "{provider}");
        let pane = done["run"]["pane_id"].as_str().unwrap();
        let transcript = poll_pane_text(&runs.env, pane, "turn 2: then update the changelog");
        assert!(
            transcript.contains("follow-up queued from uid"),
            "{provider}: {transcript}"
        );
        assert!(
            transcript.contains("turn 2: then update the changelog"),
            "{transcript}"
        );
    }
}

#[test]
fn an_interrupt_ends_the_turn_through_the_provider_and_a_follow_up_resumes_it() {
    for provider in PROVIDERS {
        let runs = runs_with(
            json!(["wait_interrupt"]),
            &[(
                "NAGI_FAKE_RESUMED_SCRIPT",
                r#"[{"text": "picked up again"}]"#,
            )],
        );
        runs.env.ok("mission.start", start_params(provider, "r1"));
        wait_for_mission(&runs.env, "m1", "active", status_is("active"));
        wait_for_fake(&runs, "prompt", 1);
        let interrupted = runs.env.nagi_ok(&["mission", "interrupt", "m1"]);
        assert!(
            interrupted.stdout.contains("interrupt sent"),
            "{}",
            interrupted.describe()
        );
        let mission = wait_for_mission(&runs.env, "m1", "blocked", status_is("blocked"));
        let reason = mission["status_reason"].as_str().unwrap();
        assert!(
            reason.starts_with("interrupted by uid"),
            "{provider}: {reason}"
        );
        assert!(reason.contains("nagi mission send m1 TEXT"), "{reason}");
        assert_eq!(mission["run"]["last_turn_outcome"], "interrupted");
        assert_eq!(
            count_events(&runs, "interrupted"),
            1,
            "{provider}: the provider's own interrupt"
        );
        assert_eq!(steered_events(&runs, 1)[0]["action"], "interrupt");
        crate::panes::eventually("the claim's release", || {
            runs.env.store_fingerprint().1.contains("claims=0")
        });
        runs.env
            .ok("mission.send", json!({"mission_id": "m1", "text": "go on"}));
        let resumed = wait_for_mission(&runs.env, "m1", "review_required", |mission| {
            mission["status"] == "ready_to_close" && mission["run"]["turns"] == 2
        });
        assert_eq!(
            resumed["run"]["last_turn_outcome"], "completed",
            "{provider}"
        );
    }
}

#[test]
fn a_stop_ends_the_provider_process_tree_and_releases_the_run() {
    for provider in PROVIDERS {
        let runs = runs_with(json!(["hang"]), &[]);
        runs.env.ok("mission.start", start_params(provider, "r1"));
        wait_for_fake(&runs, "child", 1);
        let child = log_entries(&runs.log)
            .iter()
            .find(|entry| entry["event"] == "child")
            .and_then(|entry| entry["pid"].as_i64())
            .unwrap() as i32;
        let stopped = runs.env.nagi_ok(&["mission", "stop", "m1"]);
        assert!(
            stopped.stdout.contains("run stopped"),
            "{}",
            stopped.describe()
        );
        let mission = wait_for_mission(&runs.env, "m1", "blocked", status_is("blocked"));
        assert!(
            mission["status_reason"]
                .as_str()
                .unwrap()
                .starts_with("stopped by uid"),
            "{provider}: {mission}"
        );
        assert_eq!(mission["run"]["live"], false);
        crate::panes::eventually("the provider's grandchild to end", || {
            process_is_gone(child)
        });
        crate::panes::eventually("the claim's release", || {
            runs.env.store_fingerprint().1.contains("claims=0")
        });
        let steered = steered_events(&runs, 1);
        assert_eq!(steered[0]["action"], "stop", "{provider}: {steered:?}");
        assert!(steered[0].get("delivery").is_none());
        // Stopping again has nothing to stop.
        assert_eq!(
            runs.env
                .error_code("mission.stop", json!({"mission_id": "m1"})),
            "run_not_active"
        );
    }
}

#[test]
fn a_follow_up_after_a_server_restart_resumes_the_stored_session() {
    let mut runs = runs_with(
        json!([{"text": "before the restart"}]),
        &[(
            "NAGI_FAKE_RESUMED_SCRIPT",
            r#"[{"text": "after the restart"}]"#,
        )],
    );
    runs.env.ok("mission.start", start_params("codex", "r1"));
    wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close",
        status_is("ready_to_close"),
    );
    runs.env.kill_server();
    runs.env.start_server();
    let sent = runs.env.ok(
        "mission.send",
        json!({"mission_id": "m1", "text": "one more thing"}),
    );
    assert_eq!(sent["delivery"], "resumed");
    let done = wait_for_mission(&runs.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close" && mission["run"]["turns"] == 2
    });
    let resumed: Vec<Value> = log_entries(&runs.log)
        .into_iter()
        .filter(|entry| entry["event"] == "resume")
        .collect();
    assert_eq!(resumed.len(), 1, "{resumed:?}");
    assert_eq!(resumed[0]["session_id"], "fake-session-1");
    // The old server's pane went with it: the follow-up has a pane of its own.
    let pane = done["run"]["pane_id"].as_str().unwrap();
    let transcript = poll_pane_text(&runs.env, pane, "after the restart");
    assert!(transcript.contains("after the restart"), "{transcript}");
}

#[test]
fn steering_is_refused_before_anything_is_written() {
    let runs = runs_with(json!([{"text": "done"}]), &[]);
    let before = runs.env.store_fingerprint();
    for (method, params, code) in [
        (
            "mission.send",
            json!({"mission_id": "m1", "text": "hi"}),
            "run_not_active",
        ),
        (
            "mission.interrupt",
            json!({"mission_id": "m1"}),
            "run_not_active",
        ),
        (
            "mission.stop",
            json!({"mission_id": "m1"}),
            "run_not_active",
        ),
        (
            "mission.send",
            json!({"mission_id": "nope", "text": "hi"}),
            "mission_not_found",
        ),
        (
            "mission.send",
            json!({"mission_id": "m1", "text": "hi", "priority": "x"}),
            "invalid_request",
        ),
        (
            "mission.send",
            json!({"mission_id": "m1"}),
            "invalid_request",
        ),
    ] {
        assert_eq!(
            runs.env.error_code(method, params.clone()),
            code,
            "{method} {params}"
        );
    }
    runs.env.ok("mission.start", start_params("codex", "r1"));
    wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close",
        status_is("ready_to_close"),
    );
    // The claim is released after the proof is sealed, in a write of its own.
    crate::panes::eventually("the claim's release", || {
        runs.env.store_fingerprint().1.contains("claims=0")
    });
    let after_run = runs.env.store_fingerprint();
    for (params, code) in [
        (
            json!({"mission_id": "m1", "text": "   "}),
            "invalid_mission",
        ),
        (
            json!({"mission_id": "m1", "text": "x".repeat(8193)}),
            "invalid_mission",
        ),
    ] {
        assert_eq!(
            runs.env.error_code("mission.send", params.clone()),
            code,
            "{params}"
        );
    }
    assert_eq!(
        runs.env
            .error_code("mission.interrupt", json!({"mission_id": "m1"})),
        "run_not_active"
    );
    assert_eq!(
        runs.env.store_fingerprint(),
        after_run,
        "nothing was written"
    );
    assert_ne!(before, after_run);
    // The CLI reads the text from stdin and says what went wrong.
    let refused = runs.env.nagi(&["mission", "interrupt", "m1"]);
    assert_ne!(refused.status, 0);
    assert!(
        refused.stderr.contains("has no turn in progress"),
        "{}",
        refused.describe()
    );
}

#[test]
fn a_process_in_a_managed_pane_is_recorded_as_such_and_cannot_read_the_session_id() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        missing_prerequisite(
            "a_process_in_a_managed_pane_is_recorded_as_such_and_cannot_read_the_session_id",
            "python3 is needed to call the socket from a pane",
        );
        return;
    }
    let runs = runs_with(json!([{"text": "done"}]), &[]);
    runs.env.ok("mission.start", start_params("codex", "r1"));
    wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close",
        status_is("ready_to_close"),
    );
    let answers = crate::consent::forge_from_pane(
        &runs.env,
        "out = open(sys.argv[1], 'w'); out.write(call('mission.session', {'mission_id': 'm1'})); \
         out.write(call('mission.send', {'mission_id': 'm1', 'text': 'from a pane'})); out.write('DONE'); out.close()",
    );
    assert!(answers.contains("consent_forbidden"), "{answers}");
    assert!(!answers.contains("fake-session-1"), "{answers}");
    assert!(answers.contains("mission_send_accepted"), "{answers}");
    let steered = steered_events(&runs, 1);
    assert_eq!(steered[0]["actor"]["managed_pane"], true, "{steered:?}");
    assert_eq!(
        steered[0]["actor"]["started_by_server"], true,
        "{steered:?}"
    );
    wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close after the follow-up",
        |mission| mission["status"] == "ready_to_close" && mission["run"]["turns"] == 2,
    );
}

#[test]
fn a_line_typed_into_the_runs_pane_is_the_next_turn_and_ctrl_c_interrupts_the_turn() {
    let runs = runs_with(
        json!(["wait_interrupt"]),
        &[(
            "NAGI_FAKE_RESUMED_SCRIPT",
            r#"[{"text": "typed turn done"}]"#,
        )],
    );
    runs.env.ok("mission.start", start_params("codex", "r1"));
    let active = wait_for_mission(&runs.env, "m1", "active with its pane", |mission| {
        mission["status"] == "active" && mission["run"]["pane_id"].is_string()
    });
    wait_for_fake(&runs, "prompt", 1);
    let pane = active["run"]["pane_id"].as_str().unwrap().to_string();
    // The pane runs the run's console: it greets, then shows the transcript.
    let shown = poll_pane_text(&runs.env, &pane, "Ctrl-C interrupts its turn");
    assert!(shown.contains("Ctrl-C interrupts its turn"), "{shown}");
    runs.env.ok(
        "pane.send_keys",
        json!({"pane_id": pane, "keys": ["ctrl+c"]}),
    );
    let blocked = wait_for_mission(&runs.env, "m1", "blocked", status_is("blocked"));
    let reason = blocked["status_reason"].as_str().unwrap();
    assert!(reason.starts_with("interrupted by uid"), "{reason}");
    assert!(
        reason.contains("in a managed pane"),
        "the console is the actor: {reason}"
    );
    runs.env.ok(
        "pane.send_text",
        json!({"pane_id": pane, "text": "carry on please\n"}),
    );
    let done = wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close after the typed turn",
        |mission| mission["status"] == "ready_to_close" && mission["run"]["turns"] == 2,
    );
    assert_eq!(
        done["run"]["pane_id"],
        pane.as_str(),
        "the same console goes on"
    );
    assert_eq!(
        prompts(&runs).last().map(String::as_str),
        Some("carry on please")
    );
    let shown = poll_pane_text(&runs.env, &pane, "typed turn done");
    assert!(
        shown.contains("sent: the agent resumes its session"),
        "{shown}"
    );
    assert!(shown.contains("typed turn done"), "{shown}");
}

#[test]
fn a_run_uses_the_model_it_was_started_with_and_a_follow_up_that_resumes_may_change_it() {
    let runs = runs_with(json!([{"text": "done"}]), &[]);
    let before = runs.env.store_fingerprint();
    let with_model = |provider: &str, model: &str| {
        let mut params = start_params(provider, "r1");
        params["model"] = json!(model);
        params
    };
    assert_eq!(
        runs.env
            .error_code("mission.start", with_model("codex", "gpt 5; rm -rf /")),
        "invalid_mission"
    );
    assert_eq!(
        runs.env.error_code(
            "mission.start",
            with_model("open_code", "claude-sonnet-4-5")
        ),
        "invalid_mission",
        "OpenCode names a model provider/model"
    );
    assert_eq!(
        runs.env.store_fingerprint(),
        before,
        "nothing was written or started"
    );
    assert_eq!(count_events(&runs, "started"), 0, "no provider was started");

    let mut params = with_model("codex", "gpt-5.4");
    params["reasoning_effort"] = json!("high");
    runs.env.ok("mission.start", params);
    let first = wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close",
        status_is("ready_to_close"),
    );
    assert_eq!(first["run"]["model"], "gpt-5.4");
    assert_eq!(first["run"]["reasoning_effort"], "high");
    runs.env.nagi_ok(&[
        "mission",
        "send",
        "m1",
        "again, bigger",
        "--model",
        "gpt-5.5",
    ]);
    let second = wait_for_mission(&runs.env, "m1", "ready_to_close again", |mission| {
        mission["status"] == "ready_to_close" && mission["run"]["turns"] == 2
    });
    assert_eq!(second["run"]["model"], "gpt-5.5");
    assert_eq!(
        second["run"]["reasoning_effort"], "high",
        "kept from the start"
    );
    let turns: Vec<Value> = log_entries(&runs.log)
        .into_iter()
        .filter(|entry| entry["event"] == "received" && entry["frame"]["method"] == "turn/start")
        .map(|entry| entry["frame"]["params"].clone())
        .collect();
    assert_eq!(turns.len(), 2, "{turns:?}");
    assert_eq!(
        (turns[0]["model"].clone(), turns[0]["effort"].clone()),
        (json!("gpt-5.4"), json!("high"))
    );
    assert_eq!(
        (turns[1]["model"].clone(), turns[1]["effort"].clone()),
        (json!("gpt-5.5"), json!("high"))
    );
    let shown = runs.env.nagi_ok(&["mission", "get", "m1"]);
    assert!(
        shown.stdout.contains("model gpt-5.5 (high effort)"),
        "{}",
        shown.describe()
    );
}

#[test]
fn a_line_typed_through_nagi_pane_attach_in_tmux_is_the_next_turn_and_the_console_draws_the_run() {
    let runs = runs_with(
        json!([{"text": "first turn words"}, {"tool": "cat README.md", "output": "the readme"}]),
        &[(
            "NAGI_FAKE_RESUMED_SCRIPT",
            r#"[{"text": "typed turn answer"}]"#,
        )],
    );
    runs.env.ok("mission.start", start_params("codex", "r1"));
    let first = wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close",
        status_is("ready_to_close"),
    );
    let pane = first["run"]["pane_id"].as_str().unwrap().to_string();
    let Some(tmux) = crate::tmux::Tmux::start(&runs.env.root()) else {
        return;
    };
    tmux.attach_pane(&runs.env, &pane, 120, 30);
    // The console draws the run: its greeting, the agent's words, the tool call and its
    // output, and the turn's end.
    let drawn = tmux.wait_for("t", "the run's console", |screen| {
        screen.contains("first turn words") && screen.contains("the turn ended")
    });
    for expected in [
        "[console] mission m1: type a line",
        "first turn words",
        "cat README.md",
        "the readme",
    ] {
        assert!(
            drawn.contains(expected),
            "{expected:?} is not on the console:\n{drawn}"
        );
    }
    tmux.run(&["send-keys", "-t", "t", "please carry on", "Enter"]);
    let answered = tmux.wait_for("t", "the typed turn's answer", |screen| {
        screen.contains("typed turn answer")
    });
    assert!(
        answered.contains("sent: the agent resumes its session"),
        "{answered}"
    );
    let done = wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close after the typed turn",
        |mission| mission["status"] == "ready_to_close" && mission["run"]["turns"] == 2,
    );
    assert_eq!(done["run"]["pane_id"], pane.as_str());
    assert_eq!(
        prompts(&runs).last().map(String::as_str),
        Some("please carry on")
    );
}

#[test]
fn a_follow_up_sent_while_the_turns_checks_run_waits_for_them_and_resumes() {
    let runs = runs_with(
        json!([{"text": "first answer"}]),
        &[("NAGI_FAKE_RESUMED_SCRIPT", r#"[{"text": "second answer"}]"#)],
    );
    // A mission whose check is slow enough that the follow-up comes while it runs.
    runs.env.ok(
        "mission.create",
        create_params("m2", &runs.repo.path_text()),
    );
    runs.env.ok(
        "mission.configure",
        configure_params("m2", "sh", &["-c", "sleep 1"]),
    );
    let mut start = start_params("codex", "r1");
    start["mission_id"] = json!("m2");
    runs.env.ok("mission.start", start);
    wait_for_mission(&runs.env, "m2", "the turn's checks to run", |mission| {
        // The turn is over and its checks have not reported yet.
        mission["run"]["last_turn_outcome"] == "completed"
            && mission["status"] == "review_required"
            && mission["checks"][0]["status"] == "missing"
    });
    // A person types the next line as the turn ends: it is not refused as busy.
    let sent = runs.env.ok(
        "mission.send",
        json!({"mission_id": "m2", "text": "and the next thing"}),
    );
    assert_eq!(sent["delivery"], "resumed", "{sent}");
    let done = wait_for_mission(&runs.env, "m2", "the second turn proved", |mission| {
        mission["status"] == "ready_to_close" && mission["run"]["turns"] == 2
    });
    assert_eq!(done["checks"][0]["status"], "passed", "{done}");
    assert_eq!(
        prompts(&runs).last().map(String::as_str),
        Some("and the next thing")
    );
}
