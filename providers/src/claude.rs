//! The Claude Code adapter: `claude -p` with stream-json input and output and the stdio
//! permission prompt.
//!
//! Handshake: control request `initialize` (ids `managed-<n>`). Claude Code 2.1.332 sends
//! `system`/`init` only after a user frame (and again before every turn), so a fresh
//! session is bound from the first init frame, and a resumed one from the resume id as soon
//! as `initialize` succeeds; every init frame must then carry that same id. For a read-only
//! run each init frame is checked (plan mode, no MCP servers, exactly the four read tools)
//! and any mismatch fails the run closed.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::time::Instant;

use crate::claude_codec::{
    ClaudeFrame, ContentBlock, ToolPermissionRequest, answered_input, encode_control_error,
    encode_control_request, encode_control_success, encode_user_message, parse_ask_user_question,
    parse_claude_frame, session_scoped_suggestions,
};
use crate::framing::{
    BoundedLine, LineReader, MAX_FRAME_BYTES, SessionEnd, is_blank_frame, visible_text,
};
use crate::process::{ProcessConfig, StdinMode};
use crate::runner::{Driver, SessionIo, send, sleep_until_optional, transcript};
use crate::spec::{
    AttentionRequest, FailureKind, LaunchError, LaunchSpec, ProviderCommand, ProviderEvent,
    ProviderHandle, Question, RequestClass, Response, Sandbox, TranscriptLine, TurnOutcome,
};

/// The tools a read-only run offers, and the only ones its init frame may report.
pub const READ_ONLY_TOOLS: [&str; 4] = ["Read", "Glob", "Grep", "AskUserQuestion"];

/// The command line after the program (contract §8.1).
pub fn claude_arguments(spec: &LaunchSpec) -> Vec<String> {
    let mut args = spec.leading_args.clone();
    let mode = match spec.sandbox {
        Sandbox::ReadOnly => "plan",
        // `default` asks over the permission prompt tool for every edit and command. Claude
        // Code 2.1.197 refuses `manual`; every supported version takes `default`.
        Sandbox::WorkspaceWrite => "default",
    };
    for arg in [
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--replay-user-messages",
        "--permission-mode",
        mode,
        "--permission-prompt-tool",
        "stdio",
    ] {
        args.push(arg.to_string());
    }
    if spec.sandbox == Sandbox::ReadOnly {
        args.extend(
            [
                "--safe-mode",
                "--strict-mcp-config",
                "--mcp-config",
                r#"{"mcpServers":{}}"#,
                "--tools",
            ]
            .map(String::from),
        );
        args.push(READ_ONLY_TOOLS.join(","));
    }
    if let Some(model) = &spec.model {
        args.push("--model".to_string());
        args.push(model.clone());
    }
    if let Some(effort) = &spec.reasoning_effort {
        args.push("--effort".to_string());
        args.push(effort.clone());
    }
    if let Some(session_id) = &spec.resume_session_id {
        args.push("--resume".to_string());
        args.push(session_id.clone());
    }
    args.extend(spec.extra_args.iter().cloned());
    args
}

pub fn launch(spec: LaunchSpec) -> Result<ProviderHandle, LaunchError> {
    let config = ProcessConfig {
        program: spec.program.clone(),
        args: claude_arguments(&spec),
        working_directory: Some(spec.worktree.clone()),
        env: spec.env.clone(),
        stdin: StdinMode::Piped,
        confinement: spec.confinement.clone(),
    };
    crate::runner::start(config, ClaudeDriver { spec })
}

struct ClaudeDriver {
    spec: LaunchSpec,
}

impl Driver for ClaudeDriver {
    async fn run(self, io: &mut SessionIo) -> SessionEnd {
        let (Some(stdin), Some(stdout)) = (io.stdin.take(), io.stdout.take()) else {
            return SessionEnd::protocol("claude pipes are missing");
        };
        let mut session = ClaudeSession::new(self.spec, stdin);
        let mut reader = LineReader::new(stdout, MAX_FRAME_BYTES);
        let end = session.run(io, &mut reader).await;
        io.stdin = Some(session.writer);
        end
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ControlPurpose {
    Initialize,
    Interrupt,
}

struct PendingPermission {
    request_id: String,
    class: RequestClass,
    request: ToolPermissionRequest,
    questions: Vec<Question>,
    session_suggestions: Vec<Value>,
}

struct ClaudeSession {
    spec: LaunchSpec,
    writer: ChildStdin,
    next_control_id: u64,
    outstanding: HashMap<String, (ControlPurpose, Instant)>,
    initialized: bool,
    session_id: Option<String>,
    turn_running: bool,
    interrupt_requested: bool,
    /// `total_cost_usd` of the last result, to price a turn where Claude Code does not
    /// price it on its own (older versions).
    session_cost_usd: Option<f64>,
    queued_turns: VecDeque<String>,
    pending: HashMap<String, PendingPermission>,
    /// Control requests we answered: Claude echoes our responses back on stdout.
    answered: HashSet<String>,
    last_activity: Instant,
    /// The tools called and not answered yet, by call id: a result is shown under its
    /// tool's name.
    tool_calls: HashMap<String, String>,
}

impl ClaudeSession {
    fn new(spec: LaunchSpec, writer: ChildStdin) -> ClaudeSession {
        let queued_turns = spec.initial_input.iter().cloned().collect();
        ClaudeSession {
            spec,
            writer,
            next_control_id: 0,
            outstanding: HashMap::new(),
            initialized: false,
            session_id: None,
            turn_running: false,
            interrupt_requested: false,
            session_cost_usd: None,
            queued_turns,
            pending: HashMap::new(),
            answered: HashSet::new(),
            last_activity: Instant::now(),
            tool_calls: HashMap::new(),
        }
    }

    async fn run(
        &mut self,
        io: &mut SessionIo,
        reader: &mut LineReader<tokio::process::ChildStdout>,
    ) -> SessionEnd {
        if let Err(end) = self
            .send_control(ControlPurpose::Initialize, "initialize")
            .await
        {
            return end;
        }
        loop {
            let deadline = self.next_deadline();
            let step = tokio::select! {
                line = reader.next_line() => match line {
                    Ok(BoundedLine::Line(frame)) => self.handle_frame(io, &frame).await,
                    Ok(BoundedLine::TooLong(_)) => Err(SessionEnd::protocol(format!("claude sent a frame over {MAX_FRAME_BYTES} bytes"))),
                    Ok(BoundedLine::Eof) => Err(io.provider_gone("claude closed its output").await),
                    Err(error) => Err(SessionEnd::failed(FailureKind::Disconnected, format!("reading from claude failed: {error}"))),
                },
                command = io.commands.recv() => match command {
                    None | Some(ProviderCommand::Shutdown) => Err(SessionEnd::ShutdownRequested),
                    Some(command) => self.handle_command(io, command).await,
                },
                _ = sleep_until_optional(deadline) => Err(self.timeout_failure()),
            };
            if let Err(end) = step {
                return end;
            }
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        let mut deadline = self
            .outstanding
            .values()
            .map(|(_, deadline)| *deadline)
            .min();
        if self.turn_running && self.pending.is_empty() {
            let idle = self.last_activity + self.spec.timeouts.turn_idle;
            deadline = Some(deadline.map_or(idle, |current| current.min(idle)));
        }
        deadline
    }

    fn timeout_failure(&self) -> SessionEnd {
        let now = Instant::now();
        match self
            .outstanding
            .values()
            .find(|(_, deadline)| *deadline <= now)
        {
            Some((purpose, _)) => SessionEnd::failed(
                FailureKind::Timeout,
                format!("claude did not answer {purpose:?} in time"),
            ),
            None => SessionEnd::failed(
                FailureKind::Timeout,
                "the turn made no progress within the idle timeout",
            ),
        }
    }

    async fn write_frame(
        &mut self,
        bytes: &[u8],
        kind_on_failure: FailureKind,
    ) -> Result<(), SessionEnd> {
        let write = async {
            self.writer.write_all(bytes).await?;
            self.writer.flush().await
        };
        match tokio::time::timeout(self.spec.timeouts.request, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(SessionEnd::failed(
                kind_on_failure,
                format!("writing to claude failed: {error}"),
            )),
            Err(_) => Err(SessionEnd::failed(
                kind_on_failure,
                "writing to claude timed out",
            )),
        }
    }

    async fn send_control(
        &mut self,
        purpose: ControlPurpose,
        subtype: &str,
    ) -> Result<(), SessionEnd> {
        self.next_control_id += 1;
        let request_id = format!("managed-{}", self.next_control_id);
        let timeout = match purpose {
            ControlPurpose::Initialize => self.spec.timeouts.startup,
            ControlPurpose::Interrupt => self.spec.timeouts.request,
        };
        self.outstanding
            .insert(request_id.clone(), (purpose, Instant::now() + timeout));
        self.write_frame(
            &encode_control_request(&request_id, subtype),
            FailureKind::Disconnected,
        )
        .await
    }

    async fn start_next_turn(&mut self, io: &mut SessionIo) -> Result<(), SessionEnd> {
        if !self.initialized || self.turn_running {
            return Ok(());
        }
        let Some(text) = self.queued_turns.pop_front() else {
            return Ok(());
        };
        self.turn_running = true;
        self.interrupt_requested = false;
        self.last_activity = Instant::now();
        self.write_frame(&encode_user_message(&text), FailureKind::DeliveryUnknown)
            .await?;
        send(io, ProviderEvent::Working).await
    }

    async fn handle_command(
        &mut self,
        io: &mut SessionIo,
        command: ProviderCommand,
    ) -> Result<(), SessionEnd> {
        match command {
            ProviderCommand::SendTurn(text) => {
                if self.turn_running {
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
                if !self.turn_running || self.interrupt_requested {
                    let note = "interrupt ignored: no turn is in progress".to_string();
                    return transcript(io, TranscriptLine::Info(note)).await;
                }
                self.interrupt_requested = true;
                self.send_control(ControlPurpose::Interrupt, "interrupt")
                    .await
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
        let Some(pending) = self.pending.remove(&request_key) else {
            let note = format!("response to {request_key} dropped: claude no longer waits for it");
            return transcript(io, TranscriptLine::Info(note)).await;
        };
        let body = match permission_response(&pending, &response) {
            Ok(body) => body,
            Err(reason) => return Err(SessionEnd::failed(FailureKind::CommandRejected, reason)),
        };
        self.answered.insert(pending.request_id.clone());
        let summary = format!(
            "answered {request_key}: {}",
            crate::codex::response_summary(&response)
        );
        transcript(io, TranscriptLine::Approval(summary)).await?;
        // A response is acknowledged once written (contract §8.1); a failed write may
        // still have reached Claude, so it is delivery-unknown.
        self.write_frame(
            &encode_control_success(&pending.request_id, body),
            FailureKind::DeliveryUnknown,
        )
        .await?;
        send(io, ProviderEvent::ResponseResolved { request_key }).await
    }

    async fn handle_frame(&mut self, io: &mut SessionIo, frame: &[u8]) -> Result<(), SessionEnd> {
        if is_blank_frame(frame) {
            return Ok(());
        }
        self.last_activity = Instant::now();
        let frame =
            parse_claude_frame(frame).map_err(|error| SessionEnd::protocol(error.to_string()))?;
        match frame {
            ClaudeFrame::ControlResponse {
                request_id,
                outcome,
            } => self.handle_control_response(io, request_id, outcome).await,
            ClaudeFrame::SystemInit {
                session_id,
                permission_mode,
                tools,
                mcp_servers,
            } => {
                self.check_init(&permission_mode, &tools, &mcp_servers)?;
                match &self.session_id {
                    Some(bound) if bound != &session_id => Err(SessionEnd::protocol(format!(
                        "claude reported session {session_id}, but the run is bound to {bound}"
                    ))),
                    Some(_) => Ok(()),
                    None => {
                        self.session_id = Some(session_id.clone());
                        send(io, ProviderEvent::SessionBound { session_id }).await
                    }
                }
            }
            ClaudeFrame::System { subtype, tool_name } => {
                if subtype == "permission_denied" {
                    let note = format!(
                        "claude denied {} by its own policy",
                        tool_name.unwrap_or_default()
                    );
                    transcript(io, TranscriptLine::Info(note)).await?;
                }
                Ok(())
            }
            ClaudeFrame::Assistant { content } => {
                for block in content {
                    match block {
                        ContentBlock::Text(text) if !text.is_empty() => {
                            transcript(io, TranscriptLine::AgentText(text)).await?
                        }
                        ContentBlock::ToolUse { id, name, input } => {
                            let call = format!("{name} {input}");
                            self.tool_calls.insert(id, name);
                            transcript(io, TranscriptLine::ToolCall(call)).await?
                        }
                        _ => {}
                    }
                }
                Ok(())
            }
            ClaudeFrame::User { content, is_replay } => {
                if !is_replay {
                    for block in content {
                        if let ContentBlock::ToolResult {
                            tool_use_id,
                            text,
                            is_error,
                        } = block
                        {
                            let tool = self
                                .tool_calls
                                .remove(&tool_use_id)
                                .unwrap_or_else(|| "tool".to_string());
                            let status = if is_error { "failed" } else { "completed" };
                            transcript(
                                io,
                                TranscriptLine::ToolResult {
                                    title: format!("{tool} [{status}]"),
                                    output: text,
                                },
                            )
                            .await?;
                        }
                    }
                }
                Ok(())
            }
            ClaudeFrame::Result {
                subtype,
                is_error,
                text,
                usage,
                session_cost_usd,
            } => {
                if self.turn_running
                    && let Some(usage) = usage
                {
                    let usage = self.priced(usage, session_cost_usd);
                    send(io, ProviderEvent::Usage(usage)).await?;
                }
                self.handle_result(io, &subtype, is_error, text).await
            }
            ClaudeFrame::ToolPermission {
                request_id,
                request,
            } => self.handle_permission(io, request_id, request).await,
            ClaudeFrame::OtherControlRequest {
                request_id,
                subtype,
            } => {
                self.write_frame(
                    &encode_control_error(&request_id, "not supported by nagi"),
                    FailureKind::Disconnected,
                )
                .await?;
                Err(SessionEnd::protocol(format!(
                    "claude sent an unsupported control request {subtype}"
                )))
            }
            ClaudeFrame::ControlCancel { request_id } => {
                let key = format!("string:{request_id}");
                if self.pending.remove(&key).is_some() {
                    transcript(
                        io,
                        TranscriptLine::Info(format!(
                            "claude withdrew {key} before it was answered"
                        )),
                    )
                    .await?;
                }
                Ok(())
            }
            ClaudeFrame::TextDelta { text } if !text.is_empty() => {
                transcript(io, TranscriptLine::AgentDelta(text)).await
            }
            ClaudeFrame::TextDelta { .. } | ClaudeFrame::Other { .. } => Ok(()),
        }
    }

    fn check_init(
        &self,
        permission_mode: &str,
        tools: &[String],
        mcp_servers: &[Value],
    ) -> Result<(), SessionEnd> {
        match self.spec.sandbox {
            Sandbox::ReadOnly => {
                if permission_mode != "plan" {
                    return Err(SessionEnd::protocol(format!(
                        "read-only run, but claude reports permission mode {permission_mode:?}"
                    )));
                }
                if !mcp_servers.is_empty() {
                    return Err(SessionEnd::protocol(
                        "read-only run, but claude reports MCP servers",
                    ));
                }
                let reported: BTreeSet<&str> = tools.iter().map(String::as_str).collect();
                let expected: BTreeSet<&str> = READ_ONLY_TOOLS.into_iter().collect();
                if reported != expected || tools.len() != READ_ONLY_TOOLS.len() {
                    return Err(SessionEnd::protocol(format!(
                        "read-only run, but claude offers the tools {tools:?}"
                    )));
                }
                Ok(())
            }
            // `--permission-mode manual` is reported as "default" by Claude Code 2.1.332.
            Sandbox::WorkspaceWrite
                if permission_mode == "manual" || permission_mode == "default" =>
            {
                Ok(())
            }
            Sandbox::WorkspaceWrite => Err(SessionEnd::protocol(format!(
                "write run, but claude reports permission mode {permission_mode:?}"
            ))),
        }
    }

    async fn handle_control_response(
        &mut self,
        io: &mut SessionIo,
        request_id: String,
        outcome: Result<Value, String>,
    ) -> Result<(), SessionEnd> {
        let Some((purpose, _)) = self.outstanding.remove(&request_id) else {
            if self.answered.contains(&request_id) {
                return Ok(()); // our own response, echoed
            }
            return Err(SessionEnd::protocol(format!(
                "claude answered control request {request_id}, which is not pending"
            )));
        };
        match (purpose, outcome) {
            (ControlPurpose::Initialize, Ok(_)) => {
                self.initialized = true;
                if let Some(session_id) = self.spec.resume_session_id.clone() {
                    self.session_id = Some(session_id.clone());
                    send(io, ProviderEvent::SessionBound { session_id }).await?;
                }
                self.start_next_turn(io).await
            }
            (ControlPurpose::Initialize, Err(error)) => Err(SessionEnd::protocol(format!(
                "claude refused initialize: {error}"
            ))),
            (ControlPurpose::Interrupt, Ok(_)) => Ok(()),
            (ControlPurpose::Interrupt, Err(error)) => {
                transcript(
                    io,
                    TranscriptLine::Info(format!("claude refused the interrupt: {error}")),
                )
                .await
            }
        }
    }

    /// The turn's cost: Claude Code's own (newer versions), else the growth of the
    /// session's total since the last result in this process. The first result of a
    /// resumed session has no earlier total here, so its cost is unknown.
    fn priced(
        &mut self,
        usage: nagi_schema::usage::TokenUsage,
        session_cost_usd: Option<f64>,
    ) -> nagi_schema::usage::TokenUsage {
        let previous = self.session_cost_usd;
        self.session_cost_usd = session_cost_usd.or(previous);
        if usage.cost_micro_usd.is_some() {
            return usage;
        }
        let since = match (previous, self.spec.resume_session_id.is_some()) {
            (Some(previous), _) => Some(previous),
            (None, false) => Some(0.0),
            (None, true) => None,
        };
        nagi_schema::usage::TokenUsage {
            cost_micro_usd: session_cost_usd
                .zip(since)
                .and_then(|(total, since)| nagi_schema::usage::micro_usd(total - since)),
            ..usage
        }
    }

    async fn handle_result(
        &mut self,
        io: &mut SessionIo,
        subtype: &str,
        is_error: bool,
        text: Option<String>,
    ) -> Result<(), SessionEnd> {
        if !self.turn_running {
            return Err(SessionEnd::protocol(
                "claude sent a result with no turn in progress",
            ));
        }
        if !self.pending.is_empty() {
            return Err(SessionEnd::protocol(
                "claude ended the turn while a permission request was unanswered",
            ));
        }
        const KNOWN: [&str; 5] = [
            "success",
            "error_during_execution",
            "error_max_turns",
            "error_max_budget_usd",
            "error_max_structured_output_retries",
        ];
        if !KNOWN.contains(&subtype) {
            return Err(SessionEnd::protocol(format!(
                "claude result with unknown subtype {subtype:?}"
            )));
        }
        let outcome = if self.interrupt_requested {
            TurnOutcome::Interrupted
        } else if subtype == "success" && !is_error {
            TurnOutcome::Completed
        } else {
            TurnOutcome::Failed(visible_text(&text.unwrap_or_else(|| subtype.to_string())))
        };
        self.turn_running = false;
        self.interrupt_requested = false;
        send(io, ProviderEvent::TurnCompleted(outcome)).await?;
        self.start_next_turn(io).await
    }

    async fn handle_permission(
        &mut self,
        io: &mut SessionIo,
        request_id: String,
        request: ToolPermissionRequest,
    ) -> Result<(), SessionEnd> {
        let is_question = request.tool_name == "AskUserQuestion";
        if self.spec.sandbox == Sandbox::ReadOnly && !is_question {
            let denial = json!({"behavior": "deny", "message": "read-only run", "decisionClassification": "user_reject"});
            self.answered.insert(request_id.clone());
            self.write_frame(
                &encode_control_success(&request_id, denial),
                FailureKind::Disconnected,
            )
            .await?;
            // A permission request is not a protocol violation (the model may want to read
            // a file outside the repository): it is denied, the transcript says so, and the
            // turn goes on.
            send(
                io,
                ProviderEvent::Transcript(TranscriptLine::Info(visible_text(&format!(
                    "denied {}: the run is read-only",
                    request.tool_name
                )))),
            )
            .await?;
            return Ok(());
        }
        let input_text = |field: &str| {
            request
                .input
                .get(field)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let (class, action, questions) = if is_question {
            let questions = parse_ask_user_question(&request.input)
                .map_err(|error| SessionEnd::protocol(error.to_string()))?;
            let action = questions
                .iter()
                .map(|question| question.prompt.clone())
                .collect::<Vec<_>>()
                .join(" / ");
            (RequestClass::UserInput, action, questions)
        } else {
            match request.tool_name.as_str() {
                "Bash" => (
                    RequestClass::CommandApproval,
                    input_text("command").unwrap_or_else(|| request.input.to_string()),
                    Vec::new(),
                ),
                "Edit" | "Write" | "NotebookEdit" => {
                    let path = input_text("file_path")
                        .or_else(|| input_text("notebook_path"))
                        .unwrap_or_default();
                    (
                        RequestClass::FileChangeApproval,
                        format!("{} {path}", request.tool_name),
                        Vec::new(),
                    )
                }
                other => {
                    let detail = request
                        .description
                        .clone()
                        .unwrap_or_else(|| request.input.to_string());
                    (
                        RequestClass::PermissionApproval,
                        format!("{other}: {detail}"),
                        Vec::new(),
                    )
                }
            }
        };
        let session_suggestions = match class {
            RequestClass::CommandApproval | RequestClass::FileChangeApproval => {
                session_scoped_suggestions(&request.suggestions)
            }
            _ => Vec::new(),
        };
        let request_key = format!("string:{request_id}");
        if self.pending.contains_key(&request_key) {
            return Err(SessionEnd::protocol(format!(
                "claude reused the request id {request_id}"
            )));
        }
        let action = visible_text(&action);
        let attention = AttentionRequest {
            request_key: request_key.clone(),
            class,
            action: action.clone(),
            questions: questions.clone(),
            session_approval_available: !session_suggestions.is_empty(),
        };
        self.pending.insert(
            request_key,
            PendingPermission {
                request_id,
                class,
                request,
                questions,
                session_suggestions,
            },
        );
        transcript(
            io,
            TranscriptLine::Approval(format!("{class:?} requested: {action}")),
        )
        .await?;
        send(io, ProviderEvent::AttentionRequested(attention)).await
    }
}

/// The control-response body for one decision (contract §8.1).
fn permission_response(pending: &PendingPermission, response: &Response) -> Result<Value, String> {
    let input = &pending.request.input;
    match (pending.class, response) {
        (RequestClass::UserInput, Response::Answers(answers)) => {
            crate::answers::check_answers(&pending.questions, answers)?;
            Ok(
                json!({"behavior": "allow", "updatedInput": answered_input(input, answers), "decisionClassification": "user_temporary"}),
            )
        }
        (RequestClass::UserInput, _) => Err("a question can only be answered".to_string()),
        (_, Response::Answers(_)) => Err("an approval request cannot take answers".to_string()),
        (_, Response::Approve) => Ok(
            json!({"behavior": "allow", "updatedInput": input, "decisionClassification": "user_temporary"}),
        ),
        (_, Response::ApproveForSession) if pending.session_suggestions.is_empty() => {
            Err("claude offered no session-scoped permission for this request".to_string())
        }
        (_, Response::ApproveForSession) => Ok(json!({
            "behavior": "allow",
            "updatedInput": input,
            "updatedPermissions": pending.session_suggestions,
            "decisionClassification": "user_permanent",
        })),
        (_, Response::Decline) => Ok(json!({
            "behavior": "deny",
            "message": "The user declined this request.",
            "decisionClassification": "user_reject",
        })),
    }
}
