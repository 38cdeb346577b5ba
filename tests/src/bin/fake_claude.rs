//! A fake `claude -p --input-format stream-json --output-format stream-json ...` speaking
//! the stream-json control protocol as Claude Code 2.1.332 does (see
//! /work/notes/providers-observed.md). Scripted by environment variables; see
//! `fake_support` for the grammar. Extra variable: `NAGI_FAKE_IGNORE_FLAGS=1` makes the init
//! frame report permission mode `default` and the full tool list whatever the flags say, so
//! tests can check that a read-only run fails closed.
//!
//! Wire summary:
//!
//! ```text
//! → {"type":"control_request","request_id":"managed-1","request":{"subtype":"initialize"}}
//! ← {"type":"system","subtype":"ui_invalidate","session_id":..}
//! ← {"type":"control_response","response":{"subtype":"success","request_id":"managed-1","response":{..}}}
//! → {"type":"user","message":{"role":"user","content":TEXT},"parent_tool_use_id":null}
//! ← {"type":"system","subtype":"init","session_id","permissionMode","tools","mcp_servers"}   (before every turn)
//! ← {"type":"user",...,"isReplay":true}                                                     (with --replay-user-messages)
//! ← {"type":"assistant","message":{"content":[{"type":"text","text"}]}}
//! ← {"type":"control_request","request_id":"perm-1","request":{"subtype":"can_use_tool","tool_name","input",..}}
//! → {"type":"control_response","response":{"subtype":"success","request_id":"perm-1","response":{"behavior":"allow",..}}}
//! ← (the same control_response, echoed)
//! ← {"type":"result","subtype":"success","is_error":false,"result":TEXT,"session_id"}
//! ```

#[path = "../fake_support/mod.rs"]
mod fake_support;

use std::io::{BufRead, Write};

use fake_support::{ApprovalKind, Step, log};
use serde_json::{Value, json};

const ALL_TOOLS: [&str; 8] = [
    "Task",
    "Bash",
    "Edit",
    "Write",
    "Read",
    "Glob",
    "Grep",
    "AskUserQuestion",
];

struct Flags {
    permission_mode: String,
    tools: Vec<String>,
    resume: Option<String>,
    replay_user_messages: bool,
    /// `--include-partial-messages`: the text is streamed as `stream_event` deltas first.
    partial_messages: bool,
    mcp_config: Option<String>,
}

struct FakeClaude {
    lines: std::io::Lines<std::io::StdinLock<'static>>,
    flags: Flags,
    session_id: String,
    turn_number: usize,
    next_request: u64,
}

enum TurnEnd {
    Completed(String),
    Interrupted,
    Failed(String),
}

fn parse_flags() -> Flags {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value_of = |name: &str| {
        args.iter()
            .position(|arg| arg == name)
            .and_then(|index| args.get(index + 1))
            .cloned()
    };
    let mut flags = Flags {
        permission_mode: value_of("--permission-mode").unwrap_or_else(|| "default".to_string()),
        tools: match value_of("--tools") {
            Some(list) => list.split(',').map(str::to_string).collect(),
            None => ALL_TOOLS.iter().map(|tool| tool.to_string()).collect(),
        },
        resume: value_of("--resume"),
        replay_user_messages: args.iter().any(|arg| arg == "--replay-user-messages"),
        partial_messages: args.iter().any(|arg| arg == "--include-partial-messages"),
        mcp_config: value_of("--mcp-config"),
    };
    // The choices of Claude Code 2.1.197, the oldest supported version (2.1.332 also takes
    // `manual`, which 2.1.197 refuses).
    const PERMISSION_MODES: [&str; 6] = [
        "acceptEdits",
        "auto",
        "bypassPermissions",
        "default",
        "dontAsk",
        "plan",
    ];
    if !PERMISSION_MODES.contains(&flags.permission_mode.as_str()) {
        eprintln!(
            "error: option '--permission-mode <mode>' argument '{}' is invalid. Allowed choices are {}.",
            flags.permission_mode,
            PERMISSION_MODES.join(", ")
        );
        std::process::exit(1);
    }
    if std::env::var("NAGI_FAKE_IGNORE_FLAGS").as_deref() == Ok("1") {
        flags.permission_mode = "default".to_string();
        flags.tools = ALL_TOOLS.iter().map(|tool| tool.to_string()).collect();
    }
    for required in [
        "-p",
        "--input-format",
        "--output-format",
        "--verbose",
        "--permission-prompt-tool",
    ] {
        if !args.iter().any(|arg| arg == required) {
            fake_support::fatal(&format!("missing flag {required}"));
        }
    }
    flags
}

fn send(value: Value) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{value}");
    let _ = stdout.flush();
}

fn main() {
    fake_support::answer_version_probe("2.1.332 (Claude Code)");
    fake_support::log_started();
    let flags = parse_flags();
    fake_support::run_startup_behaviour();
    let session_id = flags
        .resume
        .clone()
        .unwrap_or_else(fake_support::fresh_session_id);
    if let Some(resumed) = &flags.resume {
        fake_support::note_resumed();
        log(json!({"event": "resume", "session_id": resumed}));
    }
    let mut fake = FakeClaude {
        lines: std::io::stdin().lock().lines(),
        flags,
        session_id,
        turn_number: 0,
        next_request: 0,
    };
    while let Some(frame) = fake.read_frame() {
        fake.handle_frame(frame);
    }
}

impl FakeClaude {
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

    fn handle_frame(&mut self, frame: Value) {
        match frame.get("type").and_then(Value::as_str) {
            Some("control_request") => {
                let request_id = frame["request_id"].clone();
                match frame.pointer("/request/subtype").and_then(Value::as_str) {
                    Some("initialize") => {
                        send(
                            json!({"type": "system", "subtype": "ui_invalidate", "session_id": self.session_id}),
                        );
                        send(
                            json!({"type": "control_response", "response": {"subtype": "success", "request_id": request_id,
                            "response": {"commands": [], "claude_code_version": "fake", "mcp_config": self.flags.mcp_config}}}),
                        );
                    }
                    Some("interrupt") => send(
                        json!({"type": "control_response", "response": {"subtype": "success", "request_id": request_id, "response": {"still_queued": []}}}),
                    ),
                    _ => send(
                        json!({"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": "unknown"}}),
                    ),
                }
            }
            Some("user") => {
                self.turn_number += 1;
                let prompt = frame
                    .pointer("/message/content")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                log(json!({"event": "prompt", "text": prompt}));
                let tools: Vec<Value> = self.flags.tools.iter().map(|tool| json!(tool)).collect();
                send(
                    json!({"type": "system", "subtype": "init", "session_id": self.session_id, "cwd": std::env::current_dir().unwrap_or_default(),
                    "tools": tools, "mcp_servers": [], "permissionMode": self.flags.permission_mode, "claude_code_version": "fake"}),
                );
                if self.flags.replay_user_messages {
                    let mut replay = frame.clone();
                    replay["isReplay"] = json!(true);
                    replay["session_id"] = json!(self.session_id);
                    send(replay);
                }
                let end = self.run_turn(&prompt);
                self.finish(end);
            }
            _ => {}
        }
    }

    fn assistant_text(&self, text: &str) {
        if self.flags.partial_messages {
            let middle = text.len() / 2;
            let middle = (0..=middle)
                .rev()
                .find(|at| text.is_char_boundary(*at))
                .unwrap_or(0);
            for piece in [&text[..middle], &text[middle..]] {
                send(
                    json!({"type": "stream_event", "event": {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}, "parent_tool_use_id": null, "session_id": self.session_id}),
                );
            }
        }
        send(
            json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}, "session_id": self.session_id}),
        );
    }

    fn run_turn(&mut self, prompt: &str) -> TurnEnd {
        let mut last_text = String::new();
        for step in fake_support::script_for_turn(self.turn_number, prompt) {
            match step {
                Step::Text(text) => {
                    self.assistant_text(&text);
                    last_text = text;
                }
                Step::Tool { command, output } => {
                    send(
                        json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "call_1", "name": "Bash", "input": {"command": command}}]}, "session_id": self.session_id}),
                    );
                    send(
                        json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": output}]}, "session_id": self.session_id}),
                    );
                }
                Step::Approval { kind, subject } => {
                    let manual = self.flags.permission_mode == "default";
                    let (tool, input, suggestions) = match kind {
                        ApprovalKind::Command => (
                            "Bash",
                            json!({"command": subject}),
                            json!([
                            {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": subject}], "behavior": "allow", "destination": "localSettings"},
                            {"type": "addDirectories", "directories": ["/tmp"], "destination": "session"}]),
                        ),
                        ApprovalKind::File => (
                            "Write",
                            json!({"file_path": subject, "content": ""}),
                            json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]),
                        ),
                        ApprovalKind::Permission => {
                            ("WebFetch", json!({"url": subject}), json!([]))
                        }
                    };
                    let suggestions = if manual { Some(suggestions) } else { None };
                    let Some(response) = self.can_use_tool(tool, input, suggestions) else {
                        return TurnEnd::Interrupted;
                    };
                    let decision = match response.get("behavior").and_then(Value::as_str) {
                        Some("allow") if response.get("updatedPermissions").is_some() => {
                            "allow_session"
                        }
                        Some("allow") => "allow",
                        _ => "deny",
                    };
                    log(json!({"event": "decision", "decision": decision, "response": response}));
                    last_text = format!("decision: {decision}");
                    self.assistant_text(&last_text);
                }
                Step::Ask(question) => {
                    let options: Vec<Value> = question.options.iter().map(|label| json!({"label": label, "description": format!("choose {label}")})).collect();
                    let input = json!({"questions": [{"question": question.question, "header": question.header, "options": options, "multiSelect": question.multiple}]});
                    let Some(response) = self.can_use_tool("AskUserQuestion", input, None) else {
                        return TurnEnd::Interrupted;
                    };
                    let answer = response
                        .pointer("/updatedInput/answers")
                        .and_then(|answers| answers.get(&question.question))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    log(json!({"event": "answers", "answers": [answer]}));
                    last_text = format!("answer: {answer}");
                    self.assistant_text(&last_text);
                }
                Step::WriteFile { path, content } => {
                    let cwd = std::env::current_dir().unwrap_or_default();
                    last_text = match fake_support::write_file(&cwd, &path, &content) {
                        Ok(()) => format!("wrote {path}"),
                        Err(error) => format!("write failed: {error}"),
                    };
                    self.assistant_text(&last_text);
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
                Step::Complete => return TurnEnd::Completed(last_text),
            }
        }
        TurnEnd::Completed(last_text)
    }

    fn finish(&self, end: TurnEnd) {
        let (subtype, is_error, result) = match end {
            TurnEnd::Completed(text) => ("success", false, text),
            TurnEnd::Interrupted => ("error_during_execution", true, String::new()),
            TurnEnd::Failed(reason) => ("error_during_execution", true, reason),
        };
        // `usage` is the turn's (Anthropic counts cache reads apart from `input_tokens`);
        // `total_cost_usd` the session's so far in this process, as older Claude Code
        // versions report it (no per-turn cost).
        let usage = json!({
            "input_tokens": fake_support::TURN_INPUT_TOKENS - fake_support::TURN_CACHED_INPUT_TOKENS,
            "cache_read_input_tokens": fake_support::TURN_CACHED_INPUT_TOKENS,
            "cache_creation_input_tokens": 0,
            "output_tokens": fake_support::TURN_OUTPUT_TOKENS,
            "output_tokens_details": {"thinking_tokens": fake_support::TURN_REASONING_TOKENS},
        });
        let total_cost = fake_support::TURN_COST_USD * self.turn_number as f64;
        send(
            json!({"subtype": subtype, "is_error": is_error, "result": result, "session_id": self.session_id, "type": "result", "usage": usage, "total_cost_usd": total_cost}),
        );
    }

    /// Asks for permission and returns the `response` body, or `None` when interrupted.
    fn can_use_tool(
        &mut self,
        tool: &str,
        input: Value,
        suggestions: Option<Value>,
    ) -> Option<Value> {
        self.next_request += 1;
        let request_id = format!("perm-{}", self.next_request);
        let mut request = json!({"subtype": "can_use_tool", "tool_name": tool, "display_name": tool, "input": input, "tool_use_id": "call_1"});
        if let Some(suggestions) = suggestions {
            request["permission_suggestions"] = suggestions;
        }
        send(json!({"type": "control_request", "request_id": request_id, "request": request}));
        loop {
            let frame = self.read_frame()?;
            match frame.get("type").and_then(Value::as_str) {
                Some("control_response")
                    if frame
                        .pointer("/response/request_id")
                        .and_then(Value::as_str)
                        == Some(&request_id) =>
                {
                    send(frame.clone()); // Claude Code echoes the response back
                    return frame.pointer("/response/response").cloned();
                }
                Some("control_request")
                    if frame.pointer("/request/subtype").and_then(Value::as_str)
                        == Some("interrupt") =>
                {
                    send(json!({"type": "control_cancel_request", "request_id": request_id}));
                    send(
                        json!({"type": "control_response", "response": {"subtype": "success", "request_id": frame["request_id"], "response": {}}}),
                    );
                    log(json!({"event": "interrupted"}));
                    return None;
                }
                _ => self.handle_frame(frame),
            }
        }
    }

    fn wait_for_interrupt(&mut self) {
        while let Some(frame) = self.read_frame() {
            if frame.get("type").and_then(Value::as_str) == Some("control_request")
                && frame.pointer("/request/subtype").and_then(Value::as_str) == Some("interrupt")
            {
                send(
                    json!({"type": "control_response", "response": {"subtype": "success", "request_id": frame["request_id"], "response": {"still_queued": []}}}),
                );
                log(json!({"event": "interrupted"}));
                return;
            }
            self.handle_frame(frame);
        }
        std::process::exit(0);
    }
}
