//! `nagi demo-agent`: the offline agent `nagi demo` runs as its provider. It speaks the
//! Codex app-server protocol (newline JSON-RPC on stdio) that nagi's Codex adapter uses, so
//! the demo exercises the real launch, session capture, transcript, turn and check paths
//! with no account and no network. It reads the workspace (read-only), reports what it
//! read, and completes its turn. It is a demonstration, not a coding agent.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

fn send(out: &mut impl Write, value: Value) {
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

fn item(out: &mut impl Write, thread: &str, turn: &str, item: Value) {
    send(
        out,
        json!({"method": "item/started", "params": {"threadId": thread, "turnId": turn, "item": item}}),
    );
    send(
        out,
        json!({"method": "item/completed", "params": {"threadId": thread, "turnId": turn, "item": item}}),
    );
}

pub fn run() -> i32 {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let thread = "demo-thread-1".to_string();
    let mut turns = 0u32;
    // The project's folder: `thread/start` names it (`cwd`), as it does for Codex.
    let mut project = std::path::PathBuf::from(".");
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return 1 };
        let Ok(request) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = request.get("id").cloned();
        match request.get("method").and_then(Value::as_str) {
            Some("initialize") => send(
                &mut out,
                json!({"id": id, "result": {"userAgent": "nagi-demo-agent/1"}}),
            ),
            Some("thread/start") | Some("thread/resume") => {
                if let Some(cwd) = request.pointer("/params/cwd").and_then(Value::as_str) {
                    project = std::path::PathBuf::from(cwd);
                }
                send(
                    &mut out,
                    json!({"id": id, "result": {"thread": {"id": thread}}}),
                );
            }
            Some("turn/start") => {
                turns += 1;
                let turn = format!("turn-{turns}");
                send(
                    &mut out,
                    json!({"id": id, "result": {"turn": {"id": turn, "status": "inProgress"}}}),
                );
                send(
                    &mut out,
                    json!({"method": "turn/started", "params": {"threadId": thread, "turn": {"id": turn}}}),
                );
                item(
                    &mut out,
                    &thread,
                    &turn,
                    json!({"id": "m1", "type": "agentMessage", "text": "I am nagi's demo agent. Let me read the project first."}),
                );
                let readme = std::fs::read_to_string(project.join("README.md"))
                    .unwrap_or_else(|error| format!("(cannot read README.md: {error})"));
                item(
                    &mut out,
                    &thread,
                    &turn,
                    json!({"id": "c1", "type": "commandExecution", "command": "cat README.md", "aggregatedOutput": readme,
                           "exitCode": 0, "status": "completed"}),
                );
                item(
                    &mut out,
                    &thread,
                    &turn,
                    json!({"id": "m2", "type": "agentMessage",
                           "text": "The README already names the project, so the criterion holds. I changed nothing: this run is read-only. nagi will run the declared check to prove it."}),
                );
                send(
                    &mut out,
                    json!({"method": "turn/completed", "params": {"threadId": thread, "turn": {"id": turn, "status": "completed"}}}),
                );
            }
            Some("turn/interrupt") => send(&mut out, json!({"id": id, "result": {}})),
            Some(_) if id.is_some() => send(
                &mut out,
                json!({"id": id, "error": {"code": -32601, "message": "not supported by the demo agent"}}),
            ),
            _ => {}
        }
    }
    0
}
