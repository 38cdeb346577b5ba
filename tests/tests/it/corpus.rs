//! The bad-input corpus (issue 7): a table of malformed and hostile requests across every
//! method nagi answers, each with the code it must get, each leaving the SQLite store
//! byte-for-byte unchanged. Cases cover wrong types, limits and one past them, Unicode edge
//! cases, path traversal in every path parameter, symlinked repositories and worktrees,
//! enormous arrays and nested JSON bombs. A second test holds 1,000 idle connections open
//! and checks that everybody else is still served.
//!
//! `expected` is an error code, or `ok` for a request that must succeed without writing
//! (an idempotent repeat at the exact limits, so both sides of each limit are covered).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use nagi_tests::*;
use serde_json::{Value, json};

mod configure_start;
mod create;
mod envelope;

use configure_start::{configure_cases, start_cases};
use create::{create_cases, read_cases};
use envelope::{cockpit_cases, envelope_cases, event_cases, pane_cases};

/// `x.pipe(f)` is `f(x)`; keeps the long table rows readable.
trait Pipe: Sized {
    fn pipe<T>(self, function: impl FnOnce(Self) -> T) -> T {
        function(self)
    }
}
impl Pipe for Value {}

/// One corpus entry: a name, the raw request line (without its newline) and the code.
struct Case {
    name: String,
    line: String,
    expected: &'static str,
}

fn request(method: &str, params: Value) -> String {
    json!({"id": "corpus", "method": method, "params": params}).to_string()
}

fn with(mut params: Value, pointer: &str, value: Value) -> Value {
    *params
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer} in the params")) = value;
    params
}

fn without(mut params: Value, key: &str) -> Value {
    params.as_object_mut().unwrap().remove(key);
    params
}

/// `text` repeated until it is exactly `bytes` long (ASCII `text` only).
fn sized(bytes: usize) -> String {
    "a".repeat(bytes)
}

/// The fixture every case runs against: a server with a drafted mission (`m-draft`), a
/// configured one (`m-ready`), one created at every upper limit (`m-limits`), a live pane,
/// and directories and symlinks for the repository cases.
struct Fixture {
    env: TestEnv,
    repo: TestRepo,
    other_repo: TestRepo,
    pane_id: String,
    workspace_id: String,
    tab_id: String,
}

fn limits_params(repository: &str) -> Value {
    // 128-byte id, 256-byte title, 8192-byte objective, 16 criteria of 1024 bytes.
    json!({
        "mission_id": format!("m-{}", sized(126)),
        "title": "é".repeat(128),
        "repository_path": repository,
        "objective": sized(8192),
        "acceptance_criteria": (0..16).map(|index| format!("{index:02}{}", sized(1022))).collect::<Vec<_>>(),
    })
}

fn limits_plan(mission_id: &str) -> Value {
    // 32 checks, one of them with 128 args of 4096 bytes and 64 path rules.
    let mut checks = vec![json!({
        "kind": "command", "id": "wide", "program": sized(1024),
        "args": (0..128).map(|_| sized(4096)).collect::<Vec<_>>(),
        "cwd": ".",
        "relevant_paths": (0..64).map(|index| json!({"type": "prefix", "prefix": format!("src/{index}")})).collect::<Vec<_>>(),
        "required_artifacts": (0..32).map(|index| format!("out/{index}.txt")).collect::<Vec<_>>(),
        "required": true, "covers": [0],
    })];
    for index in 1..32 {
        checks.push(json!({
            "kind": "manual", "id": format!("review-{index}"),
            "reviewers": (0..32).map(|reviewer| format!("r{reviewer}")).collect::<Vec<_>>(),
            "required": true, "covers": [index % 16],
        }));
    }
    json!({"mission_id": mission_id, "checks": checks})
}

impl Fixture {
    fn new() -> Fixture {
        let mut env = TestEnv::new();
        env.start_server();
        let repo = TestRepo::new();
        let other_repo = TestRepo::new();
        let repository = repo.path_text();
        env.ok("mission.create", create_params("m-draft", &repository));
        env.ok("mission.create", create_params("m-ready", &repository));
        env.ok(
            "mission.configure",
            configure_params("m-ready", "true", &[]),
        );
        let limits = limits_params(&repository);
        env.ok("mission.create", limits.clone());
        env.ok(
            "mission.configure",
            limits_plan(limits["mission_id"].as_str().unwrap()),
        );
        let workspace = env.ok("workspace.create", json!({"command": ["sleep", "600"]}));
        let pane_id = workspace["root_pane"]["pane_id"]
            .as_str()
            .unwrap()
            .to_string();
        let workspace_id = workspace["workspace"]["workspace_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{workspace}"))
            .to_string();
        let tabs = env.ok("tab.list", json!({"workspace_id": workspace_id}));
        let tab_id = tabs["tabs"][0]["tab_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{tabs}"))
            .to_string();
        let links = env.root().join("links");
        std::fs::create_dir_all(&links).unwrap();
        let link = |name: &str, target: &Path| {
            std::os::unix::fs::symlink(target, links.join(name)).unwrap();
        };
        link("to-subdir", &repo.path.join("src"));
        link("to-file", &repo.path.join("src/lib.rs"));
        link("dangling", &env.root().join("nothing-here"));
        link("to-other-repo", &other_repo.path);
        link("to-plain-dir", &env.root());
        link("loop-a", &links.join("loop-b"));
        link("loop-b", &links.join("loop-a"));
        Fixture {
            env,
            repo,
            other_repo,
            pane_id,
            workspace_id,
            tab_id,
        }
    }

    fn link(&self, name: &str) -> String {
        self.env
            .root()
            .join("links")
            .join(name)
            .display()
            .to_string()
    }

    fn create(&self, mission_id: &str) -> Value {
        create_params(mission_id, &self.repo.path_text())
    }

    fn start(&self) -> Value {
        json!({"mission_id": "m-ready", "run_id": "run-1", "provider": "codex", "mode": "managed"})
    }

    fn check(&self) -> Value {
        configure_params("m-draft", "cargo", &["test"])["checks"][0].clone()
    }

    fn configure_with(&self, pointer: &str, value: Value) -> Value {
        json!({"mission_id": "m-draft", "checks": [with(self.check(), pointer, value)]})
    }
}

#[test]
fn every_hostile_request_gets_its_code_and_writes_nothing() {
    let fixture = Fixture::new();
    let mut cases = Vec::new();
    envelope_cases(&mut cases);
    create_cases(&fixture, &mut cases);
    read_cases(&mut cases);
    configure_cases(&fixture, &mut cases);
    start_cases(&fixture, &mut cases);
    event_cases(&mut cases);
    cockpit_cases(&mut cases);
    pane_cases(&fixture, &mut cases);

    let before = fixture.env.store_fingerprint();
    let mut failures = Vec::new();
    for case in &cases {
        let response = fixture.env.raw_line(&case.line);
        let got = match &response {
            None => "no reply".to_string(),
            Some(response) if response.get("result").is_some() => "ok".to_string(),
            Some(response) => response
                .pointer("/error/code")
                .and_then(Value::as_str)
                .unwrap_or("malformed reply")
                .to_string(),
        };
        let after = fixture.env.store_fingerprint();
        if got != case.expected || after != before {
            let excerpt: String = case.line.chars().take(160).collect();
            failures.push(format!(
                "{}\n    expected {}, got {got}{}\n    request: {excerpt}\n    reply: {}",
                case.name,
                case.expected,
                if after == before {
                    ""
                } else {
                    "; THE STORE CHANGED"
                },
                response.map_or("none".into(), |r| r
                    .to_string()
                    .chars()
                    .take(300)
                    .collect::<String>()),
            ));
        }
    }
    // The server is still healthy after all of it.
    assert_eq!(fixture.env.ok("ping", json!({}))["type"], "pong");
    let methods: std::collections::BTreeSet<&str> = cases
        .iter()
        .filter_map(|case| case.name.split(':').next())
        .collect();
    println!(
        "corpus: {} cases over {} methods, {} failures, store unchanged: {}",
        cases.len(),
        methods.len(),
        failures.len(),
        fixture.env.store_fingerprint() == before
    );
    assert!(
        cases.len() >= 150,
        "the corpus has only {} cases",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} corpus cases failed:\n{}\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n"),
        fixture.env.server_log()
    );
}

#[test]
fn a_thousand_idle_connections_do_not_starve_anyone() {
    raise_open_file_limit();
    let fixture = Fixture::new();
    let before = fixture.env.store_fingerprint();
    let mut idle = Vec::new();
    for index in 0..1000 {
        let mut stream = UnixStream::connect(&fixture.env.socket)
            .unwrap_or_else(|error| panic!("connection {index}: {error}"));
        if index % 2 == 0 {
            // Half of them send the start of a request and never finish it.
            stream
                .write_all(br#"{"id":"idle","method":"mission.li"#)
                .unwrap();
        }
        idle.push(stream);
    }
    // Everybody else is still served, on new connections, while the 1,000 stay open.
    for _ in 0..20 {
        assert_eq!(fixture.env.ok("ping", json!({}))["type"], "pong");
        let mission = fixture
            .env
            .ok("mission.get", json!({"mission_id": "m-ready"}));
        assert_eq!(mission["mission"]["status"], "draft");
    }
    fixture
        .env
        .ok("mission.create", fixture.create("m-during-idle"));
    // The idle ones got nothing: a partial line is not a request.
    let mut replied = 0;
    for stream in idle.iter().take(50) {
        stream
            .set_read_timeout(Some(std::time::Duration::from_millis(20)))
            .unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut line = String::new();
        if matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
            replied += 1;
        }
    }
    assert_eq!(replied, 0, "an idle connection got a reply");
    drop(idle);
    let after = fixture.env.store_fingerprint();
    assert_ne!(
        after, before,
        "the create made while others idled is stored"
    );
    assert_eq!(fixture.env.ok("ping", json!({}))["type"], "pong");
    println!("idle connections: 1000 held open, 20 rounds of requests served meanwhile");
}

fn raise_open_file_limit() {
    // SAFETY: plain getrlimit/setrlimit on a local struct.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}
