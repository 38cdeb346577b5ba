//! Restart recovery benchmark (issue: proof, close, handoff and restart recovery): a store
//! with 1,000 missions, 50 of them with a live run (a fake Codex waiting on an approval),
//! the server SIGKILLed, then the time until a new server answers `mission.list`, as a
//! multiple of the start-up time of a server on an empty store, measured in the same run.
//!
//! Run: `cargo build --release -p nagi && NAGI_BIN=$PWD/target/release/nagi cargo bench -p nagi-tests --bench recovery`
//! Scale with `NAGI_BENCH_MISSIONS` (default 1000), `NAGI_BENCH_LIVE` (default 50) and
//! `NAGI_BENCH_ROUNDS` (default 3).

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nagi_schema::client::Client;
use nagi_tests::*;
use serde_json::json;

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// Points Codex at the fake that asks for an approval and then waits for the answer.
fn configure_fake_codex(env: &TestEnv) {
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let script = json!([{"approve_command": "make deploy"}]).to_string();
    let log = env.home().join("fake.log");
    let config = format!(
        "[providers.codex]\ncommand = [{}]\nenv = {{ NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {} }}\n",
        toml_string(test_binary("fake_codex").to_str().unwrap()),
        toml_string(&script),
        toml_string(log.to_str().unwrap()),
    );
    std::fs::write(env.config_dir.join("config.toml"), config).unwrap();
}

/// Spawns `nagi server` and returns it with the time until it answered `mission.list`.
fn start_and_time(env: &TestEnv) -> (Child, Duration) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(&env.config_dir).unwrap();
    std::fs::set_permissions(&env.config_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(env.server_log_path())
        .unwrap();
    let started = Instant::now();
    let mut child = env
        .command()
        .arg("server")
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log))
        .spawn()
        .expect("nagi server starts");
    loop {
        if let Ok(mut client) = Client::connect(&env.socket) {
            let _ = client.set_read_timeout(Some(Duration::from_secs(30)));
            if client.request("mission.list", json!({})).is_ok() {
                return (child, started.elapsed());
            }
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited with {status}:\n{}", env.server_log());
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the server did not answer:\n{}",
            env.server_log()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn stop(mut child: Child) {
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let _ = child.wait();
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn main() {
    let missions = env_number("NAGI_BENCH_MISSIONS", 1000);
    let live = env_number("NAGI_BENCH_LIVE", 50).min(missions);
    let rounds = env_number("NAGI_BENCH_ROUNDS", 3).max(1);
    println!(
        "recovery bench: {missions} missions, {live} live runs, {rounds} rounds; nagi = {}",
        nagi_binary().display()
    );

    let mut empty_times = Vec::new();
    for _ in 0..rounds {
        let env = TestEnv::new();
        std::fs::create_dir_all(&env.config_dir).unwrap();
        let (child, elapsed) = start_and_time(&env);
        stop(child);
        empty_times.push(elapsed);
    }
    let empty = median(empty_times);

    let env = TestEnv::new();
    configure_fake_codex(&env);
    let (mut server, _) = start_and_time(&env);
    let shared_repo = TestRepo::new();
    let live_repos: Vec<TestRepo> = (0..live).map(|_| TestRepo::new()).collect();
    let mut client = env.client();
    for index in 0..missions {
        let mission_id = format!("m{index:05}");
        let repository = live_repos.get(index).unwrap_or(&shared_repo).path_text();
        client
            .request("mission.create", create_params(&mission_id, &repository))
            .unwrap();
        if index < live {
            client
                .request(
                    "mission.configure",
                    configure_params(&mission_id, "true", &[]),
                )
                .unwrap();
            client
                .request(
                    "mission.start",
                    // Live run ids are unique across missions (contract §2: `run_conflict`).
                    json!({"mission_id": mission_id, "run_id": format!("r{index}"), "provider": "codex", "mode": "managed"}),
                )
                .unwrap();
        }
    }
    for index in 0..live {
        wait_for_mission(
            &env,
            &format!("m{index:05}"),
            "the run asks for approval",
            |mission| mission["status"] == "active" && mission["unresolved_attention_count"] == 1,
        );
    }

    let mut recovery_times = Vec::new();
    for round in 0..rounds {
        unsafe { libc::kill(server.id() as i32, libc::SIGKILL) };
        let _ = server.wait();
        let (next, elapsed) = start_and_time(&env);
        server = next;
        recovery_times.push(elapsed);
        // Let the resumed runs settle before the next kill, so every round recovers 50 live runs.
        for index in 0..live {
            wait_for_mission(
                &env,
                &format!("m{index:05}"),
                "the resumed run is live",
                |mission| mission["status"] == "active" && mission["run"]["live"] == true,
            );
        }
        println!(
            "  round {}: answered after {:.1} ms",
            round + 1,
            elapsed.as_secs_f64() * 1000.0
        );
    }
    let recovery = median(recovery_times);
    stop(server);
    // The server's own breakdown of each recovery (leftover scan, settling, resuming).
    for line in env
        .server_log()
        .lines()
        .filter(|line| line.contains("recovery finished"))
    {
        println!("  server: {}", line.trim());
    }

    println!(
        "empty-store start-up: {:.1} ms (median of {rounds})",
        empty.as_secs_f64() * 1000.0
    );
    println!(
        "recovery with {missions} missions / {live} live runs: {:.1} ms (median of {rounds})",
        recovery.as_secs_f64() * 1000.0
    );
    println!(
        "ratio recovery / empty start-up: {:.2}",
        recovery.as_secs_f64() / empty.as_secs_f64()
    );
}
