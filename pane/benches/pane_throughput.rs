//! Pane output throughput against tmux, measured in the same run.
//!
//! A child `cat`s a text file (128 MiB by default; `NAGI_BENCH_MIB` scales it) to its
//! PTY, then prints a sentinel. For nagi the time runs until the pane's screen shows the
//! sentinel, i.e. until the host has read and parsed everything. For tmux it runs until
//! `tmux wait done` returns, signalled after `cat` ends. Both use a 200x50 pane and 10,000
//! lines of history. Each variant runs `NAGI_BENCH_ROUNDS` times (default 2); the best
//! round counts. Run with `cargo bench -p nagi-pane --bench pane_throughput`.

#[path = "pane_common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use nagi_pane::{PaneHost, PaneHostConfig, WorkspaceCreate};
use nagi_schema::pane::{OutputMatch, PaneWaitForOutputParams, ReadSource};
use nagi_schema::session_protocol::SessionRole;

/// The allocator of the `nagi` binary, so that this process's speed is the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SENTINEL: &str = "NAGI-BENCH-SENTINEL";

fn tmux_round(directory: &std::path::Path, file: &std::path::Path, round: usize) -> Duration {
    let tmux = Tmux::new(directory, &format!("nagi-bench-tp{round}"), 10_000);
    let script = format!(
        "cat {}; tmux -L {} wait -S done",
        file.display(),
        tmux.socket
    );
    let ((), elapsed) = timed(|| {
        tmux.run(&["new-session", "-d", "-x", "200", "-y", "50", &script]);
        tmux.run(&["wait", "done"]);
    });
    elapsed
}

struct NagiRound {
    elapsed: Duration,
    observer_frames: Option<(usize, usize, bool)>,
}

async fn nagi_round(file: &std::path::Path, with_observer: bool) -> NagiRound {
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
            let (mut frames, mut bytes, mut evicted) = (0usize, 0usize, false);
            while let Some(frame) = membership.frames.recv().await {
                // Encode each frame as the socket would.
                let line = frame.to_line();
                frames += 1;
                bytes += line.len();
                evicted |= matches!(
                    frame.payload,
                    nagi_schema::session_protocol::SessionFramePayload::Error { .. }
                );
            }
            (frames, bytes, evicted)
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
    let observer_frames = match observer {
        Some(task) => Some(task.await.expect("observer task")),
        None => None,
    };
    NagiRound {
        elapsed,
        observer_frames,
    }
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let mib = env_number("NAGI_BENCH_MIB", 128);
    let rounds = env_number("NAGI_BENCH_ROUNDS", 2).max(1);
    let directory = tempfile::tempdir().expect("temp dir");
    let file = directory.path().join("output.txt");
    let bytes = write_text_file(&file, mib * 1024 * 1024);
    println!(
        "pane_throughput: {:.1} MB of text, {rounds} round(s) each, best round counts",
        mb(bytes)
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");

    let tmux_best = if Tmux::available() {
        let best = (0..rounds)
            .map(|round| tmux_round(directory.path(), &file, round))
            .min()
            .expect("one round");
        println!(
            "  tmux                 {:>8.2} s  {:>7.1} MB/s",
            best.as_secs_f64(),
            mb_per_second(bytes, best)
        );
        Some(best)
    } else {
        println!("  tmux                 not installed; no ratio");
        None
    };
    for with_observer in [false, true] {
        let mut best: Option<NagiRound> = None;
        for _ in 0..rounds {
            let round = runtime.block_on(nagi_round(&file, with_observer));
            if best
                .as_ref()
                .is_none_or(|best| round.elapsed < best.elapsed)
            {
                best = Some(round);
            }
        }
        let best = best.expect("one round");
        let label = if with_observer {
            "nagi + 1 observer"
        } else {
            "nagi"
        };
        let ratio = tmux_best.map_or(String::new(), |tmux| {
            format!(
                "  {:.2}x tmux",
                tmux.as_secs_f64() / best.elapsed.as_secs_f64()
            )
        });
        println!(
            "  {label:<20} {:>8.2} s  {:>7.1} MB/s{ratio}",
            best.elapsed.as_secs_f64(),
            mb_per_second(bytes, best.elapsed)
        );
        if let Some((frames, frame_bytes, evicted)) = best.observer_frames {
            println!(
                "    observer: {frames} frames, {:.1} MB of JSON lines, evicted for lagging: {evicted}",
                mb(frame_bytes)
            );
        }
    }
}
