//! Restart recovery (contract §9, contract preface items 3 and 9): SIGKILL the server
//! mid-run, start it again, and check that every mission is in a legal state with a
//! reason, nothing acknowledged is lost, no claim leaks and no provider process survives.

use std::path::Path;

use nagi_tests::*;
use serde_json::{Value, json};

fn configure_fakes(env: &TestEnv, script: &Value, startup: Option<&str>) -> std::path::PathBuf {
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let log = fake_log_path(env);
    let mut fake_env = format!(
        "NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {}",
        toml_string(&script.to_string()),
        toml_string(log.to_str().unwrap())
    );
    if let Some(startup) = startup {
        fake_env.push_str(&format!(", NAGI_FAKE_STARTUP = {}", toml_string(startup)));
    }
    let config = format!(
        "[providers.codex]\ncommand = [{}]\nenv = {{ {fake_env} }}\n",
        toml_string(test_binary("fake_codex").to_str().unwrap())
    );
    std::fs::write(
        env.config_dir.join("config.toml"),
        format!("{config}{}", fake_sandbox_section(env)),
    )
    .unwrap();
    log
}

fn processes_with_marker(session_dir: &Path) -> Vec<i32> {
    let needle = session_marker_entry(session_dir).into_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|environ| {
                    environ
                        .split(|byte| *byte == 0)
                        .any(|entry| entry == needle.as_slice())
                })
                .unwrap_or(false)
        })
        .collect()
}

fn start(env: &TestEnv, repo: &TestRepo) {
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok("mission.configure", configure_params("m1", "true", &[]));
    env.ok("mission.start", json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed", "execute_declared_checks": true}));
}

#[test]
fn an_active_run_resumes_its_session_without_replaying_the_prompt() {
    let mut env = TestEnv::new();
    let log = configure_fakes(&env, &json!([{"approve_command": "make deploy"}]), None);
    env.start_server();
    let repo = TestRepo::new();
    start(&env, &repo);
    let before = wait_for_mission(&env, "m1", "waiting on an approval", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    assert_eq!(before["status"], "active");
    let old_providers = processes_with_marker(&env.config_dir);
    assert!(
        !old_providers.is_empty(),
        "the provider carries the session marker"
    );
    env.kill_server();
    // The resumed provider will not ask again: its next turn just finishes.
    configure_fakes(
        &env,
        &json!([{"text": "continuing after the restart"}]),
        None,
    );
    env.start_server();
    // No process of the killed server survives (new ones carry the same marker, so compare pids).
    for pid in &old_providers {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .unwrap_or_default()
                    .contains(") Z "),
            "pid {pid} survived"
        );
    }
    // The resumed turn completes (`review_required`), then the declared checks may seal the
    // proof at once (`ready_to_close`): either shows the turn is done.
    let mission = wait_for_mission(
        &env,
        "m1",
        "review_required or ready_to_close after the resumed turn",
        |mission| {
            ["review_required", "ready_to_close"]
                .contains(&mission["status"].as_str().unwrap_or_default())
        },
    );
    assert_eq!(mission["run"]["run_id"], "r1");
    // The approval that was open before the restart expired with a reason.
    let items = env.ok(
        "attention.list",
        json!({"mission_id": "m1", "include_closed": true}),
    )["items"]
        .clone();
    let item = &items[0];
    assert_eq!(item["state"]["state"], "expired", "{item}");
    assert_eq!(item["unread"], false);
    assert_eq!(
        mission["unresolved_attention_count"], 0,
        "an expired item no longer blocks the mission"
    );
    // The provider resumed the same session and never saw the mission prompt twice.
    let entries = log_entries(&log);
    let resumes: Vec<&Value> = entries
        .iter()
        .filter(|entry| entry["event"] == "resume")
        .collect();
    assert_eq!(resumes.len(), 1, "{entries:#?}");
    assert_eq!(resumes[0]["session_id"], "fake-session-1");
    let mission_prompts = entries
        .iter()
        .filter(|entry| {
            entry["event"] == "prompt"
                && entry["text"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("Objective")
        })
        .count();
    assert_eq!(
        mission_prompts, 1,
        "the mission prompt is sent once: {entries:#?}"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !env.store_fingerprint().1.contains("claims=0") {
        assert!(
            std::time::Instant::now() < deadline,
            "the finished run never released its claim"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_run_that_never_bound_its_session_is_blocked_with_a_reason() {
    let mut env = TestEnv::new();
    configure_fakes(&env, &json!([{"text": "never"}]), Some("hang"));
    env.start_server();
    let repo = TestRepo::new();
    start(&env, &repo);
    assert_eq!(
        env.ok("mission.get", json!({"mission_id": "m1"}))["mission"]["status"],
        "preparing"
    );
    env.kill_server();
    env.start_server();
    let mission = env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
    assert_eq!(mission["status"], "blocked");
    assert!(
        mission["status_reason"]
            .as_str()
            .unwrap()
            .contains("before the provider confirmed its session"),
        "{mission}"
    );
    assert!(processes_with_marker(&env.config_dir).iter().all(|pid| {
        // Only the new server's pane followers may carry the marker; no provider.
        std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
            .unwrap_or_default()
            .starts_with("tail")
    }));
    assert!(
        env.store_fingerprint().1.contains("claims=0"),
        "the claim of a blocked run is released"
    );
    // The mission can start a new run.
    configure_fakes(&env, &json!([{"text": "second try"}]), None);
    env.signal_server(libc::SIGTERM);
    env.start_server();
    env.ok(
        "mission.start",
        json!({"mission_id": "m1", "run_id": "r2", "provider": "codex", "mode": "managed"}),
    );
    wait_for_mission(&env, "m1", "review_required", |mission| {
        mission["status"] == "review_required"
    });
}

#[test]
fn a_graceful_stop_keeps_the_run_live_and_a_re_asked_request_can_be_answered_again() {
    let mut env = TestEnv::new();
    configure_fakes(&env, &json!([{"approve_command": "make deploy"}]), None);
    env.start_server();
    let repo = TestRepo::new();
    start(&env, &repo);
    wait_for_mission(&env, "m1", "active", |mission| {
        mission["status"] == "active" && mission["unresolved_attention_count"] == 1
    });
    let before = env.ok("attention.list", json!({"mission_id": "m1"}))["items"][0].clone();
    env.signal_server(libc::SIGTERM);
    let stored = store_fingerprint(&env.database_path()).1;
    assert!(
        stored.contains("\"status\":\"active\""),
        "a stop is not a failure: {stored}"
    );
    env.start_server();
    // The resumed provider asks the same question again: the same item reopens, answerable.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let item = loop {
        let items = env.ok("attention.list", json!({"mission_id": "m1"}))["items"].clone();
        if let Some(item) = items.as_array().unwrap().first()
            && item["response_capability"] == "reliable"
        {
            break item.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the item never became answerable again: {items}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(item["attention_id"], before["attention_id"]);
    assert_eq!(item["state"]["state"], "open");
    // In between it expired with a stated reason.
    let expired = env.ok(
        "events.wait",
        json!({"match_event": {"event": "mission", "mission_id": "m1", "kind": "mission_attention_changed", "after_seq": 0}, "timeout_ms": 1000}),
    );
    assert_eq!(expired["event"]["data"]["state"], "open");
    let mission = env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
    assert_eq!(mission["status"], "active");
}

#[test]
fn recover_dry_run_shows_what_would_happen() {
    let mut env = TestEnv::new();
    configure_fakes(&env, &json!([{"approve_command": "wait"}]), None);
    env.start_server();
    let repo = TestRepo::new();
    start(&env, &repo);
    wait_for_mission(&env, "m1", "active", |mission| {
        mission["status"] == "active"
    });
    env.kill_server();
    let run = env.nagi_ok(&["--json", "mission", "recover", "--dry-run"]);
    let actions = run.json();
    assert_eq!(actions[0]["mission_id"], "m1");
    assert_eq!(actions[0]["action"], "resume");
    let human = env.nagi_ok(&["mission", "recover", "--dry-run"]);
    assert!(
        human.stdout.contains("m1") && human.stdout.contains("resume"),
        "{}",
        human.describe()
    );
    assert!(
        !env.socket.exists() || std::os::unix::net::UnixStream::connect(&env.socket).is_err(),
        "a dry run starts no server"
    );
    let stored = store_fingerprint(&env.database_path()).1;
    assert!(
        stored.contains("\"status\":\"active\""),
        "a dry run changes nothing"
    );
}

/// A read-only run's workspace changed while the server was down (the provider wrote and
/// then the server was killed, or anything else wrote meanwhile): recovery compares the
/// workspace with the picture of the run's first start and raises the security warning,
/// instead of taking a fresh picture that would absorb the change.
#[test]
fn a_change_while_the_server_was_down_is_reported_at_recovery() {
    let mut env = TestEnv::new();
    configure_fakes(&env, &json!([{"approve_command": "make deploy"}]), None);
    env.start_server();
    let repo = TestRepo::new();
    start(&env, &repo);
    wait_for_mission(&env, "m1", "waiting on an approval", |mission| {
        mission["unresolved_attention_count"] == 1
            && mission["run"]["enforcement"]
                .as_str()
                .is_some_and(|enforcement| enforcement.ends_with("+workspace_digest"))
    });
    env.kill_server();
    std::fs::write(repo.path.join("written-while-down.txt"), "unseen?\n").unwrap();
    configure_fakes(&env, &json!([{"text": "continuing"}]), None);
    env.start_server();
    let mission = wait_for_mission(&env, "m1", "a security warning after recovery", |mission| {
        ["review_required", "ready_to_close"]
            .contains(&mission["status"].as_str().unwrap_or_default())
    });
    let warnings: Vec<Value> = env.ok(
        "attention.list",
        json!({"mission_id": "m1", "include_closed": true}),
    )["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["kind"] == "security_warning")
        .cloned()
        .collect();
    assert_eq!(warnings.len(), 1, "{mission}\n{warnings:?}");
    assert_eq!(warnings[0]["risk"], "critical");
}

/// The fake ACP agent in `[providers.acp]`, following `script`; `resume` is how it offers to
/// continue a session (`resume` or `load`).
fn configure_acp(env: &TestEnv, script: &Value, resume: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let log = fake_log_path(env);
    let fake_env = format!(
        "NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {}, NAGI_FAKE_ACP_RESUME = {}",
        toml_string(&script.to_string()),
        toml_string(log.to_str().unwrap()),
        toml_string(resume)
    );
    std::fs::write(
        env.config_dir.join("config.toml"),
        format!(
            "[providers.acp]\ncommand = [{}]\nenv = {{ {fake_env} }}\n\n{}",
            toml_string(test_binary("fake_acp").to_str().unwrap()),
            fake_sandbox_section(env)
        ),
    )
    .unwrap();
    log
}

/// An ACP run (write scope, granted in the cockpit) killed mid-turn resumes its session —
/// through `session/resume`, or `session/load` for an agent that only offers that — with
/// the write scope it was granted, and finishes without the prompt sent twice.
#[test]
fn an_acp_run_resumes_its_session_after_the_server_is_killed_mid_turn() {
    for resume in ["resume", "load"] {
        let mut env = TestEnv::new();
        let log = configure_acp(&env, &json!([{"approve_permission": "keep going"}]), resume);
        env.start_server();
        let repo = TestRepo::new();
        env.ok("mission.create", create_params("m1", &repo.path_text()));
        env.ok("mission.configure", configure_params("m1", "true", &[]));
        let action = json!({"kind": "start_run", "mission_id": "m1", "run_id": "r1", "provider": "acp",
                            "write_scope": true, "execute_declared_checks": true});
        let shown = env.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
        env.ok(
            "cockpit.decide",
            json!({"action": action, "shown_digest": shown["digest"], "decision": "approve"}),
        );
        wait_for_mission(&env, "m1", "asking for a permission", |mission| {
            mission["unresolved_attention_count"] == 1
        });
        let old_providers = processes_with_marker(&env.config_dir);
        assert!(!old_providers.is_empty());
        env.kill_server();
        configure_acp(
            &env,
            &json!([{"text": "continuing after the restart"}]),
            resume,
        );
        env.start_server();
        let mission = wait_for_mission(&env, "m1", "the resumed turn's end", |mission| {
            ["review_required", "ready_to_close"]
                .contains(&mission["status"].as_str().unwrap_or_default())
        });
        assert_eq!(mission["run"]["run_id"], "r1", "{resume}: {mission}");
        assert_eq!(
            mission["run"]["enforcement"], "workspace_write",
            "{resume}: the run keeps the write scope it was granted: {mission}"
        );
        for pid in &old_providers {
            assert!(
                !Path::new(&format!("/proc/{pid}")).exists()
                    || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                        .unwrap_or_default()
                        .contains(") Z "),
                "{resume}: pid {pid} survived"
            );
        }
        let entries = log_entries(&log);
        let continued: Vec<&Value> = entries
            .iter()
            .filter(|entry| entry["event"] == resume)
            .collect();
        assert_eq!(continued.len(), 1, "{resume}: {entries:#?}");
        assert_eq!(continued[0]["session_id"], "fake-session-1");
        let mission_prompts = entries
            .iter()
            .filter(|entry| {
                entry["event"] == "prompt"
                    && entry["text"]
                        .as_str()
                        .unwrap_or_default()
                        .contains("Objective")
            })
            .count();
        assert_eq!(mission_prompts, 1, "{resume}: {entries:#?}");
    }
}
