//! Every stable error code is produced by an end-to-end test, or is listed here as one no
//! test can produce, with the reason (issue 14, item 6). This module produces the codes no
//! capability's own tests reach, with real servers, real repositories and fake providers.

use std::path::Path;

use nagi_tests::*;
use serde_json::{Value, json};

/// Codes no end-to-end test can produce, and why; the README says the same.
const UNREACHABLE: &[(&str, &str)] = &[
    (
        "serialization_failed",
        "every result type serializes; the code exists so that a bug is answered rather than dropped",
    ),
    (
        "response_state_uncertain",
        "needs the provider's pipe to fail in the middle of one write of a response, which no test can time",
    ),
    (
        "proof_worker_failed",
        "needs the server's own scan of a checkout it has just verified as a Git checkout to fail",
    ),
];

/// A session whose codex and claude_code are the fake programs, following `script`.
fn session(script: &Value) -> TestEnv {
    let mut env = TestEnv::new();
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let log = fake_log_path(&env);
    let fake_env = format!(
        "NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {}",
        toml_string(&script.to_string()),
        toml_string(log.to_str().unwrap())
    );
    let mut config = String::new();
    for (section, binary) in [("codex", "fake_codex"), ("claude_code", "fake_claude")] {
        config.push_str(&format!(
            "[providers.{section}]\ncommand = [{}]\nenv = {{ {fake_env} }}\n\n",
            toml_string(test_binary(binary).to_str().unwrap())
        ));
    }
    std::fs::write(
        env.config_dir.join("config.toml"),
        format!("{config}{}", fake_sandbox_section(&env)),
    )
    .unwrap();
    env.start_server();
    env
}

fn mission_in(env: &TestEnv, repo: &TestRepo) {
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok(
        "mission.configure",
        configure_params("m1", "test", &["-f", "README.md"]),
    );
}

fn start(env: &TestEnv) {
    env.ok(
        "mission.start",
        json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed",
               "execute_declared_checks": true}),
    );
}

fn code_and_message(response: &Value) -> (String, String) {
    (
        response["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        response["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

#[test]
fn verifying_while_the_run_is_live_is_mission_busy() {
    let env = session(&json!(["wait_interrupt"]));
    let repo = TestRepo::new();
    mission_in(&env, &repo);
    start(&env);
    wait_for_mission(&env, "m1", "live", |mission| mission["run"]["live"] == true);
    let refused = env.call(
        "mission.verify",
        json!({"mission_id": "m1", "execute_declared_checks": true}),
    );
    let (code, message) = code_and_message(&refused);
    assert_eq!(code, "mission_busy", "{refused}");
    assert!(message.contains("r1 is still live"), "{message}");
}

#[test]
fn answers_to_a_request_no_live_provider_holds_are_refused() {
    let env = session(&json!([{"approve_command": "cargo test"}]));
    let repo = TestRepo::new();
    mission_in(&env, &repo);
    start(&env);
    wait_for_mission(&env, "m1", "asking", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    let first = env.ok("attention.list", json!({"mission_id": "m1"}))["items"][0].clone();
    let answer = |run_id: &str| {
        json!({"action": {"kind": "respond", "mission_id": "m1", "run_id": run_id,
                          "attention_id": first["attention_id"], "decision": "approve_once"}})
    };
    // The provider dies while it waits for the answer: its run is over.
    for pid in crate::runs::processes_with_run_marker(&env, "r1") {
        // SAFETY: a process of this test's own server.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let ended = wait_for_mission(&env, "m1", "the run's end", |mission| {
        mission["run"]["live"] == false && mission["status"] == "failed"
    });
    assert_eq!(ended["unresolved_attention_count"], 1, "{ended}");
    let refused = env.call("cockpit.preview", answer("r1"));
    let (code, message) = code_and_message(&refused);
    assert_eq!(code, "run_not_active", "{refused}");
    assert!(message.contains("r1 has no live provider"), "{message}");
    // A handoff carries no open question over: the person answers or dismisses it first.
    let artifact = env.ok(
        "mission.handoff.preview",
        json!({"mission_id": "m1", "to": "claude_code"}),
    )["artifact"]
        .clone();
    let refused = env.call(
        "mission.handoff.start",
        json!({"mission_id": "m1", "to": "claude_code", "generated_at_millis": artifact["generated_at_millis"],
               "artifact_sha256": artifact["artifact_sha256"]}),
    );
    assert_eq!(
        code_and_message(&refused).0,
        "handoff_attention_unresolved",
        "{refused}"
    );
    // A new run is live, but the old request died with the old provider.
    env.ok(
        "mission.start",
        json!({"mission_id": "m1", "run_id": "r2", "provider": "codex", "mode": "managed",
               "execute_declared_checks": true}),
    );
    wait_for_mission(&env, "m1", "the new run asking", |mission| {
        mission["run"]["run_id"] == "r2"
            && mission["run"]["live"] == true
            && mission["unresolved_attention_count"].as_u64() >= Some(1)
    });
    let refused = env.call("cockpit.preview", answer("r2"));
    let (code, message) = code_and_message(&refused);
    assert_eq!(code, "attention_not_respondable", "{refused}");
    assert!(message.contains("no live provider request"), "{message}");
    // The live run r2 is m1's: another mission cannot answer through it.
    let other = TestRepo::new();
    env.ok("mission.create", create_params("m2", &other.path_text()));
    let mut foreign = answer("r2");
    foreign["action"]["mission_id"] = json!("m2");
    let refused = env.call("cockpit.preview", foreign);
    let (code, message) = code_and_message(&refused);
    assert_eq!(code, "run_mismatch", "{refused}");
    assert!(message.contains("r2 belongs to mission m1"), "{message}");
}

#[test]
fn a_stored_receipt_that_no_longer_re_derives_is_proof_binding_mismatch() {
    let mut env = session(&json!([{"text": "worked on it"}]));
    let repo = TestRepo::new();
    mission_in(&env, &repo);
    start(&env);
    wait_for_mission(&env, "m1", "ready", |mission| {
        mission["status"] == "ready_to_close"
    });
    env.ok("mission.proof.get", json!({"mission_id": "m1"}));
    // Someone edits the stored receipt while the server is down.
    env.ok("server.stop", json!({}));
    env.signal_server(0);
    {
        let connection = rusqlite::Connection::open(env.database_path()).unwrap();
        let doc: String = connection
            .query_row(
                "SELECT doc FROM missions WHERE mission_id = 'm1'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        let mut doc: Value = serde_json::from_str(&doc).unwrap();
        let moved = doc["ready_receipt"]["verified_at_millis"].as_u64().unwrap() + 1;
        doc["ready_receipt"]["verified_at_millis"] = json!(moved);
        connection
            .execute(
                "UPDATE missions SET doc = ?1 WHERE mission_id = 'm1'",
                [doc.to_string()],
            )
            .unwrap();
    }
    env.start_server();
    let refused = env.call("mission.proof.get", json!({"mission_id": "m1"}));
    let (code, message) = code_and_message(&refused);
    assert_eq!(code, "proof_binding_mismatch", "{refused}");
    assert!(
        message.contains("seal digest does not re-derive"),
        "{message}"
    );
}

#[test]
fn a_run_whose_transcript_cannot_be_written_is_provider_start_failed() {
    let env = session(&json!([{"text": "worked on it"}]));
    let repo = TestRepo::new();
    mission_in(&env, &repo);
    // A folder where the run's transcript file goes: the file cannot be opened.
    std::fs::create_dir_all(env.config_dir.join("transcripts/m1/r1.log")).unwrap();
    let refused = env.call(
        "mission.start",
        json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed",
               "execute_declared_checks": true}),
    );
    let (code, message) = code_and_message(&refused);
    assert_eq!(code, "provider_start_failed", "{refused}");
    assert!(message.contains("cannot open the transcript"), "{message}");
    let mission = env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
    assert_eq!(mission["status"], "failed", "{mission}");
    assert!(
        env.store_fingerprint().1.contains("claims=0"),
        "the claim is released"
    );
}

/// Makes the repository's only commits unreachable and prunes them, as a history rewrite
/// and a `git gc` would.
fn lose_history(repo: &Path) {
    git(repo, &["checkout", "-q", "--orphan", "rewritten"]);
    git(repo, &["commit", "-q", "-m", "rewritten"]);
    git(repo, &["branch", "-D", "main"]);
    git(repo, &["reflog", "expire", "--expire=now", "--all"]);
    git(repo, &["gc", "-q", "--prune=now"]);
}

#[test]
fn a_handoff_from_a_workspace_whose_base_is_gone_is_handoff_snapshot_failed() {
    let env = session(&json!([{"text": "worked on it"}]));
    let repo = TestRepo::new();
    mission_in(&env, &repo);
    start(&env);
    wait_for_mission(&env, "m1", "ready", |mission| {
        mission["status"] == "ready_to_close"
    });
    lose_history(&repo.path);
    let refused = env.call(
        "mission.handoff.preview",
        json!({"mission_id": "m1", "to": "claude_code"}),
    );
    let (code, message) = code_and_message(&refused);
    assert_eq!(code, "handoff_snapshot_failed", "{refused}");
    assert!(message.contains("cannot be scanned"), "{message}");
}

/// Every code of the catalogue is either asserted by some end-to-end test or listed in
/// [`UNREACHABLE`] with its reason, and the README says which codes are unreachable.
#[test]
fn every_error_code_is_produced_by_a_test_or_said_to_be_unreachable() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut sources = String::new();
    for folder in [
        "tests/tests",
        "engine/tests",
        "providers/tests",
        "pane/src/tests",
    ] {
        let mut stack = vec![root.join(folder)];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|ext| ext == "rs")
                    && !path.ends_with("error_codes.rs")
                {
                    sources.push_str(&std::fs::read_to_string(&path).unwrap());
                }
            }
        }
    }
    // This file too, without the table of unreachable codes.
    let own = std::fs::read_to_string(root.join("tests/tests/it/error_codes.rs")).unwrap();
    let (before, rest) = own.split_once("const UNREACHABLE").unwrap();
    let (_, after) = rest.split_once("];").unwrap();
    sources.push_str(before);
    sources.push_str(after);
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut missing = Vec::new();
    for code in nagi_schema::codes::ErrorCode::ALL {
        let name = code.as_str();
        let unreachable = UNREACHABLE.iter().any(|(listed, _)| *listed == name);
        let produced = sources.contains(&format!("\"{name}\""))
            || sources.contains(&format!("\\\"{name}\\\""));
        match (produced, unreachable) {
            (true, true) => missing.push(format!(
                "{name} is produced by a test but listed as unreachable"
            )),
            (false, false) => missing.push(format!("{name} is produced by no end-to-end test")),
            (false, true) => assert!(
                readme.contains(&format!("`{name}`")),
                "the README does not say {name} is unreachable"
            ),
            (true, false) => {}
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
