//! Runs that execute the project recipe (contract §11 "Execution semantics", §7.2, §9),
//! approved over the cockpit channel by the test process (the server's parent, so a
//! legitimate consent peer): setup and services before the provider, failures that leave
//! nothing behind, cleanup on archive, and services adopted after a SIGKILLed server.

use std::path::Path;

use nagi_tests::*;
use serde_json::{Value, json};

/// Points every provider at its fake with `script`; the fake logs `WEB_PORT` it was given.
fn configure_fakes(env: &TestEnv, script: &Value) -> std::path::PathBuf {
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let log = fake_log_path(env);
    let fake_env = format!(
        "NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {}, NAGI_FAKE_LOG_ENV = \"WEB_PORT\"",
        toml_string(&script.to_string()),
        toml_string(log.to_str().unwrap())
    );
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

/// `(service_id, port, pid)` of every port lease in the store.
fn lease_rows(env: &TestEnv) -> Vec<(String, i64, Option<i64>)> {
    let connection = rusqlite::Connection::open_with_flags(
        env.database_path(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut statement = connection
        .prepare("SELECT service_id, port, pid FROM port_leases ORDER BY service_id")
        .unwrap();
    statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn process_is_running(pid: i64) -> bool {
    !process_is_gone(pid as i32)
}

/// Pids of service processes (they carry `NAGI_SERVICE_LEASE`) whose cwd is `root`.
fn service_processes_in(root: &Path) -> Vec<u32> {
    let root = std::fs::canonicalize(root).unwrap();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let marked = environ
            .split(|byte| *byte == 0)
            .any(|variable| variable.starts_with(b"NAGI_SERVICE_LEASE="));
        if marked && cwd.as_deref() == Some(root.as_path()) && process_is_running(i64::from(pid)) {
            pids.push(pid);
        }
    }
    pids
}

/// Services are detached from the server on purpose (a restarted server adopts them), so a
/// test ends the ones its store still leases itself, even when it fails.
pub struct StopServicesOnDrop<'a>(pub &'a TestEnv);

impl Drop for StopServicesOnDrop<'_> {
    fn drop(&mut self) {
        if !self.0.database_path().exists() {
            return;
        }
        for (_, _, pid) in lease_rows(self.0) {
            if let Some(pid) = pid.filter(|pid| *pid > 1) {
                // SAFETY: signalling the process group of a service this test started.
                unsafe {
                    libc::kill(-(pid as i32), libc::SIGKILL);
                }
            }
        }
    }
}

/// Ends one service's process group when the test ends (the server may be restarting).
struct KillGroupOnDrop(i64);

impl Drop for KillGroupOnDrop {
    fn drop(&mut self) {
        if self.0 > 1 {
            // SAFETY: signalling the process group of a service this test started.
            unsafe {
                libc::kill(-(self.0 as i32), libc::SIGKILL);
            }
        }
    }
}

struct Session {
    env: TestEnv,
    repo: TestRepo,
    log: std::path::PathBuf,
}

fn session(script: Value, recipe: &str) -> Session {
    let mut env = TestEnv::new();
    let log = configure_fakes(&env, &script);
    env.start_server();
    let repo = TestRepo::new();
    repo.write(".nagi/project.toml", recipe);
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok(
        "mission.configure",
        configure_params("m1", "test", &["-f", "README.md"]),
    );
    Session { env, repo, log }
}

fn start_action() -> Value {
    json!({"kind": "start_run", "mission_id": "m1", "run_id": "r1", "provider": "codex",
           "write_scope": true, "execute_project_recipe": true, "execute_declared_checks": true})
}

/// Previews and approves the recipe start; returns the raw `cockpit.decide` response.
fn approve_start(env: &TestEnv) -> Value {
    let action = start_action();
    let preview = env.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
    env.call(
        "cockpit.decide",
        json!({"action": action, "shown_digest": preview["digest"], "decision": "approve"}),
    )
}

const WEB_SERVICE: &str = r#"[services.web]
command = ["sh", "-c", "exec python3 -m http.server --bind 127.0.0.1 \"$WEB_PORT\""]
port_env = "WEB_PORT"
health = "http://127.0.0.1:{port}/"
timeout_seconds = 30
"#;

#[test]
fn a_failing_setup_refuses_the_start_and_leaves_nothing_running() {
    let recipe = format!(
        "schema = 1\n[setup]\ncommand = [\"sh\", \"-c\", \"echo compiling; echo 'missing dependency libfoo' >&2; exit 7\"]\n{WEB_SERVICE}"
    );
    let s = session(json!([{"text": "done"}]), &recipe);
    let _services = StopServicesOnDrop(&s.env);
    let decided = approve_start(&s.env);
    assert_eq!(
        decided["error"]["code"], "project_recipe_failed",
        "{decided}"
    );
    let message = decided["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("exited with code 7"), "{message}");
    assert!(message.contains("missing dependency libfoo"), "{message}");
    let mission = s.env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
    assert_eq!(mission["status"], "failed", "{mission}");
    assert!(lease_rows(&s.env).is_empty(), "no port stays leased");
    assert!(
        service_processes_in(&s.repo.path).is_empty(),
        "no service started"
    );
    assert!(log_entries(&s.log).is_empty(), "the provider never started");
}

#[test]
fn a_service_that_exits_early_fails_the_start_and_stops_the_healthy_one() {
    // `a_web` comes up healthy first; `b_broken` exits before answering.
    let recipe = format!(
        "schema = 1\n{}\n[services.b_broken]\ncommand = [\"sh\", \"-c\", \"echo no config >&2; exit 4\"]\nport_env = \"BROKEN_PORT\"\nhealth = \"http://127.0.0.1:{{port}}/\"\n",
        WEB_SERVICE.replace("[services.web]", "[services.a_web]")
    );
    let s = session(json!([{"text": "done"}]), &recipe);
    let _services = StopServicesOnDrop(&s.env);
    let decided = approve_start(&s.env);
    assert_eq!(
        decided["error"]["code"], "project_recipe_failed",
        "{decided}"
    );
    let message = decided["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("b_broken"), "{message}");
    assert!(
        message.contains("no config"),
        "the service's log is quoted: {message}"
    );
    assert!(lease_rows(&s.env).is_empty(), "{:?}", lease_rows(&s.env));
    assert!(
        service_processes_in(&s.repo.path).is_empty(),
        "the healthy service was stopped too"
    );
    assert!(log_entries(&s.log).is_empty(), "the provider never started");
}

#[test]
fn an_archived_mission_stops_its_services_and_runs_cleanup() {
    let marker = tempfile::tempdir().unwrap();
    let marker_path = marker.path().join("cleaned.txt");
    let recipe = format!(
        "schema = 1\n[setup]\ncommand = [\"sh\", \"-c\", \"echo ok > .setup-ran\"]\n{WEB_SERVICE}\n[[cleanup]]\ncommand = [\"sh\", \"-c\", \"echo cleaned > {}\"]\n",
        marker_path.display()
    );
    let s = session(json!([{"text": "done"}]), &recipe);
    let _services = StopServicesOnDrop(&s.env);
    let decided = approve_start(&s.env);
    assert_eq!(decided["result"]["type"], "cockpit_decided", "{decided}");
    assert!(
        s.repo.path.join(".setup-ran").exists(),
        "setup ran in the worktree"
    );
    let leases = lease_rows(&s.env);
    assert_eq!(leases.len(), 1, "{leases:?}");
    let (_, port, pid) = leases[0].clone();
    let pid = pid.expect("the lease records the service's pid");
    assert!(process_is_running(pid));
    let started = log_entries(&s.log)
        .into_iter()
        .find(|entry| entry["event"] == "started")
        .expect("the provider started");
    assert_eq!(
        started["env"]["WEB_PORT"],
        port.to_string(),
        "the provider got the port"
    );
    wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    assert!(
        process_is_running(pid),
        "a finished run's services keep running until archive"
    );
    s.env.ok("mission.close", json!({"mission_id": "m1"}));
    wait_for_mission(&s.env, "m1", "archived", |mission| {
        mission["status"] == "archived"
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !(marker_path.exists() && lease_rows(&s.env).is_empty())
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        std::fs::read_to_string(&marker_path).unwrap_or_default(),
        "cleaned\n"
    );
    assert!(lease_rows(&s.env).is_empty(), "the lease was released");
    assert!(!process_is_running(pid), "the service was stopped");
}

#[test]
fn a_sigkilled_server_adopts_the_healthy_service_after_its_restart() {
    let recipe = format!("schema = 1\n{WEB_SERVICE}");
    let mut s = session(json!([{"approve_command": "make deploy"}]), &recipe);
    let decided = approve_start(&s.env);
    assert_eq!(decided["result"]["type"], "cockpit_decided", "{decided}");
    wait_for_mission(&s.env, "m1", "waiting on an approval", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    let before = lease_rows(&s.env);
    assert_eq!(before.len(), 1, "{before:?}");
    let pid = before[0].2.expect("a pid");
    let _service = KillGroupOnDrop(pid);
    s.env.kill_server();
    assert!(
        process_is_running(pid),
        "the service outlives the killed server"
    );
    configure_fakes(&s.env, &json!([{"text": "continuing after the restart"}]));
    s.env.start_server();
    let mission = wait_for_mission(&s.env, "m1", "review after the resumed turn", |mission| {
        matches!(
            mission["status"].as_str(),
            Some("review_required" | "ready_to_close" | "blocked")
        )
    });
    assert_ne!(mission["status"], "blocked", "{mission}");
    let after = lease_rows(&s.env);
    assert_eq!(
        after, before,
        "same lease, same port, same pid: adopted, not restarted"
    );
    assert!(process_is_running(pid));
    let resumed = log_entries(&s.log)
        .into_iter()
        .rfind(|entry| entry["event"] == "started")
        .expect("the provider was resumed");
    assert_eq!(resumed["env"]["WEB_PORT"], before[0].1.to_string());
}
