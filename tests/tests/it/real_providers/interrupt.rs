//! Interrupting and stopping a real CLI mid-turn (issue 16): the mock model holds its answer
//! back, and while the turn is in flight `nagi mission interrupt` ends it through the
//! provider's own interrupt (Codex `turn/interrupt`, Claude Code's control `interrupt`,
//! OpenCode's `abort`, ACP `session/cancel`), or `nagi mission stop` ends the provider's
//! process tree. Either way the mission is `blocked` long before the answer would have come,
//! the run's claim is released, and no process of the provider is left running.

use serde_json::json;

use super::*;

/// How long the mock holds back the answer the turn is waiting for when it is interrupted or
/// stopped: far longer than an interrupt or a stop may take.
const HELD_BACK_MS: u64 = 30_000;
/// How long an interrupt or a stop may take, from the command to a `blocked` mission.
const STEER_DEADLINE: Duration = Duration::from_secs(12);
/// How long the provider's processes may take to go away once the mission is `blocked`.
const EXIT_DEADLINE: Duration = Duration::from_secs(15);

const HELD_TEXT: &str = "This answer was held back and never said.";
const FOLLOW_UP: &str = "Go on where you stopped, please.";

/// A server with `provider` configured and a mission `mission_id` whose run `run-1` is mid-turn:
/// the provider has asked the model, which holds the answer back `HELD_BACK_MS`.
fn mission_held_mid_turn(
    provider: RealProvider,
    mission_id: &str,
) -> Option<(RealSession, ProviderSweep)> {
    let cli = installed_cli(provider.cli_name())?;
    let mut session = RealSession::new(provider, &cli, |workspace| {
        let scenario = json!({
            "workspace": workspace,
            "title": "Mock session",
            "steps": [{"text": HELD_TEXT, "delay_ms": HELD_BACK_MS}]
        });
        Scenario::from_json(&scenario.to_string()).expect("a valid scenario")
    });
    let sweep = ProviderSweep {
        home: session.home.home.clone(),
    };
    session.start_server();
    session.create_configured_mission(mission_id);
    session.start_run(mission_id, "run-1");
    // The turn is in flight once the model got the request it answers late.
    let deadline = Instant::now() + TURN_DEADLINE;
    while !session
        .mock
        .main_requests()
        .iter()
        .any(|request| request.step == Some(0))
    {
        let mission = session.mission(mission_id);
        assert!(
            Instant::now() < deadline
                && !matches!(mission["status"].as_str(), Some("failed" | "blocked")),
            "the provider never asked the model for the held-back answer:\n{}\n--- transcript\n{}",
            serde_json::to_string_pretty(&mission).unwrap(),
            session.transcript_text(&mission)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mission = session.mission(mission_id);
    assert_eq!(mission["status"], "active", "mid-turn: {mission}");
    assert_eq!(mission["run"]["live"], true, "mid-turn: {mission}");
    assert!(
        !provider_processes(&session.home.home).is_empty(),
        "the scan finds the provider's processes by their HOME"
    );
    Some((session, sweep))
}

/// Waits until the mission is `blocked`, failing when that takes longer than `STEER_DEADLINE`.
fn wait_for_blocked(session: &RealSession, mission_id: &str, what: &str) -> Value {
    let asked = Instant::now();
    loop {
        let mission = session.mission(mission_id);
        if mission["status"] == "blocked" {
            return mission;
        }
        assert!(
            asked.elapsed() < STEER_DEADLINE,
            "{what}: the mission is not blocked {STEER_DEADLINE:?} later:\n{}\n--- transcript\n{}",
            serde_json::to_string_pretty(&mission).unwrap(),
            session.transcript_text(&mission)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until no process with this test's CLI HOME is left running.
fn wait_until_the_provider_is_gone(session: &RealSession, what: &str) {
    let deadline = Instant::now() + EXIT_DEADLINE;
    loop {
        let alive = provider_processes(&session.home.home);
        if alive.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: provider processes are still running {EXIT_DEADLINE:?} later: {}",
            alive
                .iter()
                .map(|pid| {
                    let command = std::fs::read(format!("/proc/{pid}/cmdline"))
                        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " "))
                        .unwrap_or_default();
                    format!("{pid} ({})", command.trim())
                })
                .collect::<Vec<_>>()
                .join(", ")
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until the store holds no claim (the run's checkout is released).
fn wait_until_the_claim_is_released(session: &RealSession, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let store = session.env.store_fingerprint().1;
        if store.contains("claims=0") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the run's claim is still held:\n{store}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The recorded `mission_run_steered` events of the mission, their `data`.
fn steered(session: &RealSession, mission_id: &str) -> Vec<Value> {
    session
        .mission_events(mission_id)
        .into_iter()
        .filter(|event| event["event"] == "mission_run_steered")
        .map(|event| event["data"].clone())
        .collect()
}

/// The held-back answer never went out: the turn ended before the model answered.
fn assert_the_answer_never_came(session: &RealSession, mission: &Value) {
    assert!(
        session.mock.replies_sent().is_empty(),
        "the model's held-back answer went out before the turn ended: {:?}",
        session.mock.replies_sent()
    );
    assert!(
        !session.transcript_text(mission).contains(HELD_TEXT),
        "the held-back answer is in the run's transcript"
    );
}

fn interrupt_mid_turn(provider: RealProvider) {
    let Some((session, _sweep)) = mission_held_mid_turn(provider, "int-m") else {
        return;
    };
    let asked = Instant::now();
    let interrupted = session.env.nagi_ok(&["mission", "interrupt", "int-m"]);
    assert!(
        interrupted.stdout.contains("interrupt sent"),
        "{}",
        interrupted.describe()
    );
    let mission = wait_for_blocked(&session, "int-m", "after the interrupt");
    let took = asked.elapsed();
    eprintln!("{}: interrupted in {took:?}", provider.wire_name());
    let reason = mission["status_reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("interrupted by"),
        "{}: {mission}",
        provider.wire_name()
    );
    assert!(
        reason.contains("nagi mission send int-m TEXT"),
        "the reason says how to go on: {reason}"
    );
    assert_eq!(mission["run"]["turns"], 1, "{mission}");
    assert_eq!(
        mission["run"]["last_turn_outcome"], "interrupted",
        "{mission}"
    );
    assert_eq!(mission["run"]["run_id"], "run-1", "{mission}");
    assert_the_answer_never_came(&session, &mission);

    // No idle provider after the turn: its processes end and the run is not live.
    wait_until_the_provider_is_gone(&session, "after the interrupted turn");
    let mission = session.mission("int-m");
    assert_eq!(mission["status"], "blocked", "{mission}");
    assert_eq!(mission["run"]["live"], false, "{mission}");
    wait_until_the_claim_is_released(&session, "after the interrupted turn");
    let steered = steered(&session, "int-m");
    assert_eq!(steered.len(), 1, "{steered:?}");
    assert_eq!(steered[0]["action"], "interrupt", "{steered:?}");
    assert_eq!(
        steered[0]["actor"]["uid"],
        unsafe { libc::getuid() },
        "{steered:?}"
    );
    // There is no turn left to interrupt.
    assert_eq!(
        session
            .env
            .error_code("mission.interrupt", json!({"mission_id": "int-m"})),
        "run_not_active"
    );

    // A follow-up goes on in the same native session: the model gets it with the
    // conversation so far (the mission prompt once). The model holds this answer back too,
    // and the run is stopped rather than waited for.
    let sent = session.env.ok(
        "mission.send",
        json!({"mission_id": "int-m", "text": FOLLOW_UP}),
    );
    assert_eq!(sent["delivery"], "resumed", "{sent}");
    let deadline = Instant::now() + TURN_DEADLINE;
    let follow_up = loop {
        if let Some(request) = session
            .mock
            .main_requests()
            .into_iter()
            .find(|request| request.body_text().contains(FOLLOW_UP))
        {
            break request;
        }
        let mission = session.mission("int-m");
        assert!(
            Instant::now() < deadline
                && matches!(mission["status"].as_str(), Some("preparing" | "active")),
            "the follow-up never reached the model:\n{}\n--- transcript\n{}",
            serde_json::to_string_pretty(&mission).unwrap(),
            session.transcript_text(&mission)
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        objective_count(&follow_up, OBJECTIVE),
        1,
        "the resumed session carries the mission prompt once: {}",
        follow_up.body_text()
    );
    let mission = session.mission("int-m");
    assert_eq!(mission["run"]["run_id"], "run-1", "the same run: {mission}");
    assert_eq!(mission["status"], "active", "{mission}");
    session.env.nagi_ok(&["mission", "stop", "int-m"]);
    let mission = wait_for_blocked(&session, "int-m", "after the stop of the follow-up");
    assert!(
        mission["status_reason"]
            .as_str()
            .unwrap_or_default()
            .starts_with("stopped by"),
        "{mission}"
    );
    wait_until_the_provider_is_gone(&session, "after the stop of the follow-up");
    wait_until_the_claim_is_released(&session, "after the stop of the follow-up");
}

fn stop_mid_turn(provider: RealProvider) {
    let Some((session, _sweep)) = mission_held_mid_turn(provider, "stop-m") else {
        return;
    };
    let running = provider_processes(&session.home.home);
    let asked = Instant::now();
    let stopped = session.env.nagi_ok(&["mission", "stop", "stop-m"]);
    assert!(
        stopped.stdout.contains("run stopped"),
        "{}",
        stopped.describe()
    );
    let mission = wait_for_blocked(&session, "stop-m", "after the stop");
    let took = asked.elapsed();
    eprintln!("{}: stopped in {took:?}", provider.wire_name());
    let reason = mission["status_reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("stopped by"),
        "{}: {mission}",
        provider.wire_name()
    );
    assert_eq!(mission["run"]["live"], false, "{mission}");
    assert_eq!(mission["run"]["run_id"], "run-1", "{mission}");
    assert_the_answer_never_came(&session, &mission);

    // The whole process tree is gone (every process that ran when the stop came, and any
    // it started since), and the run's claim is released.
    wait_until_the_provider_is_gone(&session, "after the stop");
    for pid in running {
        assert!(process_is_gone(pid as i32), "provider process {pid} lives");
    }
    wait_until_the_claim_is_released(&session, "after the stop");
    let steered = steered(&session, "stop-m");
    assert_eq!(steered.len(), 1, "{steered:?}");
    assert_eq!(steered[0]["action"], "stop", "{steered:?}");
    // Stopping again has nothing to stop.
    assert_eq!(
        session
            .env
            .error_code("mission.stop", json!({"mission_id": "stop-m"})),
        "run_not_active"
    );
    let mission = session.mission("stop-m");
    assert_eq!(mission["status"], "blocked", "{mission}");
}

#[test]
fn a_codex_turn_is_interrupted_while_the_model_holds_its_answer() {
    interrupt_mid_turn(RealProvider::Codex);
}

#[test]
fn a_claude_turn_is_interrupted_while_the_model_holds_its_answer() {
    interrupt_mid_turn(RealProvider::ClaudeCode);
}

#[test]
fn an_opencode_turn_is_interrupted_while_the_model_holds_its_answer() {
    interrupt_mid_turn(RealProvider::OpenCode);
}

#[test]
fn an_opencode_acp_turn_is_interrupted_while_the_model_holds_its_answer() {
    interrupt_mid_turn(RealProvider::OpenCodeAcp);
}

#[test]
fn a_codex_run_is_stopped_while_the_model_holds_its_answer() {
    stop_mid_turn(RealProvider::Codex);
}

#[test]
fn a_claude_run_is_stopped_while_the_model_holds_its_answer() {
    stop_mid_turn(RealProvider::ClaudeCode);
}

#[test]
fn an_opencode_run_is_stopped_while_the_model_holds_its_answer() {
    stop_mid_turn(RealProvider::OpenCode);
}

#[test]
fn an_opencode_acp_run_is_stopped_while_the_model_holds_its_answer() {
    stop_mid_turn(RealProvider::OpenCodeAcp);
}
