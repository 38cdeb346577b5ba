//! Memory of many panes with full scrollback, against tmux, measured in the same run.
//!
//! 50 panes (`NAGI_BENCH_PANES`), each filled with 10,000 lines of scrollback
//! (`NAGI_BENCH_LINES`) of 80–110 byte log lines, on 200x50 screens. Reports the resident
//! set size of this process (which hosts only the panes) and of the tmux server holding
//! the same. Run with `cargo bench -p nagi-pane --bench pane_memory`.

#[path = "pane_common/mod.rs"]
mod common;

use common::*;
use nagi_pane::{PaneHost, PaneHostConfig, WorkspaceCreate};
use nagi_schema::pane::{OutputMatch, PaneWaitForOutputParams, ReadSource};

/// The allocator of the `nagi` binary, so that this process's memory is the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SENTINEL: &str = "NAGI-MEMORY-SENTINEL";

fn tmux_rss(
    directory: &std::path::Path,
    file: &std::path::Path,
    panes: usize,
    lines: usize,
) -> Option<usize> {
    if !Tmux::available() {
        return None;
    }
    let tmux = Tmux::new(directory, "nagi-bench-memory", lines);
    for index in 0..panes {
        let script = format!(
            "cat {}; tmux -L {} wait -S filled-{index}; sleep 100000",
            file.display(),
            tmux.socket
        );
        if index == 0 {
            tmux.run(&["new-session", "-d", "-x", "200", "-y", "50", &script]);
        } else {
            tmux.run(&["new-window", "-d", &script]);
        }
    }
    for index in 0..panes {
        tmux.run(&["wait", &format!("filled-{index}")]);
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let history: usize = tmux
        .run(&["list-panes", "-a", "-F", "#{history_size}"])
        .lines()
        .map(|line| line.trim().parse::<usize>().unwrap_or(0))
        .sum();
    println!("  tmux history rows retained: {history}");
    Some(rss_bytes(tmux.server_pid()))
}

async fn nagi_rss(file: &std::path::Path, panes: usize, lines: usize) -> (usize, usize) {
    let baseline = rss_bytes(std::process::id() as i32);
    let host = PaneHost::new(PaneHostConfig {
        default_shell: Some("/bin/sh".into()),
        initial_cols: 200,
        initial_rows: 50,
        scrollback_lines: lines,
        ..PaneHostConfig::default()
    });
    let mut pane_ids = Vec::new();
    for _ in 0..panes {
        let script = format!("cat {}; echo {SENTINEL}; sleep 100000", file.display());
        let (_, _, pane) = host
            .create_workspace(WorkspaceCreate {
                command: Some(vec!["sh".into(), "-c".into(), script]),
                ..WorkspaceCreate::default()
            })
            .expect("bench pane starts");
        pane_ids.push(pane.pane_id);
    }
    for pane_id in &pane_ids {
        let wait = PaneWaitForOutputParams {
            pane_id: pane_id.clone(),
            source: ReadSource::Visible,
            output_match: OutputMatch::Substring {
                value: SENTINEL.into(),
            },
            lines: None,
            strip_ansi: true,
            timeout_ms: Some(600_000),
        };
        nagi_pane::dispatch(
            &host,
            "pane.wait_for_output",
            serde_json::to_value(&wait).unwrap(),
        )
        .await
        .unwrap()
        .expect("filled");
    }
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let retained: u64 = pane_ids
        .iter()
        .map(|pane_id| {
            host.pane_info(pane_id)
                .unwrap()
                .scroll
                .unwrap()
                .max_offset_from_bottom
        })
        .sum();
    println!("  nagi scrollback rows retained: {retained}");
    let rss = rss_bytes(std::process::id() as i32);
    host.shutdown().await;
    (rss, baseline)
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let panes = env_number("NAGI_BENCH_PANES", 50);
    let lines = env_number("NAGI_BENCH_LINES", 10_000);
    let directory = tempfile::tempdir().expect("temp dir");
    let file = directory.path().join("scrollback.txt");
    // Enough lines to fill the scrollback and the screen.
    let bytes = write_text_file(&file, (lines + 200) * 120);
    println!(
        "pane_memory: {panes} panes x {lines} scrollback lines ({:.1} MB of text per pane), 200x50",
        mb(bytes)
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (nagi, baseline) = runtime.block_on(nagi_rss(&file, panes, lines));
    println!(
        "  nagi process RSS     {:>8.1} MB  (before the panes: {:.1} MB)",
        mb(nagi),
        mb(baseline)
    );
    match tmux_rss(directory.path(), &file, panes, lines) {
        Some(tmux) => {
            println!("  tmux server RSS      {:>8.1} MB", mb(tmux));
            println!(
                "  nagi / tmux          {:>8.2}x  (target <= 2x)",
                nagi as f64 / tmux as f64
            );
        }
        None => println!("  tmux not installed; no ratio"),
    }
}
