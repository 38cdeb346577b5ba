//! A fake `codex app-server --listen stdio://`: newline JSON-RPC without a `jsonrpc`
//! field, speaking the subset of the app-server protocol (codex-cli 0.171) that nagi's Codex
//! adapter uses. Scripted by environment variables; see `fake_support` for the grammar.
//!
//! Wire summary (client → server requests, server → client requests and notifications):
//!
//! ```text
//! → {"id":1,"method":"initialize","params":{"clientInfo":{...}}}
//! ← {"id":1,"result":{"userAgent":"fake_codex/0"}}
//! → {"method":"initialized"}
//! → {"id":2,"method":"thread/start","params":{"cwd","approvalPolicy":"on-request","sandbox":"read-only","ephemeral":false}}
//! ← {"id":2,"result":{"thread":{"id":"fake-session-1"}}}        (thread/resume: same id back)
//! → {"id":3,"method":"turn/start","params":{"threadId","input":[{"type":"text","text"}]}}
//! ← {"id":3,"result":{"turn":{"id":"turn-1","status":"inProgress"}}}
//! ← {"method":"turn/started"} {"method":"item/started"} {"method":"item/completed"} ...
//! ← {"id":0,"method":"item/commandExecution/requestApproval","params":{...}}   (server request)
//! → {"id":0,"result":{"decision":"accept"}}
//! ← {"method":"serverRequest/resolved","params":{"threadId","requestId":0}}
//! ← {"method":"turn/completed","params":{"threadId","turn":{"id":"turn-1","status":"completed"}}}
//! ```
//!
//! Server request ids count from 0 as in codex 0.171. Command approvals use numeric ids,
//! file-change approvals string ids (`fc-<n>`, unlike the real codex), so
//! both `number:` and `string:` request keys are exercised.

#[path = "../fake_support/mod.rs"]
mod fake_support;

use std::io::{BufRead, Write};
use std::path::PathBuf;

use fake_support::{ApprovalKind, Step, log};
use serde_json::{Value, json};

struct FakeCodex {
    lines: std::io::Lines<std::io::StdinLock<'static>>,
    thread_id: Option<String>,
    cwd: PathBuf,
    turn_number: usize,
    next_server_request: u64,
    next_item: u64,
}

enum TurnEnd {
    Completed,
    Interrupted,
    Failed(String),
}

fn main() {
    fake_support::answer_version_probe("codex-cli 0.171.0");
    fake_support::log_started();
    fake_support::run_startup_behaviour();
    let mut fake = FakeCodex {
        lines: std::io::stdin().lock().lines(),
        thread_id: None,
        cwd: std::env::current_dir().unwrap_or_default(),
        turn_number: 0,
        next_server_request: 0,
        next_item: 0,
    };
    while let Some(frame) = fake.read_frame() {
        fake.handle_client_frame(frame);
    }
}

fn send(value: Value) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{value}");
    let _ = stdout.flush();
}

impl FakeCodex {
    fn read_frame(&mut self) -> Option<Value> {
        loop {
            let line = self.lines.next()?.ok()?;
            if line.trim().is_empty() {
                continue;
            }
            let frame: Value = serde_json::from_str(&line).unwrap_or_else(|error| {
                fake_support::fatal(&format!("client sent invalid JSON: {error}"))
            });
            log(json!({"event": "received", "frame": frame}));
            return Some(frame);
        }
    }

    fn thread(&self) -> String {
        self.thread_id.clone().unwrap_or_default()
    }

    fn handle_client_frame(&mut self, frame: Value) {
        let method = frame
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let id = frame.get("id").cloned();
        let params = frame.get("params").cloned().unwrap_or(Value::Null);
        match (method.as_str(), id) {
            ("initialize", Some(id)) => {
                send(json!({"id": id, "result": {"userAgent": "fake_codex/0"}}))
            }
            ("initialized", None) => {}
            ("thread/start", Some(id)) => {
                if let Some(cwd) = params.get("cwd").and_then(Value::as_str) {
                    self.cwd = PathBuf::from(cwd);
                }
                let thread_id = fake_support::fresh_session_id();
                self.thread_id = Some(thread_id.clone());
                send(json!({"id": id, "result": {"thread": {"id": thread_id}}}));
                send(json!({"method": "thread/started", "params": {"thread": {"id": thread_id}}}));
            }
            ("thread/resume", Some(id)) => {
                let thread_id = params
                    .get("threadId")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                fake_support::note_resumed();
                log(json!({"event": "resume", "session_id": thread_id}));
                self.thread_id = Some(thread_id.clone());
                send(json!({"id": id, "result": {"thread": {"id": thread_id}}}));
            }
            ("turn/start", Some(id)) => {
                self.turn_number += 1;
                let turn_id = format!("turn-{}", self.turn_number);
                let prompt = params
                    .pointer("/input/0/text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                log(json!({"event": "prompt", "text": prompt}));
                // As the real codex does after a resume: the thread's stored usage again,
                // under an earlier turn's id, before the new turn has one.
                send(
                    json!({"method": "thread/tokenUsage/updated", "params": {"threadId": self.thread(), "turnId": "turn-earlier", "tokenUsage": {
                        "total": {"inputTokens": 999, "cachedInputTokens": 0, "outputTokens": 999, "reasoningOutputTokens": 0, "totalTokens": 1998},
                        "last": {"inputTokens": 999, "cachedInputTokens": 0, "outputTokens": 999, "reasoningOutputTokens": 0, "totalTokens": 1998}}}}),
                );
                send(
                    json!({"id": id, "result": {"turn": {"id": turn_id, "status": "inProgress", "items": [], "error": null}}}),
                );
                send(
                    json!({"method": "turn/started", "params": {"threadId": self.thread(), "turn": {"id": turn_id, "status": "inProgress", "items": []}}}),
                );
                let end = self.run_turn(&turn_id, &prompt);
                self.complete_turn(&turn_id, end);
            }
            ("turn/interrupt", Some(id)) => send(json!({"id": id, "result": {}})),
            (_, Some(id)) => send(
                json!({"id": id, "error": {"code": -32601, "message": format!("unknown method {method}")}}),
            ),
            (_, None) => {}
        }
    }

    fn run_turn(&mut self, turn_id: &str, prompt: &str) -> TurnEnd {
        for step in fake_support::script_for_turn(self.turn_number, prompt) {
            match step {
                Step::Text(text) => self.agent_message(turn_id, &text),
                Step::Tool { command, output } => {
                    let item = self.item_id();
                    let started = json!({"type": "commandExecution", "id": item, "command": command, "cwd": self.cwd, "status": "inProgress", "commandActions": []});
                    send(
                        json!({"method": "item/started", "params": {"threadId": self.thread(), "turnId": turn_id, "item": started}}),
                    );
                    let done = json!({"type": "commandExecution", "id": item, "command": command, "cwd": self.cwd, "status": "completed", "aggregatedOutput": output, "exitCode": 0, "commandActions": []});
                    send(
                        json!({"method": "item/completed", "params": {"threadId": self.thread(), "turnId": turn_id, "item": done}}),
                    );
                }
                Step::Approval { kind, subject } => match self.approval(turn_id, kind, &subject) {
                    Some(decision) => self.agent_message(turn_id, &format!("decision: {decision}")),
                    None => return TurnEnd::Interrupted,
                },
                Step::Ask(question) => match self.ask(turn_id, &question) {
                    Some(answers) => {
                        self.agent_message(turn_id, &format!("answer: {}", answers.join(", ")))
                    }
                    None => return TurnEnd::Interrupted,
                },
                Step::WriteFile { path, content } => {
                    match fake_support::write_file(&self.cwd, &path, &content) {
                        Ok(()) => self.agent_message(turn_id, &format!("wrote {path}")),
                        Err(error) => {
                            self.agent_message(turn_id, &format!("write failed: {error}"))
                        }
                    }
                }
                Step::WaitInterrupt => {
                    self.wait_for_interrupt();
                    return TurnEnd::Interrupted;
                }
                Step::WaitFile(path) => fake_support::wait_for_file(&path),
                Step::Hang => fake_support::hang(),
                Step::Crash => fake_support::crash(),
                Step::Garbage => fake_support::print_garbage(),
                Step::HugeFrame => fake_support::print_huge_frame(),
                Step::Exit => std::process::exit(0),
                Step::Fail(reason) => return TurnEnd::Failed(reason),
                Step::Complete => return TurnEnd::Completed,
            }
        }
        TurnEnd::Completed
    }

    fn complete_turn(&mut self, turn_id: &str, end: TurnEnd) {
        let turn = match end {
            TurnEnd::Completed => {
                let last = json!({
                    "inputTokens": fake_support::TURN_INPUT_TOKENS,
                    "cachedInputTokens": fake_support::TURN_CACHED_INPUT_TOKENS,
                    "outputTokens": fake_support::TURN_OUTPUT_TOKENS,
                    "reasoningOutputTokens": fake_support::TURN_REASONING_TOKENS,
                    "totalTokens": fake_support::TURN_INPUT_TOKENS + fake_support::TURN_OUTPUT_TOKENS,
                });
                send(
                    json!({"method": "thread/tokenUsage/updated", "params": {"threadId": self.thread(), "turnId": turn_id, "tokenUsage": {"total": last, "last": last, "modelContextWindow": null}}}),
                );
                json!({"id": turn_id, "status": "completed", "items": [], "error": null})
            }
            TurnEnd::Interrupted => {
                json!({"id": turn_id, "status": "interrupted", "items": [], "error": null})
            }
            TurnEnd::Failed(reason) => {
                json!({"id": turn_id, "status": "failed", "items": [], "error": {"message": reason}})
            }
        };
        send(
            json!({"method": "turn/completed", "params": {"threadId": self.thread(), "turn": turn}}),
        );
    }

    fn item_id(&mut self) -> String {
        self.next_item += 1;
        format!("item-{}", self.next_item)
    }

    fn agent_message(&mut self, turn_id: &str, text: &str) {
        let item = self.item_id();
        send(
            json!({"method": "item/started", "params": {"threadId": self.thread(), "turnId": turn_id, "item": {"type": "agentMessage", "id": item, "text": ""}}}),
        );
        send(
            json!({"method": "item/agentMessage/delta", "params": {"threadId": self.thread(), "turnId": turn_id, "itemId": item, "delta": text}}),
        );
        send(
            json!({"method": "item/completed", "params": {"threadId": self.thread(), "turnId": turn_id, "item": {"type": "agentMessage", "id": item, "text": text}}}),
        );
    }

    /// Sends one server request and waits for its response. `None` if the turn was
    /// interrupted instead.
    fn server_request(&mut self, id: Value, method: &str, params: Value) -> Option<Value> {
        send(json!({"id": id, "method": method, "params": params}));
        loop {
            let frame = self.read_frame()?;
            if frame.get("method").is_none() && frame.get("id") == Some(&id) {
                send(
                    json!({"method": "serverRequest/resolved", "params": {"threadId": self.thread(), "requestId": id}}),
                );
                let result = frame.get("result").cloned();
                if result.is_none() {
                    fake_support::fatal(&format!(
                        "client answered {method} with an error: {frame}"
                    ));
                }
                return result;
            }
            if frame.get("method").and_then(Value::as_str) == Some("turn/interrupt") {
                send(json!({"id": frame["id"], "result": {}}));
                send(
                    json!({"method": "serverRequest/resolved", "params": {"threadId": self.thread(), "requestId": id}}),
                );
                log(json!({"event": "interrupted"}));
                return None;
            }
            self.handle_client_frame(frame);
        }
    }

    fn approval(&mut self, turn_id: &str, kind: ApprovalKind, subject: &str) -> Option<String> {
        let item = self.item_id();
        let n = self.next_server_request;
        self.next_server_request += 1;
        let base =
            json!({"threadId": self.thread(), "turnId": turn_id, "itemId": item, "startedAtMs": 0});
        let (id, method, mut params) = match kind {
            ApprovalKind::Command => {
                let started = json!({"type": "commandExecution", "id": item, "command": subject, "cwd": self.cwd, "status": "inProgress", "commandActions": []});
                send(
                    json!({"method": "item/started", "params": {"threadId": self.thread(), "turnId": turn_id, "item": started}}),
                );
                (
                    json!(n),
                    "item/commandExecution/requestApproval",
                    json!({"command": subject, "cwd": self.cwd}),
                )
            }
            ApprovalKind::File => {
                let started = json!({"type": "fileChange", "id": item, "status": "inProgress", "changes": [{"path": subject, "kind": {"type": "add"}, "diff": ""}]});
                send(
                    json!({"method": "item/started", "params": {"threadId": self.thread(), "turnId": turn_id, "item": started}}),
                );
                (
                    json!(format!("fc-{n}")),
                    "item/fileChange/requestApproval",
                    json!({"reason": null}),
                )
            }
            ApprovalKind::Permission => (
                json!(n),
                "item/permissions/requestApproval",
                json!({"reason": subject, "cwd": self.cwd, "permissions": {"fileSystem": {"write": [subject]}}}),
            ),
        };
        for (key, value) in base.as_object().expect("object") {
            params[key] = value.clone();
        }
        let result = self.server_request(id.clone(), method, params)?;
        let decision = match result.get("decision").and_then(Value::as_str) {
            Some(decision) => decision.to_string(),
            // Permission requests are answered with a granted profile.
            None if result
                .get("permissions")
                .is_some_and(|granted| granted.as_object().is_some_and(|o| !o.is_empty())) =>
            {
                "accept".to_string()
            }
            None => "decline".to_string(),
        };
        log(json!({"event": "decision", "request": id, "decision": decision}));
        Some(decision)
    }

    fn ask(&mut self, turn_id: &str, question: &fake_support::QuestionStep) -> Option<Vec<String>> {
        let id = json!(self.next_server_request);
        self.next_server_request += 1;
        let options: Vec<Value> = question
            .options
            .iter()
            .map(|label| json!({"label": label, "description": ""}))
            .collect();
        let params = json!({
            "threadId": self.thread(), "turnId": turn_id, "itemId": self.item_id(), "isBlocking": true,
            "questions": [{"id": "q1", "header": question.header, "question": question.question, "options": options, "multiSelect": question.multiple}],
        });
        let result = self.server_request(id, "item/tool/requestUserInput", params)?;
        let answers: Vec<String> = result
            .pointer("/answers/q1/answers")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        log(json!({"event": "answers", "answers": answers}));
        Some(answers)
    }

    fn wait_for_interrupt(&mut self) {
        while let Some(frame) = self.read_frame() {
            if frame.get("method").and_then(Value::as_str) == Some("turn/interrupt") {
                send(json!({"id": frame["id"], "result": {}}));
                log(json!({"event": "interrupted"}));
                return;
            }
            self.handle_client_frame(frame);
        }
        std::process::exit(0);
    }
}
