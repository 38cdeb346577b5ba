//! A pane's process from start to end: its environment, an exit and its status, a process
//! that double-forked away, and the lifecycle, output and agent events that subscribers
//! get (and what a subscriber that falls behind is told).

use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;

use nagi_tests::*;
use serde_json::{Value, json};

use crate::panes::*;
use crate::schema::{assert_event_valid, assert_pane_response_valid};

fn is_event(event: &Value, kind: &str) -> bool {
    event["event"] == kind
}

#[test]
fn closing_a_pane_ends_a_process_that_double_forked_away_from_it() {
    let mut env = TestEnv::new();
    env.start_server();
    let pid_file = env.root().join("escaped.pid");
    let script = format!(
        "(setsid sleep 1000 & echo $! > {}); echo forked; sleep 1000",
        pid_file.display()
    );
    let pane = start_pane(&env, &["sh", "-c", &script]);
    let id = pane_id(&pane);
    wait_for_read(&env, &id, "visible", None, |text| has_line(text, "forked"));
    eventually("the pid file is written", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|text| text.ends_with('\n'))
    });
    let escaped: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let shell = pane["pid"].as_i64().unwrap() as i32;
    assert!(
        !process_is_gone(escaped) && !process_is_gone(shell),
        "both processes run before the close"
    );
    let stat = std::fs::read_to_string(format!("/proc/{escaped}/stat")).unwrap();
    let parent: i32 = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert_ne!(
        parent, shell,
        "the sleep left the pane's process tree (its parent is now {parent})"
    );

    assert_eq!(
        ok_valid(&env, "pane.close", json!({"pane_id": id}))["type"],
        "ok"
    );
    eventually("the double-forked sleep ends", || process_is_gone(escaped));
    eventually("the pane's shell ends", || process_is_gone(shell));
    assert_eq!(
        error_valid(&env, "pane.get", json!({"pane_id": id})),
        "pane_not_found"
    );
}

#[test]
fn exit_events_carry_the_status_and_waits_see_them() {
    let mut env = TestEnv::new();
    env.start_server();
    let mut events = subscribe(
        &env,
        json!([{"type": "pane.exited"}, {"type": "pane.created"}]),
    );
    let exits = start_pane(&env, &["sh", "-c", "read line; exit 7"]);
    let killed = start_pane(&env, &["sh", "-c", "read line; kill -TERM $$"]);
    let created = next_event(&mut events, |event| is_event(event, "pane_created"));
    assert_eq!(created["data"]["pane"]["pane_id"], exits["pane_id"]);

    // A one-shot wait on another connection: whether the server reads it before or after
    // the exit, it answers with the exit.
    let exits_id = pane_id(&exits);
    let waiter_env_socket = env.socket.clone();
    let (sent, request_sent) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let mut stream = UnixStream::connect(&waiter_env_socket).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let line = json!({"id": "w", "method": "events.wait", "params": {"match_event": {"event": "pane_exited", "pane_id": exits_id}, "timeout_ms": 60_000}});
        stream.write_all(format!("{line}\n").as_bytes()).unwrap();
        sent.send(()).unwrap();
        let mut reader = BufReader::new(stream);
        TestEnv::read_line_from(&mut reader).expect("the wait answers")
    });
    request_sent.recv().unwrap();
    ok_valid(
        &env,
        "pane.send_text",
        json!({"pane_id": exits["pane_id"], "text": "\n"}),
    );
    let exited = next_event(&mut events, |event| {
        is_event(event, "pane_exited") && event["data"]["pane_id"] == exits["pane_id"]
    });
    assert_eq!(exited["data"]["exit_code"], 7);
    assert!(exited["data"].get("signal").is_none());
    let waited = waiter.join().unwrap();
    assert_pane_response_valid(&waited);
    assert_eq!(waited["result"]["type"], "wait_matched", "{waited}");
    // A wait for the end of a pane that has ended answers at once, with its exit.
    let late = ok_valid(
        &env,
        "events.wait",
        json!({"match_event": {"event": "pane_exited", "pane_id": exits["pane_id"]}, "timeout_ms": 60_000}),
    );
    assert_eq!(late["event"]["data"]["exit_code"], 7, "{late}");
    assert_eq!(waited["result"]["event"]["data"]["exit_code"], 7);

    ok_valid(
        &env,
        "pane.send_text",
        json!({"pane_id": killed["pane_id"], "text": "\n"}),
    );
    let exited = next_event(&mut events, |event| {
        is_event(event, "pane_exited") && event["data"]["pane_id"] == killed["pane_id"]
    });
    assert_eq!(exited["data"]["signal"], 15);

    let info = ok_valid(&env, "pane.get", json!({"pane_id": exits["pane_id"]}));
    assert_eq!(
        info["pane"]["exit_status"]["exit_code"], 7,
        "the ended pane stays readable: {info}"
    );
    assert_eq!(
        error_valid(
            &env,
            "pane.send_text",
            json!({"pane_id": exits["pane_id"], "text": "x"})
        ),
        "pane_exited"
    );
    let timeout = error_valid(
        &env,
        "events.wait",
        json!({"match_event": {"event": "pane_exited", "pane_id": "w9:p9"}, "timeout_ms": 200}),
    );
    assert_eq!(timeout, "timeout");
}

#[test]
fn pane_processes_get_the_nagi_environment_and_server_values_win() {
    let mut env = TestEnv::new();
    env.start_server();
    let script = r#"echo "S=$NAGI_SOCKET_PATH|E=$NAGI_ENV|W=$NAGI_WORKSPACE_ID|T=$NAGI_TAB_ID|P=$NAGI_PANE_ID|M=$MY_VAR"; sleep 600"#;
    let created = ok_valid(
        &env,
        "workspace.create",
        json!({"command": ["sh", "-c", script], "env": {"MY_VAR": "mine", "NAGI_PANE_ID": "forged", "NAGI_ENV": "0"}}),
    );
    let id = pane_id(&created["root_pane"]);
    let text = wait_for_read(&env, &id, "visible", None, |text| text.contains("|M="));
    let expected = format!("S={}|E=1|W=w1|T=w1:t1|P=w1:p1|M=mine", env.socket.display());
    assert!(
        has_line(&text, &expected),
        "expected {expected:?} in:\n{text}"
    );
}

#[test]
fn lifecycle_output_and_agent_events_reach_subscribers() {
    let mut env = TestEnv::new();
    env.start_server();
    let watched = start_shell(&env);
    let watched_id = pane_id(&watched);
    let mut events = subscribe(
        &env,
        json!([
            {"type": "workspace.created"}, {"type": "workspace.renamed"}, {"type": "workspace.closed"},
            {"type": "tab.created"}, {"type": "tab.closed"}, {"type": "pane.created"}, {"type": "pane.closed"},
            {"type": "pane.output_matched", "pane_id": watched_id, "source": "recent", "match": {"type": "regex", "value": "(?m)^done-\\d+$"}},
            {"type": "pane.agent_status_changed", "pane_id": watched_id},
        ]),
    );
    // The typed line reads done-$((40+2)); only the program's output matches the pattern.
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": watched_id, "text": "echo done-$((40+2))", "keys": ["enter"]}),
    );
    let matched = next_event(&mut events, |event| is_event(event, "pane.output_matched"));
    assert_eq!(matched["data"]["pane_id"], watched_id.as_str());
    assert_eq!(matched["data"]["matched_line"], "done-42");
    ok_valid(
        &env,
        "pane.report_agent",
        json!({"pane_id": watched_id, "source": "test-hook", "agent": "claude", "state": "blocked"}),
    );
    let status = next_event(&mut events, |event| {
        is_event(event, "pane.agent_status_changed")
    });
    assert_eq!(status["data"]["agent_status"], "blocked");

    let created = ok_valid(&env, "workspace.create", json!({"command": ["sh"]}));
    let workspace_id = created["workspace"]["workspace_id"]
        .as_str()
        .unwrap()
        .to_string();
    next_event(&mut events, |event| {
        is_event(event, "workspace_created")
            && event["data"]["workspace"]["workspace_id"] == workspace_id
    });
    next_event(&mut events, |event| {
        is_event(event, "pane_created") && event["data"]["pane"]["workspace_id"] == workspace_id
    });
    ok_valid(
        &env,
        "workspace.rename",
        json!({"workspace_id": workspace_id, "label": "renamed"}),
    );
    let renamed = next_event(&mut events, |event| is_event(event, "workspace_renamed"));
    assert_eq!(renamed["data"]["label"], "renamed");
    let tab = ok_valid(
        &env,
        "tab.create",
        json!({"workspace_id": workspace_id, "command": ["sh"]}),
    );
    let tab_id = tab["tab"]["tab_id"].as_str().unwrap().to_string();
    next_event(&mut events, |event| {
        is_event(event, "tab_created") && event["data"]["tab"]["tab_id"] == tab_id
    });
    ok_valid(&env, "tab.close", json!({"tab_id": tab_id}));
    next_event(&mut events, |event| {
        is_event(event, "pane_closed") && event["data"]["pane_id"] == tab["root_pane"]["pane_id"]
    });
    next_event(&mut events, |event| {
        is_event(event, "tab_closed") && event["data"]["tab_id"] == tab_id
    });
    ok_valid(
        &env,
        "workspace.close",
        json!({"workspace_id": workspace_id}),
    );
    let closed = next_event(&mut events, |event| is_event(event, "workspace_closed"));
    assert_eq!(closed["data"]["workspace_id"], workspace_id.as_str());

    // A subscription that cannot start is refused and starts nothing; the connection stays.
    let mut stream = UnixStream::connect(&env.socket).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let bad = json!({"id": "bad", "method": "events.subscribe", "params": {"subscriptions": [
        {"type": "pane.output_matched", "pane_id": watched_id, "source": "recent", "match": {"type": "regex", "value": "(unclosed"}}]}});
    stream
        .write_all(
            format!(
                "{bad}\n{}\n",
                json!({"id": "after", "method": "ping", "params": {}})
            )
            .as_bytes(),
        )
        .unwrap();
    let mut reader = BufReader::new(stream);
    let refused = TestEnv::read_line_from(&mut reader).unwrap();
    assert_pane_response_valid(&refused);
    assert_eq!(refused["error"]["code"], "invalid_regex");
    assert_eq!(
        TestEnv::read_line_from(&mut reader).unwrap()["result"]["type"],
        "pong"
    );
}

#[test]
fn a_subscriber_that_falls_behind_is_told_and_keeps_its_stream() {
    let mut env = TestEnv::new();
    env.start_server();
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    // Subscribe and then read nothing while far more events than the bus holds happen.
    let mut events = subscribe(
        &env,
        json!([{"type": "pane.updated"}, {"type": "workspace.created"}]),
    );
    let mut client = env.client();
    for index in 0..10_000 {
        client
            .request(
                "pane.rename",
                json!({"pane_id": id, "label": format!("label-{index}")}),
            )
            .unwrap();
    }
    ok_valid(&env, "workspace.create", json!({"command": ["sh"]}));
    let mut lag = None;
    let last = loop {
        let event = TestEnv::read_line_from(&mut events).expect("the stream stays open");
        assert_event_valid(&event);
        if is_event(&event, "events.lagged") && lag.is_none() {
            lag = Some(event.clone());
        }
        if is_event(&event, "workspace_created") {
            break event;
        }
    };
    let lag = lag.expect("the subscriber is told that it fell behind");
    assert!(lag["data"]["missed"].as_u64().unwrap() > 0, "{lag}");
    assert_eq!(
        last["data"]["workspace"]["workspace_id"], "w2",
        "the stream goes on after the lag"
    );
    assert_eq!(
        ok_valid(&env, "pane.get", json!({"pane_id": id}))["pane"]["label"],
        "label-9999",
        "the server kept serving"
    );
}
