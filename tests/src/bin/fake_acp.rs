//! A fake ACP agent on stdio, built on the agent side of `agent-client-protocol` 5.x
//! (`Agent.v1()` over `Stdio`). Scripted by environment variables; see `fake_support` for
//! the grammar. Extra variable: `NAGI_FAKE_ACP_RESUME` = `resume` (default: advertise
//! `sessionCapabilities.resume`), `load` (advertise `loadSession`) or `none`.
//!
//! ACP has no questions; an `ask` step becomes a permission request whose options are the
//! question's labels. Approval steps offer `allow_once`, `allow_always` and `reject_once`.
//! `write_file` asks the client to write through `fs/write_text_file` (the ACP write-scope
//! path), so the client decides whether the write happens. Logged events: `initialize`
//! (with the client's fs capabilities), `new_session` (cwd), `resume`/`load`, `prompt`,
//! `decision` (chosen option id or `cancelled`), `write`, `cancel`.

#[path = "../fake_support/mod.rs"]
mod fake_support;

use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock, ContentChunk, InitializeRequest,
    InitializeResponse, LoadSessionRequest, LoadSessionResponse, NewSessionRequest,
    NewSessionResponse, PermissionOption, PermissionOptionKind, PromptRequest, PromptResponse,
    RequestPermissionOutcome, RequestPermissionRequest, ResumeSessionRequest,
    ResumeSessionResponse, SessionCapabilities, SessionNotification, SessionResumeCapabilities,
    SessionUpdate, StopReason, TextContent, ToolCall, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, WriteTextFileRequest,
};
use agent_client_protocol::{Agent, Client, Stdio};
use fake_support::{ApprovalKind, Step, log};
use serde_json::json;
use tokio::sync::Notify;

#[derive(Default)]
struct State {
    cwd: std::sync::Mutex<std::path::PathBuf>,
    turns: std::sync::atomic::AtomicUsize,
    cancelled: Notify,
}

#[tokio::main]
async fn main() -> agent_client_protocol::Result<()> {
    fake_support::log_started();
    fake_support::run_startup_behaviour();
    let state = Arc::new(State::default());
    let resume_mode =
        std::env::var("NAGI_FAKE_ACP_RESUME").unwrap_or_else(|_| "resume".to_string());
    let (prompt_state, cancel_state, new_state) = (state.clone(), state.clone(), state.clone());
    Agent
        .v1()
        .name("fake_acp")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                let fs = &request.client_capabilities.fs;
                log(json!({"event": "initialize", "read": fs.read_text_file, "write": fs.write_text_file, "terminal": request.client_capabilities.terminal}));
                let mut capabilities = AgentCapabilities::new();
                match resume_mode.as_str() {
                    "load" => capabilities = capabilities.load_session(true),
                    "none" => {}
                    _ => capabilities = capabilities.session_capabilities(SessionCapabilities::new().resume(SessionResumeCapabilities::new())),
                }
                responder.respond(InitializeResponse::new(ProtocolVersion::V1).agent_capabilities(capabilities))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, _cx| {
                log(json!({"event": "new_session", "cwd": request.cwd, "mcp_servers": request.mcp_servers.len()}));
                *new_state.cwd.lock().expect("cwd") = request.cwd.clone();
                responder.respond(NewSessionResponse::new(fake_support::fresh_session_id()))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ResumeSessionRequest, responder, _cx| {
                fake_support::note_resumed();
                log(json!({"event": "resume", "session_id": request.session_id.to_string(), "cwd": request.cwd}));
                responder.respond(ResumeSessionResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, _cx| {
                fake_support::note_resumed();
                log(json!({"event": "load", "session_id": request.session_id.to_string(), "cwd": request.cwd}));
                responder.respond(LoadSessionResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |notification: CancelNotification, _cx| {
                log(json!({"event": "cancel", "session_id": notification.session_id.to_string()}));
                cancel_state.cancelled.notify_waiters();
                cancel_state.cancelled.notify_one();
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx: ConnectionTo<Client>| {
                let state = prompt_state.clone();
                let text = request
                    .prompt
                    .iter()
                    .filter_map(|block| match block {
                        ContentBlock::Text(text) => Some(text.text.clone()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                log(json!({"event": "prompt", "text": text}));
                let session = request.session_id.to_string();
                // The turn runs outside the dispatch loop: it waits for the client's answers.
                cx.clone().spawn(async move {
                    match run_turn(&cx, &state, &session, &text).await {
                        Ok(stop) => responder.respond(PromptResponse::new(stop)),
                        Err(reason) => responder.respond_with_error(agent_client_protocol::Error::internal_error().data(reason)),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(Stdio::new())
        .await
}

fn chunk(session: &str, text: &str) -> SessionNotification {
    SessionNotification::new(
        session.to_string(),
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
            text,
        )))),
    )
}

async fn say(cx: &ConnectionTo<Client>, session: &str, text: &str) {
    // Two chunks, so the client has to join streamed text.
    let middle = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(text.len(), |(index, _)| index);
    let _ = cx.send_notification(chunk(session, &text[..middle]));
    let _ = cx.send_notification(chunk(session, &text[middle..]));
}

async fn ask_permission(
    cx: &ConnectionTo<Client>,
    session: &str,
    title: &str,
    options: Vec<PermissionOption>,
) -> String {
    let call = ToolCallUpdate::new(
        "call-1",
        ToolCallUpdateFields::new().title(title.to_string()),
    );
    match cx
        .send_request(RequestPermissionRequest::new(
            session.to_string(),
            call,
            options,
        ))
        .block_task()
        .await
    {
        Ok(response) => match response.outcome {
            RequestPermissionOutcome::Selected(selected) => selected.option_id.to_string(),
            _ => "cancelled".to_string(),
        },
        Err(error) => format!("error: {}", error.message),
    }
}

async fn run_turn(
    cx: &ConnectionTo<Client>,
    state: &State,
    session: &str,
    prompt: &str,
) -> Result<StopReason, String> {
    let number = state
        .turns
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        + 1;
    let cwd = state.cwd.lock().expect("cwd").clone();
    for step in fake_support::script_for_turn(number, prompt) {
        match step {
            Step::Text(text) => say(cx, session, &text).await,
            Step::Tool { command, output } => {
                let _ = cx.send_notification(SessionNotification::new(
                    session.to_string(),
                    SessionUpdate::ToolCall(ToolCall::new("tool-1", command.clone())),
                ));
                let fields = ToolCallUpdateFields::new()
                    .status(ToolCallStatus::Completed)
                    .title(format!("{command} -> {output}"));
                let _ = cx.send_notification(SessionNotification::new(
                    session.to_string(),
                    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new("tool-1", fields)),
                ));
            }
            Step::Approval { kind, subject } => {
                let title = match kind {
                    ApprovalKind::Command => format!("run {subject}"),
                    ApprovalKind::File => format!("edit {subject}"),
                    ApprovalKind::Permission => subject.clone(),
                };
                let options = vec![
                    PermissionOption::new(
                        "allow-once",
                        "Allow once",
                        PermissionOptionKind::AllowOnce,
                    ),
                    PermissionOption::new(
                        "allow-always",
                        "Always allow",
                        PermissionOptionKind::AllowAlways,
                    ),
                    PermissionOption::new(
                        "reject-once",
                        "Reject",
                        PermissionOptionKind::RejectOnce,
                    ),
                ];
                let decision = ask_permission(cx, session, &title, options).await;
                log(json!({"event": "decision", "decision": decision}));
                say(cx, session, &format!("decision: {decision}")).await;
            }
            Step::Ask(question) => {
                let options = question
                    .options
                    .iter()
                    .map(|label| {
                        PermissionOption::new(
                            label.clone(),
                            label.clone(),
                            PermissionOptionKind::AllowOnce,
                        )
                    })
                    .collect();
                let decision = ask_permission(cx, session, &question.question, options).await;
                log(json!({"event": "decision", "decision": decision}));
                say(cx, session, &format!("answer: {decision}")).await;
            }
            Step::WriteFile { path, content } => {
                let target = cwd.join(&path);
                let outcome = cx
                    .send_request(WriteTextFileRequest::new(
                        session.to_string(),
                        target.clone(),
                        content,
                    ))
                    .block_task()
                    .await;
                log(json!({"event": "write", "path": target, "ok": outcome.is_ok()}));
                let text = match outcome {
                    Ok(_) => format!("wrote {path}"),
                    Err(error) => format!(
                        "write refused: {}",
                        error
                            .data
                            .map(|data| data.to_string())
                            .unwrap_or(error.message)
                    ),
                };
                say(cx, session, &text).await;
            }
            Step::WaitInterrupt => {
                state.cancelled.notified().await;
                return Ok(StopReason::Cancelled);
            }
            Step::WaitFile(path) => fake_support::wait_for_file(&path),
            Step::Hang => fake_support::hang(),
            Step::Crash => fake_support::crash(),
            Step::Garbage => fake_support::print_garbage(),
            Step::HugeFrame => fake_support::print_huge_frame(),
            Step::Exit => std::process::exit(0),
            Step::Fail(reason) => return Err(reason),
            Step::Complete => return Ok(StopReason::EndTurn),
        }
    }
    Ok(StopReason::EndTurn)
}
