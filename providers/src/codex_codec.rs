//! Pure frame parsing and encoding for `codex app-server` (newline JSON-RPC without the
//! `jsonrpc` field). No I/O here, so every function can be unit-tested and fuzzed.

use serde_json::{Map, Value, json};

use crate::framing::visible_text;
use crate::spec::{Question, QuestionOption};

/// The most questions one `item/tool/requestUserInput` may carry (contract §8.1).
pub const MAX_QUESTIONS: usize = 4;
/// The most options one question may carry.
pub const MAX_OPTIONS: usize = 8;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("codex protocol violation: {0}")]
pub struct CodexCodecError(pub String);

fn violation(message: impl Into<String>) -> CodexCodecError {
    CodexCodecError(message.into())
}

/// A JSON-RPC id as the peer sent it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RpcId {
    Number(i64),
    String(String),
}

impl RpcId {
    fn from_json(value: &Value) -> Result<RpcId, CodexCodecError> {
        match value {
            Value::Number(number) => number
                .as_i64()
                .map(RpcId::Number)
                .ok_or_else(|| violation(format!("request id {number} is not an integer"))),
            Value::String(text) => Ok(RpcId::String(text.clone())),
            other => Err(violation(format!(
                "request id {other} is neither a number nor a string"
            ))),
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            RpcId::Number(number) => json!(number),
            RpcId::String(text) => json!(text),
        }
    }

    /// The audit key of a provider request: `number:<n>` or `string:<s>`.
    pub fn request_key(&self) -> String {
        match self {
            RpcId::Number(number) => format!("number:{number}"),
            RpcId::String(text) => format!("string:{text}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

/// One frame from the app-server.
#[derive(Debug, Clone, PartialEq)]
pub enum CodexFrame {
    /// The answer to one of our requests.
    Response {
        id: RpcId,
        outcome: Result<Value, RpcError>,
    },
    /// A request the server sends us (approvals, questions, the clock).
    Request {
        id: RpcId,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
}

/// Parses one line from the app-server.
pub fn parse_codex_frame(bytes: &[u8]) -> Result<CodexFrame, CodexCodecError> {
    let value: Value =
        serde_json::from_slice(bytes).map_err(|error| violation(format!("not JSON: {error}")))?;
    let Value::Object(mut object) = value else {
        return Err(violation("frame is not a JSON object"));
    };
    let method = match object.remove("method") {
        None => None,
        Some(Value::String(method)) => Some(method),
        Some(_) => return Err(violation("method is not a string")),
    };
    let id = match object.get("id") {
        None | Some(Value::Null) => None,
        Some(id) => Some(RpcId::from_json(id)?),
    };
    let params = object.remove("params").unwrap_or(Value::Null);
    match (id, method) {
        (Some(id), Some(method)) => Ok(CodexFrame::Request { id, method, params }),
        (None, Some(method)) => Ok(CodexFrame::Notification { method, params }),
        (Some(id), None) => {
            if let Some(error) = object.get("error") {
                let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                Ok(CodexFrame::Response {
                    id,
                    outcome: Err(RpcError { code, message }),
                })
            } else if let Some(result) = object.remove("result") {
                Ok(CodexFrame::Response {
                    id,
                    outcome: Ok(result),
                })
            } else {
                Err(violation("response has neither result nor error"))
            }
        }
        (None, None) => Err(violation("frame has neither method nor id")),
    }
}

fn encode(value: Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&value).expect("JSON values always serialize");
    bytes.push(b'\n');
    bytes
}

pub fn encode_request(id: i64, method: &str, params: Value) -> Vec<u8> {
    encode(json!({"id": id, "method": method, "params": params}))
}

pub fn encode_notification(method: &str) -> Vec<u8> {
    encode(json!({"method": method}))
}

pub fn encode_result(id: &RpcId, result: Value) -> Vec<u8> {
    encode(json!({"id": id.to_json(), "result": result}))
}

pub fn encode_error(id: &RpcId, code: i64, message: &str) -> Vec<u8> {
    encode(json!({"id": id.to_json(), "error": {"code": code, "message": message}}))
}

/// What a server request asks of us.
#[derive(Debug, Clone, PartialEq)]
pub enum CodexServerRequest {
    /// `session_allowed` is false when codex lists `availableDecisions` without
    /// `acceptForSession` (codex 0.171 does so for escalation requests).
    CommandApproval {
        command: String,
        item_id: Option<String>,
        session_allowed: bool,
    },
    FileChangeApproval {
        reason: Option<String>,
        item_id: Option<String>,
    },
    /// Codex 0.171 answers these with a granted permission profile, not a decision: the
    /// requested profile is kept to grant exactly it.
    PermissionApproval {
        description: String,
        requested: Value,
    },
    UserInput {
        questions: Vec<Question>,
    },
    /// `currentTime/read`, answered by the adapter itself.
    CurrentTime,
    /// Anything else: refused with −32601 and the run fails closed.
    Unsupported {
        method: String,
    },
}

pub fn parse_server_request(
    method: &str,
    params: &Value,
) -> Result<CodexServerRequest, CodexCodecError> {
    let item_id = params
        .get("itemId")
        .and_then(Value::as_str)
        .map(str::to_string);
    match method {
        "item/commandExecution/requestApproval" => {
            let command = match params.get("command") {
                Some(Value::String(command)) => command.clone(),
                Some(Value::Array(parts)) => parts
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => params
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("run a command")
                    .to_string(),
            };
            let session_allowed = match params.get("availableDecisions").and_then(Value::as_array) {
                None => true,
                Some(decisions) => decisions
                    .iter()
                    .any(|decision| decision.as_str() == Some("acceptForSession")),
            };
            Ok(CodexServerRequest::CommandApproval {
                command,
                item_id,
                session_allowed,
            })
        }
        "item/fileChange/requestApproval" => {
            let reason = params
                .get("reason")
                .and_then(Value::as_str)
                .map(str::to_string);
            Ok(CodexServerRequest::FileChangeApproval { reason, item_id })
        }
        "item/permissions/requestApproval" => {
            let description = params
                .get("reason")
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| params.get("permissions").map(Value::to_string))
                .unwrap_or_else(|| "grant additional permissions".to_string());
            let requested = params
                .get("permissions")
                .cloned()
                .unwrap_or_else(|| json!({}));
            Ok(CodexServerRequest::PermissionApproval {
                description,
                requested,
            })
        }
        "item/tool/requestUserInput" => Ok(CodexServerRequest::UserInput {
            questions: parse_questions(params)?,
        }),
        "currentTime/read" => Ok(CodexServerRequest::CurrentTime),
        other => Ok(CodexServerRequest::Unsupported {
            method: other.to_string(),
        }),
    }
}

fn parse_questions(params: &Value) -> Result<Vec<Question>, CodexCodecError> {
    let list = params
        .get("questions")
        .and_then(Value::as_array)
        .ok_or_else(|| violation("requestUserInput without a questions list"))?;
    if list.is_empty() || list.len() > MAX_QUESTIONS {
        return Err(violation(format!(
            "requestUserInput carries {} questions (1 to {MAX_QUESTIONS})",
            list.len()
        )));
    }
    let mut questions = Vec::with_capacity(list.len());
    for entry in list {
        let id = non_empty_string(entry, "id")?;
        let prompt = non_empty_string(entry, "question")?;
        let header = entry
            .get("header")
            .and_then(Value::as_str)
            .filter(|header| !header.trim().is_empty())
            .unwrap_or("Question");
        let options = match entry.get("options") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(options)) => {
                if options.len() > MAX_OPTIONS {
                    return Err(violation(format!(
                        "a question has {} options (at most {MAX_OPTIONS})",
                        options.len()
                    )));
                }
                options
                    .iter()
                    .map(|option| {
                        Ok(QuestionOption {
                            label: visible_text(&non_empty_string(option, "label")?),
                            description: visible_text(
                                option
                                    .get("description")
                                    .and_then(Value::as_str)
                                    .unwrap_or(""),
                            ),
                        })
                    })
                    .collect::<Result<Vec<_>, CodexCodecError>>()?
            }
            Some(_) => return Err(violation("question options is not a list")),
        };
        if questions
            .iter()
            .any(|question: &Question| question.id == id)
        {
            return Err(violation(format!("question id {id} appears twice")));
        }
        questions.push(Question {
            id,
            header: crate::framing::truncate_utf8(header, 128).to_string(),
            prompt: visible_text(&prompt),
            options,
            multiple: entry
                .get("multiSelect")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            custom_allowed: true,
        });
    }
    Ok(questions)
}

fn non_empty_string(value: &Value, field: &str) -> Result<String, CodexCodecError> {
    match value.get(field).and_then(Value::as_str) {
        Some(text) if !text.trim().is_empty() => Ok(text.to_string()),
        _ => Err(violation(format!("field {field} is missing or empty"))),
    }
}

/// How a turn ended, from `turn/completed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodexTurnStatus {
    Completed,
    Interrupted,
    Failed(String),
}

/// An item of a turn, reduced to what the transcript shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodexItem {
    AgentMessage {
        text: String,
    },
    CommandExecution {
        command: String,
        output: Option<String>,
        exit_code: Option<i64>,
        status: String,
    },
    FileChange {
        id: String,
        paths: Vec<String>,
        status: String,
    },
    Other,
}

/// The notifications the adapter acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodexNotification {
    TurnStarted {
        turn_id: Option<String>,
    },
    TurnCompleted {
        turn_id: Option<String>,
        status: CodexTurnStatus,
    },
    ItemStarted(CodexItem),
    ItemCompleted(CodexItem),
    ServerRequestResolved {
        request_key: String,
    },
    Error {
        message: String,
    },
    /// `thread/tokenUsage/updated`: `last` is one model request's tokens (`total` is the
    /// whole thread's, across turns and resumes, so it is not used).
    TokenUsage {
        turn_id: Option<String>,
        last: nagi_schema::usage::TokenUsage,
    },
    /// `item/agentMessage/delta`: a piece of the agent's message as it streams.
    AgentMessageDelta {
        delta: String,
    },
    /// Other deltas, plans and everything else: activity, nothing to report.
    Other,
}

pub fn parse_notification(
    method: &str,
    params: &Value,
) -> Result<CodexNotification, CodexCodecError> {
    let turn_id = || {
        params
            .pointer("/turn/id")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    match method {
        "turn/started" => Ok(CodexNotification::TurnStarted { turn_id: turn_id() }),
        "turn/completed" => {
            let status = params
                .pointer("/turn/status")
                .and_then(Value::as_str)
                .ok_or_else(|| violation("turn/completed without turn.status"))?;
            let status = match status {
                "completed" => CodexTurnStatus::Completed,
                "interrupted" => CodexTurnStatus::Interrupted,
                "failed" => CodexTurnStatus::Failed(
                    params
                        .pointer("/turn/error/message")
                        .and_then(Value::as_str)
                        .unwrap_or("the turn failed")
                        .to_string(),
                ),
                other => {
                    return Err(violation(format!(
                        "turn/completed with unknown status {other}"
                    )));
                }
            };
            Ok(CodexNotification::TurnCompleted {
                turn_id: turn_id(),
                status,
            })
        }
        "item/started" => Ok(CodexNotification::ItemStarted(parse_item(
            params.get("item"),
        )?)),
        "item/completed" => Ok(CodexNotification::ItemCompleted(parse_item(
            params.get("item"),
        )?)),
        "serverRequest/resolved" => {
            let id = params
                .get("requestId")
                .ok_or_else(|| violation("serverRequest/resolved without requestId"))?;
            Ok(CodexNotification::ServerRequestResolved {
                request_key: RpcId::from_json(id)?.request_key(),
            })
        }
        "error" => Ok(CodexNotification::Error {
            message: params
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("the provider reported an error")
                .to_string(),
        }),
        "item/agentMessage/delta" => Ok(CodexNotification::AgentMessageDelta {
            delta: params
                .get("delta")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        }),
        "thread/tokenUsage/updated" => {
            let last = params
                .pointer("/tokenUsage/last")
                .ok_or_else(|| violation("thread/tokenUsage/updated without tokenUsage.last"))?;
            let count = |field: &str| last.get(field).and_then(Value::as_u64).unwrap_or(0);
            Ok(CodexNotification::TokenUsage {
                turn_id: params
                    .get("turnId")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                last: nagi_schema::usage::TokenUsage {
                    input_tokens: count("inputTokens"),
                    cached_input_tokens: count("cachedInputTokens"),
                    output_tokens: count("outputTokens"),
                    reasoning_output_tokens: count("reasoningOutputTokens"),
                    cost_micro_usd: None,
                },
            })
        }
        _ => Ok(CodexNotification::Other),
    }
}

fn parse_item(item: Option<&Value>) -> Result<CodexItem, CodexCodecError> {
    let item = item
        .and_then(Value::as_object)
        .ok_or_else(|| violation("item notification without an item"))?;
    let text = |field: &str| item.get(field).and_then(Value::as_str).map(str::to_string);
    Ok(match item.get("type").and_then(Value::as_str) {
        Some("agentMessage") => CodexItem::AgentMessage {
            text: text("text").unwrap_or_default(),
        },
        Some("commandExecution") => CodexItem::CommandExecution {
            command: command_text(item),
            output: text("aggregatedOutput"),
            exit_code: item.get("exitCode").and_then(Value::as_i64),
            status: text("status").unwrap_or_default(),
        },
        Some("fileChange") => CodexItem::FileChange {
            id: text("id").unwrap_or_default(),
            paths: item
                .get("changes")
                .and_then(Value::as_array)
                .map(|changes| {
                    changes
                        .iter()
                        .filter_map(|change| change.get("path").and_then(Value::as_str))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            status: text("status").unwrap_or_default(),
        },
        Some(_) => CodexItem::Other,
        None => return Err(violation("item without a type")),
    })
}

fn command_text(item: &Map<String, Value>) -> String {
    match item.get("command") {
        Some(Value::String(command)) => command.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_classified_by_id_and_method() {
        assert!(matches!(
            parse_codex_frame(br#"{"id":3,"result":{"thread":{"id":"t"}}}"#).unwrap(),
            CodexFrame::Response {
                id: RpcId::Number(3),
                outcome: Ok(_)
            }
        ));
        assert!(matches!(
            parse_codex_frame(br#"{"id":"a","method":"currentTime/read","params":{}}"#).unwrap(),
            CodexFrame::Request {
                id: RpcId::String(_),
                ..
            }
        ));
        assert!(matches!(
            parse_codex_frame(br#"{"method":"turn/started","params":{"turn":{"id":"u"}}}"#)
                .unwrap(),
            CodexFrame::Notification { .. }
        ));
        assert!(parse_codex_frame(b"garbage").is_err());
        assert!(parse_codex_frame(b"[1,2]").is_err());
        assert!(parse_codex_frame(br#"{"id":1.5,"result":{}}"#).is_err());
        assert!(parse_codex_frame(br#"{"id":1}"#).is_err());
    }

    #[test]
    fn request_keys_name_the_id_type() {
        assert_eq!(RpcId::Number(7).request_key(), "number:7");
        assert_eq!(RpcId::String("x".into()).request_key(), "string:x");
    }

    #[test]
    fn turn_status_outside_the_contract_is_a_violation() {
        let params = json!({"turn": {"id": "u", "status": "paused"}});
        assert!(parse_notification("turn/completed", &params).is_err());
        let params = json!({"turn": {"id": "u", "status": "failed", "error": {"message": "boom"}}});
        assert_eq!(
            parse_notification("turn/completed", &params).unwrap(),
            CodexNotification::TurnCompleted {
                turn_id: Some("u".into()),
                status: CodexTurnStatus::Failed("boom".into())
            }
        );
    }

    #[test]
    fn questions_are_bounded_and_defaulted() {
        let params =
            json!({"questions": [{"id": "q1", "question": "Which?", "options": [{"label": "a"}]}]});
        let CodexServerRequest::UserInput { questions } =
            parse_server_request("item/tool/requestUserInput", &params).unwrap()
        else {
            panic!("expected questions")
        };
        assert_eq!(questions[0].header, "Question");
        assert_eq!(questions[0].options[0].label, "a");
        let five: Vec<Value> = (0..5)
            .map(|n| json!({"id": format!("q{n}"), "question": "?"}))
            .collect();
        assert!(
            parse_server_request("item/tool/requestUserInput", &json!({"questions": five}))
                .is_err()
        );
        assert!(
            parse_server_request("item/tool/requestUserInput", &json!({"questions": []})).is_err()
        );
    }

    #[test]
    fn an_agent_message_delta_carries_its_piece_of_text() {
        let params =
            serde_json::json!({"threadId": "t", "turnId": "u", "itemId": "i", "delta": "Hel"});
        assert!(matches!(
            parse_notification("item/agentMessage/delta", &params).unwrap(),
            CodexNotification::AgentMessageDelta { delta } if delta == "Hel"
        ));
    }
}
