//! Every rule of contract §2.1–§2.4, §2.6, §2.10 and §2.11 over the real socket. Every
//! rejected request leaves the store byte-for-byte unchanged.

use nagi_tests::*;
use serde_json::{Value, json};

struct Session {
    env: TestEnv,
    repo: TestRepo,
}

fn session() -> Session {
    let mut env = TestEnv::new();
    env.start_server();
    Session {
        env,
        repo: TestRepo::new(),
    }
}

impl Session {
    fn create(&self, mission_id: &str) -> Value {
        self.env.ok(
            "mission.create",
            create_params(mission_id, &self.repo.path_text()),
        )
    }

    /// Sends a request that must fail with `code` and write nothing.
    fn rejected(&self, method: &str, params: Value, code: &str) {
        let before = self.env.store_fingerprint();
        let got = self.env.error_code(method, params.clone());
        assert_eq!(got, code, "{method} {params}");
        assert_eq!(
            self.env.store_fingerprint(),
            before,
            "{method} {params} wrote something"
        );
    }
}

fn with(mut params: Value, key: &str, value: Value) -> Value {
    params[key] = value;
    params
}

#[test]
fn create_makes_a_draft_with_criterion_ids_and_is_idempotent() {
    let s = session();
    let result = s.create("m1");
    assert_eq!(result["type"], "mission_created");
    assert_eq!(result["created"], true);
    let mission = &result["mission"];
    assert_eq!(mission["status"], "draft");
    assert_eq!(mission["closure_configured"], false);
    assert_eq!(mission["declared_check_count"], 0);
    assert_eq!(mission["details_available"], true);
    assert_eq!(mission["unresolved_attention_count"], 0);
    assert!(mission.get("run").is_none() && mission.get("run_history").is_none());
    assert_eq!(
        mission["criteria"][0]["criterion_id"],
        "d47bab29c48399fb5e9864cea6c2a9b2f2ec8687527116a09fcb5f7f522e61db"
    );
    assert_eq!(
        mission["criteria"][1]["criterion_id"],
        "997f65b84cf2fa8ffde6837741fbb82fb790a684fada116052190bf978cddcfa"
    );
    assert_eq!(mission["criteria"][0]["coverage"], "uncovered");
    assert_eq!(mission["repository_path"], s.repo.path_text());

    let before = s.env.store_fingerprint();
    let again = s.create("m1");
    assert_eq!(again["created"], false);
    assert_eq!(
        again["mission"], result["mission"],
        "an identical repeat returns the same view"
    );
    assert_eq!(s.env.store_fingerprint(), before);
}

#[test]
fn create_resolves_symlinks_and_relative_paths_to_the_canonical_root() {
    let s = session();
    let link = s.repo.path.parent().unwrap().join("link-to-repo");
    std::os::unix::fs::symlink(&s.repo.path, &link).unwrap();
    let result = s.env.ok(
        "mission.create",
        create_params("via-link", link.to_str().unwrap()),
    );
    assert_eq!(result["mission"]["repository_path"], s.repo.path_text());
    // The same mission through the canonical path is an idempotent repeat.
    assert_eq!(
        s.env.ok(
            "mission.create",
            create_params("via-link", &s.repo.path_text())
        )["created"],
        false
    );
}

#[test]
fn create_rejects_a_different_definition_of_an_existing_id() {
    let s = session();
    s.create("m1");
    let base = create_params("m1", &s.repo.path_text());
    s.rejected(
        "mission.create",
        with(base.clone(), "title", json!("Other title")),
        "mission_conflict",
    );
    s.rejected(
        "mission.create",
        with(base.clone(), "objective", json!("Other objective")),
        "mission_conflict",
    );
    s.rejected(
        "mission.create",
        with(
            base.clone(),
            "acceptance_criteria",
            json!(["Redirect test passes"]),
        ),
        "mission_conflict",
    );
    let other = TestRepo::new();
    s.rejected(
        "mission.create",
        with(base, "repository_path", json!(other.path_text())),
        "mission_conflict",
    );
}

#[test]
fn create_checks_the_repository_before_anything_else() {
    let s = session();
    let base = create_params("m1", &s.repo.path_text());
    let missing = s.repo.path.join("does-not-exist");
    s.rejected(
        "mission.create",
        with(
            base.clone(),
            "repository_path",
            json!(missing.to_str().unwrap()),
        ),
        "invalid_repository",
    );
    let not_git = tempfile::tempdir().unwrap();
    s.rejected(
        "mission.create",
        with(
            base.clone(),
            "repository_path",
            json!(not_git.path().to_str().unwrap()),
        ),
        "invalid_repository",
    );
    let inside = s.repo.path.join("src");
    s.rejected(
        "mission.create",
        with(
            base.clone(),
            "repository_path",
            json!(inside.to_str().unwrap()),
        ),
        "invalid_repository",
    );
    let file = s.repo.path.join("README.md");
    s.rejected(
        "mission.create",
        with(
            base.clone(),
            "repository_path",
            json!(file.to_str().unwrap()),
        ),
        "invalid_repository",
    );
    // A bad id with a bad path is a repository error (the repository is checked first).
    let bad_both = with(
        with(base, "mission_id", json!("../escape")),
        "repository_path",
        json!("/nonexistent/x"),
    );
    s.rejected("mission.create", bad_both, "invalid_repository");
}

#[test]
fn create_validates_every_field_with_invalid_mission() {
    let s = session();
    let base = create_params("m1", &s.repo.path_text());
    let cases: Vec<(&str, Value)> = vec![
        ("mission_id", json!("")),
        ("mission_id", json!("../escape")),
        ("mission_id", json!("has space")),
        ("mission_id", json!("a".repeat(129))),
        ("title", json!("")),
        ("title", json!("   ")),
        ("title", json!("t".repeat(257))),
        ("title", json!("é".repeat(129))),
        ("title", json!("bell\u{7}")),
        ("objective", json!("")),
        ("objective", json!("o".repeat(8193))),
        ("objective", json!("nul\u{0}")),
        ("acceptance_criteria", json!([])),
        ("acceptance_criteria", json!(vec!["c"; 17])),
        ("acceptance_criteria", json!(["ok", " "])),
        ("acceptance_criteria", json!(["c".repeat(1025)])),
        ("acceptance_criteria", json!(["esc\u{1b}[31m"])),
    ];
    for (field, value) in cases {
        s.rejected(
            "mission.create",
            with(base.clone(), field, value),
            "invalid_mission",
        );
    }
    // Limits ±1: exactly at the limit is accepted.
    let at_limits = json!({
        "mission_id": "a".repeat(128),
        "title": "t".repeat(256),
        "repository_path": s.repo.path_text(),
        "objective": "o".repeat(8192),
        "acceptance_criteria": vec!["c".repeat(1024); 16],
    });
    assert_eq!(s.env.ok("mission.create", at_limits)["created"], true);
    // Tabs and newlines are fine in texts.
    assert_eq!(
        s.env.ok(
            "mission.create",
            with(base, "objective", json!("line one\n\tline two\r\n"))
        )["created"],
        true
    );
}

#[test]
fn create_ignores_unknown_fields() {
    let s = session();
    let params = with(
        create_params("m1", &s.repo.path_text()),
        "surprise",
        json!({"nested": true}),
    );
    assert_eq!(s.env.ok("mission.create", params)["created"], true);
}

#[test]
fn list_orders_by_id_in_byte_order_and_omits_objectives() {
    let s = session();
    for id in ["b", "a", "B", "a.1", "_x"] {
        s.create(id);
    }
    let result = s.env.ok("mission.list", json!({"ignored": 1}));
    assert_eq!(result["type"], "mission_list");
    let ids: Vec<&str> = result["missions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["mission_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["B", "_x", "a", "a.1", "b"]);
    let first = &result["missions"][0];
    assert!(first.get("objective").is_none() && first.get("schema_version").is_none());
    assert_eq!(first["status"], "draft");
    assert_eq!(first["unresolved_attention_count"], 0);
}

#[test]
fn get_checks_the_id_syntax_before_existence() {
    let s = session();
    s.create("m1");
    assert_eq!(
        s.env.ok("mission.get", json!({"mission_id": "m1"}))["type"],
        "mission_info"
    );
    s.rejected(
        "mission.get",
        json!({"mission_id": "../escape"}),
        "invalid_mission",
    );
    s.rejected("mission.get", json!({"mission_id": ""}), "invalid_mission");
    s.rejected(
        "mission.get",
        json!({"mission_id": "nope"}),
        "mission_not_found",
    );
    s.rejected("mission.get", json!({}), "invalid_request");
    s.rejected("mission.get", json!({"mission_id": 5}), "invalid_request");
}

fn command_check(id: &str, covers: Value) -> Value {
    json!({"kind": "command", "id": id, "program": "true", "args": [], "cwd": ".", "relevant_paths": [],
           "required_artifacts": [], "required": true, "covers": covers})
}

fn manual_check(id: &str, covers: Value) -> Value {
    json!({"kind": "manual", "id": id, "reviewers": ["alice"], "required": true, "covers": covers})
}

#[test]
fn configure_freezes_the_plan_and_reports_coverage() {
    let s = session();
    s.create("m1");
    let params = json!({"mission_id": "m1", "checks": [command_check("unit", json!([0])), manual_check("review", json!([1, 1]))]});
    let result = s.env.ok("mission.configure", params.clone());
    assert_eq!(result["type"], "mission_configured");
    assert_eq!(result["configured"], true);
    let mission = &result["mission"];
    assert_eq!(mission["closure_configured"], true);
    assert_eq!(mission["declared_check_count"], 2);
    assert_eq!(mission["checks"][0]["status"], "missing");
    assert_eq!(mission["checks"][1]["status"], "manual_missing");
    assert_eq!(
        mission["checks"][1]["covered_criterion_ids"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "duplicates collapse"
    );
    assert_eq!(mission["criteria"][0]["coverage"], "covered");
    assert_eq!(
        mission["criteria"][0]["required_check_ids"],
        json!(["unit"])
    );
    assert_eq!(
        mission["criteria"][1]["required_check_ids"],
        json!(["review"])
    );

    // The same set in another order is an idempotent repeat, and the stored order is kept.
    let before = s.env.store_fingerprint();
    let reordered = json!({"mission_id": "m1", "checks": [manual_check("review", json!([1])), command_check("unit", json!([0]))]});
    let again = s.env.ok("mission.configure", reordered);
    assert_eq!(again["configured"], false);
    assert_eq!(again["mission"]["checks"][0]["check_id"], "unit");
    assert_eq!(s.env.store_fingerprint(), before);
    // A different plan conflicts.
    s.rejected(
        "mission.configure",
        json!({"mission_id": "m1", "checks": [command_check("unit", json!([0, 1]))]}),
        "mission_conflict",
    );
}

#[test]
fn configure_rejects_every_invalid_plan_with_invalid_closure() {
    let s = session();
    s.create("m1");
    let plan = |checks: Value| json!({"mission_id": "m1", "checks": checks});
    let mut optional_only = command_check("unit", json!([0, 1]));
    optional_only["required"] = json!(false);
    let mut bad_cwd = command_check("unit", json!([0, 1]));
    bad_cwd["cwd"] = json!("../outside");
    let mut absolute_artifact = command_check("unit", json!([0, 1]));
    absolute_artifact["required_artifacts"] = json!(["/tmp/report.json"]);
    let mut root_exact = command_check("unit", json!([0, 1]));
    root_exact["relevant_paths"] = json!([{"type": "exact", "path": "./"}]);
    let mut windows_prefix = command_check("unit", json!([0, 1]));
    windows_prefix["relevant_paths"] = json!([{"type": "prefix", "prefix": "C:\\src"}]);
    let mut blank_program = command_check("unit", json!([0, 1]));
    blank_program["program"] = json!("  ");
    let mut nul_arg = command_check("unit", json!([0, 1]));
    nul_arg["args"] = json!(["a\u{0}b"]);
    let mut too_many_args = command_check("unit", json!([0, 1]));
    too_many_args["args"] = json!(vec!["a"; 129]);
    let mut no_reviewers = manual_check("review", json!([0, 1]));
    no_reviewers["reviewers"] = json!([]);
    let mut bad_reviewer = manual_check("review", json!([0, 1]));
    bad_reviewer["reviewers"] = json!(["not ok"]);
    let mut bad_id = command_check("unit", json!([0, 1]));
    bad_id["id"] = json!("bad id");
    let mut too_many_rules = command_check("unit", json!([0, 1]));
    too_many_rules["relevant_paths"] = json!(vec![json!({"type": "all"}); 65]);
    let cases = vec![
        plan(json!([command_check("unit", json!([0, 2]))])),
        plan(json!([command_check("unit", json!([0]))])),
        plan(json!([optional_only])),
        plan(json!([
            command_check("unit", json!([0, 1])),
            command_check("unit", json!([0]))
        ])),
        plan(json!([])),
        plan(json!(
            (0..33)
                .map(|i| command_check(&format!("c{i}"), json!([0, 1])))
                .collect::<Vec<_>>()
        )),
        plan(json!([bad_cwd])),
        plan(json!([absolute_artifact])),
        plan(json!([root_exact])),
        plan(json!([windows_prefix])),
        plan(json!([blank_program])),
        plan(json!([nul_arg])),
        plan(json!([too_many_args])),
        plan(json!([no_reviewers])),
        plan(json!([bad_reviewer])),
        plan(json!([bad_id])),
        plan(json!([too_many_rules])),
    ];
    for params in cases {
        s.rejected("mission.configure", params, "invalid_closure");
    }
    // Exactly 32 checks is fine.
    let full = plan(json!(
        (0..32)
            .map(|i| command_check(&format!("c{i}"), json!([0, 1])))
            .collect::<Vec<_>>()
    ));
    assert_eq!(
        s.env.ok("mission.configure", full)["mission"]["declared_check_count"],
        32
    );
}

#[test]
fn configure_on_a_missing_mission_is_not_found_even_with_a_malformed_id() {
    let s = session();
    s.rejected(
        "mission.configure",
        json!({"mission_id": "nope", "checks": [command_check("u", json!([0]))]}),
        "mission_not_found",
    );
    s.rejected(
        "mission.configure",
        json!({"mission_id": "../x", "checks": [command_check("u", json!([0]))]}),
        "mission_not_found",
    );
    s.rejected(
        "mission.configure",
        json!({"mission_id": "m1", "checks": [{"kind": "shell", "id": "x"}]}),
        "invalid_request",
    );
    s.rejected(
        "mission.configure",
        json!({"mission_id": "m1", "checks": [{"kind": "command", "id": "x"}]}),
        "invalid_request",
    );
}

#[test]
fn configure_normalises_paths() {
    let s = session();
    s.create("m1");
    let mut check = command_check("unit", json!([0, 1]));
    check["cwd"] = json!("./crates//core/");
    check["relevant_paths"] =
        json!([{"type": "prefix", "prefix": "./"}, {"type": "exact", "path": "./src//lib.rs/"}]);
    s.env.ok(
        "mission.configure",
        json!({"mission_id": "m1", "checks": [check.clone()]}),
    );
    // The normalised form is the same declaration: an idempotent repeat.
    check["cwd"] = json!("crates/core");
    check["relevant_paths"] = json!([{"type": "exact", "path": "src/lib.rs"}, {"type": "all"}]);
    assert_eq!(
        s.env.ok(
            "mission.configure",
            json!({"mission_id": "m1", "checks": [check]})
        )["configured"],
        false
    );
}

#[test]
fn respond_on_the_public_socket_always_needs_the_cockpit_and_writes_nothing() {
    let s = session();
    s.create("m1");
    let params = json!({"mission_id": "m1", "run_id": "r1", "attention_id": "attention:x", "decision": "approve_once"});
    s.rejected(
        "mission.respond",
        params.clone(),
        "interactive_consent_required",
    );
    s.rejected(
        "mission.respond",
        with(params.clone(), "decision", json!("answer")),
        "interactive_consent_required",
    );
    s.rejected(
        "mission.respond",
        with(params.clone(), "mission_id", json!("missing")),
        "interactive_consent_required",
    );
    s.rejected(
        "mission.respond",
        with(params.clone(), "decision", json!("allow_for_mission")),
        "invalid_request",
    );
    s.rejected(
        "mission.respond",
        with(params, "forged_actor", json!("local-user")),
        "invalid_request",
    );
}

#[test]
fn close_follows_its_status_rules() {
    let s = session();
    s.create("m1");
    s.rejected(
        "mission.close",
        json!({"mission_id": "m1"}),
        "mission_not_ready",
    );
    s.rejected(
        "mission.close",
        json!({"mission_id": "missing"}),
        "mission_not_found",
    );
    s.rejected(
        "mission.close",
        json!({"mission_id": "../bad"}),
        "mission_not_found",
    );
}

#[test]
fn attention_companions_answer_for_empty_and_missing_items() {
    let s = session();
    s.create("m1");
    let list = s.env.ok("attention.list", json!({}));
    assert_eq!(list, json!({"type": "attention_list", "items": []}));
    assert_eq!(
        s.env.ok(
            "attention.list",
            json!({"mission_id": "m1", "include_closed": true})
        )["items"],
        json!([])
    );
    s.rejected(
        "attention.get",
        json!({"attention_id": "attention:nope"}),
        "attention_not_found",
    );
    s.rejected("attention.get", json!({}), "invalid_request");
}

/// The CLI speaks in its own flags, not in wire fields: a verify without consent names
/// `--execute-checks` (and keeps the stable code), and a provider the CLI cannot start is
/// refused by the CLI itself with its choices, before anything reaches the server.
#[test]
fn the_cli_names_its_own_flags_and_provider_choices() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    let refused = env.nagi(&["mission", "verify", "m1"]);
    let said = format!("{}{}", refused.stdout, refused.stderr);
    assert_ne!(refused.status, 0, "{}", refused.describe());
    assert!(
        said.contains("interactive_consent_required"),
        "{}",
        refused.describe()
    );
    assert!(
        said.contains("nagi mission verify m1 --execute-checks"),
        "{}",
        refused.describe()
    );
    assert!(
        !said.contains("execute_declared_checks"),
        "{}",
        refused.describe()
    );

    let before = env.store_fingerprint();
    let unknown = env.nagi(&["mission", "start", "m1", "--provider", "gemini"]);
    assert_eq!(unknown.status, 2, "a usage error: {}", unknown.describe());
    assert!(unknown.stderr.contains("codex"), "{}", unknown.describe());
    assert!(
        unknown.stderr.contains("claude_code"),
        "{}",
        unknown.describe()
    );
    assert!(
        !unknown.stderr.contains("invalid_request"),
        "{}",
        unknown.describe()
    );
    assert_eq!(env.store_fingerprint(), before, "nothing was written");

    // `claude` and `opencode` are accepted as the names people type; the start goes on to the
    // server (which then finds no Claude Code configured here, or starts it).
    let aliased = env.nagi(&["mission", "handoff", "preview", "m1", "--to", "claude"]);
    assert!(
        !aliased.stderr.contains("invalid value"),
        "claude is a provider name the CLI accepts: {}",
        aliased.describe()
    );
}

#[test]
fn a_mission_with_a_frozen_typo_can_be_abandoned_and_keeps_its_history() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("t4", &repo.path_text()));
    env.nagi_ok(&["mission", "configure", "t4", "--check", "tests=maek test"]);
    let before = env.store_fingerprint();
    let blank = env.call(
        "mission.abandon",
        json!({"mission_id": "t4", "reason": "  "}),
    );
    assert_eq!(blank["error"]["code"], "invalid_mission", "{blank}");
    let unknown = env.call(
        "mission.abandon",
        json!({"mission_id": "nope", "reason": "x"}),
    );
    assert_eq!(unknown["error"]["code"], "mission_not_found", "{unknown}");
    assert_eq!(env.store_fingerprint(), before, "refusals write nothing");

    let abandoned = env.nagi_ok(&[
        "mission",
        "abandon",
        "t4",
        "--reason",
        "the check has a typo",
    ]);
    assert!(
        abandoned.stdout.contains("[archived]"),
        "{}",
        abandoned.describe()
    );
    assert!(
        abandoned
            .stdout
            .contains("abandoned   the check has a typo"),
        "{}",
        abandoned.describe()
    );
    let view = env.ok("mission.get", json!({"mission_id": "t4"}))["mission"].clone();
    assert_eq!(view["status"], "archived");
    assert_eq!(view["abandoned_reason"], "the check has a typo");
    assert_eq!(
        view["checks"][0]["check_id"], "tests",
        "the plan stays in its history"
    );
    let again = env.call(
        "mission.abandon",
        json!({"mission_id": "t4", "reason": "again"}),
    );
    assert_eq!(again["error"]["code"], "mission_not_ready", "{again}");
    // Hidden from the default list like any archived mission.
    let listed = env.nagi_ok(&["mission", "list"]);
    assert!(!listed.stdout.contains("t4"), "{}", listed.describe());
}

#[test]
fn abandoning_a_mission_with_a_live_run_stops_it_and_frees_the_checkout() {
    let mut env = TestEnv::new();
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let log = fake_log_path(&env);
    std::fs::write(
        env.config_dir.join("config.toml"),
        format!(
            "[providers.codex]\ncommand = [{}]\nenv = {{ NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {} }}\n\n{}",
            toml_string(test_binary("fake_codex").to_str().unwrap()),
            toml_string(&json!([{"approve_command": "wait here"}]).to_string()),
            toml_string(log.to_str().unwrap()),
            fake_sandbox_section(&env)
        ),
    )
    .unwrap();
    env.start_server();
    let repo = TestRepo::new();
    for id in ["m1", "m2"] {
        env.ok("mission.create", create_params(id, &repo.path_text()));
        env.ok("mission.configure", configure_params(id, "true", &[]));
    }
    env.ok(
        "mission.start",
        json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed"}),
    );
    wait_for_mission(&env, "m1", "waiting on its approval", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    let abandoned = env.ok(
        "mission.abandon",
        json!({"mission_id": "m1", "reason": "wrong approach"}),
    );
    assert_eq!(abandoned["mission"]["status"], "archived", "{abandoned}");
    assert_eq!(abandoned["mission"]["run"]["live"], false, "{abandoned}");
    assert_eq!(
        abandoned["mission"]["unresolved_attention_count"], 0,
        "its open item was closed"
    );
    // The checkout it held is free for the next mission at once.
    let started = env.ok(
        "mission.start",
        json!({"mission_id": "m2", "run_id": "r2", "provider": "codex", "mode": "managed"}),
    );
    assert_eq!(started["type"], "mission_run_started", "{started}");
}

#[test]
fn a_mission_blocked_by_its_checks_is_verified_again_once_fixed() {
    let mut env = TestEnv::new();
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let log = fake_log_path(&env);
    std::fs::write(
        env.config_dir.join("config.toml"),
        format!(
            "[providers.codex]\ncommand = [{}]\nenv = {{ NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {} }}\n\n{}",
            toml_string(test_binary("fake_codex").to_str().unwrap()),
            toml_string(&json!([{"text": "looked"}]).to_string()),
            toml_string(log.to_str().unwrap()),
            fake_sandbox_section(&env)
        ),
    )
    .unwrap();
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok(
        "mission.configure",
        configure_params("m1", "test", &["-f", "README.md"]),
    );
    env.ok(
        "mission.start",
        json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed",
               "execute_declared_checks": true}),
    );
    wait_for_mission(&env, "m1", "ready to close", |mission| {
        mission["status"] == "ready_to_close"
    });
    // The file the check needs goes away: closing re-verifies, fails, and blocks.
    std::fs::rename(repo.path.join("README.md"), repo.path.join("README.bak")).unwrap();
    env.ok("mission.close", json!({"mission_id": "m1"}));
    let blocked = wait_for_mission(&env, "m1", "blocked by the close", |mission| {
        mission["status"] == "blocked" && mission["checks_running"].is_null()
    });
    assert!(
        blocked["status_reason"]
            .as_str()
            .unwrap()
            .contains("close re-verification failed"),
        "{blocked}"
    );
    // Fixed by hand, the mission is verified again without a new agent run.
    std::fs::rename(repo.path.join("README.bak"), repo.path.join("README.md")).unwrap();
    let verified = env.nagi_ok(&["mission", "verify", "m1", "--execute-checks"]);
    assert!(
        verified.stdout.contains("review_required") || verified.stdout.contains("verif"),
        "{}",
        verified.describe()
    );
    let ready = wait_for_mission(&env, "m1", "ready again", |mission| {
        mission["status"] == "ready_to_close"
    });
    assert_eq!(ready["run"]["run_id"], "r1", "no new run was needed");
    assert_eq!(
        log_entries(&log)
            .iter()
            .filter(|entry| entry["event"] == "started")
            .count(),
        1
    );
}

/// A draft with a typo in its frozen plan is deleted, and its id names a new mission; a
/// mission that ran cannot be deleted (the refusal says to abandon it) and nothing changes.
#[test]
fn a_draft_that_never_ran_can_be_deleted_and_its_id_reused() {
    let s = session();
    s.create("typo");
    s.env.ok(
        "mission.configure",
        configure_params("typo", "maek", &["test"]),
    );
    let mut events =
        crate::panes::subscribe(&s.env, json!([{"type": "mission", "mission_id": "typo"}]));
    let deleted = s.env.nagi_ok(&["mission", "delete", "typo"]);
    assert!(
        deleted.stdout.contains("its id is free again"),
        "{}",
        deleted.stdout
    );
    let seen = crate::panes::next_event(&mut events, |event| {
        event["data"]["kind"] == "mission_deleted" || event["event"] == "mission_deleted"
    });
    assert_eq!(seen["data"]["mission_id"], "typo", "{seen}");
    assert_eq!(
        s.env
            .error_code("mission.get", json!({"mission_id": "typo"})),
        "mission_not_found"
    );
    let listed = s.env.ok("mission.list", json!({}));
    assert!(!listed.to_string().contains("\"typo\""), "{listed}");
    // The id is free: a different mission may take it.
    let mut again = create_params("typo", &s.repo.path_text());
    again["title"] = json!("Fix the typo properly");
    let recreated = s.env.ok("mission.create", again);
    assert_eq!(recreated["created"], true);
    assert_eq!(recreated["mission"]["title"], "Fix the typo properly");
    assert_eq!(recreated["mission"]["closure_configured"], false);
    // The same after a restart: the projection and the log agree.
    let mut env = s.env;
    env.kill_server();
    env.start_server();
    let after = env.ok("mission.get", json!({"mission_id": "typo"}));
    assert_eq!(after["mission"]["title"], "Fix the typo properly");
    // A mission past its draft is refused, and nothing is written.
    let s = Session { env, repo: s.repo };
    s.env.ok(
        "mission.abandon",
        json!({"mission_id": "typo", "reason": "not needed"}),
    );
    s.rejected(
        "mission.delete",
        json!({"mission_id": "typo"}),
        "mission_not_draft",
    );
    let refused = s.env.nagi(&["mission", "delete", "typo"]);
    assert_eq!(refused.status, 1);
    assert!(
        refused.stderr.contains("nagi mission abandon typo"),
        "{}",
        refused.stderr
    );
    s.rejected(
        "mission.delete",
        json!({"mission_id": "nope"}),
        "mission_not_found",
    );
    s.rejected(
        "mission.delete",
        json!({"mission_id": "../x"}),
        "invalid_mission",
    );
}
