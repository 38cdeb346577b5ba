//! The Codex adapter: `codex app-server --listen stdio://`.
//!
//! Handshake: `initialize` → `initialized` notification → `thread/start` (fresh, with the
//! sandbox and `approvalPolicy: "on-request"`) or `thread/resume` (stored thread). The
//! thread id is the native session id. Turns are `turn/start`; a turn ends with
//! `turn/completed`. Approvals and questions arrive as server requests and are answered
//! when the engine responds; the answer counts as delivered only when the server confirms
//! it with `serverRequest/resolved`.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::time::Instant;

use crate::codex_codec::{
    CodexFrame, CodexItem, CodexNotification, CodexServerRequest, CodexTurnStatus, RpcId,
    encode_error, encode_notification, encode_request, encode_result, parse_codex_frame,
    parse_notification, parse_server_request,
};
use crate::framing::{BoundedLine, LineReader, MAX_FRAME_BYTES, SessionEnd, is_blank_frame};
use crate::process::{ProcessConfig, StdinMode};
use crate::runner::{Driver, SessionIo, send, sleep_until_optional, transcript};
use crate::spec::{
    AttentionRequest, FailureKind, LaunchError, LaunchSpec, ProviderCommand, ProviderEvent,
    ProviderHandle, Question, RequestClass, Response, Sandbox, Timeouts, TranscriptLine,
    TurnOutcome,
};

/// JSON-RPC "method not found".
const METHOD_NOT_FOUND: i64 = -32601;

pub fn launch(spec: LaunchSpec) -> Result<ProviderHandle, LaunchError> {
    let mut args = spec.leading_args.clone();
    args.extend([
        "app-server".to_string(),
        "--listen".to_string(),
        "stdio://".to_string(),
    ]);
    args.extend(spec.extra_args.iter().cloned());
    let config = ProcessConfig {
        program: spec.program.clone(),
        args,
        // contract §8.1: the working directory travels in the protocol (`thread/start`).
        working_directory: None,
        env: spec.env.clone(),
        stdin: StdinMode::Piped,
        confinement: spec.confinement.clone(),
    };
    crate::runner::start(config, CodexDriver { spec })
}

struct CodexDriver {
    spec: LaunchSpec,
}

impl Driver for CodexDriver {
    async fn run(self, io: &mut SessionIo) -> SessionEnd {
        let Some(stdin) = io.stdin.take() else {
            return SessionEnd::protocol("codex stdin is not piped");
        };
        let Some(stdout) = io.stdout.take() else {
            return SessionEnd::protocol("codex stdout is not piped");
        };
        let mut session = CodexSession::new(self.spec, stdin);
        let mut reader = LineReader::new(stdout, MAX_FRAME_BYTES);
        let end = session.run(io, &mut reader).await;
        io.stdin = Some(session.writer);
        end
    }
}

/// Why we sent a request, to route its response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    Initialize,
    OpenThread,
    StartTurn,
    Interrupt,
}

struct Outstanding {
    purpose: Purpose,
    deadline: Instant,
}

/// A server request waiting for the engine, or for the server to confirm our answer.
struct PendingRequest {
    id: RpcId,
    class: RequestClass,
    questions: Vec<Question>,
    session_approval_available: bool,
    /// The permission profile an `item/permissions/requestApproval` asked for.
    requested_permissions: Option<Value>,
    /// When our answer was written; the server must confirm it before the request timeout.
    answered_at: Option<Instant>,
}

struct TurnState {
    id: Option<String>,
    interrupt_requested: bool,
    interrupt_sent: bool,
    /// The sum of the turn's model requests (`thread/tokenUsage/updated` `last`).
    usage: nagi_schema::usage::TokenUsage,
}

struct CodexSession {
    spec: LaunchSpec,
    writer: ChildStdin,
    next_request_id: i64,
    outstanding: HashMap<i64, Outstanding>,
    thread_id: Option<String>,
    turn: Option<TurnState>,
    queued_turns: VecDeque<String>,
    pending: HashMap<String, PendingRequest>,
    /// Paths of file-change items, so an approval can say which files it is about.
    file_change_paths: HashMap<String, Vec<String>>,
    last_activity: Instant,
}

impl CodexSession {
    fn new(spec: LaunchSpec, writer: ChildStdin) -> CodexSession {
        let queued_turns = spec.initial_input.iter().cloned().collect();
        CodexSession {
            spec,
            writer,
            next_request_id: 0,
            outstanding: HashMap::new(),
            thread_id: None,
            turn: None,
            queued_turns,
            pending: HashMap::new(),
            file_change_paths: HashMap::new(),
            last_activity: Instant::now(),
        }
    }

    fn timeouts(&self) -> Timeouts {
        self.spec.timeouts
    }

    async fn run(
        &mut self,
        io: &mut SessionIo,
        reader: &mut LineReader<tokio::process::ChildStdout>,
    ) -> SessionEnd {
        let client_info = json!({"clientInfo": {"name": "nagi", "title": "Nagi", "version": env!("CARGO_PKG_VERSION")}});
        if let Err(end) = self
            .send_request(Purpose::Initialize, "initialize", client_info)
            .await
        {
            return end;
        }
        loop {
            let deadline = self.next_deadline();
            let step = tokio::select! {
                line = reader.next_line() => match line {
                    Ok(BoundedLine::Line(frame)) => self.handle_frame(io, &frame).await,
                    Ok(BoundedLine::TooLong(_)) => Err(SessionEnd::protocol(format!("codex sent a frame over {MAX_FRAME_BYTES} bytes"))),
                    Ok(BoundedLine::Eof) => Err(io.provider_gone("codex closed its output").await),
                    Err(error) => Err(SessionEnd::failed(FailureKind::Disconnected, format!("reading from codex failed: {error}"))),
                },
                command = io.commands.recv() => match command {
                    None | Some(ProviderCommand::Shutdown) => Err(SessionEnd::ShutdownRequested),
                    Some(command) => self.handle_command(io, command).await,
                },
                _ = sleep_until_optional(deadline) => Err(self.timeout_failure()),
            };
            if let Err(end) = step {
                return self.finish(end);
            }
        }
    }

    /// A failure while an answer is in flight is ambiguous: the provider may have applied it.
    fn finish(&self, end: SessionEnd) -> SessionEnd {
        match end {
            SessionEnd::Failed { kind, reason }
                if kind != FailureKind::DeliveryUnknown && self.answer_in_flight() =>
            {
                SessionEnd::failed(
                    FailureKind::DeliveryUnknown,
                    format!("{reason} (an answer was not yet confirmed)"),
                )
            }
            other => other,
        }
    }

    fn answer_in_flight(&self) -> bool {
        self.pending
            .values()
            .any(|request| request.answered_at.is_some())
    }

    fn next_deadline(&self) -> Option<Instant> {
        let request = self.timeouts().request;
        let mut deadline = self
            .outstanding
            .values()
            .map(|outstanding| outstanding.deadline)
            .min();
        for answered in self
            .pending
            .values()
            .filter_map(|request| request.answered_at)
        {
            deadline = Some(deadline.map_or(answered + request, |current| {
                current.min(answered + request)
            }));
        }
        let waiting_for_person = self
            .pending
            .values()
            .any(|request| request.answered_at.is_none());
        if self.turn.is_some() && !waiting_for_person {
            let idle = self.last_activity + self.timeouts().turn_idle;
            deadline = Some(deadline.map_or(idle, |current| current.min(idle)));
        }
        deadline
    }

    fn timeout_failure(&self) -> SessionEnd {
        let now = Instant::now();
        if let Some(outstanding) = self
            .outstanding
            .values()
            .find(|outstanding| outstanding.deadline <= now)
        {
            return SessionEnd::failed(
                FailureKind::Timeout,
                format!("codex did not answer {:?} in time", outstanding.purpose),
            );
        }
        if self.answer_in_flight() {
            return SessionEnd::failed(
                FailureKind::DeliveryUnknown,
                "codex did not confirm an answer in time",
            );
        }
        SessionEnd::failed(
            FailureKind::Timeout,
            "the turn made no progress within the idle timeout",
        )
    }

    async fn write_frame(&mut self, bytes: &[u8]) -> Result<(), SessionEnd> {
        let timeout = self.timeouts().request;
        let write = async {
            self.writer.write_all(bytes).await?;
            self.writer.flush().await
        };
        match tokio::time::timeout(timeout, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(SessionEnd::failed(
                FailureKind::Disconnected,
                format!("writing to codex failed: {error}"),
            )),
            Err(_) => Err(SessionEnd::failed(
                FailureKind::Timeout,
                "writing to codex timed out",
            )),
        }
    }

    async fn send_request(
        &mut self,
        purpose: Purpose,
        method: &str,
        params: Value,
    ) -> Result<(), SessionEnd> {
        self.next_request_id += 1;
        let id = self.next_request_id;
        let timeout = if purpose == Purpose::Initialize {
            self.timeouts().startup
        } else {
            self.timeouts().request
        };
        self.outstanding.insert(
            id,
            Outstanding {
                purpose,
                deadline: Instant::now() + timeout,
            },
        );
        self.write_frame(&encode_request(id, method, params)).await
    }

    async fn handle_frame(&mut self, io: &mut SessionIo, frame: &[u8]) -> Result<(), SessionEnd> {
        if is_blank_frame(frame) {
            return Ok(());
        }
        self.last_activity = Instant::now();
        let frame =
            parse_codex_frame(frame).map_err(|error| SessionEnd::protocol(error.to_string()))?;
        match frame {
            CodexFrame::Response { id, outcome } => self.handle_response(io, id, outcome).await,
            CodexFrame::Request { id, method, params } => {
                self.handle_server_request(io, id, &method, &params).await
            }
            CodexFrame::Notification { method, params } => {
                let notification = parse_notification(&method, &params)
                    .map_err(|error| SessionEnd::protocol(error.to_string()))?;
                self.handle_notification(io, notification).await
            }
        }
    }

    async fn handle_response(
        &mut self,
        io: &mut SessionIo,
        id: RpcId,
        outcome: Result<Value, crate::codex_codec::RpcError>,
    ) -> Result<(), SessionEnd> {
        let RpcId::Number(number) = id else {
            return Err(SessionEnd::protocol(
                "codex answered a request id we never sent",
            ));
        };
        let Some(outstanding) = self.outstanding.remove(&number) else {
            return Err(SessionEnd::protocol(format!(
                "codex answered request {number}, which is not pending"
            )));
        };
        let result = match (outstanding.purpose, outcome) {
            (Purpose::Interrupt, Err(error)) => {
                let note = format!("codex refused the interrupt: {}", error.message);
                send(io, ProviderEvent::Transcript(TranscriptLine::Info(note))).await?;
                return Ok(());
            }
            (Purpose::StartTurn, Err(error)) => {
                return Err(SessionEnd::failed(
                    FailureKind::CommandRejected,
                    format!("codex rejected turn/start: {}", error.message),
                ));
            }
            (purpose, Err(error)) => {
                return Err(SessionEnd::protocol(format!(
                    "codex rejected {purpose:?}: {} ({})",
                    error.message, error.code
                )));
            }
            (_, Ok(result)) => result,
        };
        match outstanding.purpose {
            Purpose::Initialize => {
                self.write_frame(&encode_notification("initialized"))
                    .await?;
                self.open_thread().await
            }
            Purpose::OpenThread => {
                let thread_id = result
                    .pointer("/thread/id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .ok_or_else(|| SessionEnd::protocol("thread response without thread.id"))?
                    .to_string();
                if let Some(expected) = &self.spec.resume_session_id
                    && expected != &thread_id
                {
                    return Err(SessionEnd::protocol(format!(
                        "codex resumed thread {thread_id}, not {expected}"
                    )));
                }
                self.thread_id = Some(thread_id.clone());
                send(
                    io,
                    ProviderEvent::SessionBound {
                        session_id: thread_id,
                    },
                )
                .await?;
                self.start_next_turn(io).await
            }
            Purpose::StartTurn => {
                if let Some(turn) = &mut self.turn
                    && turn.id.is_none()
                {
                    turn.id = result
                        .pointer("/turn/id")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                }
                self.send_pending_interrupt().await
            }
            Purpose::Interrupt => Ok(()),
        }
    }

    async fn open_thread(&mut self) -> Result<(), SessionEnd> {
        match self.spec.resume_session_id.clone() {
            // The thread keeps the policy it was created with; the resume request does not
            // re-send a sandbox (contract §8.1).
            Some(thread_id) => {
                self.send_request(
                    Purpose::OpenThread,
                    "thread/resume",
                    json!({"threadId": thread_id}),
                )
                .await
            }
            None => {
                let sandbox = match self.spec.sandbox {
                    Sandbox::ReadOnly => "read-only",
                    Sandbox::WorkspaceWrite => "workspace-write",
                };
                let params = json!({
                    "cwd": self.spec.worktree,
                    "approvalPolicy": "on-request",
                    "sandbox": sandbox,
                    "ephemeral": false,
                });
                self.send_request(Purpose::OpenThread, "thread/start", params)
                    .await
            }
        }
    }

    async fn start_next_turn(&mut self, io: &mut SessionIo) -> Result<(), SessionEnd> {
        if self.turn.is_some() {
            return Ok(());
        }
        // A turn sent before the thread is open waits in the queue until it is.
        let Some(thread_id) = self.thread_id.clone() else {
            return Ok(());
        };
        let Some(text) = self.queued_turns.pop_front() else {
            return Ok(());
        };
        self.turn = Some(TurnState {
            id: None,
            interrupt_requested: false,
            interrupt_sent: false,
            usage: Default::default(),
        });
        let mut params = json!({"threadId": thread_id, "input": [{"type": "text", "text": text}]});
        // Codex applies them to this turn and the ones after.
        if let Some(model) = &self.spec.model {
            params["model"] = json!(model);
        }
        if let Some(effort) = &self.spec.reasoning_effort {
            params["effort"] = json!(effort);
        }
        self.send_request(Purpose::StartTurn, "turn/start", params)
            .await?;
        send(io, ProviderEvent::Working).await
    }

    async fn send_pending_interrupt(&mut self) -> Result<(), SessionEnd> {
        let (Some(thread_id), Some(turn)) = (self.thread_id.clone(), self.turn.as_mut()) else {
            return Ok(());
        };
        if !turn.interrupt_requested || turn.interrupt_sent {
            return Ok(());
        }
        let Some(turn_id) = turn.id.clone() else {
            return Ok(());
        };
        turn.interrupt_sent = true;
        self.send_request(
            Purpose::Interrupt,
            "turn/interrupt",
            json!({"threadId": thread_id, "turnId": turn_id}),
        )
        .await
    }

    async fn handle_command(
        &mut self,
        io: &mut SessionIo,
        command: ProviderCommand,
    ) -> Result<(), SessionEnd> {
        match command {
            ProviderCommand::SendTurn(text) => {
                if self.turn.is_some() {
                    return Err(SessionEnd::failed(
                        FailureKind::CommandRejected,
                        "a turn is already in progress",
                    ));
                }
                self.queued_turns.push_back(text);
                self.start_next_turn(io).await
            }
            ProviderCommand::Respond {
                request_key,
                response,
            } => self.respond(io, request_key, response).await,
            ProviderCommand::Interrupt => {
                let Some(turn) = &mut self.turn else {
                    let note = "interrupt ignored: no turn is in progress".to_string();
                    return send(io, ProviderEvent::Transcript(TranscriptLine::Info(note))).await;
                };
                turn.interrupt_requested = true;
                self.send_pending_interrupt().await
            }
            ProviderCommand::Shutdown => Err(SessionEnd::ShutdownRequested),
        }
    }

    async fn respond(
        &mut self,
        io: &mut SessionIo,
        request_key: String,
        response: Response,
    ) -> Result<(), SessionEnd> {
        let Some(pending) = self.pending.get(&request_key) else {
            let note = format!("response to {request_key} dropped: codex no longer waits for it");
            return send(io, ProviderEvent::Transcript(TranscriptLine::Info(note))).await;
        };
        if pending.answered_at.is_some() {
            return Err(SessionEnd::failed(
                FailureKind::CommandRejected,
                format!("{request_key} was already answered"),
            ));
        }
        let result = codex_response_body(pending, &response)
            .map_err(|reason| SessionEnd::failed(FailureKind::CommandRejected, reason))?;
        let bytes = encode_result(&pending.id, result);
        if let Some(pending) = self.pending.get_mut(&request_key) {
            pending.answered_at = Some(Instant::now());
        }
        let summary = format!("answered {request_key}: {}", response_summary(&response));
        send(
            io,
            ProviderEvent::Transcript(TranscriptLine::Approval(summary)),
        )
        .await?;
        self.write_frame(&bytes).await
    }

    async fn handle_server_request(
        &mut self,
        io: &mut SessionIo,
        id: RpcId,
        method: &str,
        params: &Value,
    ) -> Result<(), SessionEnd> {
        let request = parse_server_request(method, params)
            .map_err(|error| SessionEnd::protocol(error.to_string()))?;
        let request_key = id.request_key();
        let mut requested_permissions = None;
        let (class, action, questions, session_approval_available) = match request {
            CodexServerRequest::CurrentTime => {
                let seconds = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or(Duration::ZERO)
                    .as_secs();
                return self
                    .write_frame(&encode_result(&id, json!({"currentTimeAt": seconds})))
                    .await;
            }
            CodexServerRequest::Unsupported { method } => {
                self.write_frame(&encode_error(
                    &id,
                    METHOD_NOT_FOUND,
                    "method not supported by nagi",
                ))
                .await?;
                return Err(SessionEnd::protocol(format!(
                    "codex sent an unsupported request {method}"
                )));
            }
            CodexServerRequest::CommandApproval {
                command,
                session_allowed,
                ..
            } => (
                RequestClass::CommandApproval,
                command,
                Vec::new(),
                session_allowed,
            ),
            CodexServerRequest::FileChangeApproval { reason, item_id } => {
                let paths = item_id
                    .and_then(|item| self.file_change_paths.get(&item).cloned())
                    .unwrap_or_default();
                let action = match (paths.is_empty(), reason) {
                    (false, _) => format!("change {}", paths.join(", ")),
                    (true, Some(reason)) => reason,
                    (true, None) => "apply a file change".to_string(),
                };
                (RequestClass::FileChangeApproval, action, Vec::new(), true)
            }
            CodexServerRequest::PermissionApproval {
                description,
                requested,
            } => {
                requested_permissions = Some(requested);
                (
                    RequestClass::PermissionApproval,
                    description,
                    Vec::new(),
                    false,
                )
            }
            CodexServerRequest::UserInput { questions } => {
                let action = questions
                    .iter()
                    .map(|question| question.prompt.as_str())
                    .collect::<Vec<_>>()
                    .join(" / ");
                (RequestClass::UserInput, action, questions, false)
            }
        };
        if self.pending.contains_key(&request_key) {
            return Err(SessionEnd::protocol(format!(
                "codex reused request id {request_key} while it is pending"
            )));
        }
        self.pending.insert(
            request_key.clone(),
            PendingRequest {
                id,
                class,
                questions: questions.clone(),
                session_approval_available,
                requested_permissions,
                answered_at: None,
            },
        );
        let action = crate::framing::visible_text(&action);
        send(
            io,
            ProviderEvent::Transcript(TranscriptLine::Approval(format!(
                "{class:?} requested: {action}"
            ))),
        )
        .await?;
        let request = AttentionRequest {
            request_key,
            class,
            action,
            questions,
            session_approval_available,
        };
        send(io, ProviderEvent::AttentionRequested(request)).await
    }

    async fn handle_notification(
        &mut self,
        io: &mut SessionIo,
        notification: CodexNotification,
    ) -> Result<(), SessionEnd> {
        match notification {
            CodexNotification::TurnStarted { turn_id } => {
                if let Some(turn) = &mut self.turn
                    && turn.id.is_none()
                {
                    turn.id = turn_id;
                }
                self.send_pending_interrupt().await
            }
            CodexNotification::TurnCompleted { turn_id, status } => {
                let Some(turn) = self.turn.take() else {
                    let note = "codex reported the end of a turn nagi did not start".to_string();
                    return send(io, ProviderEvent::Transcript(TranscriptLine::Info(note))).await;
                };
                if let (Some(expected), Some(actual)) = (&turn.id, &turn_id)
                    && expected != actual
                {
                    return Err(SessionEnd::protocol(format!(
                        "turn/completed for {actual}, but turn {expected} is running"
                    )));
                }
                // Requests nobody answered are moot once the turn is over.
                self.pending
                    .retain(|_, request| request.answered_at.is_some());
                let outcome = match status {
                    CodexTurnStatus::Completed => TurnOutcome::Completed,
                    CodexTurnStatus::Interrupted => TurnOutcome::Interrupted,
                    CodexTurnStatus::Failed(message) => TurnOutcome::Failed(message),
                };
                send(io, ProviderEvent::TurnCompleted(outcome)).await?;
                self.start_next_turn(io).await
            }
            CodexNotification::ItemStarted(item) => match item {
                CodexItem::CommandExecution { command, .. } => {
                    transcript(io, TranscriptLine::ToolCall(command)).await
                }
                CodexItem::FileChange { id, paths, .. } => {
                    let line = TranscriptLine::ToolCall(format!("edit {}", paths.join(", ")));
                    self.file_change_paths.insert(id, paths);
                    transcript(io, line).await
                }
                _ => Ok(()),
            },
            CodexNotification::ItemCompleted(item) => match item {
                CodexItem::AgentMessage { text } if !text.is_empty() => {
                    transcript(io, TranscriptLine::AgentText(text)).await
                }
                CodexItem::CommandExecution {
                    command,
                    output,
                    exit_code,
                    status,
                } => {
                    let mut title = format!("{command} [{status}");
                    if let Some(code) = exit_code {
                        title.push_str(&format!(", exit {code}"));
                    }
                    title.push(']');
                    let output = output.unwrap_or_default();
                    transcript(io, TranscriptLine::ToolResult { title, output }).await
                }
                CodexItem::FileChange { id, paths, status } => {
                    self.file_change_paths.remove(&id);
                    transcript(
                        io,
                        TranscriptLine::ToolResult {
                            title: format!("edit {} [{status}]", paths.join(", ")),
                            output: String::new(),
                        },
                    )
                    .await
                }
                _ => Ok(()),
            },
            CodexNotification::ServerRequestResolved { request_key } => {
                match self.pending.remove(&request_key) {
                    Some(request) if request.answered_at.is_some() => {
                        send(io, ProviderEvent::ResponseResolved { request_key }).await
                    }
                    Some(_) => {
                        let note = format!("codex withdrew {request_key} before it was answered");
                        transcript(io, TranscriptLine::Info(note)).await
                    }
                    None => Ok(()),
                }
            }
            CodexNotification::AgentMessageDelta { delta } if !delta.is_empty() => {
                transcript(io, TranscriptLine::AgentDelta(delta)).await
            }
            CodexNotification::Error { message } => {
                transcript(io, TranscriptLine::Info(format!("codex error: {message}"))).await
            }
            CodexNotification::TokenUsage { turn_id, last } => {
                // Only the running turn counts: after a resume codex re-sends the thread's
                // stored usage under the previous turn's id, before the new turn has one.
                let Some(turn) = self.turn.as_mut() else {
                    return Ok(());
                };
                if turn.id.is_none() || turn.id != turn_id {
                    return Ok(());
                }
                turn.usage = turn.usage.plus(last);
                send(io, ProviderEvent::Usage(turn.usage)).await
            }
            CodexNotification::AgentMessageDelta { .. } | CodexNotification::Other => Ok(()),
        }
    }
}

/// The JSON result codex expects for one decision (contract §8.1, and the app-server
/// schema of codex 0.171 for permission requests).
fn codex_response_body(pending: &PendingRequest, response: &Response) -> Result<Value, String> {
    match (pending.class, response) {
        (RequestClass::UserInput, Response::Answers(answers)) => {
            crate::answers::check_answers(&pending.questions, answers)?;
            let mut body = serde_json::Map::new();
            for (question_id, chosen) in answers {
                body.insert(question_id.clone(), json!({"answers": chosen}));
            }
            Ok(json!({"answers": body}))
        }
        (RequestClass::UserInput, _) => {
            Err("a question can only be answered, not approved or declined".to_string())
        }
        (_, Response::Answers(_)) => Err("an approval request cannot take answers".to_string()),
        (_, Response::ApproveForSession) if !pending.session_approval_available => {
            Err("codex did not offer approval for the session on this request".to_string())
        }
        // Grant exactly what was asked, for this turn only; declining grants nothing.
        (RequestClass::PermissionApproval, Response::Approve) => Ok(
            json!({"permissions": pending.requested_permissions.clone().unwrap_or_else(|| json!({})), "scope": "turn"}),
        ),
        (RequestClass::PermissionApproval, Response::Decline) => {
            Ok(json!({"permissions": {}, "scope": "turn"}))
        }
        (_, Response::Approve) => Ok(json!({"decision": "accept"})),
        (_, Response::ApproveForSession) => Ok(json!({"decision": "acceptForSession"})),
        (_, Response::Decline) => Ok(json!({"decision": "decline"})),
    }
}

pub(crate) fn response_summary(response: &Response) -> String {
    match response {
        Response::Approve => "approved once".to_string(),
        Response::ApproveForSession => "approved for the session".to_string(),
        Response::Decline => "declined".to_string(),
        Response::Answers(answers) => format!("{} answer(s)", answers.len()),
    }
}
