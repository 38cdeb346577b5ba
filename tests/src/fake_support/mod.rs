//! What the fake provider programs share: the script grammar, the receive log, and the
//! start-up behaviours. Included by each fake with `#[path]`, so it is not part of the
//! `nagi-tests` library.
//!
//! # Environment
//!
//! * `NAGI_FAKE_SCRIPT` — a JSON list of steps for the **first** turn (default
//!   `[{"text":"done"}]`). Later turns answer `turn <n>: <prompt>` and complete.
//! * `NAGI_FAKE_STARTUP` — what to do before the handshake: `normal` (default), `exit`
//!   (exit 0 at once), `crash` (stderr + exit 3), `garbage` (print a non-JSON line, then
//!   behave normally), `hang` (never answer), `write:<path>` (write `<path>`, relative to
//!   the working directory, then behave normally: a provider that changes the workspace
//!   while it starts).
//! * `NAGI_FAKE_RESUMED_SCRIPT` — the steps of the first turn after a resume (default: the
//!   first turn's script); later turns answer as above.
//! * `NAGI_FAKE_VERSION` — what `--version` prints (default: the real CLI's line for the
//!   newest supported version).
//! * `NAGI_FAKE_SESSION_ID` — the session id of a fresh session (default `fake-session-1`).
//! * `NAGI_FAKE_LOG` — append one JSON object per line: `{"event":"started","args",
//!   "cwd"}`, `{"event":"received","frame"}` for every frame read, `{"event":"prompt",
//!   "text"}`, `{"event":"resume","session_id"}`, `{"event":"decision","request",
//!   "decision"}`, `{"event":"answers","answers"}`, `{"event":"write","path","ok"}`,
//!   `{"event":"child","pid"}`, `{"event":"interrupted"}`.
//! * `NAGI_FAKE_LOG_ENV` — comma-separated variable names; the `started` event then also
//!   carries `"env": {name: value or null}` (tests see what the server gave the provider).
//!
//! # Steps
//!
//! | step | effect |
//! |---|---|
//! | `{"text": T}` | emit agent text T |
//! | `{"tool": CMD, "output": OUT}` | report a command the agent ran, and its output |
//! | `{"approve_command": CMD}` | ask to run CMD; wait; emit `decision: <d>` |
//! | `{"approve_file": PATH}` | ask to change PATH; wait; emit `decision: <d>` |
//! | `{"approve_permission": WHAT}` | ask for a permission; wait; emit `decision: <d>` |
//! | `{"ask": {"question": Q, "header": H, "options": [..], "multiple": B}}` | ask; wait; emit `answer: a, b` |
//! | `{"write_file": {"path": P, "content": C}}` | write P (relative to the session cwd) |
//! | `"wait_interrupt"` | wait until the client interrupts; the turn ends interrupted |
//! | `{"wait_file": PATH}` | log `waiting`, then wait until PATH exists and go on |
//! | `"hang"` | start a `sleep` grandchild (logged), then never answer again |
//! | `"crash"` | print to stderr and exit 3 mid-turn |
//! | `"garbage"` | print a line that is not JSON |
//! | `"huge_frame"` | print a 2 MiB JSON line |
//! | `"exit"` | exit 0 mid-turn |
//! | `{"fail": REASON}` | end the turn as failed |
//! | `"complete"` | end the turn (implied after the last step) |

#![allow(dead_code)]

use std::io::Write;

use serde_json::{Value, json};

#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalKind {
    Command,
    File,
    Permission,
}

#[derive(Debug, Clone, PartialEq)]
pub struct QuestionStep {
    pub question: String,
    pub header: String,
    pub options: Vec<String>,
    pub multiple: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Text(String),
    Tool {
        command: String,
        output: String,
    },
    Approval {
        kind: ApprovalKind,
        subject: String,
    },
    Ask(QuestionStep),
    WriteFile {
        path: String,
        content: String,
    },
    WaitInterrupt,
    /// Wait until the file exists (a test's explicit go-ahead), then go on.
    WaitFile(String),
    Hang,
    Crash,
    Garbage,
    HugeFrame,
    Exit,
    Fail(String),
    Complete,
}

pub fn parse_step(value: &Value) -> Result<Step, String> {
    if let Some(word) = value.as_str() {
        return match word {
            "wait_interrupt" => Ok(Step::WaitInterrupt),
            "hang" => Ok(Step::Hang),
            "crash" => Ok(Step::Crash),
            "garbage" => Ok(Step::Garbage),
            "huge_frame" => Ok(Step::HugeFrame),
            "exit" => Ok(Step::Exit),
            "complete" => Ok(Step::Complete),
            other => Err(format!("unknown step {other:?}")),
        };
    }
    let object = value
        .as_object()
        .ok_or_else(|| format!("a step must be a string or an object: {value}"))?;
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_string);
    if let Some(t) = text("text") {
        return Ok(Step::Text(t));
    }
    if let Some(command) = text("tool") {
        return Ok(Step::Tool {
            command,
            output: text("output").unwrap_or_default(),
        });
    }
    if let Some(subject) = text("approve_command") {
        return Ok(Step::Approval {
            kind: ApprovalKind::Command,
            subject,
        });
    }
    if let Some(subject) = text("approve_file") {
        return Ok(Step::Approval {
            kind: ApprovalKind::File,
            subject,
        });
    }
    if let Some(subject) = text("approve_permission") {
        return Ok(Step::Approval {
            kind: ApprovalKind::Permission,
            subject,
        });
    }
    if let Some(ask) = object.get("ask") {
        let question = ask
            .get("question")
            .and_then(Value::as_str)
            .ok_or("ask needs a question")?
            .to_string();
        return Ok(Step::Ask(QuestionStep {
            question,
            header: ask
                .get("header")
                .and_then(Value::as_str)
                .unwrap_or("Question")
                .to_string(),
            options: ask
                .get("options")
                .and_then(Value::as_array)
                .map(|options| {
                    options
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            multiple: ask
                .get("multiple")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }));
    }
    if let Some(write) = object.get("write_file") {
        let path = write
            .get("path")
            .and_then(Value::as_str)
            .ok_or("write_file needs a path")?
            .to_string();
        let content = write
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        return Ok(Step::WriteFile { path, content });
    }
    if let Some(path) = text("wait_file") {
        return Ok(Step::WaitFile(path));
    }
    if let Some(reason) = text("fail") {
        return Ok(Step::Fail(reason));
    }
    Err(format!("unknown step {value}"))
}

/// Set once this process resumed a stored session (see [`note_resumed`]).
static RESUMED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The fake resumed a session: its first turn follows `NAGI_FAKE_RESUMED_SCRIPT` when set.
pub fn note_resumed() {
    RESUMED.store(true, std::sync::atomic::Ordering::SeqCst);
}

fn script_from(variable: &str, raw: &str) -> Vec<Step> {
    let list: Value = serde_json::from_str(raw)
        .unwrap_or_else(|error| fatal(&format!("{variable} is not JSON: {error}")));
    let list = list
        .as_array()
        .unwrap_or_else(|| fatal(&format!("{variable} must be a JSON list")));
    list.iter()
        .map(|step| parse_step(step).unwrap_or_else(|error| fatal(&error)))
        .collect()
}

/// The first turn's steps, from `NAGI_FAKE_SCRIPT`.
pub fn first_turn_script() -> Vec<Step> {
    let raw =
        std::env::var("NAGI_FAKE_SCRIPT").unwrap_or_else(|_| r#"[{"text":"done"}]"#.to_string());
    script_from("NAGI_FAKE_SCRIPT", &raw)
}

/// The steps of turn `number` (1-based). The first turn of a resumed session follows
/// `NAGI_FAKE_RESUMED_SCRIPT` when it is set (a follow-up's own script), else the first
/// script.
pub fn script_for_turn(number: usize, prompt: &str) -> Vec<Step> {
    if number == 1 && RESUMED.load(std::sync::atomic::Ordering::SeqCst) {
        if let Ok(raw) = std::env::var("NAGI_FAKE_RESUMED_SCRIPT") {
            return script_from("NAGI_FAKE_RESUMED_SCRIPT", &raw);
        }
        first_turn_script()
    } else if number == 1 {
        first_turn_script()
    } else {
        vec![Step::Text(format!("turn {number}: {prompt}"))]
    }
}

pub fn fresh_session_id() -> String {
    std::env::var("NAGI_FAKE_SESSION_ID").unwrap_or_else(|_| "fake-session-1".to_string())
}

pub fn fatal(message: &str) -> ! {
    eprintln!("fake provider: {message}");
    std::process::exit(2);
}

/// Appends one event to `NAGI_FAKE_LOG`, if set.
pub fn log(event: Value) {
    let Ok(path) = std::env::var("NAGI_FAKE_LOG") else {
        return;
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|error| fatal(&format!("cannot open NAGI_FAKE_LOG {path}: {error}")));
    let mut line = serde_json::to_vec(&event).expect("JSON serializes");
    line.push(b'\n');
    file.write_all(&line)
        .unwrap_or_else(|error| fatal(&format!("cannot write NAGI_FAKE_LOG: {error}")));
}

pub fn log_started() {
    let args: Vec<String> = std::env::args().collect();
    let cwd = std::env::current_dir()
        .map(|dir| dir.display().to_string())
        .unwrap_or_default();
    let env: serde_json::Map<String, Value> = std::env::var("NAGI_FAKE_LOG_ENV")
        .unwrap_or_default()
        .split(',')
        .filter(|name| !name.is_empty())
        .map(|name| {
            (
                name.to_string(),
                std::env::var(name)
                    .map(Value::String)
                    .unwrap_or(Value::Null),
            )
        })
        .collect();
    log(json!({"event": "started", "args": args, "cwd": cwd, "env": env}));
}

/// Answers `--version` the way the real CLI does, with `NAGI_FAKE_VERSION` in place of
/// `real_line` when set, and exits; a fake asked for its version logs nothing.
pub fn answer_version_probe(real_line: &str) {
    if std::env::args().skip(1).any(|arg| arg == "--version") {
        let line = std::env::var("NAGI_FAKE_VERSION").unwrap_or_else(|_| real_line.to_string());
        println!("{line}");
        std::process::exit(0);
    }
}

/// Start-up behaviour from `NAGI_FAKE_STARTUP`, run before the handshake.
pub fn run_startup_behaviour() {
    match std::env::var("NAGI_FAKE_STARTUP").as_deref() {
        Err(_) | Ok("normal") => {}
        Ok("exit") => std::process::exit(0),
        Ok("crash") => crash(),
        Ok("garbage") => print_garbage(),
        Ok("hang") => hang(),
        Ok(other) if other.starts_with("write:") => {
            let path = &other["write:".len()..];
            let cwd = std::env::current_dir().unwrap_or_default();
            let _ = write_file(&cwd, path, "written while the provider started\n");
        }
        Ok(other) => fatal(&format!("unknown NAGI_FAKE_STARTUP {other:?}")),
    }
}

pub fn crash() -> ! {
    eprintln!("fake provider: simulated crash");
    std::process::exit(3);
}

pub fn print_garbage() {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(b"this is not a protocol frame {{{\n");
    let _ = stdout.flush();
}

pub fn print_huge_frame() {
    let filler = "x".repeat(2 * 1024 * 1024);
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{}", json!({"filler": filler}));
    let _ = stdout.flush();
}

/// Starts a `sleep` grandchild in our process group (logged with its pid), then blocks
/// forever. Tests use the pid to check that shutdown ends the whole group.
/// What every fake reports for each turn it completes, in its own protocol's fields: 100
/// input tokens of which 40 from the cache, 20 output tokens of which 5 reasoning, and
/// (where the protocol carries a cost) $0.0123.
pub const TURN_INPUT_TOKENS: u64 = 100;
pub const TURN_CACHED_INPUT_TOKENS: u64 = 40;
pub const TURN_OUTPUT_TOKENS: u64 = 20;
pub const TURN_REASONING_TOKENS: u64 = 5;
pub const TURN_COST_USD: f64 = 0.0123;

/// Blocks until `path` exists (polled every 10 ms; a test creates it when it is ready).
pub fn wait_for_file(path: &str) {
    log(json!({"event": "waiting", "path": path}));
    while !std::path::Path::new(path).exists() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

pub fn hang() -> ! {
    if let Ok(child) = std::process::Command::new("sleep").arg("600").spawn() {
        log(json!({"event": "child", "pid": child.id()}));
        std::mem::forget(child);
    }
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// Writes a file relative to `base`, logging the outcome.
pub fn write_file(base: &std::path::Path, path: &str, content: &str) -> Result<(), String> {
    let target = base.join(path);
    let outcome = std::fs::write(&target, content).map_err(|error| error.to_string());
    log(json!({"event": "write", "path": target.display().to_string(), "ok": outcome.is_ok()}));
    outcome
}
