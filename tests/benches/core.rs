//! Core benchmarks (issue: durable mission core). Prints ratios against references
//! measured in the same run on the same disk, because these machines are noisy.
//!
//! Run: `cargo build --release -p nagi && cargo bench -p nagi-tests --bench core`
//! Scale with `NAGI_BENCH_CREATES` (default 2000), `NAGI_BENCH_ROUNDS` (default 5) and
//! `NAGI_BENCH_MISSIONS` (default 10000).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// The reference: one INSERT per transaction on a rusqlite connection with WAL and
/// `synchronous=FULL`, in the same temp filesystem as the server's database.
fn sqlite_one_insert_per_transaction(dir: &Path, count: usize) -> f64 {
    std::fs::create_dir_all(dir).unwrap();
    let _ = std::fs::remove_file(dir.join("reference.db"));
    let connection = rusqlite::Connection::open(dir.join("reference.db")).unwrap();
    connection
        .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    connection
        .pragma_update(None, "synchronous", "FULL")
        .unwrap();
    connection
        .execute_batch("CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT NOT NULL)")
        .unwrap();
    let body = "x".repeat(600);
    let started = Instant::now();
    for index in 0..count {
        let transaction = connection.unchecked_transaction().unwrap();
        transaction
            .execute(
                "INSERT INTO t (id, body) VALUES (?1, ?2)",
                rusqlite::params![format!("m{index}"), body],
            )
            .unwrap();
        transaction.commit().unwrap();
    }
    count as f64 / started.elapsed().as_secs_f64()
}

/// The head of a `mission.create` reply: what a typed client reads of it. The mission view
/// is parsed past, not built into a tree.
#[derive(serde::Deserialize)]
struct CreateReply {
    result: Option<CreatedHead>,
    error: Option<serde_json::Value>,
}

#[derive(serde::Deserialize)]
struct CreatedHead {
    #[serde(rename = "type")]
    kind: String,
    created: bool,
}

/// One client creating `count` missions in a row over one connection, as a typed client
/// does: the request serialized from the schema's parameter type, the reply parsed into
/// the fields it checks (`mission_created`, `created: true`).
fn create_many(socket: &Path, repository: &str, prefix: &str, count: usize) {
    use std::io::{BufRead, BufReader, Write};
    let stream = std::os::unix::net::UnixStream::connect(socket).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut request = Vec::with_capacity(512);
    let mut reply = String::with_capacity(2048);
    for index in 0..count {
        let params = nagi_schema::mission::MissionCreateParams {
            mission_id: format!("{prefix}-{index}"),
            title: "Fix login".into(),
            repository_path: repository.into(),
            objective: "Make the login redirect work".into(),
            acceptance_criteria: vec![
                "Redirect test passes".into(),
                "The login flow has no regression".into(),
            ],
            host: None,
        };
        request.clear();
        serde_json::to_writer(
            &mut request,
            &json!({"id": index.to_string(), "method": "mission.create", "params": params}),
        )
        .unwrap();
        request.push(b'\n');
        writer.write_all(&request).unwrap();
        reply.clear();
        assert!(
            reader.read_line(&mut reply).unwrap() > 0,
            "the server hung up"
        );
        let parsed: CreateReply = serde_json::from_str(&reply).unwrap();
        match parsed.result {
            Some(head) if head.kind == "mission_created" && head.created => {}
            _ => panic!("not created: {:?} {reply}", parsed.error),
        }
    }
}

fn creates(
    env: &TestEnv,
    repository: &str,
    clients: usize,
    per_client: usize,
    prefix: &str,
) -> f64 {
    let socket = env.socket.clone();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for client_index in 0..clients {
            let socket = socket.clone();
            scope.spawn(move || {
                create_many(
                    &socket,
                    repository,
                    &format!("{prefix}-{client_index}"),
                    per_client,
                );
            });
        }
    });
    (clients * per_client) as f64 / started.elapsed().as_secs_f64()
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * fraction).round() as usize]
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let create_count = env_number("NAGI_BENCH_CREATES", 2000);
    let mission_count = env_number("NAGI_BENCH_MISSIONS", 10_000);
    let repo = TestRepo::new();
    let mut env = TestEnv::new();
    env.start_server();
    let repository = repo.path_text();

    // Rounds interleave the reference with the measured paths, so that load from other
    // processes hits both alike; each ratio is a median over the rounds.
    let _ = sqlite_one_insert_per_transaction(&env.root().join("warm"), 50);
    let rounds = env_number("NAGI_BENCH_ROUNDS", 5);
    let (mut references, mut one_ratios, mut sixteen_ratios, mut one_rates, mut sixteen_rates) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let before =
            sqlite_one_insert_per_transaction(&env.root().join(format!("a{round}")), create_count);
        let one_client = creates(&env, &repository, 1, create_count, &format!("one{round}"));
        let sixteen = creates(
            &env,
            &repository,
            16,
            create_count / 4,
            &format!("many{round}"),
        );
        let after =
            sqlite_one_insert_per_transaction(&env.root().join(format!("b{round}")), create_count);
        let reference = (before + after) / 2.0;
        references.push(reference);
        one_rates.push(one_client);
        sixteen_rates.push(sixteen);
        one_ratios.push(one_client / reference);
        sixteen_ratios.push(sixteen / reference);
    }
    let median = |values: &mut Vec<f64>| {
        values.sort_by(|a, b| a.partial_cmp(b).unwrap());
        values[values.len() / 2]
    };
    println!(
        "durable mission.create over the socket vs one INSERT per transaction (WAL, synchronous=FULL), median of {rounds} rounds"
    );
    println!(
        "  sqlite reference      {:>10.0} commits/s",
        median(&mut references)
    );
    println!(
        "  1 client              {:>10.0} creates/s   ratio {:.2}  (target >= 0.7)",
        median(&mut one_rates),
        median(&mut one_ratios)
    );
    println!(
        "  16 clients            {:>10.0} creates/s   ratio {:.2}  (target >= 3)",
        median(&mut sixteen_rates),
        median(&mut sixteen_ratios)
    );

    // The floor under the 1-client figure: the round trip of a request that writes nothing.
    let mut client = env.client();
    let pings = 2000;
    let started = Instant::now();
    for _ in 0..pings {
        client.request("ping", json!({})).unwrap();
    }
    println!(
        "  ping round trip       {:>10.1} µs  (the socket's share of each create above)",
        started.elapsed().as_secs_f64() * 1e6 / pings as f64
    );

    // A fresh session with exactly `mission_count` missions for the read and start-up figures.
    drop(env);
    let mut env = TestEnv::new();
    env.start_server();
    creates(&env, &repository, 16, mission_count / 16, "fill");
    creates(&env, &repository, 1, mission_count % 16, "rest");
    let summaries = env.ok("mission.list", json!({}))["missions"]
        .as_array()
        .unwrap()
        .clone();
    let listed = summaries.len();
    let mut client = env.client();
    // Every fifth mission, spread over the whole id range.
    let ids: Vec<String> = summaries
        .iter()
        .step_by(5)
        .map(|summary| summary["mission_id"].as_str().unwrap().to_string())
        .collect();
    let mut latencies = Vec::with_capacity(ids.len());
    for id in &ids {
        let started = Instant::now();
        client
            .request("mission.get", json!({"mission_id": id}))
            .unwrap();
        latencies.push(started.elapsed());
    }
    latencies.sort();
    println!(
        "mission.get with {listed} missions stored ({} gets)",
        latencies.len()
    );
    println!(
        "  p50 {:>8.1} µs   p99 {:>8.1} µs",
        percentile(&latencies, 0.5).as_secs_f64() * 1e6,
        percentile(&latencies, 0.99).as_secs_f64() * 1e6
    );

    // Start-up: from spawning the server to the first answered mission.list.
    let mut startups = Vec::new();
    for _ in 0..5 {
        env.signal_server(libc::SIGTERM);
        let started = Instant::now();
        let answered = Arc::new(AtomicUsize::new(0));
        let child = env
            .command()
            .arg("server")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        loop {
            if let Ok(mut client) = Client::connect(&env.socket)
                && let Ok(result) = client.request("mission.list", json!({}))
            {
                answered.store(
                    result["missions"].as_array().unwrap().len(),
                    Ordering::SeqCst,
                );
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        startups.push(started.elapsed());
        assert_eq!(answered.load(Ordering::SeqCst), listed);
        // SAFETY: stopping the server this bench started.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let mut child = child;
        child.wait().unwrap();
    }
    startups.sort();
    println!("server start to the first answered mission.list with {listed} missions");
    println!(
        "  median {:.3} s  (target < 0.3 s)",
        startups[startups.len() / 2].as_secs_f64()
    );
    env.start_server();
}
