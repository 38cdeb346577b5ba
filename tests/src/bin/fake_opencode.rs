//! A fake `opencode serve --hostname 127.0.0.1 --port 0 --no-mdns`: the HTTP + SSE
//! surface of OpenCode 1.18.33 that nagi's OpenCode adapter uses (see
//! /work/notes/providers-observed.md). Scripted by environment variables; see
//! `fake_support` for the grammar. Extra variables:
//!
//! * `NAGI_FAKE_OPENCODE_VERSION` — the version `/global/health` reports (default `1.18.33`).
//! * `NAGI_FAKE_OPENCODE_DROP_PATH` — an OpenAPI path left out of `/doc`.
//!
//! Basic auth is `OPENCODE_SERVER_USERNAME`/`OPENCODE_SERVER_PASSWORD`; a request without it
//! gets 401. Endpoints: `GET /global/health`, `GET /doc`, `GET /event` (SSE: `data: {"type",
//! "properties"}` lines), `POST /session`, `GET /session/<id>`, `GET /session/status`,
//! `POST /session/<id>/prompt_async` (204, then the script runs), `POST /session/<id>/abort`,
//! `GET /permission`, `POST /permission/<id>/reply`, `GET /question`. Approval steps raise
//! `permission.asked` (permission `bash`, `edit` or `external_directory`); an `ask` step raises
//! `question.asked`. `crash` exits the whole server with code 3; `hang` stops the turn forever.

#[path = "../fake_support/mod.rs"]
mod fake_support;

use std::collections::HashMap;
use std::io::Write;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use base64::Engine;
use fake_support::{ApprovalKind, Step, log};
use serde_json::{Value, json};

#[derive(Default)]
struct Shared {
    subscribers: Mutex<Vec<mpsc::Sender<String>>>,
    replies: Mutex<HashMap<String, mpsc::Sender<String>>>,
    abort: Mutex<Option<mpsc::Sender<()>>>,
    permissions: Mutex<Vec<Value>>,
    questions: Mutex<Vec<Value>>,
    turns: Mutex<usize>,
    busy: Mutex<Option<String>>,
}

impl Shared {
    fn broadcast(&self, kind: &str, properties: Value) {
        let line = format!(
            "data: {}\n\n",
            json!({"id": "evt_fake", "type": kind, "properties": properties})
        );
        self.broadcast_raw(line);
    }

    fn broadcast_raw(&self, line: String) {
        self.subscribers
            .lock()
            .expect("subscribers")
            .retain(|subscriber| subscriber.send(line.clone()).is_ok());
    }
}

fn main() {
    fake_support::answer_version_probe("1.18.33");
    fake_support::log_started();
    fake_support::run_startup_behaviour();
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) != Some("serve")
        || !args.iter().any(|arg| arg == "127.0.0.1")
    {
        fake_support::fatal("expected `serve --hostname 127.0.0.1 ...`");
    }
    let server = tiny_http::Server::http("127.0.0.1:0")
        .unwrap_or_else(|error| fake_support::fatal(&error.to_string()));
    let port = server
        .server_addr()
        .to_ip()
        .map(|address| address.port())
        .unwrap_or(0);
    println!("opencode server listening on http://127.0.0.1:{port}");
    let _ = std::io::stdout().flush();
    let username = std::env::var("OPENCODE_SERVER_USERNAME").unwrap_or_default();
    let password = std::env::var("OPENCODE_SERVER_PASSWORD").unwrap_or_default();
    let expected_auth = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"))
    );
    let shared = Arc::new(Shared::default());
    for request in server.incoming_requests() {
        let shared = shared.clone();
        let expected_auth = expected_auth.clone();
        std::thread::spawn(move || handle(request, &shared, &expected_auth));
    }
}

fn json_response(request: tiny_http::Request, status: u16, body: Value) {
    let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..])
        .expect("header");
    let _ = request.respond(
        tiny_http::Response::from_string(body.to_string())
            .with_status_code(status)
            .with_header(header),
    );
}

fn handle(mut request: tiny_http::Request, shared: &Arc<Shared>, expected_auth: &str) {
    let authorized = request.headers().iter().any(|header| {
        header.field.equiv("Authorization") && header.value.as_str() == expected_auth
    });
    let url = request.url().to_string();
    let method = request.method().as_str().to_string();
    let mut body_text = String::new();
    let _ = request.as_reader().read_to_string(&mut body_text);
    let body: Value = serde_json::from_str(&body_text).unwrap_or(Value::Null);
    log(
        json!({"event": "received", "frame": {"method": format!("{method} {}", url.split('?').next().unwrap_or("")), "url": url, "body": body}}),
    );
    if !authorized {
        return json_response(request, 401, json!({"error": "unauthorized"}));
    }
    let (path, query) = url.split_once('?').unwrap_or((url.as_str(), ""));
    let directory = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("directory="))
        .map(percent_decode)
        .unwrap_or_default();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (method.as_str(), segments.as_slice()) {
        ("GET", ["global", "health"]) => {
            let version = std::env::var("NAGI_FAKE_OPENCODE_VERSION")
                .unwrap_or_else(|_| "1.18.33".to_string());
            json_response(request, 200, json!({"healthy": true, "version": version}));
        }
        ("GET", ["doc"]) => json_response(request, 200, openapi_document()),
        ("GET", ["event"]) => stream_events(request, shared),
        ("POST", ["session"]) => {
            let id = fake_support::fresh_session_id();
            log(json!({"event": "new_session", "directory": directory}));
            json_response(
                request,
                200,
                json!({"id": id, "directory": directory, "title": "New session", "version": "fake"}),
            );
        }
        ("GET", ["session", "status"]) => {
            let statuses = match shared.busy.lock().expect("busy").clone() {
                Some(id) => json!({id: {"type": "busy"}}),
                None => json!({}),
            };
            json_response(request, 200, statuses);
        }
        ("GET", ["session", id]) => {
            fake_support::note_resumed();
            log(json!({"event": "resume", "session_id": id}));
            json_response(request, 200, json!({"id": id, "directory": directory}));
        }
        ("POST", ["session", id, "prompt_async"]) => {
            let text = body
                .pointer("/parts/0/text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            log(
                json!({"event": "prompt", "text": text, "model": body.get("model"), "variant": body.get("variant")}),
            );
            // Ready for an abort before the client learns the prompt was accepted.
            let (abort_sender, abort_receiver) = mpsc::channel();
            *shared.abort.lock().expect("abort") = Some(abort_sender);
            *shared.busy.lock().expect("busy") = Some(id.to_string());
            let _ = request.respond(tiny_http::Response::empty(204));
            let shared = shared.clone();
            let session = id.to_string();
            let cwd = std::env::current_dir().unwrap_or_default();
            std::thread::spawn(move || run_turn(&shared, &session, &text, &cwd, abort_receiver));
        }
        ("POST", ["session", _, "abort"]) => {
            log(json!({"event": "abort"}));
            if let Some(abort) = shared.abort.lock().expect("abort").as_ref() {
                let _ = abort.send(());
            }
            json_response(request, 200, json!(true));
        }
        ("GET", ["permission"]) => json_response(
            request,
            200,
            Value::Array(shared.permissions.lock().expect("permissions").clone()),
        ),
        ("POST", ["permission", id, "reply"]) => {
            let reply = body
                .get("reply")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let waiter = shared.replies.lock().expect("replies").remove(*id);
            match waiter {
                Some(waiter) => {
                    let _ = waiter.send(reply);
                    json_response(request, 200, json!(true));
                }
                None => json_response(request, 404, json!({"error": "no such permission"})),
            }
        }
        ("GET", ["question"]) => json_response(
            request,
            200,
            Value::Array(shared.questions.lock().expect("questions").clone()),
        ),
        _ => json_response(request, 404, json!({"error": "not found"})),
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = bytes
            .get(index + 1..index + 3)
            .and_then(|pair| std::str::from_utf8(pair).ok());
        if bytes[index] == b'%'
            && let Some(byte) = hex.and_then(|pair| u8::from_str_radix(pair, 16).ok())
        {
            decoded.push(byte);
            index += 3;
            continue;
        }
        decoded.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

fn openapi_document() -> Value {
    let dropped = std::env::var("NAGI_FAKE_OPENCODE_DROP_PATH").unwrap_or_default();
    let operations = [
        ("/event", "get"),
        ("/session", "post"),
        ("/session/status", "get"),
        ("/session/{sessionID}", "get"),
        ("/session/{sessionID}/message", "get"),
        ("/session/{sessionID}/prompt_async", "post"),
        ("/session/{sessionID}/abort", "post"),
        ("/permission", "get"),
        ("/permission/{requestID}/reply", "post"),
        ("/question", "get"),
        ("/global/health", "get"),
    ];
    let mut paths = serde_json::Map::new();
    for (path, method) in operations {
        if path != dropped {
            paths.insert(path.to_string(), json!({method: {"operationId": path}}));
        }
    }
    json!({"openapi": "3.1.0", "paths": paths})
}

/// SSE over the raw connection: tiny_http's chunked writer would hold events back.
fn stream_events(request: tiny_http::Request, shared: &Arc<Shared>) {
    let (sender, receiver) = mpsc::channel::<String>();
    let mut writer = request.into_writer();
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    if writer.write_all(head.as_bytes()).is_err() {
        return;
    }
    let connected = format!(
        "data: {}\n\n",
        json!({"id": "evt_0", "type": "server.connected", "properties": {}})
    );
    if writer
        .write_all(connected.as_bytes())
        .and_then(|()| writer.flush())
        .is_err()
    {
        return;
    }
    shared.subscribers.lock().expect("subscribers").push(sender);
    for line in receiver {
        if writer
            .write_all(line.as_bytes())
            .and_then(|()| writer.flush())
            .is_err()
        {
            return;
        }
    }
}

fn status(shared: &Shared, session: &str, kind: &str) {
    shared.broadcast(
        "session.status",
        json!({"sessionID": session, "status": {"type": kind}}),
    );
}

fn text_part(shared: &Shared, session: &str, id: &str, text: &str) {
    // First a streaming update, then the finished part.
    // As OpenCode 1.18 streams: the part is created empty, its text comes as deltas.
    shared.broadcast("message.part.updated", json!({"part": {"id": id, "sessionID": session, "messageID": "msg_assistant", "type": "text", "text": "", "time": {"start": 1}}}));
    for piece in [&text[..text.len() / 2], &text[text.len() / 2..]] {
        shared.broadcast("message.part.delta", json!({"sessionID": session, "messageID": "msg_assistant", "partID": id, "field": "text", "delta": piece}));
    }
    shared.broadcast("message.part.updated", json!({"part": {"id": id, "sessionID": session, "messageID": "msg_assistant", "type": "text", "text": text, "time": {"start": 1, "end": 2}}}));
}

fn run_turn(
    shared: &Arc<Shared>,
    session: &str,
    prompt: &str,
    cwd: &std::path::Path,
    abort_receiver: mpsc::Receiver<()>,
) {
    let number = {
        let mut turns = shared.turns.lock().expect("turns");
        *turns += 1;
        *turns
    };
    status(shared, session, "busy");
    // The prompt comes back as a user message whose text part never "ends", as in 1.18.33.
    let user_message = format!("msg_user_{number}");
    shared.broadcast(
        "message.updated",
        json!({"info": {"id": user_message, "sessionID": session, "role": "user"}}),
    );
    shared.broadcast("message.part.updated", json!({"part": {"id": format!("prt_user_{number}"), "sessionID": session, "messageID": user_message, "type": "text", "text": prompt}}));
    shared.broadcast(
        "message.updated",
        json!({"info": {"id": "msg_assistant", "sessionID": session, "role": "assistant"}}),
    );
    status(shared, session, "busy");
    let mut part = 0;
    let mut failure = None;
    let mut aborted = false;
    for step in fake_support::script_for_turn(number, prompt) {
        part += 1;
        let part_id = format!("prt_{part}");
        match step {
            Step::Text(text) => text_part(shared, session, &part_id, &text),
            Step::Tool { command, output } => {
                for state in [
                    json!({"status": "running", "input": {"command": command}}),
                    json!({"status": "completed", "input": {"command": command}, "output": output}),
                ] {
                    shared.broadcast("message.part.updated", json!({"part": {"id": part_id, "sessionID": session, "type": "tool", "tool": "bash", "callID": format!("call_{part}"), "state": state}}));
                }
            }
            Step::Approval { kind, subject } => {
                let permission = match kind {
                    ApprovalKind::Command => "bash",
                    ApprovalKind::File => "edit",
                    ApprovalKind::Permission => "external_directory",
                };
                let id = format!("per_{part}");
                let asked = json!({"id": id, "sessionID": session, "permission": permission, "patterns": [subject], "metadata": {}, "always": [format!("{subject}*")], "tool": {"messageID": "msg_1", "callID": "call_1"}});
                let (reply_sender, reply_receiver) = mpsc::channel();
                shared
                    .replies
                    .lock()
                    .expect("replies")
                    .insert(id.clone(), reply_sender);
                shared
                    .permissions
                    .lock()
                    .expect("permissions")
                    .push(asked.clone());
                shared.broadcast("permission.asked", asked);
                let reply = loop {
                    if let Ok(reply) =
                        reply_receiver.recv_timeout(std::time::Duration::from_millis(20))
                    {
                        break Some(reply);
                    }
                    if abort_receiver.try_recv().is_ok() {
                        break None;
                    }
                };
                shared
                    .permissions
                    .lock()
                    .expect("permissions")
                    .retain(|pending| pending["id"] != id);
                let Some(reply) = reply else {
                    aborted = true;
                    break;
                };
                log(json!({"event": "decision", "request": id, "decision": reply}));
                shared.broadcast(
                    "permission.replied",
                    json!({"sessionID": session, "requestID": id, "reply": reply}),
                );
                text_part(
                    shared,
                    session,
                    &format!("{part_id}_t"),
                    &format!("decision: {reply}"),
                );
            }
            Step::Ask(question) => {
                let asked = json!({"id": format!("que_{part}"), "sessionID": session, "questions": [{"question": question.question, "header": question.header,
                    "options": question.options.iter().map(|label| json!({"label": label, "description": ""})).collect::<Vec<_>>(), "multiple": question.multiple}]});
                shared
                    .questions
                    .lock()
                    .expect("questions")
                    .push(asked.clone());
                shared.broadcast("question.asked", asked);
                let _ = abort_receiver.recv();
                aborted = true;
                break;
            }
            Step::WriteFile { path, content } => {
                let text = match fake_support::write_file(cwd, &path, &content) {
                    Ok(()) => format!("wrote {path}"),
                    Err(error) => format!("write failed: {error}"),
                };
                text_part(shared, session, &part_id, &text);
            }
            Step::WaitInterrupt => {
                let _ = abort_receiver.recv();
                aborted = true;
                break;
            }
            Step::WaitFile(path) => fake_support::wait_for_file(&path),
            Step::Hang => fake_support::hang(),
            Step::Crash => fake_support::crash(),
            Step::Garbage => shared.broadcast_raw("data: this is not json {{{\n\n".to_string()),
            Step::HugeFrame => shared.broadcast_raw(format!(
                "data: {}\n\n",
                json!({"type": "filler", "properties": {"x": "x".repeat(2 * 1024 * 1024)}})
            )),
            Step::Exit => std::process::exit(0),
            Step::Fail(reason) => {
                failure = Some(reason);
                break;
            }
            Step::Complete => break,
        }
    }
    if aborted {
        log(json!({"event": "interrupted"}));
        shared.broadcast("session.error", json!({"sessionID": session, "error": {"name": "MessageAbortedError", "data": {"message": "Aborted"}}}));
    } else if let Some(reason) = failure {
        shared.broadcast("session.error", json!({"sessionID": session, "error": {"name": "UnknownError", "data": {"message": reason}}}));
    } else {
        // The finished assistant message with its tokens and cost, sent twice as 1.18.33
        // does (OpenCode counts cache reads apart from `input`).
        let finished = json!({"info": {"id": format!("msg_assistant_{number}"), "parentID": user_message, "sessionID": session, "role": "assistant", "finish": "stop",
            "cost": fake_support::TURN_COST_USD,
            "tokens": {"input": fake_support::TURN_INPUT_TOKENS - fake_support::TURN_CACHED_INPUT_TOKENS, "output": fake_support::TURN_OUTPUT_TOKENS,
                "reasoning": fake_support::TURN_REASONING_TOKENS, "cache": {"read": fake_support::TURN_CACHED_INPUT_TOKENS, "write": 0}}}});
        shared.broadcast("message.updated", finished.clone());
        shared.broadcast("message.updated", finished);
    }
    *shared.busy.lock().expect("busy") = None;
    *shared.abort.lock().expect("abort") = None;
    status(shared, session, "idle");
}
