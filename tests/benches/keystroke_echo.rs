//! Keystroke-to-echo latency through `nagi pane attach` against `tmux attach`, on the same
//! shell, both clients on a pseudo-terminal that this bench owns (it plays the person's
//! terminal emulator).
//!
//! The nagi side is a real `nagi server` started from a fresh config dir in a session of
//! its own (as the CLI starts one, and as tmux's server runs: Linux schedules each session
//! as a group, so a server left in the bench's session would share the CPU share of
//! whatever else that session runs), a managed pane
//! running `bash --norc --noprofile` (made with `workspace.create`), and a real
//! `nagi pane attach PANE` process on the bench's pty. The tmux side is a private tmux
//! server with a session running the same shell, and a `tmux attach` client on another
//! pty of the bench. Both terminals are 80x24.
//!
//! One sample: with the shell idle at its prompt, one printable byte is written to the
//! client's pty master, and the time is taken when the read of the master that makes that
//! character appear at the cursor's cell returns (what the client draws is fed to a vt100
//! parser, so escape sequences cannot be mistaken for the echo). Between samples the bench
//! waits `NAGI_BENCH_GAP_MS` (10 ms), reading whatever else is drawn, so that each key is
//! typed into an idle system as a person types; every 60 keys the line is cleared with
//! Ctrl-U. After a warm-up, the sides take turns key by key (tmux, nagi, then nagi, tmux,
//! ...), so that the noise of this shared machine falls on both: on a 2-vCPU VM most of a
//! key's latency is the wake-up of an idle vCPU for the kernel's tty work (each of the four
//! PTY writes of a key is passed on by a kworker, on both sides), and the host's slow
//! phases last seconds. `NAGI_BENCH_INTERLEAVE=rounds` takes turns by rounds of keys
//! instead, as the first version of this bench did. When p99 misses, the bench prints each
//! side's slowest keys beside the other side's key at the same place, which tells a slow
//! phase of the host (both slow) from one side's own stalls. It also counts each side's keys
//! over 1 ms: on a busy machine those waited for the scheduler's tick, and a side with more
//! than 1% of its keys there has its p99 there.
//!
//! To measure a busy machine, start the load in sessions of its own (`setsid yes >
//! /dev/null`), as a build in another terminal runs. Load started in the bench's session
//! shares the bench's scheduling group, and the bench plays the terminal emulator, which
//! never runs in its shell's session: its own wake-ups would then wait on the load on both
//! sides.
//!
//! Run:
//! `cargo build --release -p nagi && cargo bench -p nagi-tests --bench keystroke_echo`
//! (the bench uses the `nagi` next to it, or `NAGI_BIN`). `NAGI_BENCH_ROUNDS` (10) and
//! `NAGI_BENCH_SAMPLES` (100 per side and round) make longer runs.

#[path = "../../pane/benches/pane_common/mod.rs"]
mod common;

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Tmux, env_number};
use nagi_tests::TestEnv;
use serde_json::json;

const COLS: u16 = 80;
const ROWS: u16 = 24;
/// The prompt of both shells.
const PROMPT: &str = "$ ";
/// Keys typed on one line before it is cleared with Ctrl-U.
const KEYS_PER_LINE: u16 = 60;
const WARM_UP_KEYS: usize = 50;
/// How long one echo may take before the bench gives up.
const ECHO_TIMEOUT: Duration = Duration::from_secs(5);
const CTRL_U: u8 = 0x15;
/// A key slower than this waited for something other than its own hops (on a busy machine,
/// the scheduler's tick); the bench counts them on each side.
const SLOW_KEY: Duration = Duration::from_millis(1);

/// The shell both sides run, as argv.
fn shell_argv() -> Vec<String> {
    [
        "env",
        &format!("PS1={PROMPT}"),
        "bash",
        "--norc",
        "--noprofile",
    ]
    .iter()
    .map(|arg| arg.to_string())
    .collect()
}

/// A terminal client (`nagi pane attach` or `tmux attach`) running on a pty whose master
/// this bench reads and writes, with a vt100 mirror of what the client drew.
struct PtyClient {
    name: &'static str,
    master: File,
    child: Child,
    mirror: vt100::Parser,
    buffer: Vec<u8>,
}

impl PtyClient {
    /// Starts `command` in a session of its own with the pty's slave as its controlling
    /// terminal and its stdin, stdout and stderr.
    fn spawn(name: &'static str, mut command: Command) -> PtyClient {
        let (master, slave) = nagi_tests::pty::open_pty(ROWS, COLS);
        let stdio = |fd: &OwnedFd| Stdio::from(fd.try_clone().expect("dup the pty slave"));
        command
            .stdin(stdio(&slave))
            .stdout(stdio(&slave))
            .stderr(stdio(&slave))
            .env("TERM", "xterm-256color")
            .env_remove("TMUX");
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command
            .spawn()
            .unwrap_or_else(|error| panic!("{name} client starts: {error}"));
        drop(slave);
        PtyClient {
            name,
            master: File::from(master),
            child,
            mirror: vt100::Parser::new(
                ROWS.try_into().expect("rows"),
                COLS.try_into().expect("cols"),
                0,
            ),
            buffer: vec![0; 64 * 1024],
        }
    }

    fn screen(&self) -> &vt100::Screen {
        self.mirror.screen()
    }

    /// Waits until the master is readable or `deadline` passes; reads and mirrors what is
    /// there. Returns when the read returned, or `None` when nothing came.
    fn read_once(&mut self, deadline: Instant) -> Option<Instant> {
        let timeout = deadline.saturating_duration_since(Instant::now());
        let mut poll = libc::pollfd {
            fd: self.master.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // Rounded up: a timeout rounded down to 0 would spin through the last millisecond.
        let millis = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, millis) };
        if ready <= 0 {
            return None;
        }
        let count = match self.master.read(&mut self.buffer) {
            Ok(count) => count,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => return None,
            Err(error) => panic!("{} client's terminal: {error}", self.name),
        };
        let read_at = Instant::now();
        assert!(count > 0, "the {} client closed its terminal", self.name);
        self.mirror.process(&self.buffer[..count]);
        Some(read_at)
    }

    /// Reads until `done` holds for the mirrored screen; the time of the read that made it
    /// hold.
    fn read_until(&mut self, what: &str, done: impl Fn(&vt100::Screen) -> bool) -> Instant {
        let deadline = Instant::now() + ECHO_TIMEOUT;
        if done(self.screen()) {
            return Instant::now();
        }
        loop {
            if let Some(read_at) = self.read_once(deadline)
                && done(self.screen())
            {
                return read_at;
            }
            if Instant::now() >= deadline {
                panic!(
                    "{}: {what} did not happen within {ECHO_TIMEOUT:?}; the screen:\n{}",
                    self.name,
                    self.screen().contents()
                );
            }
        }
    }

    /// Reads for `duration`, whatever comes.
    fn drain_for(&mut self, duration: Duration) {
        let deadline = Instant::now() + duration;
        while Instant::now() < deadline {
            self.read_once(deadline);
        }
    }

    /// Reads until nothing came for `quiet`.
    fn settle(&mut self, quiet: Duration) {
        while self.read_once(Instant::now() + quiet).is_some() {}
    }

    fn type_bytes(&mut self, bytes: &[u8]) {
        self.master
            .write_all(bytes)
            .unwrap_or_else(|error| panic!("typing into the {} client: {error}", self.name));
    }

    /// Waits for the prompt with an empty line after it.
    fn wait_for_prompt(&mut self) {
        self.read_until("the prompt", |screen| {
            let (row, col) = screen.cursor_position();
            col == PROMPT.len() as u16
                && screen.contents_between(row, 0, row, col) == PROMPT
                && !screen
                    .cell(row, col)
                    .is_some_and(|cell| cell.has_contents())
        });
    }

    /// Types one key at the prompt and returns how long its echo took.
    fn keystroke(&mut self, key: u8) -> Duration {
        let (row, col) = self.screen().cursor_position();
        assert!(
            !self
                .screen()
                .cell(row, col)
                .is_some_and(|cell| cell.has_contents()),
            "{}: the cursor's cell is not blank",
            self.name
        );
        let expected = (key as char).to_string();
        let typed_at = Instant::now();
        self.type_bytes(&[key]);
        let echoed_at = self.read_until("the echo", |screen| {
            screen
                .cell(row, col)
                .is_some_and(|cell| cell.contents() == expected)
        });
        echoed_at - typed_at
    }

    /// Types the next key after an idle gap, clearing the line first when it is full.
    fn next_keystroke(&mut self, gap: Duration, next_key: &mut u8) -> Duration {
        let (_, col) = self.screen().cursor_position();
        if col >= PROMPT.len() as u16 + KEYS_PER_LINE {
            self.type_bytes(&[CTRL_U]);
            self.wait_for_prompt();
            self.settle(Duration::from_millis(20));
        }
        self.drain_for(gap);
        let sample = self.keystroke(*next_key);
        *next_key = if *next_key == b'z' {
            b'a'
        } else {
            *next_key + 1
        };
        sample
    }

    /// Types `count` keys, each after an idle gap.
    fn keystrokes(&mut self, count: usize, gap: Duration, next_key: &mut u8) -> Vec<Duration> {
        (0..count)
            .map(|_| self.next_keystroke(gap, next_key))
            .collect()
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The nagi side: a pane running the shell in a real server, and `nagi pane attach`.
fn start_nagi(env: &TestEnv) -> PtyClient {
    let created = env.ok("workspace.create", json!({ "command": shell_argv() }));
    let pane_id = created["root_pane"]["pane_id"]
        .as_str()
        .expect("a pane id")
        .to_string();
    let mut command = env.command();
    command.args(["pane", "attach", &pane_id]);
    let mut client = PtyClient::spawn("nagi", command);
    client.wait_for_prompt();
    client.settle(Duration::from_millis(300));
    client
}

/// The tmux side: a session running the shell, and `tmux attach`.
fn start_tmux(tmux: &Tmux) -> PtyClient {
    let mut args = vec![
        "new-session".to_string(),
        "-d".into(),
        "-s".into(),
        "bench".into(),
        "-x".into(),
        COLS.to_string(),
        "-y".into(),
        ROWS.to_string(),
    ];
    args.extend(shell_argv());
    tmux.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let mut command = tmux.command();
    command.args(["attach", "-t", "bench"]);
    let mut client = PtyClient::spawn("tmux", command);
    client.wait_for_prompt();
    client.settle(Duration::from_millis(300));
    client
}

/// How the two sides take turns.
#[derive(Clone, Copy)]
enum Interleave {
    /// One key each, the side going first alternating (the default).
    Keys,
    /// A round of keys each (`NAGI_BENCH_INTERLEAVE=rounds`, the bench's first design): the
    /// host's slow phases, which last seconds, can fall on one side only.
    Rounds,
}

fn percentile(samples: &[Duration], fraction: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let index = ((sorted.len() as f64 * fraction).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn ratio(nagi: Duration, tmux: Duration) -> f64 {
    nagi.as_secs_f64() / tmux.as_secs_f64()
}

fn verdict(ratio: f64) -> &'static str {
    if ratio <= 1.0 { "met" } else { "NOT MET" }
}

/// Prints each side's slowest keys (those above its p99) with their place in the run and
/// the other side's key of the same place, so that a tail can be told apart as the host's
/// (both sides slow at the same places) or one side's own.
fn print_slowest_keys(nagi: &[Duration], tmux: &[Duration]) {
    for (name, side, other) in [("nagi", nagi, tmux), ("tmux", tmux, nagi)] {
        let mut places: Vec<usize> = (0..side.len()).collect();
        places.sort_by_key(|place| std::cmp::Reverse(side[*place]));
        let slowest: Vec<String> = places
            .iter()
            .take(side.len().div_ceil(100))
            .map(|place| {
                let other = other.get(*place).map_or(0.0, |other| micros(*other));
                format!("#{place} {:.0}/{other:.0}", micros(side[*place]))
            })
            .collect();
        println!(
            "  {name}'s slowest keys (#place, µs, the other side's µs there): {}",
            slowest.join(", ")
        );
    }
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    if !Tmux::available() {
        println!("keystroke_echo: tmux is not installed: nothing to compare against");
        return;
    }
    let rounds = env_number("NAGI_BENCH_ROUNDS", 10).max(1);
    let per_round = env_number("NAGI_BENCH_SAMPLES", 100).max(1);
    let gap = Duration::from_millis(env_number("NAGI_BENCH_GAP_MS", 10) as u64);
    let interleave = match std::env::var("NAGI_BENCH_INTERLEAVE").as_deref() {
        Ok("rounds") => Interleave::Rounds,
        Ok("keys") | Err(_) => Interleave::Keys,
        Ok(other) => panic!("NAGI_BENCH_INTERLEAVE is `keys` or `rounds`, not `{other}`"),
    };
    println!(
        "keystroke_echo: {rounds} rounds x {per_round} keys per side, {gap:?} idle before each key, {COLS}x{ROWS}, bash --norc, sides taking turns by {}",
        match interleave {
            Interleave::Keys => "key",
            Interleave::Rounds => "round",
        }
    );

    let directory = tempfile::tempdir().expect("temp dir");
    let tmux = Tmux::new(directory.path(), "nagi-bench-echo", 2000);
    let mut tmux_client = start_tmux(&tmux);
    let mut env = TestEnv::new();
    env.start_server_in_own_session();
    let mut nagi_client = start_nagi(&env);

    let mut tmux_key = b'a';
    let mut nagi_key = b'a';
    tmux_client.keystrokes(WARM_UP_KEYS, gap, &mut tmux_key);
    nagi_client.keystrokes(WARM_UP_KEYS, gap, &mut nagi_key);

    let mut all_tmux = Vec::new();
    let mut all_nagi = Vec::new();
    println!("  round   tmux p50/p99 (µs)   nagi p50/p99 (µs)   nagi/tmux p50   p99");
    for round in 0..rounds {
        let (tmux_samples, nagi_samples) = match interleave {
            Interleave::Keys => {
                // Key by key, the side going first alternating: the two keys of a pair are
                // typed ~10 ms apart, so a slow phase of the host falls on both.
                let mut tmux_samples = Vec::with_capacity(per_round);
                let mut nagi_samples = Vec::with_capacity(per_round);
                for key in 0..per_round {
                    if (round * per_round + key).is_multiple_of(2) {
                        tmux_samples.push(tmux_client.next_keystroke(gap, &mut tmux_key));
                        nagi_samples.push(nagi_client.next_keystroke(gap, &mut nagi_key));
                    } else {
                        nagi_samples.push(nagi_client.next_keystroke(gap, &mut nagi_key));
                        tmux_samples.push(tmux_client.next_keystroke(gap, &mut tmux_key));
                    }
                }
                (tmux_samples, nagi_samples)
            }
            Interleave::Rounds if round % 2 == 0 => {
                let tmux_samples = tmux_client.keystrokes(per_round, gap, &mut tmux_key);
                let nagi_samples = nagi_client.keystrokes(per_round, gap, &mut nagi_key);
                (tmux_samples, nagi_samples)
            }
            Interleave::Rounds => {
                let nagi_samples = nagi_client.keystrokes(per_round, gap, &mut nagi_key);
                let tmux_samples = tmux_client.keystrokes(per_round, gap, &mut tmux_key);
                (tmux_samples, nagi_samples)
            }
        };
        let (tmux_p50, tmux_p99) = (
            percentile(&tmux_samples, 0.5),
            percentile(&tmux_samples, 0.99),
        );
        let (nagi_p50, nagi_p99) = (
            percentile(&nagi_samples, 0.5),
            percentile(&nagi_samples, 0.99),
        );
        println!(
            "  {:>5}   {:>7.0} / {:>7.0}   {:>7.0} / {:>7.0}   {:>13.2}   {:>4.2}",
            round + 1,
            micros(tmux_p50),
            micros(tmux_p99),
            micros(nagi_p50),
            micros(nagi_p99),
            ratio(nagi_p50, tmux_p50),
            ratio(nagi_p99, tmux_p99),
        );
        all_tmux.extend(tmux_samples);
        all_nagi.extend(nagi_samples);
    }
    tmux_client.stop();
    nagi_client.stop();

    let (tmux_p50, tmux_p99) = (percentile(&all_tmux, 0.5), percentile(&all_tmux, 0.99));
    let (nagi_p50, nagi_p99) = (percentile(&all_nagi, 0.5), percentile(&all_nagi, 0.99));
    println!(
        "  all {} keys per side: tmux p50 {:.0} µs, p99 {:.0} µs; nagi p50 {:.0} µs, p99 {:.0} µs",
        all_tmux.len(),
        micros(tmux_p50),
        micros(tmux_p99),
        micros(nagi_p50),
        micros(nagi_p99),
    );
    // On a busy machine a wake-up that does not preempt waits for the scheduler's tick (4 ms
    // at HZ=250), and p99 is then set by how many keys met such a wait on each side.
    let over = |samples: &[Duration]| samples.iter().filter(|sample| **sample > SLOW_KEY).count();
    println!(
        "  keys over {} ms: tmux {}, nagi {} (a side with more than 1% of its keys there has its p99 there)",
        SLOW_KEY.as_millis(),
        over(&all_tmux),
        over(&all_nagi),
    );
    if matches!(interleave, Interleave::Keys) {
        // The two keys of a pair were typed ~10 ms apart.
        let pairs: Vec<f64> = all_nagi
            .iter()
            .zip(&all_tmux)
            .map(|(nagi, tmux)| ratio(*nagi, *tmux))
            .collect();
        let nagi_faster = pairs.iter().filter(|pair| **pair < 1.0).count();
        let mut sorted = pairs.clone();
        sorted.sort_by(f64::total_cmp);
        println!(
            "  pairs of keys: nagi faster in {nagi_faster} of {}; median of nagi/tmux per pair {:.2}",
            pairs.len(),
            sorted[sorted.len() / 2]
        );
    }
    let p50_ratio = ratio(nagi_p50, tmux_p50);
    let p99_ratio = ratio(nagi_p99, tmux_p99);
    if p99_ratio > 1.0 {
        print_slowest_keys(&all_nagi, &all_tmux);
    }
    println!(
        "  nagi/tmux p50 {p50_ratio:.2}x: {} (target <= 1.0x)",
        verdict(p50_ratio)
    );
    println!(
        "  nagi/tmux p99 {p99_ratio:.2}x: {} (target <= 1.0x)",
        verdict(p99_ratio)
    );
}
