//! Every result validates against the reference contract schema and against our own
//! `nagi api schema --json`.

use std::sync::OnceLock;

use nagi_tests::*;
use serde_json::{Value, json};

fn reference_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/contract/mission-schema.json"
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    })
}

fn own_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let env = TestEnv::new();
        env.nagi_ok(&["api", "schema", "--json"]).json()
    })
}

/// Validates `instance` against `#/schemas/<name>` of `document`.
pub fn validate(document: &Value, name: &str, instance: &Value) -> Result<(), String> {
    // The documents hold no validation keywords at their root, so a root `$ref` selects the
    // sub-schema while every internal `$ref` still resolves against the whole document.
    let mut root = document.clone();
    root["$ref"] = json!(format!("#/schemas/{name}"));
    let validator = jsonschema::validator_for(&root)
        .map_err(|error| format!("schema does not compile: {error}"))?;
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// Like [`validate`] for the documents that live for the whole test run, with each
/// compiled validator kept: compiling the reference document takes long, and the pane
/// tests validate thousands of lines.
fn validate_cached(
    document: &'static Value,
    name: &'static str,
    instance: &Value,
) -> Result<(), String> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    type Key = (usize, &'static str);
    static VALIDATORS: OnceLock<Mutex<HashMap<Key, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let key = (document as *const Value as usize, name);
    let cached = VALIDATORS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .get(&key)
        .cloned();
    let validator = match cached {
        Some(validator) => validator,
        None => {
            let mut root = document.clone();
            root["$ref"] = json!(format!("#/schemas/{name}"));
            let validator = Arc::new(
                jsonschema::validator_for(&root)
                    .map_err(|error| format!("schema does not compile: {error}"))?,
            );
            VALIDATORS
                .get_or_init(Default::default)
                .lock()
                .unwrap()
                .insert(key, validator.clone());
            validator
        }
    };
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|error| format!("{} at {}", error, error.instance_path()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

/// Validates a whole response line against both schemas.
pub fn assert_response_valid(response: &Value) {
    let name = if response.get("error").is_some() {
        "error_response"
    } else {
        "success_response"
    };
    let is_mission_result = response
        .pointer("/result/type")
        .and_then(Value::as_str)
        .is_some_and(|kind| kind.starts_with("mission_") || kind.starts_with("attention_"));
    if (name == "error_response" || is_mission_result)
        && let Err(errors) = validate(reference_schema(), name, response)
    {
        panic!(
            "against the reference schema:\n{errors}\n{}",
            serde_json::to_string_pretty(response).unwrap()
        );
    }
    if let Err(errors) = validate(own_schema(), name, response) {
        panic!(
            "against nagi api schema --json:\n{errors}\n{}",
            serde_json::to_string_pretty(response).unwrap()
        );
    }
}

#[test]
fn every_core_result_validates_against_both_schemas() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let mut responses = vec![
        env.call("ping", json!({})),
        env.call("mission.create", create_params("m1", &repo.path_text())),
        env.call("mission.create", create_params("m1", &repo.path_text())),
        env.call("mission.list", json!({})),
        env.call("mission.get", json!({"mission_id": "m1"})),
        env.call("mission.configure", configure_params("m1", "true", &[])),
        env.call("mission.get", json!({"mission_id": "m1"})),
        env.call("attention.list", json!({})),
        env.call("mission.get", json!({"mission_id": "nope"})),
        env.call(
            "mission.respond",
            json!({"mission_id": "m1", "run_id": "r", "attention_id": "a", "decision": "deny"}),
        ),
        env.call("mission.close", json!({"mission_id": "m1"})),
        env.call("attention.get", json!({"attention_id": "x"})),
    ];
    responses.extend(env.raw_bytes(b"garbage\n"));
    for response in &responses {
        assert_response_valid(response);
    }
}

#[test]
fn the_schema_document_describes_every_method_and_code() {
    let schema = own_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["protocol"], 16);
    let methods: Vec<&str> = schema["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    for method in [
        "ping",
        "server.stop",
        "mission.create",
        "mission.list",
        "mission.get",
        "mission.configure",
        "mission.start",
        "mission.respond",
        "mission.close",
        "attention.list",
        "attention.get",
        "events.subscribe",
        "events.wait",
    ] {
        assert!(
            methods.contains(&method),
            "{method} missing from the schema"
        );
    }
    let codes = schema["error_codes"].as_object().unwrap();
    for code in [
        "invalid_request",
        "request_too_large",
        "mission_conflict",
        "checkout_claimed",
        "interactive_consent_required",
    ] {
        assert!(codes.contains_key(code), "{code} missing");
    }
    // A request validates against the request schema, and a wrong one does not.
    let request = json!({"id": "1", "method": "mission.get", "params": {"mission_id": "m1"}});
    validate(schema, "request", &request).unwrap();
    let forged = json!({"id": "1", "method": "mission.start", "params": {"mission_id": "m", "run_id": "r", "provider": "codex",
                        "mode": "managed", "workspace_write_confirmed": true}});
    assert!(
        validate(schema, "request", &forged).is_err(),
        "strict params must reject unknown fields"
    );
}

#[test]
fn the_summary_and_output_file_work_without_a_server() {
    let env = TestEnv::new();
    let summary = env.nagi_ok(&["api", "schema"]);
    assert!(
        summary.stdout.contains("mission.create"),
        "{}",
        summary.describe()
    );
    assert!(summary.stdout.contains("[strict params]"));
    let path = env.root().join("schema.json");
    env.nagi_ok(&["api", "schema", "--output", path.to_str().unwrap()]);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(&written, own_schema());
    assert!(!env.socket.exists(), "no server was started");
}

/// The reference socket API schema (workspaces, tabs, panes, events), copied from the
/// contract.
fn reference_api_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/contract/nagi-api.schema.json"
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    })
}

/// Validates a workspace, tab, pane or session response line against our own schema and
/// against the reference `nagi-api.schema.json`. Our additions (`command`, `pid`,
/// `exit_status`, …) pass the reference because its objects allow more properties.
pub fn assert_pane_response_valid(response: &Value) {
    let name = if response.get("error").is_some() {
        "error_response"
    } else {
        "success_response"
    };
    if let Err(errors) = validate_cached(own_schema(), name, response) {
        panic!(
            "against nagi api schema --json:\n{errors}\n{}",
            serde_json::to_string_pretty(response).unwrap()
        );
    }
    if name == "error_response"
        && let Err(errors) = validate_cached(reference_schema(), name, response)
    {
        panic!(
            "against the reference schema:\n{errors}\n{}",
            serde_json::to_string_pretty(response).unwrap()
        );
    }
    if let Err(errors) = validate_cached(reference_api_schema(), name, response) {
        panic!(
            "against the reference nagi-api schema:\n{errors}\n{}",
            serde_json::to_string_pretty(response).unwrap()
        );
    }
}

/// Validates a pushed event line against our own `event` schema and, for the reference's
/// own event kinds, against its `event` (lifecycle) or `subscription_event` schema.
pub fn assert_event_valid(event: &Value) {
    if let Err(errors) = validate_cached(own_schema(), "event", event) {
        panic!(
            "event against nagi api schema --json:\n{errors}\n{}",
            serde_json::to_string_pretty(event).unwrap()
        );
    }
    let kind = event["event"].as_str().unwrap_or_default();
    let reference = if kind.starts_with("pane.") {
        Some("subscription_event")
    } else if ["pane_", "tab_", "workspace_", "worktree_"]
        .iter()
        .any(|prefix| kind.starts_with(prefix))
    {
        Some("event")
    } else {
        None
    };
    if let Some(name) = reference
        && let Err(errors) = validate_cached(reference_api_schema(), name, event)
    {
        panic!(
            "event against the reference {name}:\n{errors}\n{}",
            serde_json::to_string_pretty(event).unwrap()
        );
    }
}

/// Validates a line of the attach protocol against our own `session_server_message`.
pub fn assert_session_message_valid(message: &Value) {
    if let Err(errors) = validate_cached(own_schema(), "session_server_message", message) {
        panic!(
            "session message against nagi api schema --json:\n{errors}\n{}",
            serde_json::to_string_pretty(message).unwrap()
        );
    }
}

/// Every method nagi does not offer is said to be so: over the socket (`feature_unavailable`
/// naming the method), in `nagi api schema` and its JSON document, and in the README's list.
#[test]
fn every_method_not_offered_is_listed_and_answers_feature_unavailable() {
    let mut env = TestEnv::new();
    env.start_server();
    let unavailable = nagi_schema::methods::unavailable_methods();
    assert!(unavailable.len() > 40, "{unavailable:?}");
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let summary = env.nagi_ok(&["api", "schema"]).stdout;
    let document = env.nagi_ok(&["api", "schema", "--json"]).json();
    for method in &unavailable {
        let response = env.call(method, serde_json::json!({}));
        assert_eq!(
            response["error"]["code"], "feature_unavailable",
            "{method}: {response}"
        );
        assert!(
            response["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains(method),
            "{method}: {response}"
        );
        assert!(
            readme.contains(&format!("`{method}`")),
            "the README does not list {method}"
        );
        assert!(
            summary.contains(method),
            "nagi api schema does not list {method}"
        );
        assert!(
            document["unavailable_methods"]
                .as_array()
                .is_some_and(|listed| listed.iter().any(|name| name == method)),
            "the schema document does not list {method}"
        );
    }
}
