//! `mission.start` and provider runs with our fake provider programs (contract §2.5,
//! §4.3, §8): every state transition and attention path, the read-only guard, claims,
//! declared checks, and every bad-input code.

use nagi_tests::*;
use serde_json::{Value, json};

/// A session whose config points every provider at its fake program.
pub(crate) struct Runs {
    pub(crate) env: TestEnv,
    pub(crate) repo: TestRepo,
    pub(crate) log: std::path::PathBuf,
}

pub(crate) fn write_config(
    env: &TestEnv,
    script: &Value,
    extra_env: &[(&str, &str)],
) -> std::path::PathBuf {
    std::fs::create_dir_all(&env.config_dir).unwrap();
    // Under the session's HOME: a confined read-only provider may write there.
    let log = fake_log_path(env);
    let mut fake_env = format!(
        "NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {}",
        toml_string(&script.to_string()),
        toml_string(log.to_str().unwrap())
    );
    for (key, value) in extra_env {
        fake_env.push_str(&format!(", {key} = {}", toml_string(value)));
    }
    let mut config = String::new();
    for (section, binary) in [
        ("codex", "fake_codex"),
        ("claude_code", "fake_claude"),
        ("open_code", "fake_opencode"),
        ("acp", "fake_acp"),
    ] {
        config.push_str(&format!(
            "[providers.{section}]\ncommand = [{}]\nenv = {{ {fake_env} }}\n\n",
            toml_string(test_binary(binary).to_str().unwrap())
        ));
    }
    std::fs::write(
        env.config_dir.join("config.toml"),
        format!("{config}{}", fake_sandbox_section(env)),
    )
    .unwrap();
    log
}

pub(crate) fn runs_with(script: Value, extra_env: &[(&str, &str)]) -> Runs {
    let mut env = TestEnv::new();
    let log = write_config(&env, &script, extra_env);
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok(
        "mission.configure",
        configure_params("m1", "test", &["-f", "README.md"]),
    );
    Runs { env, repo, log }
}

pub(crate) fn start_params(provider: &str, run_id: &str) -> Value {
    json!({"mission_id": "m1", "run_id": run_id, "provider": provider, "mode": "managed", "execute_declared_checks": true})
}

pub(crate) fn status_is(status: &'static str) -> impl Fn(&Value) -> bool {
    move |mission| mission["status"] == status
}

#[test]
fn each_provider_runs_a_turn_to_review_required_with_evidence() {
    for provider in ["codex", "claude_code", "open_code"] {
        let runs = runs_with(
            json!([{"text": "reading the readme"}, {"tool": "cat README.md", "output": "# demo"}, {"text": "done"}]),
            &[],
        );
        let started = runs.env.ok("mission.start", start_params(provider, "r1"));
        assert_eq!(started["type"], "mission_run_started");
        let mission = &started["mission"];
        assert_eq!(mission["status"], "preparing", "{provider}");
        assert_eq!(mission["run"]["base_revision"], runs.repo.head());
        assert_eq!(mission["run"]["worktree_path"], runs.repo.path_text());
        assert!(
            mission["run"]["pane_id"].as_str().unwrap().starts_with('w'),
            "{mission}"
        );
        assert!(
            mission["run"]["enforcement"]
                .as_str()
                .unwrap()
                .starts_with("provider_sandbox")
        );
        let done = wait_for_mission(&runs.env, "m1", "ready_to_close with evidence", |mission| {
            mission["status"] == "ready_to_close" && mission["checks"][0]["status"] == "passed"
        });
        assert!(
            done.get("run")
                .unwrap()
                .get("provider_session_id")
                .is_none(),
            "the native session id never leaves the server"
        );
        let evidence = &done["evidence"][0];
        assert_eq!(evidence["exit_code"], 0);
        assert!(evidence["duration_millis"].is_u64());
        assert_eq!(
            done["run"]["live"], false,
            "{provider}: the provider's part is over"
        );
        // The transcript pane shows the agent's words.
        let pane = done["run"]["pane_id"].as_str().unwrap().to_string();
        let transcript = poll_pane_text(&runs.env, &pane, "done");
        assert!(transcript.contains("reading the readme"), "{transcript}");
        // The claim is released (by the proof worker, in the commit after the seal): a
        // second mission can start on the checkout.
        crate::panes::eventually("the claim's release", || {
            runs.env.store_fingerprint().1.contains("claims=0")
        });
    }
}

pub(crate) fn poll_pane_text(env: &TestEnv, pane: &str, needle: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let read = env.ok(
            "pane.read",
            json!({"pane_id": pane, "source": "recent", "lines": 200}),
        );
        let text = read["read"]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if text.contains(needle) || std::time::Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn the_session_binds_before_the_turn_completes_and_events_show_the_path() {
    let runs = runs_with(json!([{"text": "hi"}]), &[]);
    runs.env.ok("mission.start", start_params("codex", "r1"));
    wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close",
        status_is("ready_to_close"),
    );
    let waited = runs.env.ok(
        "events.wait",
        json!({"match_event": {"event": "mission", "mission_id": "m1", "kind": "mission_session_bound", "after_seq": 0}, "timeout_ms": 5000}),
    );
    assert_eq!(waited["event"]["data"]["status"], "active");
    let statuses: Vec<String> = (0..40)
        .map_while(|seq| {
            let response = runs.env.call(
                "events.wait",
                json!({"match_event": {"event": "mission", "mission_id": "m1", "after_seq": seq}, "timeout_ms": 200}),
            );
            response.get("result").map(|result| result["event"]["data"]["status"].as_str().unwrap().to_string())
        })
        .collect();
    let mut path: Vec<String> = statuses.clone();
    path.dedup();
    assert_eq!(
        path,
        vec![
            "draft",
            "preparing",
            "active",
            "review_required",
            "ready_to_close"
        ],
        "{statuses:?}"
    );
}

#[test]
fn approvals_and_questions_become_durable_attention_items() {
    let runs = runs_with(
        json!([
            {"approve_command": "rm -rf build"},
            {"ask": {"question": "Which database?", "header": "DB", "options": ["sqlite", "postgres"], "multiple": false}}
        ]),
        &[],
    );
    runs.env.ok("mission.start", start_params("codex", "r1"));
    let mission = wait_for_mission(&runs.env, "m1", "one attention item", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    assert_eq!(mission["status"], "active");
    let items = runs.env.ok("attention.list", json!({"mission_id": "m1"}))["items"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(items.len(), 1);
    let item = &items[0];
    assert_eq!(item["kind"], "permission_request");
    assert_eq!(item["risk"], "high");
    assert!(
        item["requested_action"]
            .as_str()
            .unwrap()
            .contains("rm -rf build"),
        "{item}"
    );
    assert_eq!(item["state"]["state"], "open");
    assert_eq!(item["response_capability"], "reliable");
    assert_eq!(item["source"], "provider_api");
    assert_eq!(item["run_id"], "r1");
    assert!(
        item["attention_id"]
            .as_str()
            .unwrap()
            .starts_with("attention:")
    );
    let got = runs.env.ok(
        "attention.get",
        json!({"attention_id": item["attention_id"]}),
    );
    assert_eq!(got["item"], *item);
    // The public socket cannot answer it, and answering writes nothing.
    let before = runs.env.store_fingerprint();
    let code = runs.env.error_code(
        "mission.respond",
        json!({"mission_id": "m1", "run_id": "r1", "attention_id": item["attention_id"], "decision": "approve_once"}),
    );
    assert_eq!(code, "interactive_consent_required");
    assert_eq!(runs.env.store_fingerprint(), before);
    assert!(
        log_entries(&runs.log)
            .iter()
            .all(|entry| entry["event"] != "decision"),
        "nothing reached the provider"
    );
}

#[test]
fn a_question_is_a_low_risk_provider_question_with_its_options() {
    let runs = runs_with(
        json!([{"ask": {"question": "Which database?", "header": "DB", "options": ["sqlite", "postgres"], "multiple": false}}]),
        &[],
    );
    runs.env
        .ok("mission.start", start_params("claude_code", "r1"));
    wait_for_mission(&runs.env, "m1", "one attention item", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    let item = runs.env.ok("attention.list", json!({}))["items"][0].clone();
    assert_eq!(item["kind"], "provider_question");
    assert_eq!(item["risk"], "low");
    let question = &item["questions"][0];
    assert_eq!(question["prompt"], "Which database?");
    assert_eq!(question["options"].as_array().unwrap().len(), 2);
}

#[test]
fn a_crash_mid_turn_fails_the_run_with_a_readable_reason() {
    let runs = runs_with(json!([{"text": "about to crash"}, "crash"]), &[]);
    runs.env.ok("mission.start", start_params("codex", "r1"));
    let mission = wait_for_mission(&runs.env, "m1", "failed", status_is("failed"));
    let reason = mission["status_reason"].as_str().unwrap();
    assert!(
        reason.contains("stopped unexpectedly") || reason.contains("failed"),
        "{reason}"
    );
    assert!(
        runs.env.store_fingerprint().1.contains("claims=0"),
        "the claim is released"
    );
}

#[test]
fn a_provider_that_exits_at_once_or_prints_garbage_fails_with_a_reason() {
    for startup in ["exit", "garbage_then_crash"] {
        let extra: &[(&str, &str)] = if startup == "exit" {
            &[("NAGI_FAKE_STARTUP", "exit")]
        } else {
            &[("NAGI_FAKE_STARTUP", "crash")]
        };
        let runs = runs_with(json!(["garbage", {"text": "never"}]), extra);
        runs.env.ok("mission.start", start_params("codex", "r1"));
        let mission = wait_for_mission(&runs.env, "m1", "failed", status_is("failed"));
        assert!(
            mission["status_reason"].as_str().unwrap().len() > 10,
            "{mission}"
        );
    }
    let runs = runs_with(json!(["garbage"]), &[]);
    runs.env.ok("mission.start", start_params("codex", "r1"));
    let mission = wait_for_mission(&runs.env, "m1", "failed", status_is("failed"));
    assert!(
        mission["status_reason"]
            .as_str()
            .unwrap()
            .contains("Protocol"),
        "{mission}"
    );
}

#[test]
fn a_read_only_run_cannot_change_the_workspace() {
    let runs = runs_with(
        json!([{"write_file": {"path": "src/lib.rs", "content": "pub fn answer() -> u32 { 0 }\n"}}, {"text": "tried"}]),
        &[],
    );
    let before = std::fs::read(runs.repo.path.join("src/lib.rs")).unwrap();
    runs.env.ok("mission.start", start_params("codex", "r1"));
    let mission = wait_for_mission(&runs.env, "m1", "the end of its checks", |mission| {
        mission["checks"][0]["status"] != "missing"
            && (mission["status"] == "review_required" || mission["status"] == "ready_to_close")
    });
    let after = std::fs::read(runs.repo.path.join("src/lib.rs")).unwrap();
    let enforcement = mission["run"]["enforcement"].as_str().unwrap();
    if enforcement.contains("landlock") {
        assert_eq!(after, before, "Landlock must stop the write");
        let writes: Vec<Value> = log_entries(&runs.log)
            .into_iter()
            .filter(|entry| entry["event"] == "write")
            .collect();
        assert_eq!(writes.len(), 1, "the fake tried once");
        assert_eq!(writes[0]["ok"], false, "{writes:?}");
    }
    if after != before {
        let items = runs.env.ok("attention.list", json!({"mission_id": "m1"}))["items"].clone();
        assert!(
            items
                .as_array()
                .unwrap()
                .iter()
                .any(|item| item["kind"] == "security_warning"),
            "{items}"
        );
    }
}

#[test]
fn without_kernel_confinement_the_digest_guard_catches_a_write() {
    let mut env = TestEnv::new();
    let log = write_config(
        &env,
        &json!([{"write_file": {"path": "src/lib.rs", "content": "changed\n"}}, {"text": "wrote"}]),
        &[],
    );
    let mut config = std::fs::read_to_string(env.config_dir.join("config.toml")).unwrap();
    config = config.replace("[sandbox]\n", "[sandbox]\nlandlock = false\n");
    std::fs::write(env.config_dir.join("config.toml"), config).unwrap();
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok("mission.configure", configure_params("m1", "true", &[]));
    env.ok("mission.start", start_params("codex", "r1"));
    let mission = wait_for_mission(&env, "m1", "review_required with a warning", |mission| {
        mission["status"] == "review_required" && mission["unresolved_attention_count"] == 1
    });
    assert_eq!(
        mission["run"]["enforcement"],
        "provider_sandbox+workspace_digest"
    );
    assert!(
        log_entries(&log)
            .iter()
            .any(|entry| entry["event"] == "write" && entry["ok"] == true),
        "the fake wrote"
    );
    let item = env.ok("attention.list", json!({"mission_id": "m1"}))["items"][0].clone();
    assert_eq!(item["kind"], "security_warning");
    assert_eq!(item["risk"], "critical");
    assert!(
        item["requested_action"]
            .as_str()
            .unwrap()
            .contains("changed during read-only run r1"),
        "{item}"
    );
}

#[test]
fn start_rejects_bad_requests_before_writing_anything() {
    let runs = runs_with(json!([{"text": "x"}]), &[]);
    let env = &runs.env;
    let base = start_params("codex", "r1");
    let rejected = |params: Value, code: &str| {
        let before = env.store_fingerprint();
        assert_eq!(
            env.error_code("mission.start", params.clone()),
            code,
            "{params}"
        );
        assert_eq!(env.store_fingerprint(), before, "{params} wrote something");
    };
    let with = |key: &str, value: Value| {
        let mut params = base.clone();
        params[key] = value;
        params
    };
    rejected(
        with("execute_project_recipe", json!(true)),
        "interactive_consent_required",
    );
    rejected(
        with("provider", json!("acp")),
        "interactive_consent_required",
    );
    rejected(
        with("mode", json!("passthrough")),
        "provider_mode_unavailable",
    );
    rejected(with("mission_id", json!("missing")), "mission_not_found");
    rejected(with("run_id", json!(" ")), "invalid_run");
    rejected(with("run_id", json!("r".repeat(129))), "invalid_run");
    rejected(with("run_id", json!("bad id")), "invalid_mission");
    rejected(
        with("worktree_path", json!("/nonexistent/path")),
        "invalid_repository",
    );
    rejected(
        with(
            "worktree_path",
            json!(runs.repo.path.join("src").to_str().unwrap()),
        ),
        "invalid_repository",
    );
    let other = TestRepo::new();
    rejected(
        with("worktree_path", json!(other.path_text())),
        "invalid_repository",
    );
    rejected(
        with("workspace_write_confirmed", json!(true)),
        "invalid_request",
    );
    rejected(with("provider", json!("gemini")), "invalid_request");
    // A mission without a plan.
    env.ok(
        "mission.create",
        create_params("bare", &runs.repo.path_text()),
    );
    let mut bare = base.clone();
    bare["mission_id"] = json!("bare");
    rejected(bare, "invalid_closure");
}

#[test]
fn a_missing_provider_executable_is_reported_at_once() {
    let mut env = TestEnv::new();
    std::fs::create_dir_all(&env.config_dir).unwrap();
    std::fs::write(
        env.config_dir.join("config.toml"),
        "[providers.codex]\ncommand = [\"/nonexistent/codex\"]\n",
    )
    .unwrap();
    env.env.insert("PATH".into(), "/usr/bin:/bin".into());
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok("mission.configure", configure_params("m1", "true", &[]));
    let before = env.store_fingerprint();
    let response = env.call("mission.start", start_params("codex", "r1"));
    assert_eq!(
        response["error"]["code"], "provider_unavailable",
        "{response}"
    );
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/codex")
    );
    // Not on PATH either.
    let claude = env.call("mission.start", start_params("claude_code", "r1"));
    assert_eq!(claude["error"]["code"], "provider_unavailable");
    assert!(
        claude["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not on PATH")
    );
    assert_eq!(env.store_fingerprint(), before);
}

#[test]
fn a_checkout_claimed_by_another_session_is_refused_until_its_run_ends() {
    // Two servers of one user (two sessions of one config dir) share the checkout locks.
    let runs = runs_with(json!([{"approve_command": "wait here"}]), &[]);
    runs.env.ok("mission.start", start_params("codex", "r1"));
    wait_for_mission(&runs.env, "m1", "active", status_is("active"));
    let other = |args: &[&str]| {
        let mut full = vec!["--session", "other", "--json"];
        full.extend_from_slice(args);
        runs.env.nagi(&full)
    };
    let repo = runs.repo.path_text();
    for args in [
        vec![
            "mission",
            "create",
            "m2",
            "--title",
            "T",
            "--repo",
            &repo,
            "--objective",
            "O",
            "--criterion",
            "C",
        ],
        vec!["mission", "configure", "m2", "--check", "unit=true"],
    ] {
        let run = other(&args);
        assert_eq!(run.status, 0, "{}", run.describe());
    }
    // In the checkout itself: a mission worktree would be a checkout of its own.
    let start_m2 = [
        "mission",
        "start",
        "m2",
        "--provider",
        "codex",
        "--run-id",
        "r2",
        "--in-place",
    ];
    let refused = other(&start_m2);
    assert_eq!(refused.status, 1, "{}", refused.describe());
    assert!(
        refused.stdout.contains("checkout_claimed") || refused.stderr.contains("checkout_claimed"),
        "{}",
        refused.describe()
    );
    let m2 = other(&["mission", "get", "m2"]).json();
    assert_eq!(
        m2["mission"]["status"], "draft",
        "nothing was written: {m2}"
    );

    // Once the first session's run is over, the other session can claim the checkout.
    runs.env.nagi_ok(&["server", "stop"]);
    let started = other(&start_m2);
    assert_eq!(started.status, 0, "{}", started.describe());
    other(&["server", "stop"]);
}

#[test]
fn a_second_mission_on_a_claimed_checkout_is_refused_with_its_own_code() {
    let runs = runs_with(json!([{"approve_command": "wait here"}]), &[]);
    runs.env.ok("mission.start", start_params("codex", "r1"));
    // The first run settles (its approval is open) before the store is fingerprinted, so
    // that only the refused start could change it.
    wait_for_mission(&runs.env, "m1", "waiting on its approval", |mission| {
        mission["status"] == "active" && mission["unresolved_attention_count"] == 1
    });
    runs.env.ok(
        "mission.create",
        create_params("m2", &runs.repo.path_text()),
    );
    runs.env
        .ok("mission.configure", configure_params("m2", "true", &[]));
    let before = runs.env.store_fingerprint();
    let mut params = start_params("codex", "r2");
    params["mission_id"] = json!("m2");
    assert_eq!(
        runs.env.error_code("mission.start", params),
        "checkout_claimed"
    );
    assert_eq!(runs.env.store_fingerprint(), before);
    // A linked worktree of the same repository is another checkout: it can be claimed.
    let linked = runs.repo.add_worktree("linked");
    let mut params = start_params("codex", "r2");
    params["mission_id"] = json!("m2");
    params["worktree_path"] = json!(linked.to_str().unwrap());
    let started = runs.env.ok("mission.start", params);
    assert_eq!(
        started["mission"]["run"]["worktree_path"],
        linked.to_str().unwrap()
    );
}

#[test]
fn a_live_retry_is_idempotent_and_other_parameters_conflict() {
    let runs = runs_with(json!([{"approve_command": "wait here"}]), &[]);
    let first = runs.env.ok("mission.start", start_params("codex", "r1"));
    // Settled: the provider is working and its approval request is recorded, so nothing
    // but the retry could write from here on.
    wait_for_mission(
        &runs.env,
        "m1",
        "active with its approval request",
        |mission| mission["status"] == "active" && mission["unresolved_attention_count"] == 1,
    );
    let before = runs.env.store_fingerprint();
    let again = runs.env.ok("mission.start", start_params("codex", "r1"));
    assert_eq!(
        again["mission"]["run"]["run_id"],
        first["mission"]["run"]["run_id"]
    );
    assert_eq!(
        runs.env.store_fingerprint(),
        before,
        "no second provider, nothing written"
    );
    let mut different = start_params("claude_code", "r1");
    different["execute_declared_checks"] = json!(false);
    assert_eq!(
        runs.env.error_code("mission.start", different),
        "run_conflict"
    );
    // A second start with another run id while the first is live.
    assert_eq!(
        runs.env
            .error_code("mission.start", start_params("codex", "r9")),
        "mission_runtime_error"
    );
}

#[test]
fn two_concurrent_starts_of_the_same_mission_have_exactly_one_winner() {
    let runs = runs_with(json!([{"approve_command": "wait here"}]), &[]);
    let outcomes: Vec<Value> = std::thread::scope(|scope| {
        let handles: Vec<_> = ["ra", "rb"]
            .iter()
            .map(|run_id| {
                let env = &runs.env;
                scope.spawn(move || env.call("mission.start", start_params("codex", run_id)))
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });
    let winners = outcomes
        .iter()
        .filter(|outcome| outcome.get("result").is_some())
        .count();
    assert_eq!(winners, 1, "{outcomes:#?}");
    let loser = outcomes
        .iter()
        .find(|outcome| outcome.get("error").is_some())
        .unwrap();
    let code = loser["error"]["code"].as_str().unwrap();
    assert!(
        ["checkout_claimed", "mission_runtime_error"].contains(&code),
        "{loser}"
    );
    let mission = runs.env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
    assert!(mission.get("run_history").is_none(), "one run only");
}

#[test]
fn a_new_run_after_the_previous_one_ended_keeps_the_history() {
    let runs = runs_with(json!(["crash"]), &[]);
    runs.env.ok("mission.start", start_params("codex", "r1"));
    wait_for_mission(&runs.env, "m1", "failed", status_is("failed"));
    assert_eq!(
        runs.env
            .error_code("mission.start", start_params("codex", "r1")),
        "run_conflict",
        "a used run id"
    );
    runs.env
        .ok("mission.start", start_params("claude_code", "r2"));
    let mission = wait_for_mission(&runs.env, "m1", "failed again", |mission| {
        mission["run"]["run_id"] == "r2" && mission["status"] == "failed"
    });
    assert_eq!(mission["run_history"][0]["run_id"], "r1");
    assert_eq!(mission["run_history"][0]["provider"], "codex");
    assert_eq!(mission["run"]["provider"], "claude_code");
}

#[test]
fn checks_that_fail_are_shown_with_their_exit_code() {
    let mut env = TestEnv::new();
    write_config(&env, &json!([{"text": "ok"}]), &[]);
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok(
        "mission.configure",
        configure_params("m1", "sh", &["-c", "echo nope; exit 3"]),
    );
    env.ok("mission.start", start_params("codex", "r1"));
    let mission = wait_for_mission(&env, "m1", "a failed check", |mission| {
        mission["checks"][0]["status"] == "failed"
            && mission["status_reason"]
                .as_str()
                .is_some_and(|reason| reason.contains("does not verify"))
    });
    assert_eq!(mission["status"], "review_required");
    // The reason names what to do next.
    let reason = mission["status_reason"].as_str().unwrap();
    assert!(
        reason.contains("nagi mission verify m1 --execute-checks")
            && reason.contains("nagi mission start m1 --provider PROVIDER"),
        "{reason}"
    );
    let evidence = &mission["evidence"][0];
    assert_eq!(evidence["exit_code"], 3);
    assert!(evidence["output_tail"].as_str().unwrap().contains("nope"));
}

/// A provider whose start-up hangs (in the security review, Claude Code's own `git status`
/// ran a hostile fsmonitor) no longer leaves the run `preparing` for good: past the start
/// timeout it is stopped and the run fails with that reason.
#[test]
fn a_provider_that_never_starts_its_session_fails_the_run_after_the_start_timeout() {
    for provider in ["claude_code", "codex"] {
        let mut env = TestEnv::new();
        write_config(
            &env,
            &json!([{"text": "never"}]),
            &[("NAGI_FAKE_STARTUP", "hang")],
        );
        let config_file = env.config_dir.join("config.toml");
        let mut config = std::fs::read_to_string(&config_file).unwrap();
        config.push_str("[server]\nprovider_start_timeout_seconds = 2\n");
        std::fs::write(&config_file, config).unwrap();
        env.start_server();
        let repo = TestRepo::new();
        env.ok("mission.create", create_params("m1", &repo.path_text()));
        env.ok("mission.configure", configure_params("m1", "true", &[]));
        env.ok("mission.start", start_params(provider, "r1"));
        let mission = wait_for_mission(
            &env,
            "m1",
            "failed after the start timeout",
            status_is("failed"),
        );
        let reason = mission["status_reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("did not start its session within 2 s"),
            "{provider}: {mission}"
        );
        assert!(
            processes_with_run_marker(&env, "r1").is_empty(),
            "{provider}: the hanging provider was stopped"
        );
    }
}

pub(crate) fn processes_with_run_marker(env: &TestEnv, run_id: &str) -> Vec<i32> {
    let session = session_marker_entry(&env.config_dir);
    let run = format!("NAGI_RUN_ID={run_id}");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
                return false;
            };
            let entries: Vec<&[u8]> = environ.split(|byte| *byte == 0).collect();
            let is_zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z ");
            !is_zombie && entries.contains(&session.as_bytes()) && entries.contains(&run.as_bytes())
        })
        .collect()
}

#[test]
fn a_vendor_cli_outside_the_supported_versions_is_refused_at_start_naming_both() {
    let runs = runs_with(
        json!([{"text": "done"}]),
        &[("NAGI_FAKE_VERSION", "2.1.150 (Claude Code)")],
    );
    let before = runs.env.store_fingerprint();
    let refused = runs
        .env
        .call("mission.start", start_params("claude_code", "r1"));
    assert_eq!(
        refused["error"]["code"], "provider_unavailable",
        "{refused}"
    );
    let message = refused["error"]["message"].as_str().unwrap();
    for shown in [
        "Claude Code 2.1.150",
        "2.1.197 or newer",
        "below 3.0.0",
        "2.1.332",
    ] {
        assert!(message.contains(shown), "{shown:?} missing from {message}");
    }
    // The same line read as a Codex version is past Codex's range.
    let codex = runs.env.call("mission.start", start_params("codex", "r1"));
    assert_eq!(codex["error"]["code"], "provider_unavailable", "{codex}");
    assert!(
        codex["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Codex CLI 2.1.150 "),
        "{codex}"
    );
    // A handoff preview and a consent preview refuse it the same way.
    let preview = runs.env.call(
        "cockpit.preview",
        json!({"action": {"kind": "start_run", "mission_id": "m1", "run_id": "r1", "provider": "claude_code", "write_scope": true}}),
    );
    assert_eq!(
        preview["error"]["code"], "provider_unavailable",
        "{preview}"
    );
    assert_eq!(runs.env.store_fingerprint(), before, "nothing was written");
    assert!(
        log_entries(&runs.log).is_empty(),
        "no provider session was started"
    );
    // An ACP agent has no version range: its start can be previewed.
    runs.env.ok(
        "cockpit.preview",
        json!({"action": {"kind": "start_run", "mission_id": "m1", "run_id": "r1", "provider": "acp", "write_scope": true}}),
    );
}

#[test]
fn a_vendor_cli_that_prints_no_version_is_refused_with_what_it_said() {
    let runs = runs_with(
        json!([{"text": "done"}]),
        &[("NAGI_FAKE_VERSION", "unknown option: --version")],
    );
    let refused = runs
        .env
        .call("mission.start", start_params("open_code", "r1"));
    assert_eq!(
        refused["error"]["code"], "provider_unavailable",
        "{refused}"
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("gave no OpenCode version"), "{message}");
    assert!(message.contains("unknown option: --version"), "{message}");
    assert!(message.contains("OpenCode 1.18.33 or newer"), "{message}");
}

/// A run's `TMPDIR` is a folder of its own, removed when the run ends; a server removes
/// the scratch folders a killed server of its session left. (Before, every run left its
/// folder in `/tmp`: about 11 MB each for OpenCode.)
#[test]
fn a_runs_scratch_folder_is_removed_when_it_ends_and_left_ones_at_restart() {
    let mut runs = runs_with(
        json!([{"text": "done"}]),
        &[("NAGI_FAKE_LOG_ENV", "TMPDIR")],
    );
    runs.env.ok("mission.start", start_params("codex", "r1"));
    wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close",
        status_is("ready_to_close"),
    );
    let started = log_entries(&runs.log)
        .into_iter()
        .find(|entry| entry["event"] == "started")
        .expect("the fake logged its start");
    let scratch = std::path::PathBuf::from(started["env"]["TMPDIR"].as_str().unwrap());
    let temp = std::env::temp_dir();
    assert!(
        scratch.starts_with(&temp) && scratch.ends_with("tmp"),
        "the run's TMPDIR: {}",
        scratch.display()
    );
    let run_folder = scratch.parent().unwrap().to_path_buf();
    let session_root = run_folder.parent().unwrap().to_path_buf();
    crate::panes::eventually("the run's scratch folder is removed", || {
        !run_folder.exists()
    });

    // What a server killed mid-run would leave: a run folder with files in it.
    let left = session_root.join("0123456789abcdef").join("tmp");
    std::fs::create_dir_all(left.join("lib")).unwrap();
    std::fs::write(left.join("lib/unpacked.so"), vec![0u8; 64 * 1024]).unwrap();
    runs.env.kill_server();
    runs.env.start_server();
    assert!(
        !session_root.exists(),
        "{} is left after a restart",
        session_root.display()
    );
    // A server that stops removes the session's folder after its providers.
    std::fs::create_dir_all(&left).unwrap();
    runs.env.signal_server(libc::SIGTERM);
    assert!(
        !session_root.exists(),
        "{} is left after the server stopped",
        session_root.display()
    );
}
