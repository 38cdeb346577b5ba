//! Start-up overhead of a run (issue 4): what the engine adds to the way from `mission.start`
//! to the bound session with the fake Codex provider, divided by the fake provider's own
//! start-up measured alone in the same run. Target: at most 1.2. The whole time over the
//! start-up is printed too: it cannot come near 1.0, because the binding must be committed
//! (an fsync, 0.2–0.4 ms here) before any client may see the session bound, and the fake
//! starts in ~1.2 ms.
//!
//! Run:
//! `cargo build --release -p nagi -p nagi-tests --bins && NAGI_BIN=$PWD/target/release/nagi cargo bench -p nagi-tests --bench start_overhead`
//! Scale with `NAGI_BENCH_STARTS` (default 20 interleaved rounds).
//!
//! Per round, interleaved so that load from other processes hits every path alike:
//! - **fake alone**: spawn `target/release/fake_codex` and speak its JSON-RPC directly —
//!   `initialize` → `initialized` → `thread/start` until the thread id comes back. This is the
//!   denominator: the provider's own start-up, with no nagi code in the way.
//! - **adapter alone**: `nagi_providers::launch` of the same fake until `SessionBound` (what the
//!   adapter adds, for the breakdown).
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

/// The fake Codex alone: spawn, `initialize`, `initialized`, `thread/start`, thread id back.
fn fake_alone(fake: &Path, worktree: &Path) -> Duration {
    let started = Instant::now();
    let mut child = Command::new(fake)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn fake_codex");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut read_response = |id: u64| -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                stdout.read_line(&mut line).expect("read from fake_codex") > 0,
                "fake_codex closed its output"
            );
            let frame: Value = serde_json::from_str(&line).expect("fake_codex speaks JSON");
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
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mission = env.ok("mission.get", json!({"mission_id": mission_id}))["mission"].clone();
        if mission["status"] == "review_required" && mission["run"]["live"] == false {
            return;
        }
        assert!(Instant::now() < deadline, "the run never ended: {mission}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn write_config(config_dir: &Path, fake: &Path) {
    std::fs::create_dir_all(config_dir).unwrap();
    let command = serde_json::to_string(&fake.display().to_string()).unwrap();
    std::fs::write(
        config_dir.join("config.toml"),
        format!("[providers.codex]\ncommand = [{command}]\n"),
    )
    .unwrap();
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let rounds = env_number("NAGI_BENCH_STARTS", 20).max(3);
    let fake: PathBuf = test_binary("fake_codex");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut env = TestEnv::new();
    write_config(&env.config_dir, &fake);
    env.start_server();
    let scratch = tempfile::tempdir().unwrap();
    let worktree = std::fs::canonicalize(scratch.path()).unwrap();
    let mut request_stream = BufReader::new(UnixStream::connect(&env.socket).unwrap());
    request_stream
        .get_ref()
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();

    // One warm-up round of each path (page cache, first PTY, first git open).
    let mut repositories = Vec::new();
    let mut prepare = |name: &str| {
        let repo = TestRepo::new();
        env.ok("mission.create", create_params(name, &repo.path_text()));
        env.ok("mission.configure", configure_params(name, "true", &[]));
        repositories.push(repo);
    };
    prepare("warm");
    for index in 0..rounds {
        prepare(&format!("m{index}"));
    }
    fake_alone(&fake, &worktree);
    adapter_alone(&runtime, &fake, &worktree);
    mission_start(&env, &mut request_stream, "warm");
    wait_until_run_over(&env, "warm");

    let (mut fake_times, mut adapter_times, mut reply_times, mut active_times, mut ratios) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut added_ratios = Vec::new();
    for index in 0..rounds {
        let alone = fake_alone(&fake, &worktree);
        let adapter = adapter_alone(&runtime, &fake, &worktree);
        let mission_id = format!("m{index}");
        let start = mission_start(&env, &mut request_stream, &mission_id);
        wait_until_run_over(&env, &mission_id);
        ratios.push(start.active.as_secs_f64() / alone.as_secs_f64());
        added_ratios.push((start.active.as_secs_f64() - alone.as_secs_f64()) / alone.as_secs_f64());
        fake_times.push(alone);
        adapter_times.push(adapter);
        reply_times.push(start.reply);
        active_times.push(start.active);
    }
    ratios.sort_by(f64::total_cmp);
    added_ratios.sort_by(f64::total_cmp);
    let fake_median = median(&mut fake_times);
    let adapter_median = median(&mut adapter_times);
    let reply_median = median(&mut reply_times);
    let active_median = median(&mut active_times);
    println!("start_overhead: {rounds} interleaved rounds, medians");
    println!(
        "  fake_codex alone (spawn → initialize → thread/start → thread id): {:8.2} ms",
        milliseconds(fake_median)
    );
    println!(
        "  fake_codex through the adapter (launch → SessionBound):           {:8.2} ms",
        milliseconds(adapter_median)
    );
    println!(
        "  mission.start → reply:                                            {:8.2} ms",
        milliseconds(reply_median)
    );
    println!(
        "  mission.start → mission active (session bound):                   {:8.2} ms",
        milliseconds(active_median)
    );
    println!(
        "  engine overhead / fake start-up = (mission.start→active − fake alone) / fake alone: {:.2} (median of per-round ratios {:.2}; target ≤ 1.2)",
        (active_median.as_secs_f64() - fake_median.as_secs_f64()) / fake_median.as_secs_f64(),
        added_ratios[added_ratios.len() / 2]
    );
    println!(
        "  whole time / fake start-up = mission.start→active / fake alone: {:.2} (median of per-round ratios {:.2}; it includes the binding's durable commit)",
        active_median.as_secs_f64() / fake_median.as_secs_f64(),
        ratios[ratios.len() / 2]
    );
    println!(
        "  ratio mission.start→active / adapter alone: {:.2}",
        active_median.as_secs_f64() / adapter_median.as_secs_f64()
    );
    if std::env::var_os("NAGI_BENCH_PRINT_LOG").is_some() {
        println!("{}", env.server_log());
    }
}
