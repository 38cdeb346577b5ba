//! The OpenCode adapter: `opencode serve` on 127.0.0.1 with basic auth, driven over HTTP,
//! with progress read from the server-sent event stream.
//!
//! Start: read the listening line, check `/global/health` (a version in the tested range)
//! and `/doc` (every operation we use is listed), open `/event`, then create the session
//! (`POST /session?directory=`) or look up the stored one. A turn is `prompt_async`; it ends
//! when the session goes `idle` after having been `busy`. Read-only runs deny edits, shell
//! and outside directories through `OPENCODE_PERMISSION`, which removes those tools.

use std::collections::{HashMap, HashSet};

use base64::Engine;
use rand::RngCore;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::framing::{BoundedLine, LineReader, SessionEnd, visible_text};
use crate::opencode_codec::{
    OpenCodeEvent, OpenCodePart, check_health, missing_operations, parse_listening_line,
    parse_opencode_event,
};
use crate::opencode_http::{HttpError, OpenCodeHttp, StreamItem};
use crate::process::{ProcessConfig, StdinMode};
use crate::runner::{Driver, SessionIo, send, sleep_until_optional, transcript};
use crate::spec::{
    AttentionRequest, FailureKind, LaunchError, LaunchSpec, ProviderCommand, ProviderEvent,
    ProviderHandle, RequestClass, Response, Sandbox, TranscriptLine, TurnOutcome,
};

const USERNAME: &str = "opencode";
/// The permission override of a read-only run (contract §8.1).
pub const READ_ONLY_PERMISSION: &str =
    r#"{"edit":"deny","bash":"deny","external_directory":"deny"}"#;
/// More pending permission requests than this is treated as a runaway provider.
const MAX_PENDING_PERMISSIONS: usize = 128;

pub fn launch(spec: LaunchSpec) -> Result<ProviderHandle, LaunchError> {
    let mut password_bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut password_bytes);
    let password = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(password_bytes);
    let mut env = spec.env.clone();
    env.insert("OPENCODE_SERVER_USERNAME".to_string(), USERNAME.to_string());
    env.insert("OPENCODE_SERVER_PASSWORD".to_string(), password.clone());
    if spec.sandbox == Sandbox::ReadOnly {
        env.insert(
            "OPENCODE_PERMISSION".to_string(),
            READ_ONLY_PERMISSION.to_string(),
        );
    }
    let mut args = spec.leading_args.clone();
    args.extend(
        [
            "serve",
            "--hostname",
            "127.0.0.1",
            "--port",
            "0",
            "--no-mdns",
        ]
        .map(String::from),
    );
    args.extend(spec.extra_args.iter().cloned());
    let config = ProcessConfig {
        program: spec.program.clone(),
        args,
        working_directory: Some(spec.worktree.clone()),
        env,
        stdin: StdinMode::Null,
        confinement: spec.confinement.clone(),
    };
    crate::runner::start(config, OpenCodeDriver { spec, password })
}

struct OpenCodeDriver {
    spec: LaunchSpec,
    password: String,
}

impl Driver for OpenCodeDriver {
    async fn run(self, io: &mut SessionIo) -> SessionEnd {
        let Some(stdout) = io.stdout.take() else {
            return SessionEnd::protocol("opencode stdout is missing");
        };
        let mut reader = LineReader::new(stdout, crate::framing::MAX_VISIBLE_TEXT_BYTES);
        let port =
            match tokio::time::timeout(self.spec.timeouts.startup, wait_for_listening(&mut reader))
                .await
            {
                Ok(Ok(port)) => port,
                Ok(Err(WaitError::Violation(reason))) => return SessionEnd::protocol(reason),
                Ok(Err(WaitError::Closed)) => {
                    return io.provider_gone("opencode exited before listening").await;
                }
                Err(_) => {
                    return SessionEnd::failed(
                        FailureKind::Timeout,
                        "opencode did not report its listening address in time",
                    );
                }
            };
        tokio::spawn(drain_stdout(reader, io.sink.clone()));
        let directory = self.spec.worktree.display().to_string();
        let http = OpenCodeHttp::new(
            port,
            USERNAME,
            &self.password,
            &directory,
            self.spec.timeouts.request,
        );
        let mut session = OpenCodeSession {
            spec: self.spec,
            http,
            directory,
            session_id: String::new(),
            turn_armed: false,
            busy_seen: false,
            abort_requested: false,
            pending: HashMap::new(),
            answered: HashMap::new(),
            text_parts: HashMap::new(),
            tools_seen: HashSet::new(),
            user_messages: HashSet::new(),
            turn_user_message: None,
            turn_usage: Default::default(),
            last_activity: Instant::now(),
        };
        session.run(io).await
    }
}

enum WaitError {
    Violation(String),
    Closed,
}

async fn wait_for_listening(
    reader: &mut LineReader<tokio::process::ChildStdout>,
) -> Result<u16, WaitError> {
    loop {
        match reader.next_line().await {
            Ok(BoundedLine::Line(line)) | Ok(BoundedLine::TooLong(line)) => {
                if let Some(port) = parse_listening_line(&String::from_utf8_lossy(&line)) {
                    return port.map_err(|error| WaitError::Violation(error.to_string()));
                }
            }
            Ok(BoundedLine::Eof) | Err(_) => return Err(WaitError::Closed),
        }
    }
}

async fn drain_stdout(
    mut reader: LineReader<tokio::process::ChildStdout>,
    sink: crate::framing::EventSink,
) {
    while let Ok(BoundedLine::Line(line) | BoundedLine::TooLong(line)) = reader.next_line().await {
        if !sink
            .transcript(TranscriptLine::Info(
                String::from_utf8_lossy(&line).into_owned(),
            ))
            .await
        {
            return;
        }
    }
}

struct PendingPermission {
    id: String,
    always_available: bool,
}

struct OpenCodeSession {
    spec: LaunchSpec,
    http: OpenCodeHttp,
    directory: String,
    session_id: String,
    /// A prompt was accepted and its end (`idle` after `busy`) has not been seen.
    turn_armed: bool,
    busy_seen: bool,
    abort_requested: bool,
    pending: HashMap<String, PendingPermission>,
    /// Replied to, waiting for `permission.replied`, with the time of the reply.
    answered: HashMap<String, Instant>,
    /// Text parts still streaming: id → latest text.
    text_parts: HashMap<String, String>,
    tools_seen: HashSet<String>,
    /// Ids of user messages: their text parts are our own prompt, not agent output.
    user_messages: HashSet<String>,
    /// The user message of the running turn (our prompt), once OpenCode reported it.
    turn_user_message: Option<String>,
    /// The running turn's finished assistant messages and their usage.
    turn_usage: std::collections::HashMap<String, nagi_schema::usage::TokenUsage>,
    last_activity: Instant,
}

fn http_failure(error: HttpError) -> SessionEnd {
    match error {
        HttpError::Transport { .. } => {
            SessionEnd::failed(FailureKind::Disconnected, error.to_string())
        }
        HttpError::Status { status: 401, .. } => {
            SessionEnd::protocol(format!("{error} (the server refused our credentials)"))
        }
        other => SessionEnd::protocol(other.to_string()),
    }
}

impl OpenCodeSession {
    async fn run(&mut self, io: &mut SessionIo) -> SessionEnd {
        let mut events = match self.start(io).await {
            Ok(events) => events,
            Err(end) => return end,
        };
        loop {
            let deadline = self.next_deadline();
            let step = tokio::select! {
                item = events.recv() => match item {
                    Some(StreamItem::Event(data)) => self.handle_event(io, data.as_bytes()).await,
                    Some(StreamItem::TooLong) => Err(SessionEnd::protocol("opencode sent an event over the frame limit")),
                    Some(StreamItem::Ended(reason)) => Err(self.stream_ended(io, reason).await),
                    None => Err(self.stream_ended(io, None).await),
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
        let request = self.spec.timeouts.request;
        let mut deadline = self
            .answered
            .values()
            .map(|answered| *answered + request)
            .min();
        if self.turn_armed && self.pending.is_empty() {
            let idle = self.last_activity + self.spec.timeouts.turn_idle;
            deadline = Some(deadline.map_or(idle, |current| current.min(idle)));
        }
        deadline
    }

    fn timeout_failure(&self) -> SessionEnd {
        if !self.answered.is_empty()
            && self
                .answered
                .values()
                .any(|answered| *answered + self.spec.timeouts.request <= Instant::now())
        {
            return SessionEnd::failed(
                FailureKind::DeliveryUnknown,
                "opencode did not confirm a permission reply in time",
            );
        }
        SessionEnd::failed(
            FailureKind::Timeout,
            "the turn made no progress within the idle timeout",
        )
    }

    /// An event stream that ends mid-turn leaves the turn's fate unknown.
    async fn stream_ended(&mut self, io: &mut SessionIo, reason: Option<String>) -> SessionEnd {
        let gone = io
            .provider_gone(
                reason
                    .as_deref()
                    .unwrap_or("the opencode event stream ended"),
            )
            .await;
        let SessionEnd::Failed { reason, .. } = gone else {
            return gone;
        };
        if self.turn_armed || !self.answered.is_empty() {
            SessionEnd::failed(FailureKind::DeliveryUnknown, format!("{reason} (mid-turn)"))
        } else {
            SessionEnd::failed(FailureKind::Disconnected, reason)
        }
    }

    async fn start(
        &mut self,
        io: &mut SessionIo,
    ) -> Result<mpsc::Receiver<StreamItem>, SessionEnd> {
        let health = self
            .http
            .json("GET", "/global/health", None, false)
            .await
            .map_err(http_failure)?;
        let version =
            check_health(&health).map_err(|error| SessionEnd::protocol(error.to_string()))?;
        transcript(
            io,
            TranscriptLine::Info(format!("opencode server {version}")),
        )
        .await?;
        let doc = self
            .http
            .json("GET", "/doc", None, false)
            .await
            .map_err(http_failure)?;
        let missing = missing_operations(&doc);
        if !missing.is_empty() {
            return Err(SessionEnd::protocol(format!(
                "opencode {version} lacks operations nagi needs: {}",
                missing.join(", ")
            )));
        }
        let mut events = self.http.start_event_stream();
        // Wait for `server.connected`, so that no event of our session can be missed.
        let connected = tokio::time::timeout(self.spec.timeouts.startup, async {
            loop {
                match events.recv().await {
                    Some(StreamItem::Event(data)) => {
                        if parse_opencode_event(data.as_bytes())
                            == Ok(OpenCodeEvent::ServerConnected)
                        {
                            return Ok(());
                        }
                    }
                    Some(StreamItem::TooLong) => {
                        return Err(SessionEnd::protocol(
                            "opencode sent an event over the frame limit",
                        ));
                    }
                    Some(StreamItem::Ended(reason)) => {
                        return Err(SessionEnd::failed(
                            FailureKind::Disconnected,
                            reason.unwrap_or_else(|| "the event stream closed".to_string()),
                        ));
                    }
                    None => {
                        return Err(SessionEnd::failed(
                            FailureKind::Disconnected,
                            "the event stream closed",
                        ));
                    }
                }
            }
        })
        .await;
        match connected {
            Ok(result) => result?,
            Err(_) => {
                return Err(SessionEnd::failed(
                    FailureKind::Timeout,
                    "the opencode event stream did not connect in time",
                ));
            }
        }
        match self.spec.resume_session_id.clone() {
            None => {
                let created = self
                    .http
                    .json("POST", "/session", Some(json!({})), true)
                    .await
                    .map_err(http_failure)?;
                self.session_id = created
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .ok_or_else(|| SessionEnd::protocol("POST /session returned no id"))?
                    .to_string();
                send(
                    io,
                    ProviderEvent::SessionBound {
                        session_id: self.session_id.clone(),
                    },
                )
                .await?;
            }
            Some(stored) => self.resume(io, stored).await?,
        }
        if let Some(text) = self.spec.initial_input.clone() {
            self.prompt(io, text).await?;
        }
        Ok(events)
    }

    /// Looks the stored session up and re-surfaces what it was waiting for.
    async fn resume(&mut self, io: &mut SessionIo, stored: String) -> Result<(), SessionEnd> {
        let found = self
            .http
            .json("GET", &format!("/session/{stored}"), None, true)
            .await
            .map_err(http_failure)?;
        let same_id = found.get("id").and_then(Value::as_str) == Some(stored.as_str());
        let same_directory =
            found.get("directory").and_then(Value::as_str) == Some(self.directory.as_str());
        if !same_id || !same_directory {
            return Err(SessionEnd::protocol(format!(
                "opencode does not hold session {stored} for this worktree"
            )));
        }
        self.session_id = stored.clone();
        send(
            io,
            ProviderEvent::SessionBound {
                session_id: stored.clone(),
            },
        )
        .await?;
        let statuses = self
            .http
            .json("GET", "/session/status", None, true)
            .await
            .map_err(http_failure)?;
        if let Some(status) = statuses
            .pointer(&format!("/{stored}/type"))
            .and_then(Value::as_str)
            && status != "idle"
        {
            // A busy session is adopted as the turn in flight.
            self.turn_armed = true;
            self.busy_seen = true;
            send(io, ProviderEvent::Working).await?;
        }
        let permissions = self
            .http
            .json("GET", "/permission", None, true)
            .await
            .map_err(http_failure)?;
        for permission in permissions.as_array().into_iter().flatten() {
            let event = json!({"type": "permission.asked", "properties": permission});
            if let Ok(OpenCodeEvent::PermissionAsked {
                id,
                session_id,
                permission,
                patterns,
                always,
            }) = parse_opencode_event(event.to_string().as_bytes())
                && session_id == stored
            {
                self.permission_asked(io, id, permission, patterns, always)
                    .await?;
            }
        }
        let questions = self
            .http
            .json("GET", "/question", None, true)
            .await
            .map_err(http_failure)?;
        let waiting_question = questions.as_array().into_iter().flatten().any(|question| {
            question.get("sessionID").and_then(Value::as_str) == Some(stored.as_str())
        });
        if waiting_question {
            let _ = self.abort().await;
            return Err(SessionEnd::protocol(
                "the stored opencode session waits on a question, which nagi cannot answer",
            ));
        }
        Ok(())
    }

    async fn prompt(&mut self, io: &mut SessionIo, text: String) -> Result<(), SessionEnd> {
        if self.turn_armed {
            return Err(SessionEnd::failed(
                FailureKind::CommandRejected,
                "a turn is already in progress",
            ));
        }
        let path = format!("/session/{}/prompt_async", self.session_id);
        let mut body = json!({"parts": [{"type": "text", "text": text}]});
        // `provider/model` (checked at launch); the effort is OpenCode's model `variant`.
        if let Some((provider, model)) = self
            .spec
            .model
            .as_deref()
            .and_then(|model| model.split_once('/'))
        {
            body["model"] = json!({"providerID": provider, "modelID": model});
        }
        if let Some(effort) = &self.spec.reasoning_effort {
            body["variant"] = json!(effort);
        }
        // Armed before the request: the turn's first events may beat the response.
        self.turn_armed = true;
        self.turn_user_message = None;
        self.turn_usage.clear();
        self.busy_seen = false;
        self.abort_requested = false;
        self.last_activity = Instant::now();
        match self.http.call("POST", &path, Some(body), true).await {
            Ok((204, _)) => send(io, ProviderEvent::Working).await,
            Ok((status, text)) => Err(SessionEnd::failed(
                FailureKind::CommandRejected,
                format!(
                    "prompt_async answered HTTP {status}: {}",
                    crate::framing::truncate_utf8(&text, 512)
                ),
            )),
            Err(error) => Err(SessionEnd::failed(
                FailureKind::DeliveryUnknown,
                error.to_string(),
            )),
        }
    }

    async fn abort(&mut self) -> Result<(), SessionEnd> {
        self.abort_requested = true;
        let path = format!("/session/{}/abort", self.session_id);
        let answer = self
            .http
            .json("POST", &path, Some(json!({})), true)
            .await
            .map_err(http_failure)?;
        if answer != Value::Bool(true) {
            return Err(SessionEnd::protocol(format!("abort answered {answer}")));
        }
        Ok(())
    }

    async fn handle_command(
        &mut self,
        io: &mut SessionIo,
        command: ProviderCommand,
    ) -> Result<(), SessionEnd> {
        match command {
            ProviderCommand::SendTurn(text) => self.prompt(io, text).await,
            ProviderCommand::Respond {
                request_key,
                response,
            } => self.respond(io, request_key, response).await,
            ProviderCommand::Interrupt => {
                if !self.turn_armed || self.abort_requested {
                    return transcript(
                        io,
                        TranscriptLine::Info(
                            "interrupt ignored: no turn is in progress".to_string(),
                        ),
                    )
                    .await;
                }
                self.abort().await
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
            let note =
                format!("response to {request_key} dropped: opencode no longer waits for it");
            return transcript(io, TranscriptLine::Info(note)).await;
        };
        let reply = match response {
            Response::Approve => "once",
            Response::ApproveForSession if pending.always_available => "always",
            Response::ApproveForSession => {
                return Err(SessionEnd::failed(
                    FailureKind::CommandRejected,
                    "opencode offered no lasting rule for this request",
                ));
            }
            Response::Decline => "reject",
            Response::Answers(_) => {
                return Err(SessionEnd::failed(
                    FailureKind::CommandRejected,
                    "a permission request cannot take answers",
                ));
            }
        };
        transcript(
            io,
            TranscriptLine::Approval(format!("answered {request_key}: {reply}")),
        )
        .await?;
        let path = format!("/permission/{}/reply", pending.id);
        match self
            .http
            .call("POST", &path, Some(json!({"reply": reply})), true)
            .await
        {
            Ok((200, body)) if body.trim() == "true" => {
                self.answered.insert(pending.id, Instant::now());
                Ok(())
            }
            Ok((status, body)) => Err(SessionEnd::failed(
                FailureKind::CommandRejected,
                format!(
                    "permission reply answered HTTP {status}: {}",
                    crate::framing::truncate_utf8(&body, 512)
                ),
            )),
            Err(error) => Err(SessionEnd::failed(
                FailureKind::DeliveryUnknown,
                error.to_string(),
            )),
        }
    }

    async fn permission_asked(
        &mut self,
        io: &mut SessionIo,
        id: String,
        permission: String,
        patterns: Vec<String>,
        always: Vec<String>,
    ) -> Result<(), SessionEnd> {
        let request_key = format!("string:{id}");
        if self.pending.contains_key(&request_key) {
            return Ok(()); // re-surfaced at resume and announced again
        }
        if self.pending.len() >= MAX_PENDING_PERMISSIONS {
            return Err(SessionEnd::protocol(
                "opencode has more than 128 pending permission requests",
            ));
        }
        let action = visible_text(&format!("{permission}: {}", patterns.join(", ")));
        let always_available = !always.is_empty();
        self.pending.insert(
            request_key.clone(),
            PendingPermission {
                id,
                always_available,
            },
        );
        transcript(
            io,
            TranscriptLine::Approval(format!("permission requested: {action}")),
        )
        .await?;
        let attention = AttentionRequest {
            request_key,
            class: RequestClass::PermissionApproval,
            action,
            questions: Vec::new(),
            session_approval_available: always_available,
        };
        send(io, ProviderEvent::AttentionRequested(attention)).await
    }

    async fn handle_event(&mut self, io: &mut SessionIo, data: &[u8]) -> Result<(), SessionEnd> {
        let event =
            parse_opencode_event(data).map_err(|error| SessionEnd::protocol(error.to_string()))?;
        let ours = |session_id: &str| session_id == self.session_id;
        match event {
            OpenCodeEvent::SessionStatus { session_id, status } if ours(&session_id) => {
                self.last_activity = Instant::now();
                match status.as_str() {
                    "idle" if self.turn_armed && (self.busy_seen || self.abort_requested) => {
                        self.finish_turn(io, None).await
                    }
                    "idle" => Ok(()),
                    _ => {
                        self.busy_seen = true;
                        Ok(())
                    }
                }
            }
            OpenCodeEvent::SessionError {
                session_id,
                name,
                message,
            } if session_id.as_deref().is_none_or(ours) => {
                self.last_activity = Instant::now();
                if self.abort_requested && name == "MessageAbortedError" {
                    return Ok(()); // our own abort; `idle` follows
                }
                if self.turn_armed {
                    self.finish_turn(io, Some(format!("{name}: {message}")))
                        .await
                } else {
                    transcript(
                        io,
                        TranscriptLine::Info(format!("opencode error: {name}: {message}")),
                    )
                    .await
                }
            }
            OpenCodeEvent::PermissionAsked {
                id,
                session_id,
                permission,
                patterns,
                always,
            } if ours(&session_id) => {
                self.last_activity = Instant::now();
                self.permission_asked(io, id, permission, patterns, always)
                    .await
            }
            OpenCodeEvent::PermissionReplied {
                session_id,
                request_id,
                ..
            } if ours(&session_id) => {
                self.last_activity = Instant::now();
                let request_key = format!("string:{request_id}");
                if self.answered.remove(&request_id).is_some() {
                    send(io, ProviderEvent::ResponseResolved { request_key }).await
                } else {
                    self.pending.remove(&request_key);
                    Ok(())
                }
            }
            OpenCodeEvent::QuestionAsked {
                id,
                session_id,
                text,
            } if ours(&session_id) => {
                // Structured questions are not supported: surface them, then fail closed.
                let attention = AttentionRequest {
                    request_key: format!("string:{id}"),
                    class: RequestClass::UserInput,
                    action: visible_text(&text),
                    questions: Vec::new(),
                    session_approval_available: false,
                };
                send(io, ProviderEvent::AttentionRequested(attention)).await?;
                let _ = self.abort().await;
                Err(SessionEnd::protocol(
                    "opencode asked a structured question, which nagi does not support",
                ))
            }
            OpenCodeEvent::MessageUpdated {
                session_id,
                message_id,
                role,
                parent_id,
                finished_usage,
            } if ours(&session_id) => {
                if role == "user" {
                    if self.turn_armed && !self.user_messages.contains(&message_id) {
                        self.turn_user_message = Some(message_id.clone());
                    }
                    self.user_messages.insert(message_id);
                    return Ok(());
                }
                // The turn's usage is the sum of the assistant messages that answer its
                // prompt (each is reported more than once; the last report counts).
                match (finished_usage, &self.turn_user_message) {
                    (Some(usage), Some(prompt))
                        if self.turn_armed && parent_id.as_ref() == Some(prompt) =>
                    {
                        self.turn_usage.insert(message_id, usage);
                        let sum = self
                            .turn_usage
                            .values()
                            .fold(nagi_schema::usage::TokenUsage::default(), |sum, usage| {
                                sum.plus(*usage)
                            });
                        send(io, ProviderEvent::Usage(sum)).await
                    }
                    _ => Ok(()),
                }
            }
            OpenCodeEvent::PartUpdated {
                part: OpenCodePart::Text { message_id, .. },
                ..
            } if self.user_messages.contains(&message_id) => Ok(()),
            OpenCodeEvent::PartDelta {
                session_id,
                part_id,
                field,
                delta,
            } if ours(&session_id) && field == "text" && !delta.is_empty() => {
                // Only the agent's text parts are followed (reasoning parts stream too).
                let Some(text) = self.text_parts.get_mut(&part_id) else {
                    return Ok(());
                };
                self.last_activity = Instant::now();
                text.push_str(&delta);
                transcript(io, TranscriptLine::AgentDelta(delta)).await
            }
            OpenCodeEvent::PartUpdated { session_id, part } if ours(&session_id) => {
                self.last_activity = Instant::now();
                self.handle_part(io, part).await
            }
            _ => Ok(()),
        }
    }

    async fn handle_part(
        &mut self,
        io: &mut SessionIo,
        part: OpenCodePart,
    ) -> Result<(), SessionEnd> {
        match part {
            OpenCodePart::Text {
                id,
                text,
                finished: true,
                ..
            } => {
                self.text_parts.remove(&id);
                if text.is_empty() {
                    Ok(())
                } else {
                    transcript(io, TranscriptLine::AgentText(text)).await
                }
            }
            OpenCodePart::Text {
                id,
                text,
                finished: false,
                ..
            } => {
                // A whole text so far: what it adds to the text already seen is streamed.
                let seen = self.text_parts.insert(id, text.clone()).unwrap_or_default();
                match text.strip_prefix(seen.as_str()) {
                    Some(added) if !added.is_empty() => {
                        transcript(io, TranscriptLine::AgentDelta(added.to_string())).await
                    }
                    _ => Ok(()),
                }
            }
            OpenCodePart::Tool {
                call_id,
                tool,
                status,
                input,
                output,
            } => match status.as_str() {
                "running" if self.tools_seen.insert(call_id.clone()) => {
                    transcript(io, TranscriptLine::ToolCall(format!("{tool} {input}"))).await
                }
                "completed" | "error" => {
                    if self.tools_seen.insert(call_id) {
                        transcript(io, TranscriptLine::ToolCall(format!("{tool} {input}"))).await?;
                    }
                    transcript(
                        io,
                        TranscriptLine::ToolResult {
                            title: format!("{tool} [{status}]"),
                            output,
                        },
                    )
                    .await
                }
                _ => Ok(()),
            },
            OpenCodePart::Other => Ok(()),
        }
    }

    async fn finish_turn(
        &mut self,
        io: &mut SessionIo,
        failure: Option<String>,
    ) -> Result<(), SessionEnd> {
        let unfinished: Vec<String> = self
            .text_parts
            .drain()
            .map(|(_, text)| text)
            .filter(|text| !text.is_empty())
            .collect();
        for text in unfinished {
            transcript(io, TranscriptLine::AgentText(text)).await?;
        }
        let outcome = match failure {
            Some(reason) if !self.abort_requested => TurnOutcome::Failed(visible_text(&reason)),
            _ if self.abort_requested => TurnOutcome::Interrupted,
            _ => TurnOutcome::Completed,
        };
        self.turn_armed = false;
        self.busy_seen = false;
        self.abort_requested = false;
        self.pending.clear();
        send(io, ProviderEvent::TurnCompleted(outcome)).await
    }
}
