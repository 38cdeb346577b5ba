//! Proof, close and handoff end to end with fake providers (contract §2.7–§2.10, §5,
//! §6; contract preface items 5 and 6).

use std::path::Path;

use nagi_tests::*;

use crate::panes::eventually;
use serde_json::{Value, json};

// The same hostile configuration the engine's scan tests plant.
#[path = "../../../exec/src/workspace/hostile_config_fixture.rs"]
mod hostile_config_fixture;
use hostile_config_fixture::HostileGitConfig;

/// Points codex and claude at their fakes; returns the fake log.
fn configure_fakes(env: &TestEnv, script: &Value) -> std::path::PathBuf {
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let log = fake_log_path(env);
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
    // An archived mission's panes close a second after the archive, instead of minutes.
    std::fs::write(
        env.config_dir.join("config.toml"),
        format!(
            "{config}{}\n[server]\narchived_pane_linger_seconds = 1\n",
            fake_sandbox_section(env)
        ),
    )
    .unwrap();
    log
}

pub(crate) fn check(id: &str, program: &str, args: &[&str], relevant: Value) -> Value {
    json!({"kind": "command", "id": id, "program": program, "args": args, "cwd": ".", "relevant_paths": relevant,
           "required_artifacts": [], "required": true, "covers": [0, 1]})
}

pub(crate) struct Proof {
    pub(crate) env: TestEnv,
    pub(crate) repo: TestRepo,
    log: std::path::PathBuf,
}

pub(crate) fn session(checks: Value, execute: bool) -> Proof {
    session_in(TestRepo::new(), checks, execute)
}

fn session_in(repo: TestRepo, checks: Value, execute: bool) -> Proof {
    session_with_env(repo, checks, execute, &[])
}

/// m1 started on a server with `extra` in its environment.
fn session_with_env(
    repo: TestRepo,
    checks: Value,
    execute: bool,
    extra: &[(&str, String)],
) -> Proof {
    let mut env = TestEnv::new();
    let log = configure_fakes(&env, &json!([{"text": "worked on it"}]));
    for (name, value) in extra {
        env.env.insert(name.to_string(), value.clone());
    }
    env.start_server();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok(
        "mission.configure",
        json!({"mission_id": "m1", "checks": checks}),
    );
    env.ok("mission.start", json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed", "execute_declared_checks": execute}));
    Proof { env, repo, log }
}

pub(crate) fn settled(env: &TestEnv) -> Value {
    wait_for_mission(env, "m1", "settled", |mission| {
        (mission["status"] == "review_required"
            || mission["status"] == "ready_to_close"
            || mission["status"] == "blocked"
            || mission["status"] == "archived")
            && mission["run"]["live"] == false
            && !mission["status_reason"]
                .as_str()
                .unwrap_or_default()
                .contains("proof needs fresh evidence")
    })
}

#[test]
fn the_happy_path_ends_archived_with_a_receipt() {
    let s = session(
        json!([check("unit", "test", &["-f", "README.md"], json!([]))]),
        true,
    );
    let ready = wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    assert_eq!(ready["checks"][0]["status"], "passed");
    let reason = ready["status_reason"].as_str().unwrap();
    assert!(reason.contains("`nagi mission close m1`"), "{reason}");
    let receipt = s.env.ok("mission.proof.get", json!({"mission_id": "m1"}))["receipt"].clone();
    assert_eq!(receipt["decision"], "ready_to_close");
    assert_eq!(receipt["identity"]["run_id"], "r1");
    assert_eq!(receipt["identity"]["worktree_identity"], s.repo.path_text());
    assert_eq!(receipt["head_revision"], s.repo.head());
    assert_eq!(receipt["fresh_evidence"][0]["check_id"], "unit");
    assert_eq!(receipt["fresh_evidence"][0]["source"]["kind"], "command");
    assert_eq!(receipt["fresh_evidence"][0]["source"]["exit_code"], 0);
    assert_eq!(
        receipt["attention_digest"],
        "3fee3088a6bac012817a1e32b01acbc8895f78c403506121151fbaca0c88dbab"
    );
    let accepted = s.env.ok("mission.close", json!({"mission_id": "m1"}));
    assert_eq!(accepted["type"], "mission_close_accepted");
    let archived = wait_for_mission(&s.env, "m1", "archived", |mission| {
        mission["status"] == "archived"
    });
    assert_eq!(archived["checks"][0]["status"], "passed");
    // Panes do not pile up: the run's pane closes after the linger the config sets.
    let pane_id = archived["run"]["pane_id"]
        .as_str()
        .expect("the run had a pane")
        .to_string();
    eventually("the archived run's pane closes", || {
        s.env.call("pane.get", json!({"pane_id": pane_id}))["error"]["code"] == "pane_not_found"
    });
    let final_receipt =
        s.env.ok("mission.proof.get", json!({"mission_id": "m1"}))["receipt"].clone();
    assert_eq!(final_receipt["decision"], "archived");
    assert_eq!(
        final_receipt["subject_digest"], receipt["subject_digest"],
        "the same subject was proven twice"
    );
    assert!(final_receipt["authority_sequence"].as_u64() > receipt["authority_sequence"].as_u64());
    assert_ne!(final_receipt["seal_digest"], receipt["seal_digest"]);
    // Closing again is idempotent.
    assert_eq!(
        s.env.ok("mission.close", json!({"mission_id": "m1"}))["mission"]["status"],
        "archived"
    );
    // The CLI shows the proof.
    let shown = s.env.nagi_ok(&["mission", "proof", "m1"]);
    assert!(
        shown.stdout.contains("archived") && shown.stdout.contains("unit"),
        "{}",
        shown.describe()
    );
}

#[test]
fn proof_get_before_a_seal_is_not_ready() {
    let s = session(json!([check("unit", "false", &[], json!([]))]), true);
    let mission = settled(&s.env);
    assert_eq!(mission["status"], "review_required");
    assert_eq!(mission["checks"][0]["status"], "failed");
    assert!(
        mission["status_reason"]
            .as_str()
            .unwrap()
            .contains("does not verify"),
        "{mission}"
    );
    assert_eq!(
        s.env
            .error_code("mission.proof.get", json!({"mission_id": "m1"})),
        "proof_not_ready"
    );
    assert_eq!(
        s.env
            .error_code("mission.proof.get", json!({"mission_id": "../x"})),
        "invalid_mission"
    );
    assert_eq!(
        s.env
            .error_code("mission.close", json!({"mission_id": "m1"})),
        "mission_not_ready"
    );
}

#[test]
fn a_later_check_that_changes_an_earlier_checks_files_makes_it_stale() {
    let checks = json!([
        check(
            "readme",
            "test",
            &["-f", "README.md"],
            json!([{"type": "exact", "path": "README.md"}])
        ),
        check(
            "touch",
            "sh",
            &["-c", "echo more >> README.md"],
            json!([{"type": "exact", "path": "src/lib.rs"}])
        ),
    ]);
    let s = session(checks, true);
    let mission = settled(&s.env);
    assert_eq!(mission["status"], "review_required", "{mission}");
    let reason = mission["status_reason"].as_str().unwrap();
    assert!(
        reason.contains("readme") && reason.contains("stale"),
        "{reason}"
    );
}

#[test]
fn verify_runs_the_checks_on_demand_with_consent() {
    let s = session(
        json!([check("unit", "test", &["-f", "README.md"], json!([]))]),
        false,
    );
    let mission = wait_for_mission(&s.env, "m1", "review_required", |mission| {
        mission["status"] == "review_required" && mission["run"]["live"] == false
    });
    assert_eq!(
        mission["checks"][0]["status"], "missing",
        "no consent, no checks"
    );
    assert!(
        mission["status_reason"]
            .as_str()
            .unwrap_or_default()
            .contains("nagi mission verify m1 --execute-checks"),
        "the reason names the next command: {}",
        mission["status_reason"]
    );
    let before = s.env.store_fingerprint();
    assert_eq!(
        s.env
            .error_code("mission.verify", json!({"mission_id": "m1"})),
        "interactive_consent_required"
    );
    assert_eq!(s.env.store_fingerprint(), before);
    let accepted = s.env.ok(
        "mission.verify",
        json!({"mission_id": "m1", "execute_declared_checks": true}),
    );
    assert_eq!(accepted["type"], "mission_verify_accepted");
    wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    assert_eq!(
        s.env.error_code(
            "mission.verify",
            json!({"mission_id": "m1", "execute_declared_checks": true})
        ),
        "mission_not_ready"
    );
}

/// A server that pauses `pause_ms` between a check run's commit and its worker letting go
/// of the run (the `checks_sealed` fault point), with m1 started on it.
fn session_pausing_after_checks(checks: Value, pause_ms: u64) -> Proof {
    let pause = format!("checks_sealed:{pause_ms}");
    session_with_env(
        TestRepo::new(),
        checks,
        true,
        &[("NAGI_FAULT_PAUSE", pause)],
    )
}

/// `mission.close` asked the moment the mission shows `ready_to_close`, while the checks
/// that sealed it are still letting go of the run: it was answered accepted and then did
/// nothing (the closing checks were taken for its own), so the mission never closed.
#[test]
fn a_close_asked_the_moment_the_proof_seals_closes_the_mission() {
    let s = session_pausing_after_checks(
        json!([check("unit", "test", &["-f", "README.md"], json!([]))]),
        1500,
    );
    let ready = wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    assert!(
        ready.get("checks_running").is_none(),
        "the store says the checks finished: {ready}"
    );
    let accepted = s.env.ok("mission.close", json!({"mission_id": "m1"}));
    assert_eq!(accepted["type"], "mission_close_accepted");
    let archived = wait_for_mission(&s.env, "m1", "archived", |mission| {
        mission["status"] == "archived"
    });
    assert_eq!(archived["checks"][0]["status"], "passed");
    assert_eq!(
        s.env.ok("mission.proof.get", json!({"mission_id": "m1"}))["receipt"]["decision"],
        "archived"
    );
}

/// `mission.verify` asked the moment a turn's checks failed, while they are still letting
/// go of the run: it was answered accepted without running anything, so a fix made in
/// between was never seen.
#[test]
fn a_verify_asked_the_moment_the_turns_checks_fail_runs_them_again() {
    let s = session_pausing_after_checks(
        json!([check("unit", "test", &["-f", "fixed.txt"], json!([]))]),
        1500,
    );
    let failed = wait_for_mission(
        &s.env,
        "m1",
        "review_required with a failed check",
        |mission| {
            mission["status"] == "review_required"
                && mission["checks"][0]["status"] == "failed"
                && mission.get("checks_running").is_none()
        },
    );
    s.repo.write("fixed.txt", "fixed\n");
    let accepted = s.env.ok(
        "mission.verify",
        json!({"mission_id": "m1", "execute_declared_checks": true}),
    );
    assert_eq!(accepted["type"], "mission_verify_accepted", "{failed}");
    let ready = wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    assert_eq!(ready["checks"][0]["status"], "passed");
}

#[test]
fn a_workspace_change_between_ready_and_close_blocks_with_a_reason() {
    let s = session(
        json!([check(
            "unit",
            "test",
            &["-f", "README.md"],
            json!([{"type": "exact", "path": "README.md"}])
        )]),
        true,
    );
    wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    s.repo.write("notes.txt", "an unrelated file appeared\n");
    s.env.ok("mission.close", json!({"mission_id": "m1"}));
    let mission = wait_for_mission(&s.env, "m1", "blocked", |mission| {
        mission["status"] == "blocked"
    });
    let reason = mission["status_reason"].as_str().unwrap();
    assert!(reason.contains("archive"), "{reason}");
    assert!(
        reason.contains("nagi mission verify m1 --execute-checks"),
        "the reason names the next command: {reason}"
    );
}

pub(crate) fn preview(env: &TestEnv, to: &str) -> Value {
    env.ok(
        "mission.handoff.preview",
        json!({"mission_id": "m1", "to": to}),
    )["artifact"]
        .clone()
}

pub(crate) fn start_handoff(env: &TestEnv, artifact: &Value) -> Value {
    env.call(
        "mission.handoff.start",
        json!({"mission_id": "m1", "to": artifact["target_provider"], "generated_at_millis": artifact["generated_at_millis"],
               "artifact_sha256": artifact["artifact_sha256"]}),
    )
}

/// `mission.handoff.start` asked the moment the proof sealed, while the checks are still
/// letting go of the run: it was refused as busy although nothing was working anymore.
#[test]
fn a_handoff_started_the_moment_the_proof_seals_starts() {
    let s = session_pausing_after_checks(
        json!([check("unit", "test", &["-f", "README.md"], json!([]))]),
        1500,
    );
    wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close" && mission.get("checks_running").is_none()
    });
    let artifact = preview(&s.env, "claude_code");
    let started = start_handoff(&s.env, &artifact);
    assert_eq!(
        started["result"]["type"], "mission_run_started",
        "{started}"
    );
    assert_eq!(
        started["result"]["mission"]["run"]["provider"],
        "claude_code"
    );
    assert_eq!(
        started["result"]["mission"]["run"]["handoff_from_run_id"],
        "r1"
    );
}

#[test]
fn a_handoff_continues_the_mission_with_another_provider() {
    let s = session(
        json!([check("unit", "test", &["-f", "README.md"], json!([]))]),
        true,
    );
    wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    s.repo.write("src/new.rs", "pub fn new() {}\n");
    let artifact = preview(&s.env, "claude_code");
    assert_eq!(artifact["source_run_id"], "r1");
    assert_eq!(artifact["source_provider"], "codex");
    assert!(
        artifact["suggested_run_id"]
            .as_str()
            .unwrap()
            .starts_with("handoff-claude-")
    );
    assert_eq!(artifact["diff"]["dirty"], true);
    assert_eq!(artifact["diff"]["changed_paths"], json!(["src/new.rs"]));
    assert_eq!(artifact["checks"][0]["status"], "passed");
    // Same provider, or an ACP target over the public socket, are refused.
    assert_eq!(
        s.env.error_code(
            "mission.handoff.preview",
            json!({"mission_id": "m1", "to": "codex"})
        ),
        "invalid_handoff_provider"
    );
    let mut acp = artifact.clone();
    acp["target_provider"] = json!("acp");
    assert_eq!(
        start_handoff(&s.env, &acp)["error"]["code"],
        "interactive_consent_required"
    );
    // A preview with no change in between starts.
    let started = start_handoff(&s.env, &artifact);
    let mission = &started["result"]["mission"];
    assert_eq!(
        started["result"]["type"], "mission_run_started",
        "{started}"
    );
    assert_eq!(mission["run"]["run_id"], artifact["suggested_run_id"]);
    assert_eq!(mission["run"]["provider"], "claude_code");
    assert_eq!(mission["run"]["handoff_from_run_id"], "r1");
    assert_eq!(
        mission["run"]["handoff_artifact_sha256"],
        artifact["artifact_sha256"]
    );
    assert_eq!(mission["run"]["base_revision"], artifact["base_revision"]);
    assert_eq!(mission["run_history"][0]["run_id"], "r1");
    assert_eq!(
        mission["checks"][0]["status"], "stale",
        "prior evidence is stale"
    );
    assert!(mission.get("evidence_pack_digest").is_none());
    // The target got the handoff prompt, not the mission prompt, in a fresh session.
    let done = wait_for_mission(&s.env, "m1", "the new run's proof", |mission| {
        mission["status"] == "ready_to_close" && mission["run"]["provider"] == "claude_code"
    });
    assert_eq!(done["run_history"].as_array().unwrap().len(), 1);
    let prompts: Vec<String> = log_prompts(&s.log);
    assert_eq!(prompts.len(), 2, "{prompts:?}");
    assert!(
        prompts[1].contains("r1") && prompts[1].contains("src/new.rs"),
        "{}",
        prompts[1]
    );
}

fn log_prompts(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|entry| entry["event"] == "prompt")
        .map(|entry| entry["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn any_drift_between_preview_and_start_is_refused_and_changes_nothing() {
    let s = session(
        json!([check("unit", "test", &["-f", "README.md"], json!([]))]),
        false,
    );
    wait_for_mission(&s.env, "m1", "review_required", |mission| {
        mission["status"] == "review_required" && mission["run"]["live"] == false
    });
    // An edited file.
    let artifact = preview(&s.env, "claude_code");
    s.repo
        .write("src/lib.rs", "pub fn answer() -> u32 { 43 }\n");
    let before = s.env.store_fingerprint();
    assert_eq!(
        start_handoff(&s.env, &artifact)["error"]["code"],
        "handoff_artifact_changed"
    );
    assert_eq!(
        s.env.store_fingerprint(),
        before,
        "a refused start writes nothing"
    );
    // A mission mutation (a verification records evidence and moves updated_at_millis).
    let artifact = preview(&s.env, "claude_code");
    s.env.ok(
        "mission.verify",
        json!({"mission_id": "m1", "execute_declared_checks": true}),
    );
    wait_for_mission(&s.env, "m1", "verified", |mission| {
        mission["checks"][0]["status"] == "passed"
    });
    assert_eq!(
        start_handoff(&s.env, &artifact)["error"]["code"],
        "handoff_artifact_changed"
    );
    // A changed generated_at or digest.
    let artifact = preview(&s.env, "claude_code");
    let mut wrong_time = artifact.clone();
    wrong_time["generated_at_millis"] =
        json!(artifact["generated_at_millis"].as_u64().unwrap() + 1);
    assert_eq!(
        start_handoff(&s.env, &wrong_time)["error"]["code"],
        "handoff_artifact_changed"
    );
    let mut wrong_digest = artifact.clone();
    wrong_digest["artifact_sha256"] = json!("0".repeat(64));
    assert_eq!(
        start_handoff(&s.env, &wrong_digest)["error"]["code"],
        "handoff_artifact_changed"
    );
    let mission = s.env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
    assert_eq!(
        mission["run"]["run_id"], "r1",
        "the source run remains current"
    );
    assert!(mission.get("run_history").is_none());
}

#[test]
fn secrets_never_leave_the_server_in_the_artifact_or_the_prompt() {
    let mut env = TestEnv::new();
    let log = configure_fakes(&env, &json!([{"text": "ok"}]));
    env.start_server();
    let repo = TestRepo::new();
    let secrets = [
        "sk-proj-abcdefghijklmnopqrstuv1234567890",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "AKIAABCDEFGHIJKLMNOP",
        "hunter2hunter2",
    ];
    env.ok(
        "mission.create",
        json!({"mission_id": "m1", "title": "Secrets", "repository_path": repo.path_text(),
               "objective": format!("Use the key {} and call https://admin:{}@example.com", secrets[0], secrets[3]),
               "acceptance_criteria": [format!("token={}", secrets[1]), format!("AWS key {} rotated", secrets[2])]}),
    );
    env.ok(
        "mission.configure",
        json!({"mission_id": "m1", "checks": [check("unit", "true", &[], json!([]))]}),
    );
    env.ok(
        "mission.start",
        json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed"}),
    );
    wait_for_mission(&env, "m1", "review_required", |mission| {
        mission["status"] == "review_required" && mission["run"]["live"] == false
    });
    repo.write(
        &format!("config/{}.txt", secrets[2]),
        &format!("password={}\n", secrets[3]),
    );
    repo.write(
        "src/lib.rs",
        &format!("// {}\npub fn answer() -> u32 {{ 42 }}\n", secrets[1]),
    );
    let artifact = preview(&env, "claude_code");
    let text = artifact.to_string();
    for secret in secrets {
        assert!(
            !text.contains(secret),
            "{secret} leaked into the artifact: {text}"
        );
    }
    assert!(text.contains("[REDACTED]"));
    let started = start_handoff(&env, &artifact);
    assert_eq!(
        started["result"]["type"], "mission_run_started",
        "{started}"
    );
    wait_for_mission(&env, "m1", "the continuation ran", |mission| {
        mission["run"]["provider"] == "claude_code" && mission["run"]["live"] == false
    });
    let prompts = log_prompts(&log);
    let handoff_prompt = prompts.last().unwrap();
    for secret in secrets {
        assert!(
            !handoff_prompt.contains(secret),
            "{secret} leaked into the handoff prompt: {handoff_prompt}"
        );
    }
}

#[test]
fn checks_interrupted_by_a_crash_are_run_again() {
    let s = session(
        json!([check(
            "slow",
            "sh",
            &["-c", "sleep 2; test -f README.md"],
            json!([])
        )]),
        true,
    );
    wait_for_mission(&s.env, "m1", "checks running", |mission| {
        mission["status"] == "review_required"
    });
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut env = s.env;
    env.kill_server();
    env.start_server();
    let mission = wait_for_mission(&env, "m1", "ready_to_close after the re-run", |mission| {
        mission["status"] == "ready_to_close"
    });
    assert_eq!(mission["checks"][0]["status"], "passed");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !env.store_fingerprint().1.contains("claims=0") {
        assert!(
            std::time::Instant::now() < deadline,
            "the re-run leaked its claim"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The cockpit's handoff: preview, consent, start. The consent it records used to move the
/// mission's `updated_at_millis`, from which the artifact's suggested run id is derived, so
/// every cockpit handoff was refused as `handoff_artifact_changed`.
#[test]
fn a_handoff_consented_in_the_cockpit_starts() {
    let s = session(
        json!([check("unit", "test", &["-f", "README.md"], json!([]))]),
        true,
    );
    wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    let artifact = preview(&s.env, "claude_code");
    let action = json!({"kind": "handoff_start", "mission_id": "m1", "to": "claude_code",
                        "generated_at_millis": artifact["generated_at_millis"],
                        "artifact_sha256": artifact["artifact_sha256"], "write_scope": false});
    let shown = s.env.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
    // A person reads the artifact's time as a date, not as milliseconds.
    let lines = shown["lines"].to_string();
    let raw_millis = artifact["generated_at_millis"].to_string();
    assert!(
        lines.contains(" UTC)") && !lines.contains(&raw_millis),
        "{lines}"
    );
    let decided = s.env.call(
        "cockpit.decide",
        json!({"action": action, "shown_digest": shown["digest"], "decision": "approve"}),
    );
    assert_eq!(
        decided["result"]["outcome"]["decision"], "approve",
        "{decided}"
    );
    let mission = &decided["result"]["outcome"]["mission"];
    assert_eq!(mission["run"]["provider"], "claude_code", "{decided}");
    assert_eq!(
        mission["run"]["run_id"], artifact["suggested_run_id"],
        "{decided}"
    );
}

/// A change of the workspace after the cockpit showed a handoff is `consent_stale` (not
/// `handoff_artifact_changed`), and the preview shown again is of the artifact as it is now,
/// which the approved continuation then starts from.
#[test]
fn a_workspace_change_after_a_cockpit_handoff_preview_is_consent_stale_and_the_new_preview_starts()
{
    let s = session(
        json!([check("unit", "test", &["-f", "README.md"], json!([]))]),
        true,
    );
    wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    let artifact = preview(&s.env, "claude_code");
    let action = json!({"kind": "handoff_start", "mission_id": "m1", "to": "claude_code",
                        "generated_at_millis": artifact["generated_at_millis"],
                        "artifact_sha256": artifact["artifact_sha256"], "write_scope": false});
    let shown = s.env.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
    assert!(
        shown["lines"].to_string().contains("0 changed paths"),
        "{shown}"
    );
    s.repo.write("src/late.rs", "pub fn late() {}\n");
    let stale = s.env.call(
        "cockpit.decide",
        json!({"action": action, "shown_digest": shown["digest"], "decision": "approve"}),
    );
    assert_eq!(stale["error"]["code"], "consent_stale", "{stale}");
    // What the cockpit does on consent_stale: preview the same action again.
    let again = s.env.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
    let lines = again["lines"].to_string();
    assert!(lines.contains("1 changed path since"), "{lines}");
    assert!(lines.contains("changed since artifact"), "{lines}");
    assert_ne!(again["digest"], shown["digest"]);
    let decided = s.env.call(
        "cockpit.decide",
        json!({"action": action, "shown_digest": again["digest"], "decision": "approve"}),
    );
    assert_eq!(
        decided["result"]["outcome"]["decision"], "approve",
        "{decided}"
    );
    let mission = &decided["result"]["outcome"]["mission"];
    assert_eq!(mission["run"]["provider"], "claude_code", "{decided}");
    let started_from = mission["run"]["handoff_artifact_sha256"].as_str().unwrap();
    assert_ne!(started_from, artifact["artifact_sha256"].as_str().unwrap());
    assert!(
        lines.contains(started_from),
        "the artifact shown is the one started from: {lines}"
    );
    let kept = s.env.ok(
        "mission.handoff.get",
        json!({"artifact_sha256": started_from}),
    );
    assert_eq!(
        kept["artifact"]["diff"]["changed_paths"],
        json!(["src/late.rs"])
    );
}

#[test]
fn a_hostile_repository_config_runs_no_program_through_a_run_its_checks_and_a_handoff_preview() {
    // The repository names a program everywhere git would run one (filters of
    // any name through .git/info/attributes, .gitattributes and included
    // config, diff and merge drivers, pager, editor, helpers, hooks, ...).
    let repo = TestRepo::new();
    let scratch = tempfile::tempdir().unwrap();
    let fixture = HostileGitConfig::plant(&repo.path, scratch.path());
    let s = session_in(
        repo,
        json!([check("unit", "test", &["-f", "README.md"], json!([]))]),
        true,
    );
    wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    let artifact = preview(&s.env, "claude_code");
    let ran = fixture.programs_that_ran();
    assert!(
        ran.is_empty(),
        "programs named by the repository ran: {ran:#?}"
    );
    assert_eq!(artifact["diff"]["dirty"], true);
    let changed = artifact["diff"]["changed_paths"].as_array().unwrap();
    for file in HostileGitConfig::stirred_files() {
        assert!(changed.contains(&json!(file)), "{file} not in {changed:?}");
    }
}
