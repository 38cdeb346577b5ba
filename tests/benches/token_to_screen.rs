//! From the model's first streamed token to that text on an attached screen (issue 16,
//! target: p99 ≤ 20 ms).
//!
//! A real `nagi server` runs a mission with the real Codex CLI against the mock model. A
//! real `nagi pane attach` shows the run's pane on a pseudo-terminal this bench owns, and a
//! vt100 mirror of what the client draws is searched for each answer. Every sample is one
//! turn (the first, then follow-ups with `mission.send`, each resuming the session): from
//! the instant the mock starts sending the turn's answer to the instant the attached screen
//! shows it. The path measured is the whole one a person watches: Codex reading the stream,
//! its `item/agentMessage/delta`, the adapter, the run's console records, the console in
//! the pane, the pane server and the attach client.
//!
//! Run: `cargo build --release -p nagi && cargo bench -p nagi-tests --bench token_to_screen`
//! (`NAGI_BENCH_TOKEN_TURNS`, default 30, sets the number of samples). Without an
//! installed Codex CLI (`.ci/install-providers`) it says so and measures nothing.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nagi_tests::mock_model::{MockModelConfig, MockModelServer, Scenario};
use nagi_tests::real_cli;
use nagi_tests::*;
use serde_json::{Value, json};

const ROWS: u16 = 40;
const COLS: u16 = 120;
const TARGET_P99_MS: f64 = 20.0;

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// The answer of turn `turn`: short, so the console draws it on one row.
fn answer(turn: usize) -> String {
    format!("answer-{turn:03} arrived")
}

/// `nagi pane attach` on a pseudo-terminal; a thread mirrors what it draws and notes when
/// each answer first shows.
struct AttachedScreen {
    child: Child,
    seen: Arc<Mutex<BTreeMap<usize, Instant>>>,
}

impl AttachedScreen {
    fn attach(env: &TestEnv, pane_id: &str, turns: usize) -> AttachedScreen {
        let (master, slave) = nagi_tests::pty::open_pty(ROWS, COLS);
        let stdio = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("dup the pty slave"));
        let mut command = Command::new(nagi_binary());
        command
            .args(["pane", "attach", pane_id])
            .env_remove("NAGI_SOCKET_PATH")
            .env_remove("NAGI_SESSION")
            .env("NAGI_CONFIG_DIR", &env.config_dir)
            .env("HOME", env.home())
            .env("TERM", "xterm-256color")
            .stdin(stdio(&slave))
            .stdout(stdio(&slave))
            .stderr(stdio(&slave));
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("nagi pane attach starts");
        drop(slave);
        let seen: Arc<Mutex<BTreeMap<usize, Instant>>> = Arc::default();
        let noted = seen.clone();
        let mut master = File::from(master);
        std::thread::spawn(move || {
            let mut mirror = vt100::Parser::new(
                ROWS.try_into().expect("rows"),
                COLS.try_into().expect("cols"),
                0,
            );
            let mut buffer = vec![0u8; 64 * 1024];
            while let Ok(read) = master.read(&mut buffer) {
                if read == 0 {
                    return;
                }
                let now = Instant::now();
                mirror.process(&buffer[..read]);
                let screen = mirror.screen().contents();
                let mut noted = noted.lock().expect("lock");
                for turn in 0..turns {
                    if !noted.contains_key(&turn) && screen.contains(&answer(turn)) {
                        noted.insert(turn, now);
                    }
                }
            }
        });
        AttachedScreen { child, seen }
    }

    fn shown_at(&self, turn: usize) -> Option<Instant> {
        self.seen.lock().expect("lock").get(&turn).copied()
    }
}

impl Drop for AttachedScreen {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes `[providers.codex]`: the real CLI, pointed at the mock.
fn write_config(config_dir: &Path, codex: &Path, mock: &MockModelServer, home: &real_cli::CliHome) {
    let quoted = |text: &str| toml_string(text);
    let args: Vec<String> = real_cli::codex_overrides(&mock.base_url())
        .iter()
        .map(|arg| quoted(arg))
        .collect();
    let mut config = format!(
        "[providers.codex]\ncommand = [{}]\nargs = [{}]\n\n[providers.codex.env]\n",
        quoted(&codex.display().to_string()),
        args.join(", ")
    );
    for (name, value) in home.env(real_cli::RealProvider::Codex, &mock.base_url()) {
        config.push_str(&format!("{name} = {}\n", quoted(&value)));
    }
    std::fs::create_dir_all(config_dir).expect("create the config folder");
    std::fs::write(config_dir.join("config.toml"), config).expect("write config.toml");
}

fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// Waits until the run's `turn` (1-based) completed.
fn wait_for_turn(env: &TestEnv, turn: usize) -> Value {
    wait_for_mission(env, "m", &format!("turn {turn} to complete"), |mission| {
        mission["run"]["turns"] == turn
            && mission["run"]["last_turn_outcome"].is_string()
            && mission["run"]["live"] == false
    })
}

/// The nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    let rank = ((fraction * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let Some(codex) = real_cli::installed_cli("codex") else {
        println!(
            "token_to_screen: the Codex CLI is not installed (.ci/install-providers); nothing measured"
        );
        return;
    };
    let turns = env_number("NAGI_BENCH_TOKEN_TURNS", 30).max(3) + 1;
    // Every answer is held back a little, so the attached screen is waiting for it.
    let steps: Vec<Value> = (0..turns)
        .map(|turn| json!({"text": answer(turn), "delay_ms": if turn == 0 { 2_000 } else { 150 }}))
        .collect();
    let scenario = Scenario::from_json(&json!({"steps": steps}).to_string()).expect("scenario");
    let mock = MockModelServer::start(MockModelConfig {
        scenario,
        log_dir: None,
        port: 0,
    })
    .expect("start the mock model");
    let mut env = TestEnv::new();
    let home = real_cli::CliHome::new(&std::fs::canonicalize(env.root()).unwrap());
    write_config(&env.config_dir, &codex, &mock, &home);
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m", &repo.path_text()));
    env.ok("mission.configure", configure_params("m", "true", &[]));
    env.ok(
        "mission.start",
        json!({"mission_id": "m", "run_id": "r1", "provider": "codex", "mode": "managed"}),
    );
    let live = wait_for_mission(&env, "m", "the run's pane", |mission| {
        mission["run"]["pane_id"].is_string()
    });
    let screen = AttachedScreen::attach(&env, live["run"]["pane_id"].as_str().unwrap(), turns);
    wait_for_turn(&env, 1);
    for turn in 1..turns {
        env.ok(
            "mission.send",
            json!({"mission_id": "m", "text": format!("go on ({turn})")}),
        );
        wait_for_turn(&env, turn + 1);
    }
    std::thread::sleep(Duration::from_millis(200));

    let sent: BTreeMap<usize, Instant> = mock.replies_sent().into_iter().collect();
    let mut latencies = Vec::new();
    // Turn 0 is the warm-up (the client attaches while it waits).
    for turn in 1..turns {
        let (Some(sent), Some(shown)) = (sent.get(&turn), screen.shown_at(turn)) else {
            panic!(
                "turn {turn}: the answer was sent {:?} and shown {:?}",
                sent.get(&turn),
                screen.shown_at(turn)
            );
        };
        latencies.push(shown.duration_since(*sent).as_secs_f64() * 1000.0);
    }
    let listed: Vec<String> = latencies.iter().map(|ms| format!("{ms:.1}")).collect();
    println!(
        "token_to_screen: the real Codex CLI, {} turns, ms: {}",
        latencies.len(),
        listed.join(" ")
    );
    latencies.sort_by(f64::total_cmp);
    let (p50, p99) = (percentile(&latencies, 0.50), percentile(&latencies, 0.99));
    println!(
        "token_to_screen: p50 {p50:.1} ms, p99 {p99:.1} ms (target p99 ≤ {TARGET_P99_MS} ms: {})",
        if p99 <= TARGET_P99_MS {
            "met"
        } else {
            "NOT MET"
        }
    );
}
