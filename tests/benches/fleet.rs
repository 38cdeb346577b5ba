//! Fleet benchmarks (issue 17), each a ratio measured in one run against one local server
//! on the same machine and the same binary:
//! - throughput: missions created, configured, started and driven to `ready_to_close` per
//!   minute, through a fleet of 3 hosts (every request sent to host a; missions pinned to
//!   a, b and c in turn; done when host a's `mission.list` shows every one
//!   `ready_to_close`) vs one local server doing the same;
//! - `mission.list` of the missions driven: host a's list of the fleet vs the lone
//!   server's list of its own (printed, no target);
//! - the first `mission.get` of a SIGKILLed host's mission from another host, against one
//!   while that host was up (printed, no target);
//! - restart: the time from a host's restart (SIGKILL, then `nagi server --fleet` again)
//!   until its live runs are resumed, vs the same restart of a lone server.
//!
//! Needs `nagi` built with the `fleet` feature and the Temporal CLI (.ci/install-temporal):
//! `cargo build -p nagi --features fleet && NAGI_BIN=$PWD/target/debug/nagi cargo bench -p nagi-tests --features fleet --bench fleet`
//! (both sides run the same binary, so a debug build compares fairly).
//! Scale with `NAGI_BENCH_MISSIONS` (default 12), `NAGI_BENCH_LIVE` (default 5) and
//! `NAGI_BENCH_ROUNDS` (default 3).

use std::time::{Duration, Instant};

use nagi_tests::temporal::{TemporalDev, temporal_binary};
use nagi_tests::*;
use serde_json::{Value, json};

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// Fake Codex for every host: `script` is its turn.
fn configure_fake_codex(env: &TestEnv, script: &Value) {
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let log = fake_log_path(env);
    let config = format!(
        "[providers.codex]\ncommand = [{}]\nenv = {{ NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {} }}\n\n{}",
        toml_string(test_binary("fake_codex").to_str().unwrap()),
        toml_string(&script.to_string()),
        toml_string(log.to_str().unwrap()),
        fake_sandbox_section(env),
    );
    std::fs::write(env.config_dir.join("config.toml"), config).unwrap();
}

fn server(script: &Value, fleet: Option<(&TemporalDev, &str)>) -> TestEnv {
    let mut env = TestEnv::new();
    configure_fake_codex(&env, script);
    match fleet {
        Some((temporal, name)) => {
            env.start_server_with(&["--fleet", &temporal.address(), "--host", name]);
        }
        None => {
            env.start_server();
        }
    }
    env
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// Creates, configures and starts `missions` missions through `front` (pinned to `hosts`
/// in turn when there are any) and answers the time until `front`'s list shows every one
/// `ready_to_close`.
fn drive(front: &TestEnv, hosts: &[&str], missions: usize, round: usize) -> Duration {
    let repos: Vec<TestRepo> = (0..missions).map(|_| TestRepo::new()).collect();
    let started = Instant::now();
    let mut client = front.client();
    client
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    let ids: Vec<String> = (0..missions).map(|i| format!("m{round}-{i}")).collect();
    for (index, mission_id) in ids.iter().enumerate() {
        let mut params = create_params(mission_id, &repos[index].path_text());
        if !hosts.is_empty() {
            params["host"] = json!(hosts[index % hosts.len()]);
        }
        for (method, params) in [
            ("mission.create", params),
            (
                "mission.configure",
                configure_params(mission_id, "test", &["-f", "README.md"]),
            ),
            (
                "mission.start",
                json!({"mission_id": mission_id, "run_id": format!("r{round}-{index}"),
                       "provider": "codex", "mode": "managed", "execute_declared_checks": true}),
            ),
        ] {
            if let Err(error) = client.request(method, params) {
                panic!("{method} {mission_id}: {error}");
            }
        }
    }
    let deadline = started + Duration::from_secs(60);
    loop {
        let list = front.ok("mission.list", json!({}));
        let ready = list["missions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|entry| {
                ids.iter().any(|id| entry["mission_id"] == *id)
                    && entry["status"] == "ready_to_close"
            })
            .count();
        if ready == missions {
            return started.elapsed();
        }
        if Instant::now() > deadline {
            for entry in list["missions"].as_array().unwrap() {
                if entry["status"] != "ready_to_close" {
                    let view =
                        front.call("mission.get", json!({"mission_id": entry["mission_id"]}));
                    println!("not ready: {view}");
                }
            }
            panic!("only {ready} of {missions} missions became ready_to_close");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `live` runs on `env` that wait on an approval, then SIGKILLs and restarts the
/// server `rounds` times; answers the median time from the restart until every run is
/// live again.
fn restart_time(env: &mut TestEnv, args: &[&str], live: usize, rounds: usize) -> Duration {
    let repos: Vec<TestRepo> = (0..live).map(|_| TestRepo::new()).collect();
    for (index, repo) in repos.iter().enumerate() {
        let mission_id = format!("live{index}");
        env.ok(
            "mission.create",
            create_params(&mission_id, &repo.path_text()),
        );
        env.ok(
            "mission.configure",
            configure_params(&mission_id, "true", &[]),
        );
        env.ok(
            "mission.start",
            json!({"mission_id": mission_id, "run_id": format!("live-r{index}"),
                   "provider": "codex", "mode": "managed"}),
        );
    }
    let all_live = |env: &TestEnv| {
        (0..live).all(|index| {
            let mission = env.ok("mission.get", json!({"mission_id": format!("live{index}")}));
            mission["mission"]["status"] == "active" && mission["mission"]["run"]["live"] == true
        })
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    while !all_live(env) {
        assert!(Instant::now() < deadline, "{}", env.server_log());
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut times = Vec::new();
    for _ in 0..rounds {
        env.kill_server();
        let restarted = Instant::now();
        env.start_server_with(args);
        while !all_live(env) {
            assert!(
                restarted.elapsed() < Duration::from_secs(120),
                "{}",
                env.server_log()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        times.push(restarted.elapsed());
    }
    median(times)
}

fn main() {
    let Some(binary) = temporal_binary() else {
        panic!(
            "the fleet bench needs the Temporal CLI (.ci/install-temporal, or NAGI_TEMPORAL_BIN)"
        );
    };
    let missions = env_number("NAGI_BENCH_MISSIONS", 12).max(1);
    let live = env_number("NAGI_BENCH_LIVE", 5).max(1);
    let rounds = env_number("NAGI_BENCH_ROUNDS", 3).max(1);
    println!(
        "fleet bench: {missions} missions per round, {live} live runs, {rounds} rounds; nagi = {}",
        nagi_binary().display()
    );
    let temporal = TemporalDev::start(&binary);
    let turn = json!([{"text": "done"}]);

    // Throughput, local and fleet rounds interleaved.
    let local = server(&turn, None);
    let a = server(&turn, Some((&temporal, "a")));
    let _b = server(&turn, Some((&temporal, "b")));
    let _c = server(&turn, Some((&temporal, "c")));
    let (mut local_times, mut fleet_times) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let lone = drive(&local, &[], missions, round);
        let fleet = drive(&a, &["a", "b", "c"], missions, round);
        let per_minute = |elapsed: Duration| missions as f64 * 60.0 / elapsed.as_secs_f64();
        println!(
            "  round {}: local {:.0}/min ({:.2} s), fleet of 3 {:.0}/min ({:.2} s)",
            round + 1,
            per_minute(lone),
            lone.as_secs_f64(),
            per_minute(fleet),
            fleet.as_secs_f64()
        );
        local_times.push(lone);
        fleet_times.push(fleet);
    }
    let (lone, fleet) = (median(local_times), median(fleet_times));
    println!(
        "throughput: local {:.0} missions/min, fleet of 3 {:.0} missions/min (medians); \
         ratio fleet/local {:.2}",
        missions as f64 * 60.0 / lone.as_secs_f64(),
        missions as f64 * 60.0 / fleet.as_secs_f64(),
        lone.as_secs_f64() / fleet.as_secs_f64()
    );

    // `mission.list` of every mission driven above: a lone server reads its store, host a
    // asks each mission's workflow for its state.
    let listed = missions * rounds;
    let list_time = |env: &TestEnv| {
        median(
            (0..9)
                .map(|_| {
                    let started = Instant::now();
                    let list = env.ok("mission.list", json!({}));
                    assert_eq!(list["missions"].as_array().map(Vec::len), Some(listed));
                    started.elapsed()
                })
                .collect(),
        )
    };
    let (lone_list, fleet_list) = (list_time(&local), list_time(&a));
    println!(
        "mission.list of {listed} missions: local {:.1} ms, fleet of 3 {:.1} ms (medians of \
         9); ratio fleet/local {:.1}",
        lone_list.as_secs_f64() * 1000.0,
        fleet_list.as_secs_f64() * 1000.0,
        fleet_list.as_secs_f64() / lone_list.as_secs_f64()
    );

    // The first `mission.get`, from host a, of a mission whose host b was SIGKILLed: its
    // workflow is bound to b's dead worker (b was the fleet's only host when it ran), and
    // Temporal holds the query there for the sticky queue's timeout.
    let (dead_get, live_get) = {
        let own = TemporalDev::start(&binary);
        let mut b = server(&turn, Some((&own, "b")));
        let repo = TestRepo::new();
        b.ok("mission.create", create_params("gone1", &repo.path_text()));
        let a = server(&turn, Some((&own, "a")));
        let deadline = Instant::now() + Duration::from_secs(60);
        while a.ok("mission.list", json!({}))["missions"] == json!([]) {
            assert!(Instant::now() < deadline, "host a never listed b's mission");
            std::thread::sleep(Duration::from_millis(50));
        }
        let started = Instant::now();
        a.ok("mission.get", json!({"mission_id": "gone1"}));
        let live_get = started.elapsed();
        b.kill_server();
        let started = Instant::now();
        a.ok("mission.get", json!({"mission_id": "gone1"}));
        (started.elapsed(), live_get)
    };
    println!(
        "first mission.get of a SIGKILLed host's mission, from another host: {:.0} ms, \
         against {:.0} ms while that host was up; ratio {:.0}",
        dead_get.as_secs_f64() * 1000.0,
        live_get.as_secs_f64() * 1000.0,
        dead_get.as_secs_f64() / live_get.as_secs_f64()
    );

    // Restart until the runs are resumed.
    let approval = json!([{"approve_command": "make deploy"}]);
    let mut lone_host = server(&approval, None);
    let lone_restart = restart_time(&mut lone_host, &[], live, rounds);
    let address = temporal.address();
    let fleet_args = ["--fleet", address.as_str(), "--host", "d"];
    let mut fleet_host = server(&approval, Some((&temporal, "d")));
    let fleet_restart = restart_time(&mut fleet_host, &fleet_args, live, rounds);
    println!(
        "restart until {live} runs are resumed: lone host {:.0} ms, fleet host {:.0} ms \
         (medians of {rounds}); ratio fleet/lone {:.2}",
        lone_restart.as_secs_f64() * 1000.0,
        fleet_restart.as_secs_f64() * 1000.0,
        fleet_restart.as_secs_f64() / lone_restart.as_secs_f64()
    );
}
