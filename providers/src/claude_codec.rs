//! Pure frame parsing and encoding for Claude Code's stream-json protocol
//! (`claude -p --input-format stream-json --output-format stream-json`). No I/O here.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::framing::{truncate_utf8, visible_text};
use crate::spec::{Question, QuestionOption};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("claude protocol violation: {0}")]
pub struct ClaudeCodecError(pub String);

fn violation(message: impl Into<String>) -> ClaudeCodecError {
    ClaudeCodecError(message.into())
}

/// One block of an assistant or user message, reduced to what the transcript shows.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// A tool's result, for the call `tool_use_id`; `is_error` when the tool failed.
    ToolResult {
        tool_use_id: String,
        text: String,
        is_error: bool,
    },
}

/// A `can_use_tool` control request: Claude asks whether a tool may run.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolPermissionRequest {
    pub tool_name: String,
    pub input: Value,
    pub description: Option<String>,
    /// `permission_suggestions` as sent (absent in plan mode).
    pub suggestions: Vec<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ClaudeFrame {
    /// `system`/`init`: sent before every turn.
    SystemInit {
        session_id: String,
        permission_mode: String,
        tools: Vec<String>,
        mcp_servers: Vec<Value>,
    },
    /// Any other `system` frame (`ui_invalidate`, `permission_denied`, ...).
    System {
        subtype: String,
        tool_name: Option<String>,
    },
    Assistant {
        content: Vec<ContentBlock>,
    },
    /// A user frame: tool results, or our own prompt replayed (`isReplay`).
    User {
        content: Vec<ContentBlock>,
        is_replay: bool,
    },
    Result {
        subtype: String,
        is_error: bool,
        text: Option<String>,
        /// The turn's tokens (`usage`, the sum of the turn's API requests) and, from Claude
        /// Code versions that send `model_usage_since_last_result`, the turn's cost.
        usage: Option<nagi_schema::usage::TokenUsage>,
        /// `total_cost_usd`: the session's cost so far (it survives a resume).
        session_cost_usd: Option<f64>,
    },
    ToolPermission {
        request_id: String,
        request: ToolPermissionRequest,
    },
    /// A control request other than `can_use_tool`.
    OtherControlRequest {
        request_id: String,
        subtype: String,
    },
    ControlResponse {
        request_id: String,
        outcome: Result<Value, String>,
    },
    ControlCancel {
        request_id: String,
    },
    /// `stream_event` with a text delta of the main conversation (not a subagent's): a
    /// piece of the agent's message as the model streams it (`--include-partial-messages`).
    TextDelta {
        text: String,
    },
    Other {
        frame_type: String,
    },
}

/// A result frame's turn usage. Anthropic counts cache reads and writes apart from
/// `input_tokens`; nagi's input includes them.
fn result_usage(frame: &Value) -> Option<nagi_schema::usage::TokenUsage> {
    let usage = frame.get("usage")?;
    let count = |field: &str| usage.get(field).and_then(Value::as_u64).unwrap_or(0);
    let cached = count("cache_read_input_tokens");
    let turn_cost = frame
        .get("model_usage_since_last_result")
        .and_then(Value::as_object)
        .map(|models| {
            models
                .values()
                .filter_map(|model| model.get("costUSD").and_then(Value::as_f64))
                .sum::<f64>()
        });
    Some(nagi_schema::usage::TokenUsage {
        input_tokens: count("input_tokens") + cached + count("cache_creation_input_tokens"),
        cached_input_tokens: cached,
        output_tokens: count("output_tokens"),
        reasoning_output_tokens: usage
            .pointer("/output_tokens_details/thinking_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        cost_micro_usd: turn_cost.and_then(nagi_schema::usage::micro_usd),
    })
}

fn string_field(value: &Value, field: &str) -> Option<String> {
    value.get(field).and_then(Value::as_str).map(str::to_string)
}

/// Parses one stream-json line from Claude Code.
pub fn parse_claude_frame(bytes: &[u8]) -> Result<ClaudeFrame, ClaudeCodecError> {
    let frame: Value =
        serde_json::from_slice(bytes).map_err(|error| violation(format!("not JSON: {error}")))?;
    if !frame.is_object() {
        return Err(violation("frame is not a JSON object"));
    }
    let frame_type =
        string_field(&frame, "type").ok_or_else(|| violation("frame without a type"))?;
    match frame_type.as_str() {
        "system" => {
            let subtype = string_field(&frame, "subtype").unwrap_or_default();
            if subtype == "init" {
                let session_id = string_field(&frame, "session_id")
                    .filter(|id| !id.is_empty())
                    .ok_or_else(|| violation("system/init without session_id"))?;
                let tools = frame
                    .get("tools")
                    .and_then(Value::as_array)
                    .ok_or_else(|| violation("system/init without a tools list"))?
                    .iter()
                    .map(|tool| {
                        tool.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| violation("a tool name is not a string"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let mcp_servers = frame
                    .get("mcp_servers")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let permission_mode = string_field(&frame, "permissionMode").unwrap_or_default();
                Ok(ClaudeFrame::SystemInit {
                    session_id,
                    permission_mode,
                    tools,
                    mcp_servers,
                })
            } else {
                Ok(ClaudeFrame::System {
                    subtype,
                    tool_name: string_field(&frame, "tool_name"),
                })
            }
        }
        "assistant" => Ok(ClaudeFrame::Assistant {
            content: parse_content(frame.pointer("/message/content"))?,
        }),
        "user" => Ok(ClaudeFrame::User {
            content: parse_content(frame.pointer("/message/content"))?,
            is_replay: frame
                .get("isReplay")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }),
        "result" => Ok(ClaudeFrame::Result {
            subtype: string_field(&frame, "subtype")
                .ok_or_else(|| violation("result without subtype"))?,
            is_error: frame
                .get("is_error")
                .and_then(Value::as_bool)
                .ok_or_else(|| violation("result without is_error"))?,
            text: string_field(&frame, "result"),
            usage: result_usage(&frame),
            session_cost_usd: frame.get("total_cost_usd").and_then(Value::as_f64),
        }),
        "control_request" => {
            let request_id = string_field(&frame, "request_id")
                .ok_or_else(|| violation("control request without request_id"))?;
            let request = frame
                .get("request")
                .ok_or_else(|| violation("control request without a body"))?;
            let subtype = string_field(request, "subtype").unwrap_or_default();
            if subtype != "can_use_tool" {
                return Ok(ClaudeFrame::OtherControlRequest {
                    request_id,
                    subtype,
                });
            }
            let tool_name = string_field(request, "tool_name")
                .ok_or_else(|| violation("can_use_tool without tool_name"))?;
            Ok(ClaudeFrame::ToolPermission {
                request_id,
                request: ToolPermissionRequest {
                    tool_name,
                    input: request.get("input").cloned().unwrap_or_else(|| json!({})),
                    description: string_field(request, "description"),
                    suggestions: request
                        .get("permission_suggestions")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                },
            })
        }
        "control_response" => {
            let response = frame
                .get("response")
                .ok_or_else(|| violation("control response without a body"))?;
            let request_id = string_field(response, "request_id")
                .ok_or_else(|| violation("control response without request_id"))?;
            let outcome = match string_field(response, "subtype").as_deref() {
                Some("success") => Ok(response.get("response").cloned().unwrap_or(Value::Null)),
                Some("error") => Err(string_field(response, "error")
                    .unwrap_or_else(|| "unspecified error".to_string())),
                _ => return Err(violation("control response with an unknown subtype")),
            };
            Ok(ClaudeFrame::ControlResponse {
                request_id,
                outcome,
            })
        }
        "control_cancel_request" => Ok(ClaudeFrame::ControlCancel {
            request_id: string_field(&frame, "request_id")
                .ok_or_else(|| violation("cancel without request_id"))?,
        }),
        "stream_event" => {
            let main_conversation = frame.get("parent_tool_use_id").is_none_or(Value::is_null);
            let text = frame
                .pointer("/event/delta")
                .filter(|delta| delta.get("type").and_then(Value::as_str) == Some("text_delta"))
                .and_then(|delta| delta.get("text"))
                .and_then(Value::as_str);
            match text {
                Some(text) if main_conversation => Ok(ClaudeFrame::TextDelta {
                    text: text.to_string(),
                }),
                _ => Ok(ClaudeFrame::Other { frame_type }),
            }
        }
        _ => Ok(ClaudeFrame::Other { frame_type }),
    }
}

fn parse_content(content: Option<&Value>) -> Result<Vec<ContentBlock>, ClaudeCodecError> {
    match content {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(text)) => Ok(vec![ContentBlock::Text(text.clone())]),
        Some(Value::Array(blocks)) => Ok(blocks
            .iter()
            .filter_map(|block| match block.get("type").and_then(Value::as_str) {
                Some("text") => string_field(block, "text").map(ContentBlock::Text),
                Some("tool_use") => Some(ContentBlock::ToolUse {
                    id: string_field(block, "id").unwrap_or_default(),
                    name: string_field(block, "name").unwrap_or_default(),
                    input: block.get("input").cloned().unwrap_or(Value::Null),
                }),
                Some("tool_result") => Some(ContentBlock::ToolResult {
                    tool_use_id: string_field(block, "tool_use_id").unwrap_or_default(),
                    text: tool_result_text(block.get("content")),
                    is_error: block.get("is_error").and_then(Value::as_bool) == Some(true),
                }),
                _ => None,
            })
            .collect()),
        Some(_) => Err(violation("message content is neither text nor a list")),
    }
}

fn tool_result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The questions of an `AskUserQuestion` input, validated as contract §8.1 requires:
/// 1–4 questions with unique texts, headers ≤ 128 bytes, 2–4 options with unique labels and
/// descriptions, and an explicit `multiSelect`. The question id is the question text.
pub fn parse_ask_user_question(input: &Value) -> Result<Vec<Question>, ClaudeCodecError> {
    let list = input
        .get("questions")
        .and_then(Value::as_array)
        .ok_or_else(|| violation("AskUserQuestion without questions"))?;
    if list.is_empty() || list.len() > 4 {
        return Err(violation(format!(
            "AskUserQuestion carries {} questions (1 to 4)",
            list.len()
        )));
    }
    let mut questions: Vec<Question> = Vec::new();
    for entry in list {
        let text = string_field(entry, "question")
            .filter(|text| !text.trim().is_empty())
            .ok_or_else(|| violation("a question has no text"))?;
        if questions.iter().any(|question| question.id == text) {
            return Err(violation("two questions have the same text"));
        }
        let header = string_field(entry, "header").unwrap_or_else(|| "Question".to_string());
        if header.len() > 128 {
            return Err(violation("a question header is longer than 128 bytes"));
        }
        let multiple = entry
            .get("multiSelect")
            .and_then(Value::as_bool)
            .ok_or_else(|| violation("a question has no multiSelect"))?;
        let options = entry
            .get("options")
            .and_then(Value::as_array)
            .ok_or_else(|| violation("a question has no options"))?;
        if options.len() < 2 || options.len() > 4 {
            return Err(violation(format!(
                "a question has {} options (2 to 4)",
                options.len()
            )));
        }
        let mut parsed: Vec<QuestionOption> = Vec::new();
        for option in options {
            let label = string_field(option, "label")
                .filter(|label| !label.trim().is_empty())
                .ok_or_else(|| violation("an option has no label"))?;
            let description = string_field(option, "description")
                .ok_or_else(|| violation("an option has no description"))?;
            if parsed.iter().any(|existing| existing.label == label) {
                return Err(violation("two options have the same label"));
            }
            parsed.push(QuestionOption {
                label: visible_text(&label),
                description: visible_text(&description),
            });
        }
        questions.push(Question {
            id: text.clone(),
            header: truncate_utf8(&header, 128).to_string(),
            prompt: visible_text(&text),
            options: parsed,
            multiple,
            custom_allowed: true,
        });
    }
    Ok(questions)
}

/// Permission suggestions that may be applied for "approve for session": only those scoped
/// to the session. Suggestions that would write settings files (`localSettings`,
/// `userSettings`, `projectSettings`) outlive the run and are never applied.
pub fn session_scoped_suggestions(suggestions: &[Value]) -> Vec<Value> {
    suggestions
        .iter()
        .filter(|suggestion| {
            suggestion.get("destination").and_then(Value::as_str) == Some("session")
        })
        .cloned()
        .collect()
}

fn encode(value: Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&value).expect("JSON values always serialize");
    bytes.push(b'\n');
    bytes
}

pub fn encode_control_request(request_id: &str, subtype: &str) -> Vec<u8> {
    encode(
        json!({"type": "control_request", "request_id": request_id, "request": {"subtype": subtype}}),
    )
}

pub fn encode_user_message(text: &str) -> Vec<u8> {
    encode(
        json!({"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": null}),
    )
}

pub fn encode_control_success(request_id: &str, response: Value) -> Vec<u8> {
    encode(
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": request_id, "response": response}}),
    )
}

pub fn encode_control_error(request_id: &str, message: &str) -> Vec<u8> {
    encode(
        json!({"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": message}}),
    )
}

/// `updatedInput` for answered questions: the original questions plus
/// `answers: {<question text>: "a, b"}`.
pub fn answered_input(input: &Value, answers: &BTreeMap<String, Vec<String>>) -> Value {
    let joined: serde_json::Map<String, Value> = answers
        .iter()
        .map(|(question, chosen)| (question.clone(), json!(chosen.join(", "))))
        .collect();
    json!({"questions": input.get("questions").cloned().unwrap_or(Value::Null), "answers": joined})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_frames_carry_session_mode_and_tools() {
        let frame = br#"{"type":"system","subtype":"init","session_id":"s1","tools":["Read","Glob"],"mcp_servers":[],"permissionMode":"plan"}"#;
        assert_eq!(
            parse_claude_frame(frame).unwrap(),
            ClaudeFrame::SystemInit {
                session_id: "s1".into(),
                permission_mode: "plan".into(),
                tools: vec!["Read".into(), "Glob".into()],
                mcp_servers: vec![]
            }
        );
        assert!(parse_claude_frame(br#"{"type":"system","subtype":"init","tools":[]}"#).is_err());
    }

    #[test]
    fn control_frames_are_recognised() {
        let request = br#"{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"}}}"#;
        assert!(matches!(
            parse_claude_frame(request).unwrap(),
            ClaudeFrame::ToolPermission { .. }
        ));
        let response = br#"{"type":"control_response","response":{"subtype":"success","request_id":"managed-1","response":{}}}"#;
        assert!(matches!(
            parse_claude_frame(response).unwrap(),
            ClaudeFrame::ControlResponse { outcome: Ok(_), .. }
        ));
        assert!(parse_claude_frame(b"{\"no\":\"type\"}").is_err());
        assert!(parse_claude_frame(b"nonsense").is_err());
    }

    #[test]
    fn ask_user_question_rules() {
        let good = json!({"questions": [{"question": "Color?", "header": "Color", "multiSelect": false,
            "options": [{"label": "Red", "description": "r"}, {"label": "Blue", "description": "b"}]}]});
        let questions = parse_ask_user_question(&good).unwrap();
        assert_eq!(questions[0].id, "Color?");
        let one_option = json!({"questions": [{"question": "Q", "multiSelect": false, "options": [{"label": "a", "description": ""}]}]});
        assert!(parse_ask_user_question(&one_option).is_err());
        let no_multi = json!({"questions": [{"question": "Q", "options": [{"label": "a", "description": ""}, {"label": "b", "description": ""}]}]});
        assert!(parse_ask_user_question(&no_multi).is_err());
    }

    #[test]
    fn only_session_suggestions_survive() {
        let suggestions = vec![
            json!({"type": "addRules", "destination": "localSettings"}),
            json!({"type": "setMode", "destination": "session"}),
        ];
        assert_eq!(session_scoped_suggestions(&suggestions).len(), 1);
    }

    #[test]
    fn a_text_delta_of_the_main_conversation_is_streamed_and_a_subagents_is_not() {
        let main = br#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}},"parent_tool_use_id":null,"session_id":"s"}"#;
        assert_eq!(
            parse_claude_frame(main).unwrap(),
            ClaudeFrame::TextDelta { text: "Hel".into() }
        );
        let subagent = br#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}},"parent_tool_use_id":"toolu_1","session_id":"s"}"#;
        assert!(matches!(
            parse_claude_frame(subagent).unwrap(),
            ClaudeFrame::Other { .. }
        ));
        let thinking = br#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}},"session_id":"s"}"#;
        assert!(matches!(
            parse_claude_frame(thinking).unwrap(),
            ClaudeFrame::Other { .. }
        ));
    }
}
