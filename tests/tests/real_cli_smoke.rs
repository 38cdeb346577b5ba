//! Offline smoke tests of the real provider CLIs against our mock model server.
//!
//! Each test runs one real CLI (installed by `.ci/install-providers` into
//! `<repo>/.tools/npm/node_modules/.bin/`) in its simple JSON mode, with a throwaway HOME and
//! config dirs, talking only to the in-process mock on 127.0.0.1. They prove that the mock speaks
//! each model API well enough for a whole agent turn: the session id is printed, the scripted
//! text comes back, a read tool call returns the file's content to the model (checked in the
//! mock's request log), and a write attempt under the CLI's read-only settings leaves the
//! workspace unchanged. A CLI that is not installed is skipped with a printed reason.
//!
//! Run with `--nocapture` to see the per-turn timings.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use nagi_tests::mock_model::{MockModelConfig, MockModelServer, RequestKind, Scenario};
use serde_json::Value;

const README_TEXT: &str = "The secret word is pomegranate.\n";
const SECRET_WORD: &str = "pomegranate";

/// The installed CLI, or `None` after reporting it missing (which fails the test under CI).
fn installed_cli(name: &str) -> Option<PathBuf> {
    nagi_tests::real_cli::installed_cli(name)
}

/// A temp dir with a worktree holding a README, and a separate throwaway HOME.
struct Sandbox {
    _temp: tempfile::TempDir,
    worktree: PathBuf,
    home: PathBuf,
}

impl Sandbox {
    fn new() -> Sandbox {
        let temp = tempfile::tempdir().expect("temp dir");
        let worktree = temp.path().join("worktree");
        let home = temp.path().join("home");
        std::fs::create_dir_all(&worktree).expect("create worktree");
        std::fs::create_dir_all(&home).expect("create home");
        std::fs::write(worktree.join("README.md"), README_TEXT).expect("write README");
        Sandbox {
            _temp: temp,
            worktree,
            home,
        }
    }

    /// A command with an empty environment except PATH (for node and the shell) and HOME.
    fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into()),
            )
            .env("HOME", &self.home)
            .current_dir(&self.worktree);
        command
    }
}

/// Every file under `root` with its bytes, to prove a run changed nothing.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![root.to_owned()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).expect("read dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).expect("read file");
                files.insert(
                    path.strip_prefix(root).expect("under root").to_owned(),
                    bytes,
                );
            }
        }
    }
    files
}

/// Runs a command with stdin closed, killing it if it outlives `limit`.
fn run_bounded(command: &mut Command, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the CLI");
    let mut stdout = child.stdout.take().expect("stdout pipe");
    let mut stderr = child.stderr.take().expect("stderr pipe");
    let stdout_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let stderr_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        bytes
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll the CLI") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let stderr =
                String::from_utf8_lossy(&stderr_reader.join().unwrap_or_default()).into_owned();
            panic!("the CLI did not finish within {limit:?}; stderr:\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = Output {
        status,
        stdout: stdout_reader.join().expect("stdout reader"),
        stderr: stderr_reader.join().expect("stderr reader"),
    };
    (output, started.elapsed())
}

/// Parses the JSON lines a CLI printed, failing with the whole output if the run failed.
fn json_lines(output: &Output) -> Vec<Value> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the CLI failed ({}); stdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .filter(|line| line.trim_start().starts_with('{'))
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("bad JSON line {line}: {error}"))
        })
        .collect()
}

fn start_mock(scenario_json: &str) -> MockModelServer {
    let scenario = Scenario::from_json(scenario_json).expect("valid scenario");
    MockModelServer::start(MockModelConfig {
        scenario,
        log_dir: None,
        port: 0,
    })
    .expect("start the mock")
}

/// The scenario all three CLIs run: read the README, try to write a file, then say `final_text`.
fn read_then_write_scenario(workspace: &Path, final_text: &str, resumed_text: &str) -> String {
    serde_json::json!({
        "workspace": workspace,
        "steps": [
            {"call": {"read": {"path": "README.md"}}},
            {"text": "Now writing.", "call": {"write": {"path": "written.txt", "content": "should not exist\n"}}},
            {"text": final_text},
            {"text": resumed_text}
        ]
    })
    .to_string()
}

/// Asserts the mock saw the README's content come back as the result of the read call, and
/// the write call answered too (so the model turn went on past it).
fn assert_read_result_reached_the_model(mock: &MockModelServer) {
    let main_requests = mock.main_requests();
    let read_result = main_requests
        .iter()
        .flat_map(|request| request.tool_results())
        .find(|result| result.call_id == "call_mock_0")
        .expect("a request carried the result of the read call");
    assert!(
        read_result.content.contains(SECRET_WORD),
        "the read tool result should contain the README, got {:?}",
        read_result.content
    );
    assert!(
        main_requests.iter().any(|request| request
            .tool_results()
            .iter()
            .any(|result| result.call_id == "call_mock_1")),
        "a request carried the result of the write call"
    );
}

/// How often `prompt` occurs in the user texts of the last model request (CLIs put context
/// such as system reminders into the same user message, so this counts occurrences).
fn prompt_count(mock: &MockModelServer, prompt: &str) -> usize {
    let last = mock
        .main_requests()
        .pop()
        .expect("at least one main request");
    last.user_texts()
        .iter()
        .map(|text| text.matches(prompt).count())
        .sum()
}

#[test]
fn mock_model_binary_prints_its_address_serves_health_and_logs_requests() {
    let temp = tempfile::tempdir().expect("temp dir");
    let scenario_path = temp.path().join("scenario.json");
    let log_dir = temp.path().join("log");
    let port_file = temp.path().join("port");
    std::fs::write(&scenario_path, r#"{"steps":[{"text":"hello"}]}"#).expect("write scenario");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mock_model"))
        .arg("--scenario")
        .arg(&scenario_path)
        .arg("--log-dir")
        .arg(&log_dir)
        .arg("--port-file")
        .arg(&port_file)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn mock_model");
    let mut first_line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first_line)
        .expect("read line");
    let port: u16 = first_line
        .trim()
        .strip_prefix("listening on http://127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected first line {first_line:?}"))
        .parse()
        .expect("a port number");
    assert_eq!(
        std::fs::read_to_string(&port_file)
            .expect("port file")
            .trim(),
        port.to_string()
    );

    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .expect("send request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read response");
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        response.starts_with("HTTP/1.1 200"),
        "unexpected response {response:?}"
    );
    assert!(
        response.contains(r#"{"status":"ok"}"#),
        "unexpected body in {response:?}"
    );
    let logged = nagi_tests::mock_model::read_request_log(&log_dir).expect("read the request log");
    assert_eq!(logged.len(), 1);
    assert_eq!(logged[0].path, "/health");
    assert_eq!(logged[0].kind, RequestKind::Service);
}

fn codex_provider_overrides(command: &mut Command, mock: &MockModelServer) {
    for setting in [
        "model_provider=mock".to_owned(),
        "model_providers.mock.name=mock".to_owned(),
        format!("model_providers.mock.base_url={}/v1", mock.base_url()),
        "model_providers.mock.wire_api=responses".to_owned(),
        "model_providers.mock.stream_max_retries=0".to_owned(),
        "model=gpt-5.5".to_owned(),
    ] {
        command.arg("-c").arg(setting);
    }
}

#[test]
fn codex_exec_runs_a_read_only_turn_offline_and_resumes() {
    let Some(codex) = installed_cli("codex") else {
        return;
    };
    let sandbox = Sandbox::new();
    let final_text = "Codex smoke: the README was read.";
    let resumed_text = "Codex smoke: resumed.";
    let mock = start_mock(&read_then_write_scenario(
        &sandbox.worktree,
        final_text,
        resumed_text,
    ));
    let codex_home = sandbox.home.join(".codex");
    std::fs::create_dir_all(&codex_home).expect("CODEX_HOME must exist");
    let before = snapshot(&sandbox.worktree);

    let prompt = "Read the README, then write a file.";
    let mut command = sandbox.command(&codex);
    command.env("CODEX_HOME", &codex_home).args([
        "exec",
        "--json",
        "--sandbox",
        "read-only",
        "--skip-git-repo-check",
        "-C",
    ]);
    command.arg(&sandbox.worktree);
    codex_provider_overrides(&mut command, &mock);
    command.arg(prompt);
    let (output, elapsed) = run_bounded(&mut command, Duration::from_secs(90));
    println!("codex exec turn (read + write attempt + text): {elapsed:?}");
    let lines = json_lines(&output);

    let thread_id = lines
        .iter()
        .find(|line| line["type"] == "thread.started")
        .and_then(|line| line["thread_id"].as_str())
        .expect("a thread.started line with thread_id")
        .to_owned();
    assert!(!thread_id.is_empty());
    assert!(
        lines.iter().any(|line| line["type"] == "item.completed"
            && line["item"]["type"] == "agent_message"
            && line["item"]["text"] == final_text),
        "the scripted text should come back as an agent_message; lines: {lines:#?}"
    );
    assert!(lines.iter().any(|line| line["type"] == "turn.completed"));
    assert_read_result_reached_the_model(&mock);
    let write_result = mock
        .main_requests()
        .iter()
        .flat_map(|request| request.tool_results())
        .find(|result| result.call_id == "call_mock_1")
        .expect("the apply_patch result");
    assert!(
        write_result.content.contains("rejected"),
        "apply_patch should be rejected: {write_result:?}"
    );
    assert_eq!(
        snapshot(&sandbox.worktree),
        before,
        "a read-only Codex run must not change the worktree"
    );

    // Resume the thread in a new process; the old prompt must reach the model only as history.
    let second_prompt = "Continue, please.";
    let mut command = sandbox.command(&codex);
    command.env("CODEX_HOME", &codex_home).args([
        "exec",
        "resume",
        &thread_id,
        "--json",
        "--skip-git-repo-check",
    ]);
    command.arg("-c").arg(r#"sandbox_mode="read-only""#);
    codex_provider_overrides(&mut command, &mock);
    command.arg(second_prompt);
    let (output, elapsed) = run_bounded(&mut command, Duration::from_secs(90));
    println!("codex exec resume turn: {elapsed:?}");
    let lines = json_lines(&output);
    assert!(lines.iter().any(|line| line["type"] == "thread.started" && line["thread_id"] == thread_id.as_str()));
    assert!(
        lines
            .iter()
            .any(|line| line["item"]["text"] == resumed_text),
        "lines: {lines:#?}"
    );
    assert_eq!(
        prompt_count(&mock, prompt),
        1,
        "the first prompt appears once, as history"
    );
    assert_eq!(prompt_count(&mock, second_prompt), 1);
    assert_eq!(snapshot(&sandbox.worktree), before);
}

fn claude_command(sandbox: &Sandbox, claude: &Path, mock: &MockModelServer) -> Command {
    let mut command = sandbox.command(claude);
    command
        .env("CLAUDE_CONFIG_DIR", sandbox.home.join(".claude"))
        .env("ANTHROPIC_BASE_URL", mock.base_url())
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("DISABLE_TELEMETRY", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    command
}

fn claude_result(lines: &[Value]) -> &Value {
    lines
        .iter()
        .rev()
        .find(|line| line["type"] == "result")
        .expect("a result line")
}

#[test]
fn claude_print_mode_runs_a_plan_mode_turn_offline_and_resumes() {
    let Some(claude) = installed_cli("claude") else {
        return;
    };
    let sandbox = Sandbox::new();
    let final_text = "Claude smoke: the README was read.";
    let resumed_text = "Claude smoke: resumed.";
    let mock = start_mock(&read_then_write_scenario(
        &sandbox.worktree,
        final_text,
        resumed_text,
    ));
    let before = snapshot(&sandbox.worktree);

    let prompt = "Read the README, then write a file.";
    let mut command = claude_command(&sandbox, &claude, &mock);
    command.args([
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "plan",
    ]);
    let (output, elapsed) = run_bounded(&mut command, Duration::from_secs(90));
    println!("claude -p turn (read + write attempt + text): {elapsed:?}");
    let lines = json_lines(&output);

    let init = lines
        .iter()
        .find(|line| line["type"] == "system" && line["subtype"] == "init")
        .expect("a system/init line");
    assert_eq!(init["permissionMode"], "plan");
    let session_id = init["session_id"]
        .as_str()
        .expect("init carries session_id")
        .to_owned();
    let result = claude_result(&lines);
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], final_text);
    assert_eq!(result["session_id"], session_id.as_str());
    assert!(
        result["permission_denials"]
            .as_array()
            .is_some_and(|denials| denials.iter().any(|denial| denial["tool_name"] == "Write")),
        "plan mode should deny the Write: {result:#}"
    );
    assert_read_result_reached_the_model(&mock);
    assert_eq!(
        snapshot(&sandbox.worktree),
        before,
        "a plan-mode Claude run must not change the worktree"
    );

    let second_prompt = "Continue, please.";
    let mut command = claude_command(&sandbox, &claude, &mock);
    command.args([
        "-p",
        "--resume",
        &session_id,
        second_prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "plan",
    ]);
    let (output, elapsed) = run_bounded(&mut command, Duration::from_secs(90));
    println!("claude -p --resume turn: {elapsed:?}");
    let lines = json_lines(&output);
    let result = claude_result(&lines);
    assert_eq!(result["result"], resumed_text);
    assert_eq!(
        result["session_id"],
        session_id.as_str(),
        "a resumed session keeps its id"
    );
    assert_eq!(
        prompt_count(&mock, prompt),
        1,
        "the first prompt appears once, as history"
    );
    assert_eq!(prompt_count(&mock, second_prompt), 1);
    assert_eq!(snapshot(&sandbox.worktree), before);
}

#[test]
fn opencode_run_denies_writes_and_reads_offline() {
    let Some(opencode) = installed_cli("opencode") else {
        return;
    };
    let sandbox = Sandbox::new();
    let final_text = "OpenCode smoke: the README was read.";
    let mock = start_mock(&read_then_write_scenario(
        &sandbox.worktree,
        final_text,
        "unused",
    ));
    let before = snapshot(&sandbox.worktree);
    let config = serde_json::json!({
        "provider": {"mock": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Mock",
            "options": {"baseURL": format!("{}/v1", mock.base_url()), "apiKey": "dummy"},
            "models": {"mock-1": {"name": "Mock 1", "tool_call": true, "limit": {"context": 128000, "output": 4096}}}
        }},
        "model": "mock/mock-1",
        "small_model": "mock/mock-1",
        "autoupdate": false,
        "share": "disabled"
    });

    let mut command = sandbox.command(&opencode);
    for (name, directory) in [
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
    ] {
        command.env(name, sandbox.home.join(directory));
    }
    command
        .env("OPENCODE_CONFIG_CONTENT", config.to_string())
        .env(
            "OPENCODE_PERMISSION",
            r#"{"edit":"deny","bash":"deny","external_directory":"deny"}"#,
        )
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
        .env("OPENCODE_DISABLE_SHARE", "1")
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .args([
            "run",
            "--format",
            "json",
            "Read the README, then write a file.",
        ]);
    // A fresh OpenCode data dir migrates its database first: a turn takes 10–30 s here.
    let (output, elapsed) = run_bounded(&mut command, Duration::from_secs(150));
    println!("opencode run turn (fresh data dir; read + write attempt + text): {elapsed:?}");
    let lines = json_lines(&output);

    let session_id = lines[0]["sessionID"]
        .as_str()
        .expect("lines carry sessionID")
        .to_owned();
    assert!(
        session_id.starts_with("ses_"),
        "unexpected session id {session_id}"
    );
    assert!(
        lines
            .iter()
            .all(|line| line["sessionID"] == session_id.as_str())
    );
    assert!(
        lines
            .iter()
            .any(|line| line["type"] == "text" && line["part"]["text"] == final_text),
        "the scripted text should come back; lines: {lines:#?}"
    );
    let last_step = lines
        .iter()
        .rev()
        .find(|line| line["type"] == "step_finish")
        .expect("a step_finish line");
    assert_eq!(last_step["part"]["reason"], "stop");
    assert!(
        mock.requests()
            .iter()
            .any(|request| request.kind == RequestKind::Auxiliary),
        "a new OpenCode session makes a title call without tools"
    );
    assert_read_result_reached_the_model(&mock);
    assert_eq!(
        snapshot(&sandbox.worktree),
        before,
        "denied edits must leave the worktree unchanged"
    );
}
