//! Start-up overhead of a run (issue 4): what the engine adds to the way from `mission.start`
//! to the bound session, divided by the provider's own start-up measured alone in the same
//! run — first with the fake Codex provider, then with the real Codex CLI (the pinned one
//! `.ci/install-providers` puts into `.tools/npm`, talking to our mock model), when it is
//! installed. Target: at most 1.2. The whole time over the start-up is printed too: against
//! the fake it cannot come near 1.0, because the binding must be committed (an fsync,
//! 0.2–0.4 ms here) before any client may see the session bound, and the fake starts in
//! ~1.2 ms.
//!
//! Run:
//! `cargo build --release -p nagi -p nagi-tests --bins && NAGI_BIN=$PWD/target/release/nagi cargo bench -p nagi-tests --bench start_overhead`
//! Scale with `NAGI_BENCH_STARTS` (default 20 interleaved rounds with the fake) and
//! `NAGI_BENCH_CODEX_STARTS` (default 5 with the real Codex CLI, whose turns take longer).
//!
//! Per round, interleaved so that load from other processes hits every path alike:
//! - **provider alone**: spawn the provider (`target/release/fake_codex`, or the real
//!   `codex app-server --listen stdio://` with the same `-c` overrides and environment the
//!   server gives it) and speak its JSON-RPC directly — `initialize` → `initialized` →
//!   `thread/start` until the thread id comes back. This is the denominator: the provider's
//!   own start-up, with no nagi code in the way.
//! - **adapter alone** (fake only): `nagi_providers::launch` of the same fake until
//!   `SessionBound` (what the adapter adds, for the breakdown).
//! - **mission.start**: a created and configured mission (a fresh repository per round, so no
//!   claim is still held), `mission.start` over the socket, until a mission event whose status
//!   is `active` arrives on an `events.subscribe` stream opened before the start (no polling).
//!   The reply time of `mission.start` itself is printed too.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nagi_providers::{LaunchSpec, ProviderCommand, ProviderEvent, ProviderKind, Sandbox, Timeouts};
use nagi_tests::mock_model::{MockModelConfig, MockModelServer, Scenario};
use nagi_tests::real_cli;
use nagi_tests::*;
use serde_json::{Value, json};

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn median(values: &mut [Duration]) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// How to start a Codex app-server by hand, as the server would start it.
struct CodexCommand {
    program: PathBuf,
    args: Vec<String>,
    env: BTreeMap<String, String>,
}

impl CodexCommand {
    fn fake(fake: &Path) -> CodexCommand {
        CodexCommand {
            program: fake.to_path_buf(),
            args: Vec::new(),
            env: BTreeMap::new(),
        }
    }
}

/// A Codex app-server alone: spawn, `initialize`, `initialized`, `thread/start`, thread id
/// back.
fn codex_alone(codex: &CodexCommand, worktree: &Path) -> Duration {
    let started = Instant::now();
    let mut child = Command::new(&codex.program)
        .args(&codex.args)
        .envs(&codex.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| panic!("spawn {}: {error}", codex.program.display()));
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut read_response = |id: u64| -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                stdout.read_line(&mut line).expect("read from codex") > 0,
                "codex closed its output"
            );
            let Ok(frame) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if frame["id"] == id && frame.get("method").is_none() {
                return frame;
            }
        }
    };
    writeln!(stdin, "{}", json!({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "bench", "title": "Bench", "version": "0"}}})).unwrap();
    read_response(1);
    writeln!(stdin, "{}", json!({"method": "initialized"})).unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"id": 2, "method": "thread/start", "params": {"cwd": worktree, "approvalPolicy": "on-request", "sandbox": "read-only", "ephemeral": false}})
    )
    .unwrap();
    let thread = read_response(2);
    let elapsed = started.elapsed();
    assert!(thread["result"]["thread"]["id"].is_string(), "{thread}");
    drop(stdin);
    // The real CLI may linger after its input closes; its start-up is what was measured.
    let _ = child.kill();
    let _ = child.wait();
    elapsed
}

/// The same fake through our adapter, until `SessionBound`.
fn adapter_alone(runtime: &tokio::runtime::Runtime, fake: &Path, worktree: &Path) -> Duration {
    runtime.block_on(async {
        let spec = LaunchSpec {
            kind: ProviderKind::Codex,
            program: fake.to_path_buf(),
            leading_args: Vec::new(),
            worktree: worktree.to_path_buf(),
            env: BTreeMap::new(),
            extra_args: Vec::new(),
            sandbox: Sandbox::ReadOnly,
            confinement: None,
            resume_session_id: None,
            initial_input: None,
            model: None,
            reasoning_effort: None,
            timeouts: Timeouts::default(),
        };
        let started = Instant::now();
        let mut handle = nagi_providers::launch(spec).expect("launch the fake through the adapter");
        let elapsed = loop {
            match tokio::time::timeout(Duration::from_secs(30), handle.events.recv())
                .await
                .expect("an adapter event")
            {
                Some(ProviderEvent::SessionBound { .. }) => break started.elapsed(),
                Some(ProviderEvent::Stopped { exit_code }) => {
                    panic!("the fake stopped ({exit_code:?}) before binding")
                }
                Some(_) => continue,
                None => panic!("the adapter's events ended before SessionBound"),
            }
        };
        let _ = handle.commands.send(ProviderCommand::Shutdown).await;
        while handle.events.recv().await.is_some() {}
        elapsed
    })
}

/// Opens an `events.subscribe` stream of one mission's events.
fn subscribe(env: &TestEnv, mission_id: &str) -> BufReader<UnixStream> {
    let mut stream = UnixStream::connect(&env.socket).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let request = json!({"id": "sub", "method": "events.subscribe", "params": {"subscriptions": [{"type": "mission", "mission_id": mission_id}]}});
    writeln!(stream, "{request}").unwrap();
    let mut reader = BufReader::new(stream);
    let ack = TestEnv::read_line_from(&mut reader).expect("a subscription ack");
    assert_eq!(ack["result"]["type"], "subscription_started", "{ack}");
    reader
}

struct StartTimes {
    /// `mission.start` sent → its reply read.
    reply: Duration,
    /// `mission.start` sent → the event that made the mission `active` read.
    active: Duration,
}

/// `mission.start` until the mission is `active` (its provider session bound). The event
/// stream is read on its own thread, so the time an event arrives does not wait for the reply.
fn mission_start(
    env: &TestEnv,
    request_stream: &mut BufReader<UnixStream>,
    mission_id: &str,
) -> StartTimes {
    let mut events = subscribe(env, mission_id);
    let request = json!({"id": mission_id, "method": "mission.start",
                         "params": {"mission_id": mission_id, "run_id": "run-1", "provider": "codex", "mode": "managed"}});
    let started = Instant::now();
    let watcher = std::thread::spawn(move || {
        loop {
            let event = TestEnv::read_line_from(&mut events)?;
            let status = event["data"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            match status.as_str() {
                "active" => return Some(Ok(started.elapsed())),
                "failed" | "blocked" => return Some(Err(event.to_string())),
                _ => {}
            }
        }
    });
    writeln!(request_stream.get_mut(), "{request}").unwrap();
    let reply = TestEnv::read_line_from(request_stream).expect("a mission.start reply");
    let reply_time = started.elapsed();
    assert_eq!(
        reply["result"]["type"],
        "mission_run_started",
        "{reply}\n{}",
        env.server_log()
    );
    match watcher.join().expect("the event reader") {
        Some(Ok(active)) => StartTimes {
            reply: reply_time,
            active,
        },
        Some(Err(event)) => panic!("the run did not start: {event}\n{}", env.server_log()),
        None => panic!("no event made {mission_id} active\n{}", env.server_log()),
    }
}

/// Waits until the run of `mission_id` is over, so that no live run competes with the next round.
fn wait_until_run_over(env: &TestEnv, mission_id: &str) {
    // A real CLI's turn, on two busy cores, may take many seconds.
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let mission = env.ok("mission.get", json!({"mission_id": mission_id}))["mission"].clone();
        if mission["status"] == "review_required" && mission["run"]["live"] == false {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the run never ended: {mission}\n{}",
            env.server_log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Writes `[providers.codex]` with the program, its extra arguments and its environment.
fn write_config(config_dir: &Path, codex: &CodexCommand) {
    std::fs::create_dir_all(config_dir).unwrap();
    let strings = |items: &mut dyn Iterator<Item = &String>| {
        items
            .map(|item| toml_string(item))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let program = codex.program.display().to_string();
    let mut text = format!(
        "[providers.codex]\ncommand = [{}]\nargs = [{}]\n",
        toml_string(&program),
        strings(&mut codex.args.iter())
    );
    if !codex.env.is_empty() {
        text.push_str("\n[providers.codex.env]\n");
        for (name, value) in &codex.env {
            text.push_str(&format!("{name} = {}\n", toml_string(value)));
        }
    }
    std::fs::write(config_dir.join("config.toml"), text).unwrap();
}

/// A server configured with `codex`, a connection for requests, and `rounds` + 1 created
/// and configured missions (`warm`, `m0`, `m1`, …), each on a fresh repository.
struct StartBench {
    env: TestEnv,
    request_stream: BufReader<UnixStream>,
    _repositories: Vec<TestRepo>,
}

impl StartBench {
    fn new(codex: &CodexCommand, rounds: usize) -> StartBench {
        let mut env = TestEnv::new();
        write_config(&env.config_dir, codex);
        env.start_server();
        let request_stream = BufReader::new(UnixStream::connect(&env.socket).unwrap());
        request_stream
            .get_ref()
            .set_read_timeout(Some(Duration::from_secs(120)))
            .unwrap();
        let mut repositories = Vec::new();
        for name in
            std::iter::once("warm".to_string()).chain((0..rounds).map(|index| format!("m{index}")))
        {
            let repo = TestRepo::new();
            env.ok("mission.create", create_params(&name, &repo.path_text()));
            env.ok("mission.configure", configure_params(&name, "true", &[]));
            repositories.push(repo);
        }
        StartBench {
            env,
            request_stream,
            _repositories: repositories,
        }
    }

    fn start(&mut self, mission_id: &str) -> StartTimes {
        let times = mission_start(&self.env, &mut self.request_stream, mission_id);
        wait_until_run_over(&self.env, mission_id);
        times
    }
}

/// The per-round times of one provider, and what they give.
#[derive(Default)]
struct Series {
    alone: Vec<Duration>,
    reply: Vec<Duration>,
    active: Vec<Duration>,
    /// (active − alone) / alone, per round.
    added_ratios: Vec<f64>,
    /// active / alone, per round.
    whole_ratios: Vec<f64>,
}

impl Series {
    fn push(&mut self, alone: Duration, start: StartTimes) {
        let (alone_seconds, active_seconds) = (alone.as_secs_f64(), start.active.as_secs_f64());
        self.added_ratios
            .push((active_seconds - alone_seconds) / alone_seconds);
        self.whole_ratios.push(active_seconds / alone_seconds);
        self.alone.push(alone);
        self.reply.push(start.reply);
        self.active.push(start.active);
    }

    /// Prints the medians, the two ratios and every round's overhead ratio; `name` names the
    /// provider's start-up.
    fn print(&mut self, name: &str) {
        let alone = median(&mut self.alone);
        let reply = median(&mut self.reply);
        let active = median(&mut self.active);
        println!(
            "  {name} alone (spawn → initialize → thread/start → thread id): {:8.2} ms",
            milliseconds(alone)
        );
        println!(
            "  mission.start → reply:                                  {:8.2} ms",
            milliseconds(reply)
        );
        println!(
            "  mission.start → mission active (session bound):         {:8.2} ms",
            milliseconds(active)
        );
        let rounds: Vec<String> = self
            .added_ratios
            .iter()
            .map(|ratio| format!("{ratio:.2}"))
            .collect();
        let mut added = self.added_ratios.clone();
        added.sort_by(f64::total_cmp);
        let mut whole = self.whole_ratios.clone();
        whole.sort_by(f64::total_cmp);
        println!(
            "  engine overhead / {name} start-up = (mission.start→active − alone) / alone: {:.2} (median of per-round ratios {:.2}; target ≤ 1.2)",
            (active.as_secs_f64() - alone.as_secs_f64()) / alone.as_secs_f64(),
            added[added.len() / 2]
        );
        println!("    per round, in order: {}", rounds.join(" "));
        println!(
            "  whole time / {name} start-up = mission.start→active / alone: {:.2} (median of per-round ratios {:.2}; it includes the binding's durable commit)",
            active.as_secs_f64() / alone.as_secs_f64(),
            whole[whole.len() / 2]
        );
    }
}

/// The fake Codex: alone, through the adapter, and through `mission.start`.
fn bench_fake(runtime: &tokio::runtime::Runtime, rounds: usize) {
    let fake = CodexCommand::fake(&test_binary("fake_codex"));
    let mut bench = StartBench::new(&fake, rounds);
    let scratch = tempfile::tempdir().unwrap();
    let worktree = std::fs::canonicalize(scratch.path()).unwrap();

    // One warm-up round of each path (page cache, first PTY, first git open).
    codex_alone(&fake, &worktree);
    adapter_alone(runtime, &fake.program, &worktree);
    bench.start("warm");

    let mut series = Series::default();
    let mut adapter_times = Vec::new();
    for index in 0..rounds {
        let alone = codex_alone(&fake, &worktree);
        adapter_times.push(adapter_alone(runtime, &fake.program, &worktree));
        let start = bench.start(&format!("m{index}"));
        series.push(alone, start);
    }
    println!("start_overhead, the fake Codex: {rounds} interleaved rounds, medians");
    let active_median = median(&mut series.active.clone());
    let adapter_median = median(&mut adapter_times);
    println!(
        "  fake_codex through the adapter (launch → SessionBound):   {:8.2} ms",
        milliseconds(adapter_median)
    );
    series.print("fake_codex");
    println!(
        "  ratio mission.start→active / adapter alone: {:.2}",
        active_median.as_secs_f64() / adapter_median.as_secs_f64()
    );
    if std::env::var_os("NAGI_BENCH_PRINT_LOG").is_some() {
        println!("{}", bench.env.server_log());
    }
}

/// The real Codex CLI against the mock model: alone, and through `mission.start`.
fn bench_real_codex(rounds: usize) {
    let cli = real_cli::repository_root().join(".tools/npm/node_modules/.bin/codex");
    if !cli.exists() {
        println!(
            "start_overhead, the real Codex CLI: not installed at {} (run .ci/install-providers); not measured",
            cli.display()
        );
        return;
    }
    // Every turn is one short answer; the start-up does not wait for the model at all.
    let scenario = Scenario::from_json(r#"{"steps": [{"text": "Nothing to change."}]}"#)
        .expect("a valid scenario");
    let mock = MockModelServer::start(MockModelConfig {
        scenario,
        log_dir: None,
        port: 0,
    })
    .expect("start the mock model");
    let state = tempfile::tempdir().unwrap();
    let home = real_cli::CliHome::new(&std::fs::canonicalize(state.path()).unwrap());
    let mut args = vec![
        "app-server".to_string(),
        "--listen".to_string(),
        "stdio://".to_string(),
    ];
    let overrides = real_cli::codex_overrides(&mock.base_url());
    args.extend(overrides.iter().cloned());
    let env = home.env(real_cli::RealProvider::Codex, &mock.base_url());
    // The server adds `app-server --listen stdio://` itself; by hand, they are given here.
    let by_hand = CodexCommand {
        program: cli.clone(),
        args,
        env: env.clone(),
    };
    let configured = CodexCommand {
        program: cli,
        args: overrides,
        env,
    };
    let mut bench = StartBench::new(&configured, rounds);
    let repository = TestRepo::new();

    codex_alone(&by_hand, &repository.path);
    bench.start("warm");
    let mut series = Series::default();
    for index in 0..rounds {
        let alone = codex_alone(&by_hand, &repository.path);
        let start = bench.start(&format!("m{index}"));
        series.push(alone, start);
    }
    println!(
        "start_overhead, the real Codex CLI (codex app-server): {rounds} interleaved rounds, medians"
    );
    series.print("codex");
    if std::env::var_os("NAGI_BENCH_PRINT_LOG").is_some() {
        println!("{}", bench.env.server_log());
    }
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let rounds = env_number("NAGI_BENCH_STARTS", 20).max(3);
    let codex_rounds = env_number("NAGI_BENCH_CODEX_STARTS", 5).max(3);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    bench_fake(&runtime, rounds);
    bench_real_codex(codex_rounds);
}
