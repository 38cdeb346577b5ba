//! Load: 64 concurrent clients issue a fixed mix of reads and writes while 10 observers
//! are attached to a busy pane. Every request must succeed; the latency percentiles and the
//! server's peak RSS are printed (`load:` line) and the RSS must stay bounded.
//!
//! `NAGI_LOAD_REQUESTS` sets the requests per client (default 40, so 2,560 in all; the
//! README's long mode uses 1,000, so 64,000).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use nagi_tests::*;
use serde_json::{Value, json};

use crate::panes::{pane_id, start_pane, wait_for_read};

const CLIENTS: usize = 64;
const OBSERVERS: usize = 10;
/// The server's peak RSS must stay under this while serving the load.
const RSS_BOUND_KIB: u64 = 256 * 1024;

fn requests_per_client() -> usize {
    std::env::var("NAGI_LOAD_REQUESTS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(40)
}

/// The request a client sends at step `step`: mostly reads, one write in four.
fn request_for(client: usize, step: usize, repository: &str) -> (&'static str, Value) {
    let own = format!("load-{client}-{}", step / 4);
    match step % 8 {
        0 => ("mission.create", create_params(&own, repository)),
        1 => ("mission.get", json!({"mission_id": own})),
        2 => ("mission.list", json!({})),
        3 => ("attention.list", json!({})),
        4 => ("mission.create", create_params(&own, repository)),
        5 => ("mission.configure", configure_params(&own, "true", &[])),
        6 => (
            "mission.get",
            json!({"mission_id": format!("seed-{}", step % 16)}),
        ),
        _ => ("ping", json!({})),
    }
}

struct ClientReport {
    latencies: Vec<Duration>,
    errors: Vec<String>,
}

fn run_client(
    socket: &std::path::Path,
    client: usize,
    requests: usize,
    repository: &str,
    start: &Barrier,
) -> ClientReport {
    let mut connection = nagi_schema::client::Client::connect(socket).expect("connect");
    connection
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    let mut report = ClientReport {
        latencies: Vec::with_capacity(requests),
        errors: Vec::new(),
    };
    start.wait();
    for step in 0..requests {
        let (method, params) = request_for(client, step, repository);
        let began = Instant::now();
        let outcome = connection.request(method, params);
        report.latencies.push(began.elapsed());
        if let Err(error) = outcome {
            report
                .errors
                .push(format!("client {client} step {step} {method}: {error}"));
        }
    }
    report
}

/// An attach connection that counts the frames it receives until told to stop.
fn observe(
    socket: &std::path::Path,
    session_id: &str,
    stop: &AtomicBool,
    frames: &AtomicU64,
) -> Result<(), String> {
    let stream = UnixStream::connect(socket).map_err(|error| error.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let join = json!({"type": "join_session", "session_id": session_id, "role": "observer"});
    writer
        .write_all(format!("{join}\n").as_bytes())
        .map_err(|error| error.to_string())?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    while !stop.load(Ordering::Relaxed) {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => return Err("the server closed an observer".into()),
            Ok(_) => {
                let message: Value =
                    serde_json::from_str(&line).map_err(|error| error.to_string())?;
                match message["type"].as_str() {
                    Some("session_frame") => {
                        frames.fetch_add(1, Ordering::Relaxed);
                    }
                    Some("session_joined") => {}
                    _ => return Err(format!("an observer got {message}")),
                }
            }
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(error) => return Err(error.to_string()),
        }
    }
    Ok(())
}

fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .expect("VmHWM");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[index]
}

#[test]
fn sixty_four_clients_and_ten_observers_get_zero_errors_with_bounded_memory() {
    let mut env = TestEnv::new();
    let server_pid = env.start_server();
    let repo = TestRepo::new();
    let repository = repo.path_text();
    for index in 0..16 {
        env.ok(
            "mission.create",
            create_params(&format!("seed-{index}"), &repository),
        );
    }
    let pane = start_pane(
        &env,
        &[
            "sh",
            "-c",
            "i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.02; done",
        ],
    );
    wait_for_read(&env, &pane_id(&pane), "visible", None, |text| {
        text.contains("tick")
    });
    let session_id = pane["terminal_id"].as_str().unwrap().to_string();

    let stop = Arc::new(AtomicBool::new(false));
    let frames = Arc::new(AtomicU64::new(0));
    let observers: Vec<_> = (0..OBSERVERS)
        .map(|_| {
            let (socket, session_id, stop, frames) = (
                env.socket.clone(),
                session_id.clone(),
                stop.clone(),
                frames.clone(),
            );
            std::thread::spawn(move || observe(&socket, &session_id, &stop, &frames))
        })
        .collect();

    let requests = requests_per_client();
    let start = Arc::new(Barrier::new(CLIENTS + 1));
    let began = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let (socket, repository, start) =
                (env.socket.clone(), repository.clone(), start.clone());
            std::thread::spawn(move || run_client(&socket, client, requests, &repository, &start))
        })
        .collect();
    start.wait();
    let reports: Vec<ClientReport> = clients
        .into_iter()
        .map(|handle| handle.join().unwrap())
        .collect();
    let elapsed = began.elapsed();
    let frames_during_load = frames.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    let observer_failures: Vec<String> = observers
        .into_iter()
        .filter_map(|handle| handle.join().unwrap().err())
        .collect();

    let errors: Vec<&String> = reports.iter().flat_map(|report| &report.errors).collect();
    let mut latencies: Vec<Duration> = reports
        .iter()
        .flat_map(|report| report.latencies.iter().copied())
        .collect();
    latencies.sort();
    let rss = peak_rss_kib(server_pid);
    let total = latencies.len();
    println!(
        "load: clients={CLIENTS} observers={OBSERVERS} requests={total} errors={} elapsed={:.2}s throughput={:.0}/s \
         p50={:.2}ms p99={:.2}ms max={:.2}ms observer_frames={frames_during_load} server_peak_rss={:.1}MiB",
        errors.len(),
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64(),
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().unwrap().as_secs_f64() * 1e3,
        rss as f64 / 1024.0,
    );
    assert!(
        errors.is_empty(),
        "{} requests failed, first: {:?}",
        errors.len(),
        &errors[..errors.len().min(5)]
    );
    assert!(
        observer_failures.is_empty(),
        "observers failed: {observer_failures:?}"
    );
    assert!(frames_during_load > 0, "the observers saw the busy pane");
    assert!(
        rss < RSS_BOUND_KIB,
        "server peak RSS {rss} KiB exceeds {RSS_BOUND_KIB} KiB"
    );

    // Every create was acknowledged, so every mission is there.
    let listed = env.ok("mission.list", json!({}))["missions"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(listed, 16 + CLIENTS * requests.div_ceil(4));
}
