//! The ACP adapter: any configured agent on stdio, through `agent-client-protocol` 5.x.
//!
//! The agent is spawned here (cwd = worktree) and its pipes handed to the SDK as a bounded
//! `Lines` transport. Handshake: `initialize` (protocol version 1; file-system capabilities
//! follow the sandbox; no terminal) → `session/new {cwd, mcpServers: []}`, or for a stored
//! session `session/resume` / `session/load` when the agent advertises it → `session/prompt`
//! per turn. SDK callbacks never block the dispatch loop: permission requests and updates
//! are forwarded to the driver task, which owns all state and talks to the engine.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, FileSystemCapabilities, Implementation,
    InitializeRequest, LoadSessionRequest, NewSessionRequest, PermissionOptionKind, PromptRequest,
    PromptResponse, ReadTextFileRequest, ReadTextFileResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, ResumeSessionRequest,
    SelectedPermissionOutcome, SessionNotification, SessionUpdate, StopReason, TextContent,
    ToolCallStatus, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Lines, RawJsonRpcId};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::acp_fs::WorktreeFiles;
use crate::acp_transport::{ViolationSlot, incoming_lines, outgoing_lines};
use crate::framing::{SessionEnd, visible_text};
use crate::process::{ProcessConfig, StdinMode};
use crate::runner::{Driver, SessionIo, sleep_until_optional};
use crate::spec::{
    AttentionRequest, FailureKind, LaunchError, LaunchSpec, ProviderCommand, ProviderEvent,
    ProviderHandle, RequestClass, Response, TranscriptLine, TurnOutcome,
};

/// The most permission options one request may offer (contract §8.1).
const MAX_PERMISSION_OPTIONS: usize = 32;

pub fn launch(spec: LaunchSpec) -> Result<ProviderHandle, LaunchError> {
    let mut args = spec.leading_args.clone();
    args.extend(spec.extra_args.iter().cloned());
    let config = ProcessConfig {
        program: spec.program.clone(),
        args,
        working_directory: Some(spec.worktree.clone()),
        env: spec.env.clone(),
        stdin: StdinMode::Piped,
        confinement: spec.confinement.clone(),
    };
    let files = WorktreeFiles::new(&spec.worktree, spec.sandbox).map_err(|error| {
        LaunchError::Config(format!(
            "worktree {} cannot be resolved: {error}",
            spec.worktree.display()
        ))
    })?;
    crate::runner::start(config, AcpDriver { spec, files })
}

struct AcpDriver {
    spec: LaunchSpec,
    files: WorktreeFiles,
}

/// What the SDK callbacks hand to the driver task.
enum Inbound {
    Permission {
        request: RequestPermissionRequest,
        responder: Responder<RequestPermissionResponse>,
    },
    Update(SessionNotification),
    Note(TranscriptLine),
}

type PromptFuture =
    Pin<Box<dyn Future<Output = Result<PromptResponse, agent_client_protocol::Error>> + Send>>;

impl Driver for AcpDriver {
    async fn run(self, io: &mut SessionIo) -> SessionEnd {
        let (Some(stdin), Some(stdout)) = (io.stdin.take(), io.stdout.take()) else {
            return SessionEnd::protocol("agent pipes are missing");
        };
        let violations = ViolationSlot::default();
        let transport = Lines::new(
            outgoing_lines(stdin),
            incoming_lines(stdout, violations.clone()),
        );
        let (inbound_sender, inbound) = mpsc::unbounded_channel();
        let files = self.files.clone();
        let spec = self.spec;

        let permission_sender = inbound_sender.clone();
        let update_sender = inbound_sender.clone();
        let write_sender = inbound_sender.clone();
        let write_files = files.clone();
        let read_files = files;
        let client = Client
            .v1()
            .name("nagi")
            .on_receive_request(
                async move |request: RequestPermissionRequest, responder, _connection| {
                    // Dropping the responder would answer with an error; the driver owns it now.
                    let _ = permission_sender.send(Inbound::Permission { request, responder });
                    Ok(())
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_notification(
                async move |notification: SessionNotification, _connection| {
                    let _ = update_sender.send(Inbound::Update(notification));
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                async move |request: WriteTextFileRequest,
                            responder: Responder<WriteTextFileResponse>,
                            _connection| {
                    match write_files.write(&request.path, &request.content).await {
                        Ok(path) => {
                            let note = format!("agent wrote {}", path.display());
                            let _ = write_sender.send(Inbound::Note(TranscriptLine::ToolResult {
                                title: note,
                                output: String::new(),
                            }));
                            responder.respond(WriteTextFileResponse::new())
                        }
                        Err(error) => {
                            let _ = write_sender
                                .send(Inbound::Note(TranscriptLine::Info(error.to_string())));
                            responder.respond_with_error(
                                agent_client_protocol::Error::invalid_params()
                                    .data(error.to_string()),
                            )
                        }
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: ReadTextFileRequest,
                            responder: Responder<ReadTextFileResponse>,
                            _connection| {
                    match read_files
                        .read(&request.path, request.line, request.limit)
                        .await
                    {
                        Ok(text) => responder.respond(ReadTextFileResponse::new(text)),
                        Err(error) => responder.respond_with_error(
                            agent_client_protocol::Error::invalid_params().data(error.to_string()),
                        ),
                    }
                },
                agent_client_protocol::on_receive_request!(),
            );

        let (dummy_sender, dummy_commands) = mpsc::channel(1);
        drop(dummy_sender);
        let commands = std::mem::replace(&mut io.commands, dummy_commands);
        let sink = io.sink.clone();
        let mut session = AcpSession {
            spec,
            sink,
            commands,
            inbound,
            session_id: None,
            pending: HashMap::new(),
            turn: None,
            interrupt_requested: false,
            message_buffer: String::new(),
            last_activity: Instant::now(),
        };
        let outcome = client
            .connect_with(transport, async |connection: ConnectionTo<Agent>| {
                Ok(session.run(connection).await)
            })
            .await;
        drop(inbound_sender);
        if let Some(reason) = violations.take() {
            return SessionEnd::protocol(reason);
        }
        match outcome {
            Ok(SessionEnd::Failed {
                kind: FailureKind::Disconnected,
                ..
            })
            | Err(_) => {
                let detail = match outcome {
                    Err(error) => error.to_string(),
                    _ => "the agent closed its connection".to_string(),
                };
                io.provider_gone(&detail).await
            }
            Ok(end) => end,
        }
    }
}

struct PendingPermission {
    responder: Responder<RequestPermissionResponse>,
    options: Vec<(String, PermissionOptionKind)>,
}

struct AcpSession {
    spec: LaunchSpec,
    sink: crate::framing::EventSink,
    commands: mpsc::Receiver<ProviderCommand>,
    inbound: mpsc::UnboundedReceiver<Inbound>,
    session_id: Option<String>,
    pending: HashMap<String, PendingPermission>,
    turn: Option<PromptFuture>,
    interrupt_requested: bool,
    /// Streamed agent message chunks, shown as one transcript line when the message ends.
    message_buffer: String,
    last_activity: Instant,
}

fn request_key(id: &RawJsonRpcId) -> String {
    match id {
        RawJsonRpcId::Number(number) => format!("number:{number}"),
        RawJsonRpcId::Str(text) => format!("string:{text}"),
        RawJsonRpcId::Null => "string:null".to_string(),
    }
}

async fn pending_turn(
    turn: &mut Option<PromptFuture>,
) -> Result<PromptResponse, agent_client_protocol::Error> {
    match turn {
        Some(future) => future.as_mut().await,
        None => std::future::pending().await,
    }
}

impl AcpSession {
    // `&mut self`: the driver future must be `Send`, and the session holds `!Sync` responders.
    async fn emit(&mut self, event: ProviderEvent) -> Result<(), SessionEnd> {
        if self.sink.send(event).await {
            Ok(())
        } else {
            Err(SessionEnd::ShutdownRequested)
        }
    }

    async fn note(&mut self, line: TranscriptLine) -> Result<(), SessionEnd> {
        if self.sink.transcript(line).await {
            Ok(())
        } else {
            Err(SessionEnd::ShutdownRequested)
        }
    }

    async fn run(&mut self, connection: ConnectionTo<Agent>) -> SessionEnd {
        match self.handshake(&connection).await {
            Ok(()) => {}
            Err(end) => return end,
        }
        if let Some(text) = self.spec.initial_input.clone()
            && let Err(end) = self.start_turn(&connection, text).await
        {
            return end;
        }
        loop {
            let idle_deadline = (self.turn.is_some() && self.pending.is_empty())
                .then(|| self.last_activity + self.spec.timeouts.turn_idle);
            let step = tokio::select! {
                command = self.commands.recv() => match command {
                    None | Some(ProviderCommand::Shutdown) => Err(SessionEnd::ShutdownRequested),
                    Some(command) => self.handle_command(&connection, command).await,
                },
                inbound = self.inbound.recv() => match inbound {
                    Some(inbound) => self.handle_inbound(inbound).await,
                    None => Err(SessionEnd::failed(FailureKind::Disconnected, "the agent connection ended")),
                },
                result = pending_turn(&mut self.turn) => {
                    self.turn = None;
                    self.finish_turn(&connection, result).await
                }
                _ = connection.incoming_closed() => Err(SessionEnd::failed(FailureKind::Disconnected, "the agent closed its output")),
                _ = sleep_until_optional(idle_deadline) => {
                    Err(SessionEnd::failed(FailureKind::Timeout, "the turn made no progress within the idle timeout"))
                }
            };
            if let Err(end) = step {
                return end;
            }
        }
    }

    async fn handshake(&mut self, connection: &ConnectionTo<Agent>) -> Result<(), SessionEnd> {
        let capabilities = ClientCapabilities::new()
            .fs(FileSystemCapabilities::new()
                .read_text_file(true)
                .write_text_file(self.can_write()))
            .terminal(false);
        let initialize = InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(capabilities)
            .client_info(Implementation::new("nagi", env!("CARGO_PKG_VERSION")).title("Nagi"));
        let startup = self.spec.timeouts.startup;
        let response = within(
            startup,
            "initialize",
            connection.send_request(initialize).block_task(),
        )
        .await?;
        if response.protocol_version != ProtocolVersion::V1 {
            return Err(SessionEnd::protocol(format!(
                "the agent speaks ACP protocol {:?}, not 1",
                response.protocol_version
            )));
        }
        if !response.auth_methods.is_empty() {
            // `opencode acp` advertises auth methods yet works without `authenticate`; we never
            // authenticate on the user's behalf and let session creation decide.
            let names: Vec<String> = response
                .auth_methods
                .iter()
                .map(|method| {
                    let value = serde_json::to_value(method).unwrap_or_default();
                    let name = value
                        .get("name")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("unnamed");
                    let id = value
                        .get("id")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("?");
                    format!("{name} ({id})")
                })
                .collect();
            self.note(TranscriptLine::Info(visible_text(&format!(
                "agent advertises authentication: {}",
                names.join(", ")
            ))))
            .await?;
        }
        let request_timeout = self.spec.timeouts.request;
        let cwd = self.spec.worktree.clone();
        let session_id = match self.spec.resume_session_id.clone() {
            None => {
                let created = within(
                    request_timeout,
                    "session/new",
                    connection
                        .send_request(NewSessionRequest::new(cwd))
                        .block_task(),
                )
                .await?;
                created.session_id.to_string()
            }
            Some(stored) => {
                let capabilities = &response.agent_capabilities;
                if capabilities.session_capabilities.resume.is_some() {
                    let resume = ResumeSessionRequest::new(stored.clone(), cwd);
                    within(
                        request_timeout,
                        "session/resume",
                        connection.send_request(resume).block_task(),
                    )
                    .await?;
                } else if capabilities.load_session {
                    let load = LoadSessionRequest::new(stored.clone(), cwd);
                    within(
                        request_timeout,
                        "session/load",
                        connection.send_request(load).block_task(),
                    )
                    .await?;
                } else {
                    return Err(SessionEnd::protocol(
                        "the agent cannot resume or load a session",
                    ));
                }
                stored
            }
        };
        if session_id.is_empty() {
            return Err(SessionEnd::protocol(
                "the agent returned an empty session id",
            ));
        }
        self.session_id = Some(session_id.clone());
        self.emit(ProviderEvent::SessionBound { session_id }).await
    }

    fn can_write(&self) -> bool {
        self.spec.sandbox == crate::spec::Sandbox::WorkspaceWrite
    }

    async fn start_turn(
        &mut self,
        connection: &ConnectionTo<Agent>,
        text: String,
    ) -> Result<(), SessionEnd> {
        if self.turn.is_some() {
            return Err(SessionEnd::failed(
                FailureKind::CommandRejected,
                "a turn is already in progress",
            ));
        }
        let session_id = self.session_id.clone().unwrap_or_default();
        let prompt =
            PromptRequest::new(session_id, vec![ContentBlock::Text(TextContent::new(text))]);
        self.turn = Some(Box::pin(connection.send_request(prompt).block_task()));
        self.interrupt_requested = false;
        self.last_activity = Instant::now();
        self.emit(ProviderEvent::Working).await
    }

    async fn finish_turn(
        &mut self,
        _connection: &ConnectionTo<Agent>,
        result: Result<PromptResponse, agent_client_protocol::Error>,
    ) -> Result<(), SessionEnd> {
        // The SDK hands notifications to our channel before it resolves the prompt, but the
        // select loop may see the response first: take what is already queued so the turn's
        // last message chunks land before it ends.
        while let Ok(inbound) = self.inbound.try_recv() {
            self.handle_inbound(inbound).await?;
        }
        self.flush_message().await?;
        if let Ok(PromptResponse {
            usage: Some(usage), ..
        }) = &result
        {
            self.emit(ProviderEvent::Usage(turn_usage(usage))).await?;
        }
        let outcome = match result {
            Ok(response) => match response.stop_reason {
                StopReason::EndTurn => TurnOutcome::Completed,
                StopReason::Cancelled => TurnOutcome::Interrupted,
                StopReason::MaxTokens => {
                    TurnOutcome::Failed("the agent stopped at its token limit".to_string())
                }
                StopReason::MaxTurnRequests => {
                    TurnOutcome::Failed("the agent stopped at its request limit".to_string())
                }
                StopReason::Refusal => TurnOutcome::Failed("the agent refused".to_string()),
                other => {
                    return Err(SessionEnd::protocol(format!(
                        "unknown stop reason {other:?}"
                    )));
                }
            },
            Err(error)
                if agent_client_protocol::is_connection_terminated(&error)
                    || agent_client_protocol::is_incoming_transport_closed(&error) =>
            {
                return Err(SessionEnd::failed(
                    FailureKind::Disconnected,
                    error.to_string(),
                ));
            }
            Err(error) => TurnOutcome::Failed(visible_text(&error.message)),
        };
        self.emit(ProviderEvent::TurnCompleted(outcome)).await
    }

    async fn handle_command(
        &mut self,
        connection: &ConnectionTo<Agent>,
        command: ProviderCommand,
    ) -> Result<(), SessionEnd> {
        match command {
            ProviderCommand::SendTurn(text) => self.start_turn(connection, text).await,
            ProviderCommand::Respond {
                request_key,
                response,
            } => self.respond(request_key, response).await,
            ProviderCommand::Interrupt => {
                if self.turn.is_none() || self.interrupt_requested {
                    return self
                        .note(TranscriptLine::Info(
                            "interrupt ignored: no turn is in progress".to_string(),
                        ))
                        .await;
                }
                self.interrupt_requested = true;
                let session_id = self.session_id.clone().unwrap_or_default();
                connection
                    .send_notification(CancelNotification::new(session_id))
                    .map_err(|error| {
                        SessionEnd::failed(
                            FailureKind::Disconnected,
                            format!("session/cancel failed: {error}"),
                        )
                    })?;
                // ACP: after a cancel the client answers every pending permission request
                // with `cancelled`.
                for (key, pending) in self.pending.drain() {
                    let _ = pending.responder.respond(RequestPermissionResponse::new(
                        RequestPermissionOutcome::Cancelled,
                    ));
                    let _ = self
                        .sink
                        .transcript(TranscriptLine::Info(format!(
                            "{key} cancelled with the turn"
                        )))
                        .await;
                }
                Ok(())
            }
            ProviderCommand::Shutdown => Err(SessionEnd::ShutdownRequested),
        }
    }

    async fn respond(&mut self, request_key: String, response: Response) -> Result<(), SessionEnd> {
        let Some(pending) = self.pending.remove(&request_key) else {
            return self
                .note(TranscriptLine::Info(format!(
                    "response to {request_key} dropped: the agent no longer waits for it"
                )))
                .await;
        };
        let preference: &[PermissionOptionKind] = match response {
            Response::Approve => &[
                PermissionOptionKind::AllowOnce,
                PermissionOptionKind::AllowAlways,
            ],
            Response::ApproveForSession => &[
                PermissionOptionKind::AllowAlways,
                PermissionOptionKind::AllowOnce,
            ],
            Response::Decline | Response::Answers(_) => &[
                PermissionOptionKind::RejectOnce,
                PermissionOptionKind::RejectAlways,
            ],
        };
        let chosen = preference.iter().find_map(|kind| {
            pending
                .options
                .iter()
                .find(|(_, option_kind)| option_kind == kind)
                .map(|(id, _)| id.clone())
        });
        let outcome = match &chosen {
            Some(option_id) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                option_id.clone(),
            )),
            None => RequestPermissionOutcome::Cancelled,
        };
        let summary = format!(
            "answered {request_key}: {}",
            chosen.as_deref().unwrap_or("cancelled")
        );
        self.note(TranscriptLine::Approval(summary)).await?;
        pending
            .responder
            .respond(RequestPermissionResponse::new(outcome))
            .map_err(|error| {
                SessionEnd::failed(
                    FailureKind::DeliveryUnknown,
                    format!("the permission answer could not be sent: {error}"),
                )
            })?;
        self.emit(ProviderEvent::ResponseResolved { request_key })
            .await
    }

    async fn handle_inbound(&mut self, inbound: Inbound) -> Result<(), SessionEnd> {
        self.last_activity = Instant::now();
        match inbound {
            Inbound::Note(line) => self.note(line).await,
            Inbound::Update(notification) => self.handle_update(notification.update).await,
            Inbound::Permission { request, responder } => {
                let key = request_key(responder.raw_id());
                if request.options.is_empty() || request.options.len() > MAX_PERMISSION_OPTIONS {
                    let _ = responder.respond(RequestPermissionResponse::new(
                        RequestPermissionOutcome::Cancelled,
                    ));
                    return Err(SessionEnd::protocol(format!(
                        "a permission request offers {} options (1 to 32)",
                        request.options.len()
                    )));
                }
                let options: Vec<(String, PermissionOptionKind)> = request
                    .options
                    .iter()
                    .map(|option| (option.option_id.to_string(), option.kind))
                    .collect();
                let action = request
                    .tool_call
                    .fields
                    .title
                    .clone()
                    .unwrap_or_else(|| format!("tool call {}", request.tool_call.tool_call_id));
                let session_approval_available = options
                    .iter()
                    .any(|(_, kind)| *kind == PermissionOptionKind::AllowAlways);
                if self.pending.contains_key(&key) {
                    return Err(SessionEnd::protocol(format!(
                        "the agent reused request id {key}"
                    )));
                }
                self.pending
                    .insert(key.clone(), PendingPermission { responder, options });
                let action = visible_text(&action);
                self.note(TranscriptLine::Approval(format!(
                    "permission requested: {action}"
                )))
                .await?;
                let attention = AttentionRequest {
                    request_key: key,
                    class: RequestClass::PermissionApproval,
                    action,
                    questions: Vec::new(),
                    session_approval_available,
                };
                self.emit(ProviderEvent::AttentionRequested(attention))
                    .await
            }
        }
    }

    async fn flush_message(&mut self) -> Result<(), SessionEnd> {
        if self.message_buffer.is_empty() {
            return Ok(());
        }
        let text = std::mem::take(&mut self.message_buffer);
        self.note(TranscriptLine::AgentText(text)).await
    }

    async fn handle_update(&mut self, update: SessionUpdate) -> Result<(), SessionEnd> {
        if let SessionUpdate::AgentMessageChunk(chunk) = &update {
            if let ContentBlock::Text(text) = &chunk.content
                && self.message_buffer.len() < crate::framing::MAX_VISIBLE_TEXT_BYTES
            {
                self.message_buffer.push_str(&text.text);
                if !text.text.is_empty() {
                    self.note(TranscriptLine::AgentDelta(text.text.clone()))
                        .await?;
                }
            }
            return Ok(());
        }
        self.flush_message().await?;
        match update {
            SessionUpdate::ToolCall(call) => self.note(TranscriptLine::ToolCall(call.title)).await,
            SessionUpdate::ToolCallUpdate(update) => match update.fields.status {
                Some(status @ (ToolCallStatus::Completed | ToolCallStatus::Failed)) => {
                    let title = update
                        .fields
                        .title
                        .unwrap_or_else(|| update.tool_call_id.to_string());
                    self.note(TranscriptLine::ToolResult {
                        title: format!("{title} [{status:?}]"),
                        output: tool_output(&update.fields.content),
                    })
                    .await
                }
                _ => Ok(()),
            },
            SessionUpdate::Plan(plan) => {
                let steps: Vec<String> = plan
                    .entries
                    .iter()
                    .map(|entry| entry.content.clone())
                    .collect();
                self.note(TranscriptLine::Info(format!("plan: {}", steps.join("; "))))
                    .await
            }
            _ => Ok(()),
        }
    }
}

/// Awaits an SDK request with a deadline; errors become transport failures.
/// The turn's tokens from the prompt's response (`usage`, sent by agents that count them,
/// such as `opencode acp`). Input counts the cached tokens too, as every provider's does
/// here; ACP reports no cost per turn.
fn turn_usage(usage: &agent_client_protocol::v1::schema::Usage) -> nagi_schema::usage::TokenUsage {
    let cached_read = usage.cached_read_tokens.unwrap_or(0);
    let cached_write = usage.cached_write_tokens.unwrap_or(0);
    nagi_schema::usage::TokenUsage {
        input_tokens: usage.input_tokens + cached_read + cached_write,
        cached_input_tokens: cached_read,
        output_tokens: usage.output_tokens,
        reasoning_output_tokens: usage.thought_tokens.unwrap_or(0),
        cost_micro_usd: None,
    }
}

/// What a finished tool call shows as its output: its text content, and a line per file
/// it changed.
fn tool_output(
    content: &Option<Vec<agent_client_protocol::v1::schema::ToolCallContent>>,
) -> String {
    use agent_client_protocol::v1::schema::ToolCallContent;
    let mut parts = Vec::new();
    for item in content.iter().flatten() {
        match item {
            ToolCallContent::Content(content) => {
                if let ContentBlock::Text(text) = &content.content {
                    parts.push(text.text.clone());
                }
            }
            ToolCallContent::Diff(diff) => parts.push(format!("edited {}", diff.path.display())),
            _ => {}
        }
    }
    parts.join("\n")
}

async fn within<T>(
    timeout: std::time::Duration,
    what: &str,
    request: impl Future<Output = Result<T, agent_client_protocol::Error>>,
) -> Result<T, SessionEnd> {
    match tokio::time::timeout(timeout, request).await {
        Ok(Ok(response)) => Ok(response),
        Ok(Err(error))
            if agent_client_protocol::is_connection_terminated(&error)
                || agent_client_protocol::is_incoming_transport_closed(&error) =>
        {
            Err(SessionEnd::failed(
                FailureKind::Disconnected,
                format!("{what}: {error}"),
            ))
        }
        Ok(Err(error)) => Err(SessionEnd::protocol(format!(
            "the agent rejected {what}: {}",
            error.message
        ))),
        Err(_) => Err(SessionEnd::failed(
            FailureKind::Timeout,
            format!("the agent did not answer {what} in time"),
        )),
    }
}
