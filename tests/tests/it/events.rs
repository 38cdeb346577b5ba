//! Mission events from the durable log: streaming, filtering, one-shot waits, and a
//! subscriber that resumes after a server restart without gaps or duplicates.

use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use nagi_tests::*;
use serde_json::{Value, json};

fn subscribe(env: &TestEnv, params: Value) -> (BufReader<UnixStream>, Value) {
    let mut stream = UnixStream::connect(&env.socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let line = json!({"id": "sub", "method": "events.subscribe", "params": params}).to_string();
    stream.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let ack = TestEnv::read_line_from(&mut reader).expect("subscription ack");
    (reader, ack)
}

fn next_events(reader: &mut BufReader<UnixStream>, count: usize) -> Vec<Value> {
    (0..count)
        .map(|_| TestEnv::read_line_from(reader).expect("an event"))
        .collect()
}

#[test]
fn a_subscriber_sees_mission_events_with_sequences_and_statuses() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let (mut reader, ack) = subscribe(&env, json!({"subscriptions": [{"type": "mission"}]}));
    assert_eq!(ack["result"]["type"], "subscription_started");
    assert_eq!(ack["result"]["head_seq"], 0);
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok("mission.configure", configure_params("m1", "true", &[]));
    let events = next_events(&mut reader, 2);
    assert_eq!(events[0]["event"], "mission_created");
    assert_eq!(events[0]["data"]["type"], "mission_created");
    assert_eq!(events[0]["data"]["seq"], 1);
    assert_eq!(events[0]["data"]["mission_id"], "m1");
    assert_eq!(events[0]["data"]["status"], "draft");
    assert_eq!(events[1]["event"], "mission_configured");
    assert_eq!(events[1]["data"]["seq"], 2);
    assert_eq!(events[1]["data"]["declared_check_count"], 1);
}

#[test]
fn filters_select_missions_and_kinds() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let (mut reader, _) = subscribe(
        &env,
        json!({"subscriptions": [{"type": "mission", "mission_id": "b", "kinds": ["mission_configured"]}]}),
    );
    env.ok("mission.create", create_params("a", &repo.path_text()));
    env.ok("mission.create", create_params("b", &repo.path_text()));
    env.ok("mission.configure", configure_params("a", "true", &[]));
    env.ok("mission.configure", configure_params("b", "true", &[]));
    let event = next_events(&mut reader, 1).remove(0);
    assert_eq!(event["event"], "mission_configured");
    assert_eq!(event["data"]["mission_id"], "b");
    assert_eq!(event["data"]["seq"], 4);
}

#[test]
fn a_subscriber_resumes_after_a_restart_with_every_later_event_exactly_once() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let (mut reader, _) = subscribe(
        &env,
        json!({"subscriptions": [{"type": "mission"}], "after_seq": 0}),
    );
    for index in 0..5 {
        env.ok(
            "mission.create",
            create_params(&format!("m{index}"), &repo.path_text()),
        );
    }
    let seen = next_events(&mut reader, 3);
    let last_seen = seen.last().unwrap()["data"]["seq"].as_u64().unwrap();
    assert_eq!(last_seen, 3);
    env.kill_server();
    // The old stream ends with the server; before its end it may still hold events that
    // were sent before the kill, and nothing else.
    let mut leftovers = Vec::new();
    while let Some(event) = TestEnv::read_line_from(&mut reader) {
        leftovers.push(event["data"]["seq"].as_u64().unwrap());
    }
    assert!(
        leftovers.iter().all(|seq| (4..=5).contains(seq)),
        "{leftovers:?}"
    );
    env.start_server();
    for index in 5..8 {
        env.ok(
            "mission.create",
            create_params(&format!("m{index}"), &repo.path_text()),
        );
    }
    let (mut resumed, ack) = subscribe(
        &env,
        json!({"subscriptions": [{"type": "mission"}], "after_seq": last_seen}),
    );
    assert_eq!(ack["result"]["head_seq"], 8);
    env.ok("mission.create", create_params("m8", &repo.path_text()));
    let rest = next_events(&mut resumed, 6);
    let seqs: Vec<u64> = rest
        .iter()
        .map(|event| event["data"]["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, vec![4, 5, 6, 7, 8, 9]);
    let ids: Vec<&str> = rest
        .iter()
        .map(|event| event["data"]["mission_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["m3", "m4", "m5", "m6", "m7", "m8"]);
}

#[test]
fn events_wait_answers_once_a_matching_event_commits() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let env_ref = &env;
    let waited = std::thread::scope(|scope| {
        let waiter = scope.spawn(move || {
            // after_seq 0: whether the server reads the wait before or after the commit,
            // the event is seen.
            env_ref.call("events.wait", json!({"match_event": {"event": "mission", "mission_id": "w", "kind": "mission_configured",
                                                               "after_seq": 0},
                                                "timeout_ms": 20_000}))
        });
        env_ref.ok("mission.create", create_params("w", &repo.path_text()));
        env_ref.ok("mission.configure", configure_params("w", "true", &[]));
        waiter.join().unwrap()
    });
    assert_eq!(waited["result"]["type"], "wait_matched", "{waited}");
    assert_eq!(waited["result"]["event"]["event"], "mission_configured");
    // A wait that sees nothing times out with its own code; after_seq replays the past.
    let timed_out = env.call(
        "events.wait",
        json!({"match_event": {"event": "mission", "mission_id": "none"}, "timeout_ms": 200}),
    );
    assert_eq!(timed_out["error"]["code"], "timeout");
    let replayed = env.call(
        "events.wait",
        json!({"match_event": {"event": "mission", "mission_id": "w", "after_seq": 0}}),
    );
    assert_eq!(replayed["result"]["event"]["data"]["seq"], 1);
}

#[test]
fn the_cli_follows_events() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    let mut child = env
        .command()
        .args(["events", "subscribe", "--after", "0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = std::io::BufRead::lines(BufReader::new(stdout));
    let first = lines.next().unwrap().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(first.starts_with("#1 mission_created m1"), "{first}");
}

/// Subscriptions to events nagi never emits are refused, naming the event, instead of
/// leaving the subscriber waiting for nothing.
#[test]
fn subscriptions_to_events_never_emitted_are_refused() {
    let mut env = TestEnv::new();
    env.start_server();
    for (subscription, event) in [
        (json!({"type": "pane.moved"}), "pane.moved"),
        (
            json!({"type": "pane.agent_detected"}),
            "pane.agent_detected",
        ),
    ] {
        let (_, ack) = subscribe(&env, json!({"subscriptions": [subscription]}));
        assert_eq!(ack["error"]["code"], "feature_unavailable", "{ack}");
        assert!(
            ack["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains(event),
            "{ack}"
        );
    }
    let (_, ack) = subscribe(&env, json!({"subscriptions": [{"type": "pane.created"}]}));
    assert_eq!(ack["result"]["type"], "subscription_started", "{ack}");
}
