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

/// Whether the kernel offers Landlock; when it does not, the test's prerequisite is
/// missing (a failure under CI).
fn landlock_is_available(test: &str) -> bool {
    let available = nagi_providers::landlock_abi_version().is_some();
    if !available {
        missing_prerequisite(
            test,
            "this kernel has no Landlock, so writes would not be stopped",
        );
    }
    available
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
    if !landlock_is_available("a_landlocked_claude_run_cannot_write_and_raises_no_warning") {
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

/// The security review's finding: a "read-only" provider could write nagi's database and
/// `config.toml` (whose `[providers.*] command` runs at the next start, outside any
/// sandbox), because HOME, `~/.config`, the XDG folders and `/tmp` were all writable.
#[test]
fn a_landlocked_provider_cannot_write_nagis_config_or_data_or_the_home() {
    if !landlock_is_available("a_landlocked_provider_cannot_write_nagis_config_or_data_or_the_home")
    {
        return;
    }
    let mut env = TestEnv::new();
    let config_file = env.config_dir.join("config.toml");
    let targets = [
        config_file.clone(),
        env.config_dir.join("intruder.db"),
        env.home().join("intruder.txt"),
    ];
    let writes: Vec<Value> = targets
        .iter()
        .map(|path| json!({"write_file": {"path": path.display().to_string(), "content": "[providers.codex]\ncommand = [\"/bin/evil\"]\n"}}))
        .chain([json!({"text": "tried"})])
        .collect();
    // The fake's own log goes where a confined Claude Code may write: its state folder.
    let fake_log = env.home().join(".claude").join("fake.log");
    std::fs::create_dir_all(fake_log.parent().unwrap()).unwrap();
    let fake_env = BTreeMap::from([
        ("NAGI_FAKE_SCRIPT".to_string(), json!(writes).to_string()),
        ("NAGI_FAKE_LOG".to_string(), fake_log.display().to_string()),
        (
            "NAGI_FAKE_LOG_ENV".to_string(),
            "NAGI_CONFIG_DIR,NAGI_SOCKET_PATH,NAGI_SESSION_DIR,NAGI_SESSION_MARKER,TMPDIR"
                .to_string(),
        ),
    ]);
    write_provider_config(
        &env.config_dir,
        RealProvider::ClaudeCode,
        vec![test_binary("fake_claude").display().to_string()],
        Vec::new(),
        fake_env,
    );
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("guard", &repo.path_text()));
    env.ok("mission.configure", configure_params("guard", "true", &[]));
    let config_before = std::fs::read(&config_file).unwrap();
    start(&env, RealProvider::ClaudeCode);
    wait_for_mission(&env, "guard", "review_required", |mission| {
        mission["status"] == "review_required"
    });
    assert_eq!(std::fs::read(&config_file).unwrap(), config_before);
    for target in &targets[1..] {
        assert!(!target.exists(), "{} was written", target.display());
    }
    let refused: Vec<Value> = log_entries(&fake_log)
        .into_iter()
        .filter(|entry| entry["event"] == "write")
        .collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert!(
        refused.iter().all(|entry| entry["ok"] == false),
        "{refused:?}"
    );
    // Nor is it told where nagi keeps its state.
    let started = log_entries(&fake_log)
        .into_iter()
        .find(|entry| entry["event"] == "started")
        .expect("the fake logged its start");
    let config_text = env.config_dir.display().to_string();
    for (name, value) in started["env"].as_object().unwrap() {
        let value = value.as_str().unwrap_or_default();
        assert!(
            !value.contains(&config_text),
            "the provider's {name} names nagi's folder: {value}"
        );
    }
    assert!(started["env"]["NAGI_CONFIG_DIR"].is_null(), "{started}");
    assert!(
        started["env"]["NAGI_SESSION_MARKER"].is_string(),
        "{started}"
    );
}

/// An unconfined read-only provider (Codex) that writes while it starts, before its first
/// turn: the "before" picture is taken before the provider starts, so the write is seen.
#[test]
fn a_write_during_an_unconfined_providers_start_up_is_reported() {
    let mut env = TestEnv::new();
    let repo = TestRepo::new();
    // Codex runs in the server's working directory; the path is absolute.
    let intruder = repo.path.join("startup-intruder.txt");
    let fake_env = BTreeMap::from([
        (
            "NAGI_FAKE_SCRIPT".to_string(),
            json!([{"text": "nothing to see"}]).to_string(),
        ),
        (
            "NAGI_FAKE_STARTUP".to_string(),
            format!("write:{}", intruder.display()),
        ),
    ]);
    write_provider_config(
        &env.config_dir,
        RealProvider::Codex,
        vec![test_binary("fake_codex").display().to_string()],
        Vec::new(),
        fake_env,
    );
    env.start_server();
    env.ok("mission.create", create_params("guard", &repo.path_text()));
    env.ok("mission.configure", configure_params("guard", "true", &[]));
    start(&env, RealProvider::Codex);
    wait_for_mission(&env, "guard", "review_required", |mission| {
        mission["status"] == "review_required"
    });
    assert!(intruder.exists());
    let warnings: Vec<Value> = attention(&env)
        .into_iter()
        .filter(|item| item["kind"] == "security_warning")
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

/// A write followed by a crash of the provider: the run fails, and the write is reported
/// all the same (it was compared only when a turn completed).
#[test]
fn a_write_followed_by_a_crash_is_reported() {
    let script =
        json!([{"write_file": {"path": "intruder.txt", "content": "then crashed\n"}}, "crash"]);
    let (env, repo) = session_with_fake(RealProvider::Codex, "fake_codex", script);
    start(&env, RealProvider::Codex);
    let mission = wait_for_mission(&env, "guard", "a warning after the crash", |mission| {
        mission["unresolved_attention_count"] == 1
            && !matches!(mission["status"].as_str(), Some("preparing" | "active"))
    });
    assert!(repo.path.join("intruder.txt").exists());
    assert_ne!(mission["status"], "review_required", "{mission}");
    let warnings: Vec<Value> = attention(&env)
        .into_iter()
        .filter(|item| item["kind"] == "security_warning")
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
}

/// A person dismisses the security warning in the cockpit: the item is closed with their
/// reason, and a second dismissal of the same item (a stale cockpit, or a double press) is
/// refused and leaves the first one as it was.
#[test]
fn a_security_warning_dismissed_in_the_cockpit_stays_dismissed_once() {
    let script = json!([{"write_file": {"path": "intruder.txt", "content": "written\n"}}, {"text": "wrote it"}]);
    let (env, _repo) = session_with_fake(RealProvider::Codex, "fake_codex", script);
    start(&env, RealProvider::Codex);
    wait_for_mission(&env, "guard", "review_required", |mission| {
        mission["status"] == "review_required"
    });
    let warning = attention(&env)
        .into_iter()
        .find(|item| item["kind"] == "security_warning")
        .expect("a security warning");
    let attention_id = warning["attention_id"].as_str().unwrap().to_string();
    // Named with another mission, the item is not found: in a fleet, another host's item
    // can share its id.
    let named = env.ok(
        "attention.get",
        json!({"attention_id": attention_id, "mission_id": "guard"}),
    );
    assert_eq!(named["item"]["attention_id"], attention_id.as_str());
    assert!(
        named["item"].get("host").is_none(),
        "no host off a fleet: {named}"
    );
    assert_eq!(
        env.error_code(
            "attention.get",
            json!({"attention_id": attention_id, "mission_id": "other"})
        ),
        "attention_not_found"
    );
    let elsewhere = json!({"kind": "dismiss_attention", "attention_id": attention_id, "mission_id": "other", "reason": "not mine"});
    assert_eq!(
        env.error_code("cockpit.preview", json!({"action": elsewhere})),
        "attention_not_found"
    );
    let action = json!({"kind": "dismiss_attention", "attention_id": attention_id, "mission_id": "guard", "reason": "I wrote that file myself"});
    let preview = env.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
    assert!(
        preview["lines"][0]
            .as_str()
            .unwrap()
            .contains("of mission guard"),
        "{preview}"
    );
    assert_eq!(
        env.call(
            "cockpit.decide",
            json!({"action": elsewhere, "shown_digest": preview["digest"], "decision": "approve"}),
        )["error"]["code"],
        "attention_not_found"
    );
    let decided = env.ok(
        "cockpit.decide",
        json!({"action": action, "shown_digest": preview["digest"], "decision": "approve"}),
    );
    assert!(decided.to_string().contains("dismissed"), "{decided}");
    let closed = env.ok("attention.get", json!({"attention_id": attention_id}));
    assert_eq!(closed["item"]["state"]["state"], "dismissed", "{closed}");
    assert_eq!(
        closed["item"]["state"]["reason"], "I wrote that file myself",
        "{closed}"
    );
    let again = env.call(
        "cockpit.decide",
        json!({"action": {"kind": "dismiss_attention", "attention_id": attention_id, "reason": "twice"}, "shown_digest": preview["digest"], "decision": "approve"}),
    );
    assert!(
        again.get("error").is_some(),
        "a settled item is not dismissed again: {again}"
    );
    let still = env.ok("attention.get", json!({"attention_id": attention_id}));
    assert_eq!(
        still["item"]["state"]["reason"], "I wrote that file myself",
        "{still}"
    );
}
