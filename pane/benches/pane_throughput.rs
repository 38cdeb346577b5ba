//! Pane output throughput against tmux, measured in the same run, for two inputs.
//!
//! - **plain log**: 80–110 byte ASCII log lines without escapes. Most of it takes the fast
//!   path that renders plain rows without vt100 (`nagi_pane::fast_forward`), so it shows
//!   that path at its best.
//! - **build log**: `cargo build`-shaped lines with SGR colours and multi-byte UTF-8
//!   (`→`, `✓`, accents, CJK). The colours keep it off the fast path: every byte goes
//!   through vt100, as the output of a real build or agent does.
//!
//! Each input is a file of 128 MiB by default (`NAGI_BENCH_MIB` scales it). A child waits
//! for a go signal, `cat`s the file to its PTY, then signals the end. Both terminals run
//! the same script shape, and both timers start only once the terminal and its pane exist:
//! - **nagi**: the pane runs `read go; cat FILE; echo SENTINEL`. The time runs from
//!   writing `go` to the pane until the pane's screen shows the sentinel, i.e. until the
//!   host has read and parsed everything.
//! - **tmux**: the session runs `tmux wait-for go; cat FILE; tmux wait-for -S done`. Its
//!   server and session are up before the timer starts; the time runs from
//!   `tmux wait-for -S go` until `tmux wait-for done` returns.
//!
//! Both use a 200x50 pane and 10,000 lines of history. nagi also runs with one attached
//! observer that encodes every frame as the socket would. An observer that is evicted for
//! lagging stops costing anything, so such a round says nothing about the cost of
//! observing: it is reported, and no ratio is given for it. Each variant runs
//! `NAGI_BENCH_ROUNDS` times (default 2); every round's ratio is printed, and the best
//! round is summarised. Run with `cargo bench -p nagi-pane --bench pane_throughput`.

#[path = "pane_common/mod.rs"]
mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use nagi_pane::{PaneHost, PaneHostConfig, WorkspaceCreate};
use nagi_schema::pane::{OutputMatch, PaneWaitForOutputParams, ReadSource};
use nagi_schema::session_protocol::{SessionFramePayload, SessionRole};

/// The allocator of the `nagi` binary, so that this process's speed is the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SENTINEL: &str = "NAGI-BENCH-SENTINEL";

/// One tmux round: a fresh server whose session waits for `go` before it `cat`s.
fn tmux_round(directory: &Path, file: &Path, round: usize) -> Duration {
    let tmux = Tmux::new(directory, &format!("nagi-bench-tp{round}"), 10_000);
    let script = format!(
        "tmux -L {socket} wait-for go; cat {file}; tmux -L {socket} wait-for -S done",
        socket = tmux.socket,
        file = file.display(),
    );
    // The server and the session exist once `new-session -d` returns; the session's
    // script blocks in `wait-for go` until the timer has started.
    tmux.run(&["new-session", "-d", "-x", "200", "-y", "50", &script]);
    let ((), elapsed) = timed(|| {
        tmux.run(&["wait-for", "-S", "go"]);
        tmux.run(&["wait-for", "done"]);
    });
    elapsed
}

/// What the attached observer of a round saw.
struct ObserverReport {
    frames: usize,
    bytes: usize,
    evicted: bool,
}

struct NagiRound {
    elapsed: Duration,
    observer: Option<ObserverReport>,
}

impl NagiRound {
    /// Whether the round measured what its variant claims: an observer variant whose
    /// observer was evicted measured nagi without an observer for most of the run.
    fn counts(&self) -> bool {
        self.observer.as_ref().is_none_or(|report| !report.evicted)
    }
}

async fn nagi_round(file: &Path, with_observer: bool) -> NagiRound {
    let host = PaneHost::new(PaneHostConfig {
        default_shell: Some("/bin/sh".into()),
        initial_cols: 200,
        initial_rows: 50,
        scrollback_lines: 10_000,
        ..PaneHostConfig::default()
    });
    let script = format!(
        "read go; cat {}; echo {SENTINEL}; sleep 1000",
        file.display()
    );
    let (_, _, pane) = host
        .create_workspace(WorkspaceCreate {
            command: Some(vec!["sh".into(), "-c".into(), script]),
            ..WorkspaceCreate::default()
        })
        .expect("bench pane starts");
    let observer = with_observer.then(|| {
        let mut membership = host
            .session_join(
                &pane.terminal_id,
                SessionRole::Observer,
                None,
                "bench-observer",
            )
            .expect("join");
        tokio::spawn(async move {
            let mut report = ObserverReport {
                frames: 0,
                bytes: 0,
                evicted: false,
            };
            while let Some(frame) = membership.frames.recv().await {
                // Encode each frame as the socket would.
                let line = frame.to_line();
                report.frames += 1;
                report.bytes += line.len();
                report.evicted |= matches!(frame.payload, SessionFramePayload::Error { .. });
            }
            report
        })
    });
    let host = Arc::clone(&host);
    let wait = PaneWaitForOutputParams {
        pane_id: pane.pane_id.clone(),
        source: ReadSource::Visible,
        output_match: OutputMatch::Substring {
            value: SENTINEL.into(),
        },
        lines: None,
        strip_ansi: true,
        timeout_ms: Some(600_000),
    };
    let start = std::time::Instant::now();
    host.send_text(&pane.pane_id, "go\n")
        .await
        .expect("start cat");
    let matched = nagi_pane::dispatch(
        &host,
        "pane.wait_for_output",
        serde_json::to_value(&wait).unwrap(),
    )
    .await
    .unwrap();
    let elapsed = start.elapsed();
    matched.expect("the sentinel appears");
    host.shutdown().await;
    let observer = match observer {
        Some(task) => Some(task.await.expect("observer task")),
        None => None,
    };
    NagiRound { elapsed, observer }
}

fn print_time(label: &str, bytes: usize, elapsed: Duration, suffix: &str) {
    println!(
        "    {label:<28} {:>8.2} s  {:>7.1} MB/s{suffix}",
        elapsed.as_secs_f64(),
        mb_per_second(bytes, elapsed)
    );
}

/// tmux's time over nagi's: above 1, nagi was faster.
fn ratio_text(tmux: Option<Duration>, nagi: Duration) -> String {
    tmux.map_or(String::new(), |tmux| {
        format!("  {:.2}x tmux", tmux.as_secs_f64() / nagi.as_secs_f64())
    })
}

/// Runs every variant on one input and prints each round and the best.
fn bench_input(
    runtime: &tokio::runtime::Runtime,
    directory: &Path,
    name: &str,
    file: &Path,
    bytes: usize,
    rounds: usize,
) {
    println!("  {name}: {:.1} MB", mb(bytes));
    let tmux_best = if Tmux::available() {
        let times: Vec<Duration> = (0..rounds)
            .map(|round| tmux_round(directory, file, round))
            .collect();
        for (round, elapsed) in times.iter().enumerate() {
            print_time(&format!("tmux, round {}", round + 1), bytes, *elapsed, "");
        }
        times.iter().min().copied()
    } else {
        println!("    tmux is not installed: no ratio");
        None
    };
    for with_observer in [false, true] {
        let label = if with_observer {
            "nagi + 1 observer"
        } else {
            "nagi"
        };
        let mut counted: Vec<Duration> = Vec::new();
        for round in 0..rounds {
            let result = runtime.block_on(nagi_round(file, with_observer));
            let round_label = format!("{label}, round {}", round + 1);
            if result.counts() {
                // Each round against tmux's best: the round's own figure, as a reader
                // checks that every run met a target.
                print_time(
                    &round_label,
                    bytes,
                    result.elapsed,
                    &ratio_text(tmux_best, result.elapsed),
                );
                counted.push(result.elapsed);
            } else {
                print_time(
                    &round_label,
                    bytes,
                    result.elapsed,
                    "  no ratio: the observer was evicted for lagging",
                );
            }
            if let Some(report) = &result.observer {
                println!(
                    "      observer: {} frames, {:.1} MB of JSON lines, evicted for lagging: {}",
                    report.frames,
                    mb(report.bytes),
                    report.evicted
                );
            }
        }
        match counted.iter().min() {
            Some(best) => print_time(
                &format!("{label}, best"),
                bytes,
                *best,
                &ratio_text(tmux_best, *best),
            ),
            None => println!("    {label:<28} no ratio: the observer was evicted in every round"),
        }
    }
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let mib = env_number("NAGI_BENCH_MIB", 128);
    let rounds = env_number("NAGI_BENCH_ROUNDS", 2).max(1);
    let directory = tempfile::tempdir().expect("temp dir");
    let plain = directory.path().join("plain.log");
    let plain_bytes = write_text_file(&plain, mib * 1024 * 1024);
    let build = directory.path().join("build.log");
    let build_bytes = write_build_log_file(&build, mib * 1024 * 1024);
    println!(
        "pane_throughput: 200x50, 10,000 lines of history, {rounds} round(s) per variant; ratio = tmux's best time / nagi's time"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    bench_input(
        &runtime,
        directory.path(),
        "plain log (ASCII, no escapes: mostly the fast path)",
        &plain,
        plain_bytes,
        rounds,
    );
    bench_input(
        &runtime,
        directory.path(),
        "build log (SGR colours, multi-byte UTF-8: all through vt100)",
        &build,
        build_bytes,
        rounds,
    );
}
