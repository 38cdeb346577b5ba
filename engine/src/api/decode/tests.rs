use nagi_schema::methods::{ENGINE_METHODS, UnknownFields};
use nagi_schema::pane_methods::PANE_METHODS;

use super::*;

/// One valid request per method nagi answers: (method, params).
pub(super) const VALID_PARAMS: &[(&str, &str)] = &[
    ("ping", r#"{}"#),
    ("server.stop", r#"{}"#),
    ("server.reload_config", r#"{}"#),
    ("mission.list", r#"{}"#),
    (
        "mission.create",
        r#"{"mission_id":"m-1","title":"Fix login","repository_path":"/repo","objective":"Make login work","acceptance_criteria":["tests pass"]}"#,
    ),
    ("mission.get", r#"{"mission_id":"m-1"}"#),
    (
        "mission.configure",
        r#"{"mission_id":"m-1","checks":[{"kind":"command","id":"unit","program":"cargo","args":["test"],"cwd":".","relevant_paths":[{"type":"prefix","prefix":"src"}],"required_artifacts":[],"required":true,"covers":[0]}]}"#,
    ),
    (
        "mission.start",
        r#"{"mission_id":"m-1","run_id":"r-1","provider":"codex","mode":"managed","execute_declared_checks":true}"#,
    ),
    (
        "mission.respond",
        r#"{"mission_id":"m-1","run_id":"r-1","attention_id":"a-1","decision":"answer","answers":{"q1":["yes"]}}"#,
    ),
    (
        "mission.verify",
        r#"{"mission_id":"m-1","execute_declared_checks":true}"#,
    ),
    (
        "mission.abandon",
        r#"{"mission_id":"m-1","reason":"the check has a typo"}"#,
    ),
    (
        "mission.land",
        r#"{"mission_id":"m-1","into":"main","strategy":"rebase","message":"Fix it","push_remote":"origin","pull_request":true}"#,
    ),
    ("mission.sync", r#"{"mission_id":"m-1","onto":"main"}"#),
    (
        "mission.diff",
        r#"{"mission_id":"m-1","stat_only":true,"max_patch_bytes":4096}"#,
    ),
    ("mission.proof.get", r#"{"mission_id":"m-1"}"#),
    ("mission.proof.export", r#"{"mission_id":"m-1"}"#),
    ("mission.delete", r#"{"mission_id":"m-1"}"#),
    (
        "mission.send",
        r#"{"mission_id":"m-1","text":"also run the tests"}"#,
    ),
    ("mission.interrupt", r#"{"mission_id":"m-1"}"#),
    ("mission.stop", r#"{"mission_id":"m-1"}"#),
    ("mission.session", r#"{"mission_id":"m-1"}"#),
    ("mission.usage", r#"{"since_millis":1796400000000}"#),
    (
        "notification.show",
        r#"{"title":"build failed","body":"api workspace","position":"top-left","sound":"request"}"#,
    ),
    (
        "mission.handoff.get",
        r#"{"artifact_sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}"#,
    ),
    ("worktree.list", r#"{"cwd":"/repo"}"#),
    (
        "worktree.create",
        r#"{"workspace_id":"w1","branch":"worktree/api","base":"HEAD","path":"/tmp/api","label":"api","focus":false}"#,
    ),
    (
        "worktree.open",
        r#"{"workspace_id":"w1","branch":"worktree/api","focus":true}"#,
    ),
    ("worktree.remove", r#"{"workspace_id":"w2","force":false}"#),
    (
        "mission.handoff.preview",
        r#"{"mission_id":"m-1","to":"claude_code"}"#,
    ),
    (
        "mission.handoff.start",
        r#"{"mission_id":"m-1","to":"open_code","generated_at_millis":1700000000000,"artifact_sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}"#,
    ),
    ("mission.close", r#"{"mission_id":"m-1"}"#),
    (
        "attention.list",
        r#"{"mission_id":"m-1","include_closed":true}"#,
    ),
    ("attention.get", r#"{"attention_id":"a-1"}"#),
    (
        "events.subscribe",
        r#"{"subscriptions":[{"type":"mission","mission_id":"m-1","kinds":["mission_status_changed"]}],"after_seq":3}"#,
    ),
    (
        "events.wait",
        r#"{"match_event":{"event":"mission","mission_id":"m-1","status":"ready_to_close","after_seq":7},"timeout_ms":500}"#,
    ),
    ("cockpit.hello", r#"{}"#),
    (
        "cockpit.preview",
        r#"{"action":{"kind":"dismiss_attention","attention_id":"a-1","reason":"seen it"}}"#,
    ),
    (
        "cockpit.decide",
        r#"{"action":{"kind":"start_run","mission_id":"m-1","run_id":"r-1","provider":"codex","write_scope":true},"shown_digest":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","decision":"approve"}"#,
    ),
    ("session.snapshot", r#"{}"#),
    (
        "workspace.create",
        r#"{"cwd":"/tmp","label":"work","env":{"A":"1"},"focus":true,"command":["bash","-l"]}"#,
    ),
    ("workspace.list", r#"{}"#),
    ("workspace.get", r#"{"workspace_id":"ws_1"}"#),
    ("workspace.focus", r#"{"workspace_id":"ws_1"}"#),
    (
        "workspace.rename",
        r#"{"workspace_id":"ws_1","label":"renamed"}"#,
    ),
    (
        "workspace.move",
        r#"{"workspace_id":"ws_1","insert_index":0}"#,
    ),
    (
        "workspace.report_metadata",
        r#"{"workspace_id":"ws_1","source":"ci","tokens":{"branch":"main","old":null},"ttl_ms":60000,"seq":1}"#,
    ),
    ("workspace.close", r#"{"workspace_id":"ws_1"}"#),
    ("tab.create", r#"{"workspace_id":"ws_1","label":"tests"}"#),
    ("tab.list", r#"{"workspace_id":"ws_1"}"#),
    ("tab.get", r#"{"tab_id":"tab_1"}"#),
    ("tab.focus", r#"{"tab_id":"tab_1"}"#),
    ("tab.rename", r#"{"tab_id":"tab_1","label":"logs"}"#),
    ("tab.move", r#"{"tab_id":"tab_1","insert_index":2}"#),
    ("tab.close", r#"{"tab_id":"tab_1"}"#),
    ("pane.list", r#"{"workspace_id":"ws_1"}"#),
    ("pane.current", r#"{"caller_pane_id":"pane_1"}"#),
    ("pane.get", r#"{"pane_id":"pane_1"}"#),
    ("pane.focus", r#"{"pane_id":"pane_1"}"#),
    ("pane.rename", r#"{"pane_id":"pane_1","label":null}"#),
    (
        "pane.read",
        r#"{"pane_id":"pane_1","source":"recent","format":"ansi","lines":20,"strip_ansi":false}"#,
    ),
    (
        "pane.send_text",
        r#"{"pane_id":"pane_1","text":"echo hi\r"}"#,
    ),
    (
        "pane.send_keys",
        r#"{"pane_id":"pane_1","keys":["ctrl+c","enter","shift+tab","f5","minus"]}"#,
    ),
    (
        "pane.send_input",
        r#"{"pane_id":"pane_1","text":"ls","keys":["enter"]}"#,
    ),
    (
        "pane.wait_for_output",
        r#"{"pane_id":"pane_1","source":"visible","match":{"type":"regex","value":"\\$ $"},"timeout_ms":1000}"#,
    ),
    ("pane.process_info", r#"{"pane_id":"pane_1"}"#),
    (
        "pane.report_agent",
        r#"{"pane_id":"pane_1","source":"claude-hook","agent":"claude","state":"working","message":"thinking","seq":4}"#,
    ),
    (
        "pane.report_agent_session",
        r#"{"pane_id":"pane_1","source":"claude-hook","agent":"claude","agent_session_id":"sess-9"}"#,
    ),
    (
        "pane.report_metadata",
        r#"{"pane_id":"pane_1","source":"ci","title":"build","state_labels":{"working":"building"},"tokens":{"pr":"42"},"ttl_ms":1000}"#,
    ),
    (
        "pane.clear_agent_authority",
        r#"{"pane_id":"pane_1","source":"claude-hook"}"#,
    ),
    (
        "pane.release_agent",
        r#"{"pane_id":"pane_1","source":"claude-hook","agent":"claude"}"#,
    ),
    ("pane.close", r#"{"pane_id":"pane_1"}"#),
];

fn line(method: &str, params: &str) -> Vec<u8> {
    format!(r#"{{"id":"req-1","method":"{method}","params":{params}}}"#).into_bytes()
}

fn with_unknown_field(params: &str) -> String {
    let mut value: serde_json::Value = serde_json::from_str(params).unwrap();
    value
        .as_object_mut()
        .unwrap()
        .insert("nagi_forged_field".into(), serde_json::json!(true));
    value.to_string()
}

#[test]
fn every_method_nagi_answers_has_a_valid_sample_that_decodes() {
    let answered = ENGINE_METHODS
        .iter()
        .chain(nagi_schema::worktree_document::WORKTREE_METHODS)
        .map(|spec| spec.name)
        .chain(
            PANE_METHODS
                .iter()
                .filter(|spec| spec.implemented)
                .map(|spec| spec.name),
        );
    for method in answered {
        let (_, params) = VALID_PARAMS
            .iter()
            .find(|(name, _)| *name == method)
            .unwrap_or_else(|| panic!("no sample for {method}"));
        let decoded = decode_request(&line(method, params))
            .unwrap_or_else(|rejected| panic!("{method}: {}", rejected.error));
        assert_eq!(decoded.id, "req-1");
        assert_eq!(decoded.method, method);
    }
}

#[test]
fn unknown_fields_follow_each_engine_methods_policy() {
    for spec in ENGINE_METHODS
        .iter()
        .chain(nagi_schema::worktree_document::WORKTREE_METHODS)
    {
        let (_, params) = VALID_PARAMS
            .iter()
            .find(|(name, _)| *name == spec.name)
            .unwrap();
        let outcome = decode_request(&line(spec.name, &with_unknown_field(params)));
        match spec.unknown_fields {
            UnknownFields::Ignored => assert!(
                outcome.is_ok(),
                "{} must ignore unknown fields: {:?}",
                spec.name,
                outcome.err()
            ),
            UnknownFields::Rejected => {
                let rejected = outcome.expect_err(spec.name);
                assert!(
                    matches!(rejected.error, EngineError::InvalidRequest(_)),
                    "{}: {}",
                    spec.name,
                    rejected.error
                );
                assert!(
                    rejected.error.to_string().contains("nagi_forged_field"),
                    "{}: {}",
                    spec.name,
                    rejected.error
                );
                assert_eq!(rejected.id, "req-1", "a params error keeps the request id");
            }
        }
    }
}

#[test]
fn pane_methods_ignore_unknown_fields_and_take_null_as_empty() {
    for spec in PANE_METHODS.iter().filter(|spec| spec.implemented) {
        let (_, params) = VALID_PARAMS
            .iter()
            .find(|(name, _)| *name == spec.name)
            .unwrap();
        assert!(
            decode_request(&line(spec.name, &with_unknown_field(params))).is_ok(),
            "{}",
            spec.name
        );
    }
    assert_eq!(
        decode_request(&line("pane.list", "null")).unwrap().params,
        MethodParams::Pane(nagi_pane::PaneRequest::PaneList(
            nagi_schema::pane::PaneListParams { workspace_id: None }
        ))
    );
    let rejected = decode_request(&line("pane.get", "null")).unwrap_err();
    assert_eq!(
        crate::errors::wire_error(&rejected.error).0,
        nagi_schema::codes::ErrorCode::InvalidParams,
        "{}",
        rejected.error
    );
    assert!(
        rejected.error.to_string().contains("pane_id"),
        "{}",
        rejected.error
    );
}

#[test]
fn envelope_errors_echo_a_string_or_integer_id_and_nothing_else() {
    let rejected = decode_request(b"\xff\xfe").unwrap_err();
    assert_eq!(rejected.id, "");
    assert!(rejected.error.to_string().contains("not valid UTF-8"));

    let rejected = decode_request(br#"{"id":"abc","method":"ping"}"#).unwrap_err();
    assert_eq!(rejected.id, "abc");
    assert!(
        rejected.error.to_string().contains("params"),
        "{}",
        rejected.error
    );

    let decoded = decode_request(br#"{"id":7,"method":"ping","params":{}}"#).unwrap();
    assert_eq!(
        serde_json::to_string(&decoded.id).unwrap(),
        "7",
        "an integer id is kept as given, to be echoed as a number"
    );
    let rejected = decode_request(br#"{"id":7,"method":"ping"}"#).unwrap_err();
    assert_eq!(
        serde_json::to_string(&rejected.id).unwrap(),
        "7",
        "and salvaged as one"
    );
    for id in ["1.5", "true", "null", "[1]"] {
        let line = format!(r#"{{"id":{id},"method":"ping","params":{{}}}}"#);
        let rejected = decode_request(line.as_bytes()).unwrap_err();
        assert!(rejected.id.is_unknown(), "{id}: {:?}", rejected.id);
    }
}

#[test]
fn unknown_and_unavailable_methods_are_told_apart() {
    let rejected = decode_request(&line("mission.frobnicate", "{}")).unwrap_err();
    assert!(
        matches!(rejected.error, EngineError::InvalidRequest(ref message) if message.contains("unknown method"))
    );
    for method in ["pane.split", "plugin.list", "agent.send"] {
        let rejected = decode_request(&line(method, "{}")).unwrap_err();
        let (code, message) = crate::errors::wire_error(&rejected.error);
        assert_eq!(
            code,
            nagi_schema::codes::ErrorCode::FeatureUnavailable,
            "{method}"
        );
        assert!(message.contains(method), "{method}: {message}");
    }
}

#[test]
fn a_forged_consent_flag_on_mission_start_is_refused_not_dropped() {
    let forged = r#"{"mission_id":"m-1","run_id":"r-1","provider":"codex","mode":"managed","execute_project_recipe_granted_by_cockpit":true}"#;
    let rejected = decode_request(&line("mission.start", forged)).unwrap_err();
    assert!(
        rejected
            .error
            .to_string()
            .contains("execute_project_recipe_granted_by_cockpit"),
        "{}",
        rejected.error
    );
}

#[test]
fn a_method_is_listed_as_unavailable_in_one_table_only() {
    for method in UNAVAILABLE_METHODS {
        assert!(
            PANE_METHODS.iter().all(|spec| spec.name != *method)
                && ENGINE_METHODS.iter().all(|spec| spec.name != *method),
            "{method} is in UNAVAILABLE_METHODS and in a method table; the table wins, so the entry is dead"
        );
        let rejected = decode_request(&line(method, "{}")).unwrap_err();
        assert_eq!(
            crate::errors::wire_error(&rejected.error).0,
            nagi_schema::codes::ErrorCode::FeatureUnavailable,
            "{method}"
        );
    }
}
