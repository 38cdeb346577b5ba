//! The read-only guard of a run, with fake providers that ignore their read-only sandbox and
//! write into the worktree: under Landlock the write fails; where Landlock cannot be used
//! (Codex, whose own bubblewrap sandbox cannot run inside a Landlock domain) the workspace
//! digest taken while the provider starts catches the change and raises a security warning.

use std::collections::BTreeMap;

use nagi_tests::real_cli::RealProvider;
use nagi_tests::*;
use serde_json::{Value, json};

use crate::real_providers::write_provider_config;

fn session_with_fake(provider: RealProvider, fake: &str, script: Value) -> (TestEnv, TestRepo) {
    let mut env = TestEnv::new();
    let mut fake_env = BTreeMap::new();
    fake_env.insert("NAGI_FAKE_SCRIPT".to_string(), script.to_string());
    write_provider_config(
        &env.config_dir,
        provider,
        vec![test_binary(fake).display().to_string()],
        Vec::new(),
        fake_env,
    );
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("guard", &repo.path_text()));
    env.ok("mission.configure", configure_params("guard", "true", &[]));
    (env, repo)
}

fn start(env: &TestEnv, provider: RealProvider) {
    let started = env.ok("mission.start", json!({"mission_id": "guard", "run_id": "run-1", "provider": provider.wire_name(), "mode": "managed"}));
    assert_eq!(started["type"], "mission_run_started", "{started}");
}

fn attention(env: &TestEnv) -> Vec<Value> {
    env.ok(
        "attention.list",
        json!({"mission_id": "guard", "include_closed": true}),
    )["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_codex_run_that_writes_despite_read_only_raises_a_critical_security_warning() {
    let script = json!([{"write_file": {"path": "intruder.txt", "content": "written in a read-only run\n"}}, {"text": "wrote it"}]);
    let (env, repo) = session_with_fake(RealProvider::Codex, "fake_codex", script);
    start(&env, RealProvider::Codex);
    let mission = wait_for_mission(&env, "guard", "review_required", |mission| {
        mission["status"] == "review_required"
    });
    assert_eq!(
        mission["run"]["enforcement"], "provider_sandbox+workspace_digest",
        "{mission}"
    );
    assert!(
        repo.path.join("intruder.txt").exists(),
        "the fake wrote, since nothing stopped it"
    );
    let warnings: Vec<Value> = attention(&env)
        .into_iter()
        .filter(|item| item["kind"] == "security_warning")
        .collect();
    assert_eq!(warnings.len(), 1, "one security warning: {warnings:?}");
    assert_eq!(warnings[0]["risk"], "critical");
    assert!(
        warnings[0]["requested_action"]
            .as_str()
            .unwrap_or_default()
            .contains("changed during read-only run run-1"),
        "{}",
        warnings[0]
    );
}

#[test]
fn a_landlocked_claude_run_cannot_write_and_raises_no_warning() {
    if nagi_providers::landlock_abi_version().is_none() {
        eprintln!("skipped: this kernel has no Landlock, so the write would not be stopped");
        return;
    }
    let script = json!([{"write_file": {"path": "intruder.txt", "content": "written in a read-only run\n"}}, {"text": "tried"}]);
    let (env, repo) = session_with_fake(RealProvider::ClaudeCode, "fake_claude", script);
    start(&env, RealProvider::ClaudeCode);
    let mission = wait_for_mission(&env, "guard", "review_required", |mission| {
        mission["status"] == "review_required"
    });
    assert!(
        mission["run"]["enforcement"]
            .as_str()
            .unwrap_or_default()
            .contains("+landlock_v"),
        "{mission}"
    );
    assert!(
        !repo.path.join("intruder.txt").exists(),
        "Landlock must stop the write"
    );
    assert!(
        attention(&env)
            .iter()
            .all(|item| item["kind"] != "security_warning"),
        "{:?}",
        attention(&env)
    );
}
