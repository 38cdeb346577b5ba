//! `mock_model`: a scripted model server for running the real provider CLIs offline.
//!
//! ```text
//! mock_model --scenario SCENARIO.json [--log-dir DIR] [--port N] [--port-file FILE]
//! ```
//! Binds 127.0.0.1 (port 0 = any free port) and prints `listening on http://127.0.0.1:<port>`
//! as its first stdout line (and writes the port to `--port-file`, if given). Runs until killed.
//!
//! # Endpoints
//! - `POST /v1/responses` — OpenAI Responses API (Codex), SSE: `response.created`,
//!   `response.output_item.added`/`response.output_text.delta`/`response.output_item.done`
//!   per item, `response.completed`.
//! - `POST /v1/messages[?beta=true]` — Anthropic Messages API (Claude Code), SSE
//!   `message_start`, `content_block_start/delta/stop`, `message_delta`, `message_stop`; a
//!   request with `"stream": false` gets one JSON message instead.
//! - `POST /v1/chat/completions` — OpenAI Chat Completions (OpenCode), SSE chunks, a usage
//!   chunk and `data: [DONE]`.
//! - `GET /health`, `POST /v1/messages/count_tokens`, `GET /v1/models` — fixed answers.
//!   Anything else is logged and answered 404.
//!
//! # Scenario file
//! ```json
//! {
//!   "workspace": "/abs/worktree",          // optional: relative tool paths are joined to it
//!   "title": "Mock session",               // optional: answer to calls that offer no tools
//!   "steps": [
//!     {"call": {"read": {"path": "README.md"}}},
//!     {"text": "The README says hello."},
//!     {"text": "Writing it now.", "call": {"write": {"path": "out.txt", "content": "x\n"}}},
//!     {"text": "Second turn done.", "delay_ms": 2000},
//!     {"text": "Retried without streaming.", "fault": "no_message_start"}
//!   ]
//! }
//! ```
//! `steps` are model responses in conversation order, across every user turn of one session.
//! A step with only `text` ends the model turn; a step with a `call` (optionally preceded by
//! `text`) makes one tool call, which the CLI runs and answers in its next request. `delay_ms`
//! holds the reply back (to observe or interrupt a turn in flight). `fault` breaks the reply on
//! purpose: `"server_error"` (HTTP 500; CLIs retry and then fail the turn), `"truncated_stream"`
//! (no completion events: Codex fails with "stream closed before response.completed"),
//! `"no_message_start"` (Messages API: Claude Code retries with `"stream": false`, which the
//! mock answers with one JSON message). Calls, rendered in each
//! CLI's own vocabulary (Codex / Claude Code / OpenCode):
//! - `{"read": {"path"}}` — `exec_command {"cmd":"cat PATH"}` / `Read {file_path}` /
//!   `read {filePath}`
//! - `{"write": {"path", "content"}}` — `apply_patch` (`*** Add File`, freeform or function,
//!   as the request offers it; shell `printf` if it offers none) / `Write` / `write`
//! - `{"edit": {"path", "old", "new"}}` — `apply_patch` (`*** Update File`) / `Edit` / `edit`
//! - `{"shell": {"command"}}` — `exec_command {"cmd"}` / `Bash` / `bash`
//! - `{"ask": {"question", "header"?, "options": [{"label", "description"?}], "multi_select"?}}`
//!   — `request_user_input` / `AskUserQuestion` / `question`
//! - `{"raw": {"name", "arguments"}}` — that tool call, verbatim, whatever the CLI.
//!
//! # Where in the scenario a request is
//! Stateless: the answer is the step after the last one the request's history shows as done. A
//! call step is done when the request carries a tool result for its call id (`call_mock_<step
//! index>`, echoed back by every CLI); a text step is done when its text is among the assistant
//! messages (so final texts must be unique; loading rejects duplicates). A request that offers
//! no tools (OpenCode's title call) gets `title` and does not count. Past the last step the mock
//! answers 400 `mock_scenario_exhausted`, which fails the CLI's turn visibly.
//!
//! # Request log
//! With `--log-dir`, every request is written as `<NNNN>-<responses|messages|chat-completions|
//! service|unknown>.json`: `{sequence, method, path, query, headers, api, kind
//! (main|auxiliary|service|unknown), step, status, body}` — see
//! `nagi_tests::mock_model::read_request_log`.

use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use nagi_tests::mock_model::{MockModelConfig, MockModelServer, Scenario};

#[derive(Debug, Parser)]
#[command(
    about = "Scripted mock of the OpenAI Responses, Anthropic Messages and Chat Completions APIs"
)]
struct Arguments {
    /// Scenario JSON file (format: see the top of tests/src/bin/mock_model.rs).
    #[arg(long)]
    scenario: PathBuf,
    /// Directory to write one JSON file per received request into.
    #[arg(long)]
    log_dir: Option<PathBuf>,
    /// Port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// File to write the bound port number into, once listening.
    #[arg(long)]
    port_file: Option<PathBuf>,
}

fn main() -> std::process::ExitCode {
    let arguments = Arguments::parse();
    match run(arguments) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("mock_model: {message}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(arguments: Arguments) -> Result<(), String> {
    let scenario = Scenario::load(&arguments.scenario).map_err(|error| error.to_string())?;
    let server = MockModelServer::start(MockModelConfig {
        scenario,
        log_dir: arguments.log_dir,
        port: arguments.port,
    })
    .map_err(|error| error.to_string())?;
    if let Some(port_file) = &arguments.port_file {
        std::fs::write(port_file, format!("{}\n", server.port()))
            .map_err(|error| format!("cannot write port file {}: {error}", port_file.display()))?;
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on {}", server.base_url())
        .and_then(|()| stdout.flush())
        .map_err(|error| format!("cannot write to stdout: {error}"))?;
    drop(stdout);
    server.wait();
    Ok(())
}
