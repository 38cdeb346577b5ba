//! Corpus cases of the request envelope itself, and of the events, cockpit and pane
//! methods.

use serde_json::json;

use super::*;

pub(super) fn envelope_cases(cases: &mut Vec<Case>) {
    let mut add = |name: &str, line: String, expected| {
        cases.push(Case {
            name: format!("envelope: {name}"),
            line,
            expected,
        })
    };
    add("not JSON", "this is not json".into(), "invalid_request");
    add("a JSON array", "[1,2,3]".into(), "invalid_request");
    add("a JSON string", r#""ping""#.into(), "invalid_request");
    add("null", "null".into(), "invalid_request");
    add(
        "truncated object",
        r#"{"id":"x","method":"ping","params":{}"#.into(),
        "invalid_request",
    );
    add(
        "fractional id",
        r#"{"id":7.5,"method":"ping","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "null id",
        r#"{"id":null,"method":"ping","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "object id",
        r#"{"id":{},"method":"ping","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "missing id",
        r#"{"method":"ping","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "missing method",
        r#"{"id":"x","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "numeric method",
        r#"{"id":"x","method":5,"params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "missing params",
        r#"{"id":"x","method":"ping"}"#.into(),
        "invalid_request",
    );
    add(
        "null params",
        r#"{"id":"x","method":"ping","params":null}"#.into(),
        "invalid_request",
    );
    add(
        "array params",
        r#"{"id":"x","method":"mission.list","params":[]}"#.into(),
        "invalid_request",
    );
    add(
        "string params",
        r#"{"id":"x","method":"mission.get","params":"m-ready"}"#.into(),
        "invalid_request",
    );
    add(
        "unknown method",
        request("mission.fly", json!({})),
        "invalid_request",
    );
    add(
        "method with a NUL",
        request("mission.get\u{0}", json!({})),
        "invalid_request",
    );
    add(
        "method in upper case",
        request("MISSION.LIST", json!({})),
        "invalid_request",
    );
    add("empty method", request("", json!({})), "invalid_request");
    add(
        "duplicate keys",
        r#"{"id":"x","id":"y","method":"ping","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "lone surrogate escape in the id",
        r#"{"id":"\ud800","method":"ping","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "an out-of-range number",
        r#"{"id":"x","method":"events.wait","params":{"match_event":{"event":"mission","mission_id":"m-ready"},"timeout_ms":1e400}}"#.into(),
        "invalid_request",
    );
    add(
        "a method outside nagi's scope",
        request("pane.split", json!({})),
        "feature_unavailable",
    );
    add(
        "layouts",
        request("layout.apply", json!({})),
        "feature_unavailable",
    );
    add(
        "live upgrade",
        request("server.live_handoff", json!({})),
        "feature_unavailable",
    );
    // Nested JSON bombs: deeper than any parser stack should go, in the envelope and in params.
    let depth = 100_000;
    add(
        "array bomb as the whole line",
        format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
        "invalid_request",
    );
    add(
        "object bomb in params",
        format!(
            r#"{{"id":"x","method":"mission.create","params":{{"title":{}1{}}}}}"#,
            r#"{"a":"#.repeat(20_000),
            "}".repeat(20_000)
        ),
        "invalid_request",
    );
    add(
        "array bomb in the id",
        format!(
            r#"{{"id":{}{},"method":"ping","params":{{}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        ),
        "invalid_request",
    );
    add(
        "array bomb in an ignored top-level key (skipped without recursion)",
        format!(
            r#"{{"id":"x","method":"ping","params":{{}},"extra":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        ),
        "ok",
    );
    add("unterminated bomb", "[".repeat(500_000), "invalid_request");
    add(
        "one byte over the line limit",
        format!(
            r#"{{"id":"x","method":"ping","params":{{"pad":"{}"}}}}"#,
            sized(1024 * 1024 + 1 - 44)
        ),
        "request_too_large",
    );
}

pub(super) fn event_cases(cases: &mut Vec<Case>) {
    let mut add = |name: &str, method: &str, params: Value, expected| {
        cases.push(Case {
            name: format!("{method}: {name}"),
            line: request(method, params),
            expected,
        })
    };
    add(
        "an unknown subscription type",
        "events.subscribe",
        json!({"subscriptions": [{"type": "everything"}]}),
        "invalid_request",
    );
    add(
        "subscriptions as an object",
        "events.subscribe",
        json!({"subscriptions": {}}),
        "invalid_request",
    );
    add(
        "a negative sequence",
        "events.subscribe",
        json!({"subscriptions": [{"type": "mission", "mission_id": "m-ready"}], "after_seq": -1}),
        "invalid_request",
    );
    add(
        "a traversal mission id",
        "events.subscribe",
        json!({"subscriptions": [{"type": "mission", "mission_id": "../../m"}]}),
        "invalid_mission",
    );
    add(
        "an unknown event kind",
        "events.subscribe",
        json!({"subscriptions": [{"type": "mission", "mission_id": "m-ready", "kinds": ["explosion"]}]}),
        "invalid_params",
    );
    add(
        "no match",
        "events.wait",
        json!({"timeout_ms": 10}),
        "invalid_request",
    );
    add(
        "a string timeout",
        "events.wait",
        json!({"match_event": {"event": "mission", "mission_id": "m-ready"}, "timeout_ms": "10"}),
        "invalid_request",
    );
    add(
        "an unknown status",
        "events.wait",
        json!({"match_event": {"event": "mission", "mission_id": "m-ready", "status": "exploded"}, "timeout_ms": 10}),
        "invalid_request",
    );
    add(
        "a traversal mission id",
        "events.wait",
        json!({"match_event": {"event": "mission", "mission_id": "../m"}, "timeout_ms": 10}),
        "invalid_mission",
    );
    add(
        "an unknown kind",
        "events.wait",
        json!({"match_event": {"event": "mission", "kind": "mission_exploded"}, "timeout_ms": 10}),
        "invalid_params",
    );
    add(
        "nothing happens in time",
        "events.wait",
        json!({"match_event": {"event": "mission", "mission_id": "m-ready", "status": "archived"}, "timeout_ms": 50}),
        "timeout",
    );
}

pub(super) fn cockpit_cases(cases: &mut Vec<Case>) {
    // The test process is not the cockpit's peer class: same uid, but the server checks the
    // peer and refuses consent from anything it does not trust; shapes are refused first.
    let mut add = |name: &str, method: &str, params: Value, expected| {
        cases.push(Case {
            name: format!("{method}: {name}"),
            line: request(method, params),
            expected,
        })
    };
    add(
        "an unknown action kind",
        "cockpit.preview",
        json!({"action": {"kind": "become_root"}}),
        "invalid_request",
    );
    add("no action", "cockpit.preview", json!({}), "invalid_request");
    add(
        "an unknown decision",
        "cockpit.decide",
        json!({"action": {"kind": "dismiss_attention", "attention_id": "a", "reason": "r"}, "shown_digest": "0", "decision": "yes"}),
        "invalid_request",
    );
    add(
        "a forged field",
        "cockpit.hello",
        json!({"trusted": true}),
        "invalid_request",
    );
}

pub(super) fn pane_cases(fixture: &Fixture, cases: &mut Vec<Case>) {
    let pane = fixture.pane_id.as_str();
    let workspace = fixture.workspace_id.as_str();
    let tab = fixture.tab_id.as_str();
    let mut add = |name: &str, method: &str, params: Value, expected| {
        cases.push(Case {
            name: format!("{method}: {name}"),
            line: request(method, params),
            expected,
        })
    };
    add(
        "a missing pane",
        "pane.get",
        json!({"pane_id": "w99:p1"}),
        "pane_not_found",
    );
    add(
        "a traversal pane id",
        "pane.get",
        json!({"pane_id": "../../p1"}),
        "pane_not_found",
    );
    add(
        "a numeric pane id",
        "pane.get",
        json!({"pane_id": 1}),
        "invalid_params",
    );
    add(
        "an unknown source",
        "pane.read",
        json!({"pane_id": pane, "source": "everything"}),
        "invalid_params",
    );
    add(
        "negative lines",
        "pane.read",
        json!({"pane_id": pane, "source": "recent", "lines": -5}),
        "invalid_params",
    );
    add(
        "lines past u32",
        "pane.read",
        json!({"pane_id": pane, "source": "recent", "lines": 1u64 << 40}),
        "invalid_params",
    );
    add(
        "an invalid key combo",
        "pane.send_keys",
        json!({"pane_id": pane, "keys": ["ctrl+"]}),
        "invalid_key",
    );
    add(
        "a prefix combo",
        "pane.send_keys",
        json!({"pane_id": pane, "keys": ["prefix+c"]}),
        "invalid_key",
    );
    add(
        "one bad combo among good ones",
        "pane.send_keys",
        json!({"pane_id": pane, "keys": ["a", "enter", "hyper+x"]}),
        "invalid_key",
    );
    add(
        "a Unicode modifier",
        "pane.send_keys",
        json!({"pane_id": pane, "keys": ["ctrl+é"]}),
        "invalid_key",
    );
    add(
        "100,000 keys with a bad one last",
        "pane.send_keys",
        json!({"pane_id": pane, "keys": (0..100_000).map(|i| if i == 99_999 { "f13".to_string() } else { "a".to_string() }).collect::<Vec<_>>()}),
        "invalid_key",
    );
    add(
        "keys as a string",
        "pane.send_keys",
        json!({"pane_id": pane, "keys": "enter"}),
        "invalid_params",
    );
    add(
        "text as a number",
        "pane.send_text",
        json!({"pane_id": pane, "text": 5}),
        "invalid_params",
    );
    add(
        "input with a bad key",
        "pane.send_input",
        json!({"pane_id": pane, "text": "ls", "keys": ["nope"]}),
        "invalid_key",
    );
    add(
        "an invalid regex",
        "pane.wait_for_output",
        json!({"pane_id": pane, "source": "visible", "match": {"type": "regex", "value": "(unclosed"}, "timeout_ms": 10}),
        "invalid_regex",
    );
    add(
        "an unknown match type",
        "pane.wait_for_output",
        json!({"pane_id": pane, "source": "visible", "match": {"type": "glob", "value": "*"}, "timeout_ms": 10}),
        "invalid_params",
    );
    add(
        "a missing workspace",
        "workspace.get",
        json!({"workspace_id": "w999"}),
        "workspace_not_found",
    );
    add(
        "a traversal workspace id",
        "workspace.close",
        json!({"workspace_id": "../w1"}),
        "workspace_not_found",
    );
    add(
        "a command that is not a list",
        "workspace.create",
        json!({"command": "sh -c 'rm -rf /'"}),
        "invalid_params",
    );
    add(
        "an empty command",
        "workspace.create",
        json!({"command": []}),
        "invalid_params",
    );
    add(
        "a cwd that does not exist",
        "workspace.create",
        json!({"command": ["true"], "cwd": "/no/such/../dir"}),
        "invalid_params",
    );
    add(
        "env values that are not strings",
        "workspace.create",
        json!({"command": ["true"], "env": {"A": 1}}),
        "invalid_params",
    );
    add(
        "a missing tab",
        "tab.get",
        json!({"tab_id": "w1:t99"}),
        "tab_not_found",
    );
    add(
        "a tab in a missing workspace",
        "tab.create",
        json!({"workspace_id": "w999"}),
        "workspace_not_found",
    );
    add(
        "a move to a huge index",
        "tab.move",
        json!({"tab_id": tab, "insert_index": -1}),
        "invalid_params",
    );
    add(
        "17 metadata tokens",
        "workspace.report_metadata",
        json!({"workspace_id": workspace, "source": "ci", "tokens": (0..17).map(|i| (format!("t{i}"), json!("v"))).collect::<serde_json::Map<_, _>>()}),
        "invalid_params",
    );
    add(
        "a ttl past a day",
        "workspace.report_metadata",
        json!({"workspace_id": workspace, "source": "ci", "tokens": {"a": "b"}, "ttl_ms": 86_400_001u64}),
        "invalid_params",
    );
    add(
        "an unknown agent state",
        "pane.report_agent",
        json!({"pane_id": pane, "source": "hook", "agent": "claude", "state": "dancing"}),
        "invalid_params",
    );
}
