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
//! Ctrl-U. After a warm-up, the sides take turns key by key (tmux, nagi, control, then
//! nagi, control, tmux, ...), so that the noise of this shared machine falls on all of
//! them: on a 2-vCPU VM most of a key's latency is the wake-up of an idle vCPU for the
//! kernel's tty work (each of the four PTY writes of a key is passed on by a kworker, on
//! every side), and the host's slow phases last seconds. `NAGI_BENCH_INTERLEAVE=rounds`
//! takes turns by rounds of keys instead, as the first version of this bench did. When p99
//! misses, the bench prints nagi's and tmux's slowest keys, each beside the other's key at
//! the same place, which tells a slow phase of the host (both slow) from one side's own
//! stalls. It also counts each side's keys over 1 ms: on a busy machine those waited for
//! the scheduler's tick, and a side with more than 1% of its keys there has its p99 there.
//!
//! To measure a busy machine, start the load in sessions of its own (`setsid yes >
//! /dev/null`), as a build in another terminal runs. Load started in the bench's session
//! shares the bench's scheduling group, and the bench plays the terminal emulator, which
//! never runs in its shell's session: its own wake-ups would then wait on the load on both
//! sides.
//!
//! A third side, the control, is a second, independent tmux server running the same shell
//! and typed into in turn with the other two (`NAGI_BENCH_CONTROL=0` leaves it out). Its
//! ratio to tmux is what this run's noise alone makes of a ratio, since both run the same
//! program. It is a gauge, not a neutral side: on an idle machine its p50 sat 3-6% above
//! tmux's in the three-side runs of `docs/benchmarks.md`. With both vCPUs busy its p50 moved
//! from 0.83x to 1.26x by key (at or under 1.0x in 9 of 26 runs) and up to 1.37x by round.
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

/// A tmux side: a session running the shell, and `tmux attach`.
fn start_tmux(name: &'static str, tmux: &Tmux) -> PtyClient {
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
    let mut client = PtyClient::spawn(name, command);
    client.wait_for_prompt();
    client.settle(Duration::from_millis(300));
    client
}

/// How the sides take turns.
#[derive(Clone, Copy)]
enum Interleave {
    /// One key each, the side going first rotating (the default).
    Keys,
    /// A round of keys each (`NAGI_BENCH_INTERLEAVE=rounds`, the bench's first design): the
    /// host's slow phases, which last seconds, can fall on one side only.
    Rounds,
}

/// One client of the run with the keys it has typed so far.
struct Side {
    client: PtyClient,
    next_key: u8,
    samples: Vec<Duration>,
}

impl Side {
    fn new(client: PtyClient) -> Side {
        Side {
            client,
            next_key: b'a',
            samples: Vec::new(),
        }
    }

    fn name(&self) -> &'static str {
        self.client.name
    }

    /// Types `count` keys and keeps their latencies.
    fn record_keys(&mut self, count: usize, gap: Duration) {
        let samples = self.client.keystrokes(count, gap, &mut self.next_key);
        self.samples.extend(samples);
    }
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

fn ratio(side: Duration, tmux: Duration) -> f64 {
    side.as_secs_f64() / tmux.as_secs_f64()
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

/// Of the keys typed at the same place by `side` and by tmux (about 10 ms apart when the
/// sides take turns by key): in how many `side` was the faster, and the median of the
/// per-pair ratios.
fn print_pairs(name: &str, side: &[Duration], tmux: &[Duration]) {
    let mut pairs: Vec<f64> = side
        .iter()
        .zip(tmux)
        .map(|(side, tmux)| ratio(*side, *tmux))
        .collect();
    let faster = pairs.iter().filter(|pair| **pair < 1.0).count();
    pairs.sort_by(f64::total_cmp);
    println!(
        "  pairs of keys: {name} faster in {faster} of {}; median of {name}/tmux per pair {:.2}",
        pairs.len(),
        pairs[pairs.len() / 2]
    );
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
    let control = match std::env::var("NAGI_BENCH_CONTROL").as_deref() {
        Ok("1") | Err(_) => true,
        Ok("0") => false,
        Ok(other) => panic!("NAGI_BENCH_CONTROL is `1` or `0`, not `{other}`"),
    };
    println!(
        "keystroke_echo: {rounds} rounds x {per_round} keys per side, {gap:?} idle before each key, {COLS}x{ROWS}, bash --norc, sides taking turns by {}{}",
        match interleave {
            Interleave::Keys => "key",
            Interleave::Rounds => "round",
        },
        if control {
            "; with a control side (a second tmux server)"
        } else {
            ""
        }
    );

    let directory = tempfile::tempdir().expect("temp dir");
    let tmux = Tmux::new(directory.path(), "nagi-bench-echo", 2000);
    let control_tmux =
        control.then(|| Tmux::new(directory.path(), "nagi-bench-echo-control", 2000));
    let mut env = TestEnv::new();
    env.start_server_in_own_session();
    // Side 0 is the reference every ratio divides by; side 1 is nagi.
    let mut sides = vec![
        Side::new(start_tmux("tmux", &tmux)),
        Side::new(start_nagi(&env)),
    ];
    if let Some(control_tmux) = &control_tmux {
        sides.push(Side::new(start_tmux("control", control_tmux)));
    }
    for side in &mut sides {
        side.client
            .keystrokes(WARM_UP_KEYS, gap, &mut side.next_key);
    }

    print!("  round");
    for side in &sides {
        print!("   {:>7} p50/p99 (µs)", side.name());
    }
    println!("   {:>13}", "/tmux p50, p99");
    let side_count = sides.len();
    for round in 0..rounds {
        let before: Vec<usize> = sides.iter().map(|side| side.samples.len()).collect();
        match interleave {
            Interleave::Keys => {
                // Key by key, the side going first rotating: the keys of one place are
                // typed ~10 ms apart, so a slow phase of the host falls on all sides.
                for key in 0..per_round {
                    let first = (round * per_round + key) % side_count;
                    for turn in 0..side_count {
                        sides[(first + turn) % side_count].record_keys(1, gap);
                    }
                }
            }
            Interleave::Rounds => {
                let first = round % side_count;
                for turn in 0..side_count {
                    sides[(first + turn) % side_count].record_keys(per_round, gap);
                }
            }
        }
        let round_figures: Vec<(Duration, Duration)> = sides
            .iter()
            .zip(&before)
            .map(|(side, start)| {
                let samples = &side.samples[*start..];
                (percentile(samples, 0.5), percentile(samples, 0.99))
            })
            .collect();
        print!("  {:>5}", round + 1);
        for (p50, p99) in &round_figures {
            print!("   {:>9.0} / {:>7.0}", micros(*p50), micros(*p99));
        }
        for (p50, p99) in &round_figures[1..] {
            print!(
                "   {:.2}, {:.2}",
                ratio(*p50, round_figures[0].0),
                ratio(*p99, round_figures[0].1)
            );
        }
        println!();
    }
    let sides: Vec<(&'static str, Vec<Duration>)> = sides
        .into_iter()
        .map(|side| {
            let name = side.name();
            side.client.stop();
            (name, side.samples)
        })
        .collect();
    let (tmux_samples, nagi_samples) = (&sides[0].1, &sides[1].1);

    let figures: Vec<(Duration, Duration)> = sides
        .iter()
        .map(|(_, samples)| (percentile(samples, 0.5), percentile(samples, 0.99)))
        .collect();
    let described: Vec<String> = sides
        .iter()
        .zip(&figures)
        .map(|((name, _), (p50, p99))| {
            format!(
                "{name} p50 {:.0} µs, p99 {:.0} µs",
                micros(*p50),
                micros(*p99)
            )
        })
        .collect();
    println!(
        "  all {} keys per side: {}",
        tmux_samples.len(),
        described.join("; ")
    );
    // On a busy machine a wake-up that does not preempt waits for the scheduler's tick (4 ms
    // at HZ=250), and p99 is then set by how many keys met such a wait on each side.
    let over: Vec<String> = sides
        .iter()
        .map(|(name, samples)| {
            let count = samples.iter().filter(|sample| **sample > SLOW_KEY).count();
            format!("{name} {count}")
        })
        .collect();
    println!(
        "  keys over {} ms: {} (a side with more than 1% of its keys there has its p99 there)",
        SLOW_KEY.as_millis(),
        over.join(", ")
    );
    if matches!(interleave, Interleave::Keys) {
        for (name, samples) in &sides[1..] {
            print_pairs(name, samples, tmux_samples);
        }
    }
    let p50_ratio = ratio(figures[1].0, figures[0].0);
    let p99_ratio = ratio(figures[1].1, figures[0].1);
    if p99_ratio > 1.0 {
        print_slowest_keys(nagi_samples, tmux_samples);
    }
    if let Some((control_p50, control_p99)) = figures.get(2) {
        // The control runs the same program as the reference: its ratios are what this
        // run's noise alone makes of a ratio, not a target.
        println!(
            "  control/tmux p50 {:.2}x, p99 {:.2}x (the same program: this run's noise)",
            ratio(*control_p50, figures[0].0),
            ratio(*control_p99, figures[0].1),
        );
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
