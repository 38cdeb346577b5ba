//! Managed panes over the real socket with the real binary: workspaces, tabs and panes
//! running real programs on real PTYs, reads that match what a terminal shows, process
//! control, events, bad input, and the `nagi workspace|pane|wait` commands. Every response
//! is validated against our own schema and the reference `nagi-api.schema.json`.

use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use nagi_tests::*;
use serde_json::{Value, json};

use crate::schema::{assert_event_valid, assert_pane_response_valid};

/// Generous: the machine is shared and slow at times. Tests poll; they never assert on
/// elapsed time.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Calls a method and validates the response line against both schemas.
pub fn call_valid(env: &TestEnv, method: &str, params: Value) -> Value {
    let response = env.call(method, params);
    assert_pane_response_valid(&response);
    response
}

/// Calls, requires success, validates, and returns the `result`.
pub fn ok_valid(env: &TestEnv, method: &str, params: Value) -> Value {
    let response = call_valid(env, method, params.clone());
    match response.get("result") {
        Some(result) => result.clone(),
        None => panic!("{method} {params} failed: {response}"),
    }
}

/// Calls, requires an error, validates, and returns its code.
pub fn error_valid(env: &TestEnv, method: &str, params: Value) -> String {
    let response = call_valid(env, method, params.clone());
    match response.pointer("/error/code").and_then(Value::as_str) {
        Some(code) => code.to_string(),
        None => panic!("{method} {params} was expected to fail but answered {response}"),
    }
}

/// A new workspace whose root pane runs `argv`; returns the root pane.
pub fn start_pane(env: &TestEnv, argv: &[&str]) -> Value {
    let result = ok_valid(env, "workspace.create", json!({"command": argv}));
    result["root_pane"].clone()
}

/// The prompt of test shells ends the line, so that a command's output always starts a
/// line of its own, even when the command was typed (and echoed) before the prompt.
pub const SHELL_PROMPT: &str = "sh$ \n";

/// A new workspace whose root pane runs `sh`, once the shell has printed its prompt.
pub fn start_shell(env: &TestEnv) -> Value {
    let result = ok_valid(
        env,
        "workspace.create",
        json!({"command": ["sh"], "env": {"PS1": SHELL_PROMPT}}),
    );
    let pane = result["root_pane"].clone();
    wait_for_read(env, &pane_id(&pane), "visible", None, |text| {
        text.contains("sh$")
    });
    pane
}

pub fn pane_id(pane: &Value) -> String {
    pane["pane_id"].as_str().expect("pane_id").to_string()
}

pub fn read(env: &TestEnv, pane_id: &str, source: &str, lines: Option<u32>) -> String {
    let result = ok_valid(
        env,
        "pane.read",
        json!({"pane_id": pane_id, "source": source, "lines": lines}),
    );
    result["read"]["text"].as_str().unwrap().to_string()
}

/// Polls a read until `accept` holds.
pub fn wait_for_read(
    env: &TestEnv,
    pane_id: &str,
    source: &str,
    lines: Option<u32>,
    accept: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let text = read(env, pane_id, source, lines);
        if accept(&text) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "pane {pane_id} never showed the expected text; last {source} read:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// A screen's lines with their trailing blanks removed, and the blank lines at the end
/// dropped: what two screens that show the same thing have in common.
pub fn normalized_screen(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .map(|line| line.trim_end().to_string())
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

pub fn has_line(text: &str, wanted: &str) -> bool {
    text.lines().any(|line| line == wanted)
}

/// Polls `condition` until it holds.
pub fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "{what} did not happen in time");
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// Opens a subscription; returns the stream after checking the acknowledgement.
pub fn subscribe(env: &TestEnv, subscriptions: Value) -> BufReader<UnixStream> {
    let mut stream = UnixStream::connect(&env.socket).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let line = json!({"id": "sub", "method": "events.subscribe", "params": {"subscriptions": subscriptions}});
    stream.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let ack = TestEnv::read_line_from(&mut reader).expect("a subscription acknowledgement");
    assert_eq!(ack["result"]["type"], "subscription_started", "{ack}");
    assert_pane_response_valid(&ack);
    reader
}

/// Reads pushed events (validating each) until one satisfies `accept`.
pub fn next_event(reader: &mut BufReader<UnixStream>, accept: impl Fn(&Value) -> bool) -> Value {
    loop {
        let event = TestEnv::read_line_from(reader).expect("an event before the read timeout");
        assert_event_valid(&event);
        if accept(&event) {
            return event;
        }
    }
}

#[test]
fn workspaces_tabs_and_panes_answer_over_the_socket_and_validate_against_both_schemas() {
    let mut env = TestEnv::new();
    env.start_server();
    let root = env.root();
    let created = ok_valid(
        &env,
        "workspace.create",
        json!({"label": "api", "cwd": root, "command": ["sh"], "focus": true, "env": {"PS1": SHELL_PROMPT}}),
    );
    assert_eq!(created["type"], "workspace_created");
    let workspace_id = created["workspace"]["workspace_id"]
        .as_str()
        .unwrap()
        .to_string();
    let root_pane = pane_id(&created["root_pane"]);
    wait_for_read(&env, &root_pane, "visible", None, |text| {
        text.contains("sh$")
    });
    assert_eq!(workspace_id, "w1");
    assert_eq!(root_pane, "w1:p1");
    assert_eq!(created["tab"]["tab_id"], "w1:t1");
    assert_eq!(created["root_pane"]["cwd"], root.to_str().unwrap());

    let listed = ok_valid(&env, "workspace.list", json!({}));
    assert_eq!(listed["workspaces"].as_array().unwrap().len(), 1);
    let renamed = ok_valid(
        &env,
        "workspace.rename",
        json!({"workspace_id": workspace_id, "label": "backend"}),
    );
    assert_eq!(renamed["workspace"]["label"], "backend");
    assert_eq!(
        ok_valid(&env, "workspace.get", json!({"workspace_id": workspace_id}))["workspace"]["label"],
        "backend"
    );

    let tab = ok_valid(
        &env,
        "tab.create",
        json!({"workspace_id": workspace_id, "label": "logs", "command": ["sh"], "env": {"PS1": SHELL_PROMPT}}),
    );
    assert_eq!(tab["type"], "tab_created");
    let tab_id = tab["tab"]["tab_id"].as_str().unwrap().to_string();
    let tab_pane = pane_id(&tab["root_pane"]);
    assert_eq!(
        ok_valid(&env, "tab.list", json!({"workspace_id": workspace_id}))["tabs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        ok_valid(
            &env,
            "tab.rename",
            json!({"tab_id": tab_id, "label": "tail"})
        )["tab"]["label"],
        "tail"
    );
    assert_eq!(
        ok_valid(&env, "tab.get", json!({"tab_id": tab_id}))["tab"]["label"],
        "tail"
    );

    let panes = ok_valid(&env, "pane.list", json!({}));
    assert_eq!(panes["panes"].as_array().unwrap().len(), 2);
    let pane = ok_valid(
        &env,
        "pane.get",
        json!({"pane_id": root_pane, "unknown_field": "ignored like the reference"}),
    );
    assert_eq!(pane["pane"]["tab_id"], "w1:t1");
    assert!(
        pane["pane"]["terminal_id"]
            .as_str()
            .unwrap()
            .starts_with("term_")
    );
    assert_eq!(
        ok_valid(&env, "pane.current", json!({"caller_pane_id": tab_pane}))["pane"]["pane_id"],
        tab_pane.as_str()
    );
    assert_eq!(
        ok_valid(
            &env,
            "pane.rename",
            json!({"pane_id": root_pane, "label": "main"})
        )["pane"]["label"],
        "main"
    );
    let process = ok_valid(&env, "pane.process_info", json!({"pane_id": root_pane}));
    assert_eq!(process["process_info"]["shell_pid"], pane["pane"]["pid"]);

    ok_valid(
        &env,
        "pane.send_text",
        json!({"pane_id": root_pane, "text": "echo sum-$((20+22))"}),
    );
    ok_valid(
        &env,
        "pane.send_keys",
        json!({"pane_id": root_pane, "keys": ["enter"]}),
    );
    let matched = ok_valid(
        &env,
        "pane.wait_for_output",
        json!({"pane_id": root_pane, "source": "recent", "match": {"type": "regex", "value": "(?m)^sum-42$"}, "timeout_ms": 60_000}),
    );
    assert_eq!(matched["type"], "output_matched");
    assert_eq!(matched["matched_line"], "sum-42");
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": root_pane, "text": "echo in$((1+1))put", "keys": ["enter"]}),
    );
    wait_for_read(&env, &root_pane, "visible", None, |text| {
        has_line(text, "in2put")
    });

    ok_valid(
        &env,
        "pane.report_agent",
        json!({"pane_id": root_pane, "source": "test-hook", "agent": "codex", "state": "working"}),
    );
    ok_valid(
        &env,
        "pane.report_agent_session",
        json!({"pane_id": root_pane, "source": "test-hook", "agent": "codex", "agent_session_id": "sess-1"}),
    );
    ok_valid(
        &env,
        "pane.report_metadata",
        json!({"pane_id": root_pane, "source": "test-hook", "title": "Fixing login"}),
    );
    let pane = ok_valid(&env, "pane.get", json!({"pane_id": root_pane}));
    assert_eq!(pane["pane"]["agent_status"], "working");
    assert_eq!(pane["pane"]["title"], "Fixing login");
    assert_eq!(pane["pane"]["agent_session"]["value"], "sess-1");

    let snapshot = ok_valid(&env, "session.snapshot", json!({}));
    assert_eq!(snapshot["type"], "session_snapshot");
    assert_eq!(snapshot["snapshot"]["panes"].as_array().unwrap().len(), 2);
    assert_eq!(snapshot["snapshot"]["focused_workspace_id"], "w1");

    assert_eq!(
        ok_valid(&env, "tab.close", json!({"tab_id": tab_id}))["type"],
        "ok"
    );
    assert_eq!(
        error_valid(&env, "pane.get", json!({"pane_id": tab_pane})),
        "pane_not_found"
    );
    assert_eq!(
        ok_valid(
            &env,
            "workspace.close",
            json!({"workspace_id": workspace_id})
        )["type"],
        "ok"
    );
    assert_eq!(
        error_valid(&env, "workspace.get", json!({"workspace_id": workspace_id})),
        "workspace_not_found"
    );
    assert!(
        ok_valid(&env, "pane.list", json!({}))["panes"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

#[test]
fn bad_input_gets_a_clear_code_and_changes_nothing() {
    let mut env = TestEnv::new();
    env.start_server();
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": id, "text": "echo ready-$((1+1))", "keys": ["enter"]}),
    );
    // The shell is idle once its prompt follows the output; then take the state every
    // refusal below must leave alone.
    wait_for_read(&env, &id, "visible", None, |text| {
        text.split_once("ready-2")
            .is_some_and(|(_, after)| has_line(after, SHELL_PROMPT.trim()))
    });
    let screen_before = read(&env, &id, "recent", Some(10_000));
    let snapshot_before = ok_valid(&env, "session.snapshot", json!({}));

    for (method, params) in [
        ("pane.get", json!({"pane_id": "w9:p9"})),
        (
            "pane.read",
            json!({"pane_id": "w9:p9", "source": "visible"}),
        ),
        ("pane.send_text", json!({"pane_id": "w9:p9", "text": "x"})),
        (
            "pane.send_keys",
            json!({"pane_id": "w9:p9", "keys": ["enter"]}),
        ),
        ("pane.close", json!({"pane_id": "w9:p9"})),
        ("pane.rename", json!({"pane_id": "w9:p9", "label": "x"})),
        ("pane.process_info", json!({"pane_id": "w9:p9"})),
        (
            "pane.wait_for_output",
            json!({"pane_id": "w9:p9", "source": "recent", "match": {"type": "substring", "value": "x"}}),
        ),
    ] {
        assert_eq!(
            error_valid(&env, method, params),
            "pane_not_found",
            "{method}"
        );
    }
    assert_eq!(
        error_valid(&env, "workspace.get", json!({"workspace_id": "w9"})),
        "workspace_not_found"
    );
    assert_eq!(
        error_valid(&env, "workspace.close", json!({"workspace_id": "w9"})),
        "workspace_not_found"
    );
    assert_eq!(
        error_valid(&env, "tab.get", json!({"tab_id": "w9:t9"})),
        "tab_not_found"
    );
    assert_eq!(
        error_valid(&env, "tab.create", json!({"workspace_id": "w9"})),
        "workspace_not_found"
    );
    // A bad combo anywhere in the list means nothing is written, not even the good keys.
    for keys in [
        json!(["e", "enter", "ctrl+"]),
        json!(["hyper+q"]),
        json!(["notakey"]),
        json!(["ctrl+alt+"]),
    ] {
        let response = call_valid(&env, "pane.send_keys", json!({"pane_id": id, "keys": keys}));
        assert_eq!(
            response["error"]["code"], "invalid_key",
            "{keys}: {response}"
        );
    }
    let response = call_valid(
        &env,
        "pane.wait_for_output",
        json!({"pane_id": id, "source": "recent", "match": {"type": "regex", "value": "(unclosed"}}),
    );
    assert_eq!(response["error"]["code"], "invalid_regex");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("(unclosed")
    );
    for lines in [0, 10_001] {
        assert_eq!(
            error_valid(
                &env,
                "pane.read",
                json!({"pane_id": id, "source": "visible", "lines": lines})
            ),
            "invalid_params"
        );
    }
    assert_eq!(
        error_valid(&env, "pane.read", json!({"pane_id": id})),
        "invalid_params",
        "source is required"
    );
    assert_eq!(
        error_valid(
            &env,
            "pane.read",
            json!({"pane_id": id, "source": "detection"})
        ),
        "feature_unavailable"
    );
    assert_eq!(
        error_valid(&env, "workspace.create", json!({"cwd": "relative/dir"})),
        "invalid_params"
    );
    assert_eq!(
        error_valid(
            &env,
            "workspace.create",
            json!({"command": ["/nonexistent/program"]})
        ),
        "pane_spawn_failed"
    );
    for method in [
        "pane.split",
        "pane.zoom",
        "pane.layout",
        "layout.export",
        "plugin.list",
        "pane.graphics.set",
    ] {
        let response = call_valid(&env, method, json!({}));
        assert_eq!(response["error"]["code"], "feature_unavailable", "{method}");
        assert!(
            response["error"]["message"]
                .as_str()
                .unwrap()
                .contains(method),
            "{response}"
        );
    }

    let screen_after = read(&env, &id, "recent", Some(10_000));
    assert_eq!(screen_after, screen_before, "nothing reached the pane");
    let snapshot_after = ok_valid(&env, "session.snapshot", json!({}));
    assert_eq!(
        snapshot_after["snapshot"]["workspaces"], snapshot_before["snapshot"]["workspaces"],
        "no workspace appeared"
    );
    assert_eq!(
        snapshot_after["snapshot"]["panes"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn the_cli_lists_reads_types_waits_and_closes() {
    let mut env = TestEnv::new();
    env.start_server();
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    let workspaces = env.nagi_ok(&["workspace", "list"]);
    assert!(
        workspaces
            .stdout
            .lines()
            .any(|line| line.starts_with("w1 ")),
        "{}",
        workspaces.describe()
    );
    let listed = env.nagi_ok(&["--json", "pane", "list"]).json();
    assert_eq!(listed["panes"][0]["pane_id"], id.as_str());
    let human = env.nagi_ok(&["pane", "list"]);
    assert!(
        human.stdout.contains(&id) && human.stdout.contains("running (pid"),
        "{}",
        human.describe()
    );

    env.nagi_ok(&["pane", "send", &id, "echo cli-$((3*4))", "--enter"]);
    let waited = env.nagi_ok(&[
        "wait",
        "output",
        &id,
        "--match",
        "^cli-\\d+$",
        "--timeout",
        "60",
    ]);
    assert_eq!(waited.stdout.trim(), "cli-12", "{}", waited.describe());
    let read = env.nagi_ok(&["pane", "read", &id, "--source", "recent", "--lines", "50"]);
    assert!(has_line(&read.stdout, "cli-12"), "{}", read.describe());
    let unwrapped = env.nagi_ok(&["pane", "read", &id, "--source", "recent-unwrapped"]);
    assert!(
        has_line(&unwrapped.stdout, "cli-12"),
        "{}",
        unwrapped.describe()
    );

    env.nagi_ok(&["pane", "send", &id, "echo typed-by-keys"]);
    env.nagi_ok(&["pane", "keys", &id, "enter"]);
    env.nagi_ok(&[
        "wait",
        "output",
        &id,
        "--match",
        "^typed-by-keys$",
        "--timeout",
        "60",
    ]);

    let timed_out = env.nagi(&[
        "wait",
        "output",
        &id,
        "--match",
        "never-printed",
        "--timeout",
        "0.3",
    ]);
    assert_eq!(
        timed_out.status,
        4,
        "a timeout exits 4:\n{}",
        timed_out.describe()
    );
    let bad_regex = env.nagi(&["wait", "output", &id, "--match", "(", "--timeout", "1"]);
    assert_eq!(bad_regex.status, 1, "{}", bad_regex.describe());
    assert!(
        bad_regex.stderr.contains("invalid_regex"),
        "{}",
        bad_regex.describe()
    );
    let bad_key = env.nagi(&["pane", "keys", &id, "ctrl+"]);
    assert_eq!(bad_key.status, 1);
    assert!(
        bad_key.stderr.contains("invalid_key"),
        "{}",
        bad_key.describe()
    );
    let missing = env.nagi(&["--json", "pane", "read", "w9:p9"]);
    assert_eq!(missing.status, 1);
    assert_eq!(missing.json()["error"]["code"], "pane_not_found");
    let no_terminal = env.nagi(&["pane", "attach", &id]);
    assert_eq!(
        no_terminal.status,
        2,
        "attach without a terminal is a usage error:\n{}",
        no_terminal.describe()
    );

    let closed = env.nagi_ok(&["pane", "close", &id]);
    assert!(
        closed.stdout.contains("closed pane"),
        "{}",
        closed.describe()
    );
    assert!(
        env.nagi_ok(&["--json", "pane", "list"]).json()["panes"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let help = env.nagi_ok(&["pane", "attach", "--help"]);
    assert!(
        help.stdout.contains("Ctrl-\\"),
        "the detach key is documented:\n{}",
        help.stdout
    );
}

#[test]
fn the_schema_document_lists_the_pane_methods_and_events() {
    let env = TestEnv::new();
    let schema = env.nagi_ok(&["api", "schema", "--json"]).json();
    let methods: Vec<&str> = schema["methods"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|method| method["name"].as_str())
        .collect();
    for method in [
        "workspace.create",
        "workspace.list",
        "workspace.get",
        "workspace.rename",
        "workspace.close",
        "tab.create",
        "tab.list",
        "tab.get",
        "tab.rename",
        "tab.close",
        "session.snapshot",
        "pane.list",
        "pane.get",
        "pane.current",
        "pane.read",
        "pane.send_text",
        "pane.send_keys",
        "pane.send_input",
        "pane.wait_for_output",
        "pane.process_info",
        "pane.rename",
        "pane.close",
        "pane.report_agent",
        "pane.report_agent_session",
        "pane.report_metadata",
    ] {
        assert!(
            methods.contains(&method),
            "{method} is missing from the schema"
        );
    }
    let request = json!({"id": "1", "method": "events.subscribe", "params": {"subscriptions": [{"type": "pane.exited"}]}});
    crate::schema::validate(&schema, "request", &request).unwrap();
    for code in [
        "pane_exited",
        "pane_io_failed",
        "invalid_key",
        "not_controller",
        "resize_too_small",
    ] {
        assert!(
            schema["error_codes"].get(code).is_some(),
            "{code} is missing"
        );
    }
}

/// A pane id names one pane in a session's lifetime, restarts included: after the server
/// is killed and started again, new workspaces do not reuse the ids of the old ones (a
/// mission that recorded `w1:p1` must never find another mission's run there).
#[test]
fn pane_ids_are_not_reused_after_a_restart() {
    let mut env = TestEnv::new();
    env.start_server();
    let first = start_pane(&env, &["sleep", "30"]);
    let second = start_pane(&env, &["sleep", "30"]);
    assert_eq!(first["pane_id"], "w1:p1", "{first}");
    assert_eq!(second["pane_id"], "w2:p1", "{second}");
    env.kill_server();
    env.start_server();
    let after = start_pane(&env, &["sleep", "30"]);
    let after_id = after["pane_id"].as_str().unwrap_or_default().to_string();
    assert!(
        after_id != "w1:p1" && after_id != "w2:p1",
        "a pane id of before the restart names a new pane: {after}"
    );
    assert_eq!(
        after_id, "w3:p1",
        "numbering goes on from the highest one handed out"
    );
}
