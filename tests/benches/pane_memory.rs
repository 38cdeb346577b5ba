//! Memory of many panes with full scrollback: the resident set of the whole `nagi server`
//! process that holds them, against the tmux server holding the same, in the same run.
//!
//! 50 panes (`NAGI_BENCH_PANES`), each filled with 10,000 lines of scrollback
//! (`NAGI_BENCH_LINES`) of 80–110 byte log lines, on 200x50 screens. The nagi side is a
//! real `nagi server` started from a fresh config dir: its panes are made with
//! `workspace.create` over the socket, sized with `session_resize` as an attach client
//! would, and their scrollback is counted with `pane.list`. Its RSS is everything the
//! server holds (runtime, SQLite, each pane's screen, scrollback and replay ring), read
//! from `/proc/<pid>/status`; its RSS right after start-up is printed too.
//!
//! Run:
//! `cargo build --release -p nagi && cargo bench -p nagi-tests --bench pane_memory`
//! (the bench uses the `nagi` next to it, or `NAGI_BIN`).

#[path = "../../pane/benches/pane_common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use common::{Tmux, env_number, mb, rss_bytes, write_text_file};
use nagi_schema::client::Client;
use nagi_tests::TestEnv;
use serde_json::{Value, json};

const SENTINEL: &str = "NAGI-MEMORY-SENTINEL";
const COLS: u16 = 200;
const ROWS: u16 = 50;

fn tmux_rss(directory: &Path, file: &Path, panes: usize, lines: usize) -> Option<usize> {
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
            tmux.run(&[
                "new-session",
                "-d",
                "-x",
                &COLS.to_string(),
                "-y",
                &ROWS.to_string(),
                &script,
            ]);
        } else {
            tmux.run(&["new-window", "-d", &script]);
        }
    }
    for index in 0..panes {
        tmux.run(&["wait", &format!("filled-{index}")]);
    }
    std::thread::sleep(Duration::from_millis(500));
    let history: usize = tmux
        .run(&["list-panes", "-a", "-F", "#{history_size}"])
        .lines()
        .map(|line| line.trim().parse::<usize>().unwrap_or(0))
        .sum();
    println!("  tmux history rows retained: {history}");
    Some(rss_bytes(tmux.server_pid()))
}

/// Sends one request and returns its result, failing the bench with the server's answer.
fn request(client: &mut Client, method: &str, params: Value) -> Value {
    client
        .request(method, params.clone())
        .unwrap_or_else(|error| panic!("{method} {params} failed: {error}"))
}

/// Resizes a pane as an attach client does: join as controller, `session_resize`, leave.
/// The server handles one connection's lines in order, so once `session_left` is read
/// the resize was applied (a refused one answers an `error` line first).
fn resize_pane(env: &TestEnv, terminal_id: &str) {
    let stream = UnixStream::connect(&env.socket).expect("connect for the resize");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    for message in [
        json!({"type": "join_session", "session_id": terminal_id, "role": "controller"}),
        json!({"type": "session_resize", "session_id": terminal_id, "cols": COLS, "rows": ROWS}),
        json!({"type": "leave_session", "session_id": terminal_id}),
    ] {
        writer.write_all(format!("{message}\n").as_bytes()).unwrap();
    }
    loop {
        let mut line = String::new();
        let read = reader.read_line(&mut line).expect("a session line");
        assert!(read > 0, "the server closed the attach connection");
        let message: Value = serde_json::from_str(&line).expect("a JSON line");
        match message["type"].as_str() {
            Some("session_left") => return,
            Some("error") => panic!("the resize of {terminal_id} was refused: {message}"),
            _ => {}
        }
    }
}

/// Fills `panes` panes of a real server and returns (RSS with the panes, RSS after start-up,
/// scrollback rows retained).
fn nagi_rss(env: &TestEnv, server_pid: i32, file: &Path, panes: usize) -> (usize, usize, u64) {
    let started = rss_bytes(server_pid);
    let mut client = env.client();
    client
        .set_read_timeout(Some(Duration::from_secs(900)))
        .unwrap();
    let mut pane_ids = Vec::new();
    for _ in 0..panes {
        let script = format!(
            "read go; cat {}; echo {SENTINEL}; sleep 100000",
            file.display()
        );
        let created = request(
            &mut client,
            "workspace.create",
            json!({"command": ["sh", "-c", script]}),
        );
        let pane = &created["root_pane"];
        resize_pane(env, pane["terminal_id"].as_str().expect("a terminal id"));
        let pane_id = pane["pane_id"].as_str().expect("a pane id").to_string();
        let resized = request(&mut client, "pane.get", json!({"pane_id": pane_id}));
        assert_eq!(
            resized["pane"]["scroll"]["viewport_rows"],
            u64::from(ROWS),
            "{resized}"
        );
        request(
            &mut client,
            "pane.send_text",
            json!({"pane_id": pane_id, "text": "go\n"}),
        );
        pane_ids.push(pane_id);
    }
    for pane_id in &pane_ids {
        let matched = request(
            &mut client,
            "pane.wait_for_output",
            json!({"pane_id": pane_id, "source": "visible",
                   "match": {"type": "substring", "value": SENTINEL}, "timeout_ms": 600_000}),
        );
        assert_eq!(matched["type"], "output_matched", "{matched}");
    }
    std::thread::sleep(Duration::from_millis(500));
    let listed = request(&mut client, "pane.list", json!({}));
    let retained: u64 = listed["panes"]
        .as_array()
        .expect("a pane list")
        .iter()
        .map(|pane| {
            pane["scroll"]["max_offset_from_bottom"]
                .as_u64()
                .unwrap_or(0)
        })
        .sum();
    (rss_bytes(server_pid), started, retained)
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
        "pane_memory: {panes} panes x {lines} scrollback lines ({:.1} MB of text per pane), {COLS}x{ROWS}",
        mb(bytes)
    );
    if lines != 10_000 {
        println!(
            "  note: nagi keeps its default 10,000 scrollback lines per pane; only tmux's history-limit follows NAGI_BENCH_LINES"
        );
    }
    let mut env = TestEnv::new();
    let server_pid = env.start_server() as i32;
    let (nagi, started, retained) = nagi_rss(&env, server_pid, &file, panes);
    println!("  nagi scrollback rows retained: {retained}");
    println!(
        "  nagi server RSS      {:>8.1} MB  (after start-up, before the panes: {:.1} MB)",
        mb(nagi),
        mb(started)
    );
    // The server and its panes go before tmux fills its own, so the two never compete
    // for memory.
    drop(env);
    match tmux_rss(directory.path(), &file, panes, lines) {
        Some(tmux) => {
            println!("  tmux server RSS      {:>8.1} MB", mb(tmux));
            println!(
                "  nagi / tmux          {:>8.2}x  (target <= 2x)",
                nagi as f64 / tmux as f64
            );
        }
        None => println!("  tmux is not installed: no ratio"),
    }
}
