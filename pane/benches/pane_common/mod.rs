//! Shared helpers of the pane benchmarks (included with `#[path]`; a directory, so Cargo
//! does not take it for a bench).

#![allow(dead_code)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Reads a size from the environment, e.g. `NAGI_BENCH_MIB=16` for a quick run.
pub fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// Writes a text file of log-like lines (80–110 bytes each) of about `bytes` bytes.
pub fn write_text_file(path: &Path, bytes: usize) -> usize {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create bench file"));
    let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    ];
    let mut written = 0;
    let mut index = 0usize;
    while written < bytes {
        let mut line = format!("{index:09} INFO worker-{:02} ", index % 16);
        for word in 0..(8 + index % 5) {
            line.push_str(words[(index + word) % words.len()]);
            line.push(' ');
        }
        line.push_str("request completed\n");
        file.write_all(line.as_bytes()).expect("write bench file");
        written += line.len();
        index += 1;
    }
    file.flush().expect("flush bench file");
    written
}

/// Writes a build log of about `bytes` bytes, shaped like `cargo build` output on a
/// colour terminal: SGR colours on most lines (green `Compiling`, yellow warnings, blue
/// arrows, red errors), and multi-byte UTF-8 (`→`, `✓`, accents, CJK). Unlike
/// [`write_text_file`], nothing here can take the plain-ASCII fast path that skips vt100:
/// every byte is parsed.
pub fn write_build_log_file(path: &Path, bytes: usize) -> usize {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create bench file"));
    let crates = [
        "serde",
        "tokio",
        "regex",
        "größe-utils",
        "café-core",
        "naïve-bayes",
        "日本語-text",
        "中文-segment",
        "vt100",
        "portable-pty",
    ];
    let mut written = 0;
    let mut index = 0usize;
    while written < bytes {
        let name = crates[index % crates.len()];
        let line = match index % 8 {
            0..=3 => format!(
                "\x1b[1m\x1b[32m   Compiling\x1b[0m {name} v{}.{}.{} (/home/dev/src/{name})\n",
                index % 3,
                index % 17,
                index % 41
            ),
            4 => format!(
                "\x1b[1m\x1b[33mwarning\x1b[0m\x1b[1m: unused variable: `größe_{index}`\x1b[0m\n"
            ),
            5 => format!(
                "   \x1b[1m\x1b[34m-->\x1b[0m src/{name}/lib.rs:{}:{} → naïve façade 検査\n",
                index % 900,
                index % 80
            ),
            6 => format!(
                "\x1b[32m✓\x1b[0m test {name}::tests::résumé_{index} ... \x1b[32mok\x1b[0m (テスト {} ms)\n",
                index % 250
            ),
            _ => format!(
                "\x1b[1m\x1b[31merror[E0308]\x1b[0m\x1b[1m: mismatched types in 模块 {name}\x1b[0m ✗\n"
            ),
        };
        file.write_all(line.as_bytes()).expect("write bench file");
        written += line.len();
        index += 1;
    }
    file.flush().expect("flush bench file");
    written
}

/// A private tmux server (`tmux -L <name>`) with `history-limit` set, removed on drop.
pub struct Tmux {
    pub socket: String,
    config: PathBuf,
}

impl Tmux {
    pub fn available() -> bool {
        Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|output| output.status.success())
    }

    pub fn new(directory: &Path, name: &str, history_limit: usize) -> Tmux {
        let config = directory.join(format!("{name}.conf"));
        std::fs::write(
            &config,
            format!("set -g history-limit {history_limit}\nset -g status off\n"),
        )
        .expect("tmux config");
        Tmux {
            socket: format!("{name}-{}", std::process::id()),
            config,
        }
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .arg("-L")
            .arg(&self.socket)
            .arg("-f")
            .arg(&self.config);
        command
    }

    pub fn run(&self, args: &[&str]) -> String {
        let output = self.command().args(args).output().expect("tmux runs");
        assert!(
            output.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    pub fn server_pid(&self) -> i32 {
        self.run(&["display", "-p", "#{pid}"])
            .trim()
            .parse()
            .expect("tmux pid")
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").output();
    }
}

/// Resident set size of a process, in bytes.
pub fn rss_bytes(pid: i32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    let line = status
        .lines()
        .find(|line| line.starts_with("VmRSS:"))
        .expect("VmRSS");
    let kib: usize = line
        .split_whitespace()
        .nth(1)
        .expect("value")
        .parse()
        .expect("number");
    kib * 1024
}

pub fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

pub fn mb_per_second(bytes: usize, elapsed: Duration) -> f64 {
    mb(bytes) / elapsed.as_secs_f64()
}

/// Times `body`.
pub fn timed<T>(body: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = body();
    (value, start.elapsed())
}
