//! Builds the HTTP reply for one request: a server-sent-event stream (or, for a non-streaming
//! request, one JSON body) in the API's own event vocabulary.

use serde_json::{Value, json};

use super::conversation::{ConversationDigest, ModelApi};
use super::scenario::{Fault, Scenario, Step, call_id_for_step};
use super::vocabulary::{CodexCall, claude_call, codex_call, opencode_call};

/// What the mock answers with.
#[derive(Debug, Clone, Copy)]
pub enum Answer<'scenario> {
    /// A scripted step.
    Step { index: usize, step: &'scenario Step },
    /// An auxiliary request (no tools offered, e.g. OpenCode's title call): plain text.
    Auxiliary { text: &'scenario str },
    /// The conversation is past the last step: a 400 error, so the CLI fails the turn visibly.
    Exhausted,
}

/// An HTTP reply.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

const EXHAUSTED_MESSAGE: &str =
    "mock model: the scenario has no step left for this conversation (check the scenario file)";

/// What one reply says, independent of the API.
struct Content {
    text: Option<String>,
    call: Option<usize>,
}

fn content_of(answer: &Answer<'_>) -> Content {
    match answer {
        Answer::Step { index, step } => Content {
            text: step.text.clone(),
            call: step.call.as_ref().map(|_| *index),
        },
        Answer::Auxiliary { text } => Content {
            text: Some((*text).to_owned()),
            call: None,
        },
        Answer::Exhausted => Content {
            text: None,
            call: None,
        },
    }
}

/// Builds the reply for `answer` in the vocabulary of `api`.
pub fn build_reply(
    api: ModelApi,
    scenario: &Scenario,
    answer: Answer<'_>,
    digest: &ConversationDigest,
    body: &Value,
    sequence: u64,
) -> Reply {
    if let Answer::Exhausted = answer {
        return exhausted_reply(api);
    }
    if let Answer::Step { step, .. } = answer
        && step.fault == Some(Fault::ServerError)
    {
        return server_error_reply(api);
    }
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("mock-model")
        .to_owned();
    let content = content_of(&answer);
    let step = match answer {
        Answer::Step { step, .. } => Some(step),
        _ => None,
    };
    match api {
        ModelApi::Responses => responses_stream(scenario, step, content, digest, sequence),
        ModelApi::Messages if digest.stream => {
            messages_stream(scenario, step, content, &model, sequence)
        }
        ModelApi::Messages => messages_json(scenario, step, content, &model, sequence),
        ModelApi::ChatCompletions => chat_stream(scenario, step, content, &model, sequence),
    }
}

fn exhausted_reply(api: ModelApi) -> Reply {
    let body = match api {
        ModelApi::Messages => json!({
            "type": "error",
            "error": {"type": "invalid_request_error", "message": EXHAUSTED_MESSAGE}
        }),
        ModelApi::Responses | ModelApi::ChatCompletions => json!({
            "error": {"type": "invalid_request_error", "code": "mock_scenario_exhausted",
                      "message": EXHAUSTED_MESSAGE}
        }),
    };
    Reply {
        status: 400,
        content_type: "application/json",
        body: body.to_string().into_bytes(),
    }
}

fn server_error_reply(api: ModelApi) -> Reply {
    let message = "mock model: scripted server error";
    let body = match api {
        ModelApi::Messages => {
            json!({"type": "error", "error": {"type": "api_error", "message": message}})
        }
        ModelApi::Responses | ModelApi::ChatCompletions => {
            json!({"error": {"type": "server_error", "message": message}})
        }
    };
    Reply {
        status: 500,
        content_type: "application/json",
        body: body.to_string().into_bytes(),
    }
}

fn push_event(out: &mut Vec<u8>, event_name: Option<&str>, data: &Value) {
    if let Some(name) = event_name {
        out.extend_from_slice(format!("event: {name}\n").as_bytes());
    }
    out.extend_from_slice(format!("data: {data}\n\n").as_bytes());
}

fn sse(body: Vec<u8>, step: Option<&Step>) -> Reply {
    let body = match step.and_then(|step| step.fault) {
        Some(fault @ (Fault::TruncatedStream | Fault::NoMessageStart)) => drop_events(&body, fault),
        _ => body,
    };
    Reply {
        status: 200,
        content_type: "text/event-stream",
        body,
    }
}

/// Removes the events a stream fault leaves out. Works on the serialised stream, which this
/// module writes itself as `[event: NAME\n]data: JSON\n\n` blocks.
fn drop_events(body: &[u8], fault: Fault) -> Vec<u8> {
    let text = String::from_utf8_lossy(body);
    let mut kept = String::new();
    for block in text.split_terminator("\n\n") {
        let data = block
            .lines()
            .find_map(|line| line.strip_prefix("data: "))
            .unwrap_or_default();
        let event: Value = serde_json::from_str(data).unwrap_or(Value::Null);
        let kind = event["type"].as_str().unwrap_or_default();
        let drop = match fault {
            Fault::NoMessageStart => kind == "message_start",
            Fault::TruncatedStream => {
                matches!(
                    kind,
                    "response.completed" | "message_delta" | "message_stop"
                ) || data == "[DONE]"
                    || event["choices"].as_array().is_some_and(|choices| {
                        choices.is_empty() || !choices[0]["finish_reason"].is_null()
                    })
            }
            Fault::ServerError => false,
        };
        if !drop {
            kept.push_str(block);
            kept.push_str("\n\n");
        }
    }
    kept.into_bytes()
}

/// OpenAI Responses API, for Codex: `response.created`, then per output item
/// `response.output_item.added` / (`response.output_text.delta`) / `response.output_item.done`,
/// then `response.completed` with usage.
fn responses_stream(
    scenario: &Scenario,
    step: Option<&Step>,
    content: Content,
    digest: &ConversationDigest,
    sequence: u64,
) -> Reply {
    let response_id = format!("resp_mock_{sequence}");
    let mut out = Vec::new();
    let emit = |out: &mut Vec<u8>, mut data: Value| {
        let kind = data["type"].as_str().unwrap_or_default().to_owned();
        data["sequence_number"] = json!(0);
        push_event(out, Some(&kind), &data);
    };
    emit(
        &mut out,
        json!({"type": "response.created",
        "response": {"id": response_id, "object": "response", "status": "in_progress", "output": []}}),
    );
    let mut output_index = 0;
    if let Some(text) = &content.text {
        let item_id = format!("msg_mock_{sequence}");
        let item = json!({"type": "message", "id": item_id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]});
        emit(
            &mut out,
            json!({"type": "response.output_item.added", "output_index": output_index,
            "item": {"type": "message", "id": item_id, "role": "assistant", "status": "in_progress", "content": []}}),
        );
        emit(
            &mut out,
            json!({"type": "response.output_text.delta", "item_id": item_id,
            "output_index": output_index, "content_index": 0, "delta": text}),
        );
        emit(
            &mut out,
            json!({"type": "response.output_item.done", "output_index": output_index, "item": item}),
        );
        output_index += 1;
    }
    if let (Some(index), Some(call)) = (content.call, step.and_then(|step| step.call.as_ref())) {
        let call_id = call_id_for_step(index);
        let item = match codex_call(scenario, call, digest) {
            CodexCall::Function { name, arguments } => json!({"type": "function_call",
                "id": format!("fc_mock_{sequence}"), "call_id": call_id, "name": name,
                "arguments": arguments.to_string(), "status": "completed"}),
            CodexCall::Custom { name, input } => json!({"type": "custom_tool_call",
                "id": format!("ctc_mock_{sequence}"), "call_id": call_id, "name": name,
                "input": input, "status": "completed"}),
        };
        emit(
            &mut out,
            json!({"type": "response.output_item.done", "output_index": output_index, "item": item}),
        );
    }
    emit(
        &mut out,
        json!({"type": "response.completed", "response": {
        "id": response_id, "object": "response", "status": "completed",
        "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 15}}}),
    );
    sse(out, step)
}

/// The content blocks of an Anthropic message.
fn messages_blocks(scenario: &Scenario, step: Option<&Step>, content: &Content) -> Vec<Value> {
    let mut blocks = Vec::new();
    if let Some(text) = &content.text {
        blocks.push(json!({"type": "text", "text": text}));
    }
    if let (Some(index), Some(call)) = (content.call, step.and_then(|step| step.call.as_ref())) {
        let (name, input) = claude_call(scenario, call);
        blocks.push(json!({"type": "tool_use", "id": call_id_for_step(index), "name": name, "input": input}));
    }
    blocks
}

fn stop_reason(content: &Content) -> &'static str {
    if content.call.is_some() {
        "tool_use"
    } else {
        "end_turn"
    }
}

/// Anthropic Messages API, streaming, for Claude Code: `message_start`, per block
/// `content_block_start` / `content_block_delta` / `content_block_stop`, `message_delta`
/// (stop reason), `message_stop`.
fn messages_stream(
    scenario: &Scenario,
    step: Option<&Step>,
    content: Content,
    model: &str,
    sequence: u64,
) -> Reply {
    let mut out = Vec::new();
    let emit = |out: &mut Vec<u8>, data: Value| {
        let kind = data["type"].as_str().unwrap_or_default().to_owned();
        push_event(out, Some(&kind), &data);
    };
    emit(
        &mut out,
        json!({"type": "message_start", "message": {
        "id": format!("msg_mock_{sequence}"), "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 1}}}),
    );
    for (index, block) in messages_blocks(scenario, step, &content)
        .into_iter()
        .enumerate()
    {
        match block["type"].as_str() {
            Some("text") => {
                emit(
                    &mut out,
                    json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}}),
                );
                emit(
                    &mut out,
                    json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": block["text"]}}),
                );
            }
            _ => {
                emit(
                    &mut out,
                    json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}),
                );
                emit(
                    &mut out,
                    json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": block["input"].to_string()}}),
                );
            }
        }
        emit(
            &mut out,
            json!({"type": "content_block_stop", "index": index}),
        );
    }
    emit(
        &mut out,
        json!({"type": "message_delta",
        "delta": {"stop_reason": stop_reason(&content), "stop_sequence": null},
        "usage": {"output_tokens": 5}}),
    );
    emit(&mut out, json!({"type": "message_stop"}));
    sse(out, step)
}

/// Anthropic Messages API, non-streaming (Claude Code falls back to this when a stream breaks).
fn messages_json(
    scenario: &Scenario,
    step: Option<&Step>,
    content: Content,
    model: &str,
    sequence: u64,
) -> Reply {
    let body = json!({
        "id": format!("msg_mock_{sequence}"), "type": "message", "role": "assistant", "model": model,
        "content": messages_blocks(scenario, step, &content),
        "stop_reason": stop_reason(&content), "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 5}
    });
    Reply {
        status: 200,
        content_type: "application/json",
        body: body.to_string().into_bytes(),
    }
}

/// OpenAI Chat Completions, streaming, for OpenCode: `chat.completion.chunk`s with content and
/// `tool_calls` deltas, a `finish_reason` chunk, a usage chunk and `[DONE]`.
fn chat_stream(
    scenario: &Scenario,
    step: Option<&Step>,
    content: Content,
    model: &str,
    sequence: u64,
) -> Reply {
    let id = format!("chatcmpl-mock-{sequence}");
    let chunk = |delta: Value, finish_reason: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 0, "model": model,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})
    };
    let mut out = Vec::new();
    push_event(
        &mut out,
        None,
        &chunk(json!({"role": "assistant", "content": ""}), Value::Null),
    );
    if let Some(text) = &content.text {
        push_event(
            &mut out,
            None,
            &chunk(json!({"content": text}), Value::Null),
        );
    }
    let mut finish_reason = "stop";
    if let (Some(index), Some(call)) = (content.call, step.and_then(|step| step.call.as_ref())) {
        let (name, arguments) = opencode_call(scenario, call);
        push_event(
            &mut out,
            None,
            &chunk(
                json!({"tool_calls": [{"index": 0, "id": call_id_for_step(index),
            "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}]}),
                Value::Null,
            ),
        );
        finish_reason = "tool_calls";
    }
    push_event(&mut out, None, &chunk(json!({}), json!(finish_reason)));
    push_event(
        &mut out,
        None,
        &json!({"id": id, "object": "chat.completion.chunk", "created": 0,
        "model": model, "choices": [],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}),
    );
    out.extend_from_slice(b"data: [DONE]\n\n");
    sse(out, step)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply_for(api: ModelApi, scenario_json: &str, body: Value) -> (Reply, String) {
        let scenario = Scenario::from_json(scenario_json).expect("valid scenario");
        let digest = ConversationDigest::read(api, &body);
        let step = &scenario.steps[0];
        let reply = build_reply(
            api,
            &scenario,
            Answer::Step { index: 0, step },
            &digest,
            &body,
            1,
        );
        let text = String::from_utf8(reply.body.clone()).expect("utf-8 reply");
        (reply, text)
    }

    #[test]
    fn responses_stream_ends_with_response_completed_unless_truncated() {
        let body = json!({"stream": true, "tools": [{"type": "function", "name": "exec_command"}]});
        let (_, whole) = reply_for(
            ModelApi::Responses,
            r#"{"steps":[{"text":"hi"}]}"#,
            body.clone(),
        );
        assert!(whole.contains("event: response.output_item.done"));
        let completed_at = whole
            .find("event: response.completed")
            .expect("a response.completed event");
        assert!(
            completed_at
                > whole
                    .find("event: response.output_item.done")
                    .expect("an item")
        );
        let (_, truncated) = reply_for(
            ModelApi::Responses,
            r#"{"steps":[{"text":"hi","fault":"truncated_stream"}]}"#,
            body,
        );
        assert!(truncated.contains("event: response.output_item.done"));
        assert!(!truncated.contains("response.completed"));
    }

    #[test]
    fn messages_fault_drops_message_start_and_non_streaming_gets_json() {
        let streaming = json!({"stream": true, "model": "m", "tools": [{"name": "Read"}]});
        let (_, text) = reply_for(
            ModelApi::Messages,
            r#"{"steps":[{"text":"hi","fault":"no_message_start"}]}"#,
            streaming,
        );
        assert!(!text.contains("message_start"));
        assert!(text.contains("event: content_block_stop"));
        let plain = json!({"stream": false, "model": "m", "tools": [{"name": "Read"}]});
        let (reply, text) = reply_for(
            ModelApi::Messages,
            r#"{"steps":[{"call":{"read":{"path":"/a"}}}]}"#,
            plain,
        );
        assert_eq!(reply.content_type, "application/json");
        let message: Value = serde_json::from_str(&text).expect("one JSON message");
        assert_eq!(message["stop_reason"], "tool_use");
        assert_eq!(message["content"][0]["name"], "Read");
        assert_eq!(message["content"][0]["input"]["file_path"], "/a");
    }

    #[test]
    fn chat_tool_call_stream_finishes_with_tool_calls_and_server_error_is_500() {
        let body =
            json!({"stream": true, "tools": [{"type": "function", "function": {"name": "read"}}]});
        let (_, text) = reply_for(
            ModelApi::ChatCompletions,
            r#"{"steps":[{"call":{"read":{"path":"/a"}}}]}"#,
            body.clone(),
        );
        assert!(text.contains(r#""finish_reason":"tool_calls""#));
        assert!(text.contains(r#""id":"call_mock_0""#));
        assert!(text.ends_with("data: [DONE]\n\n"));
        let (reply, _) = reply_for(
            ModelApi::ChatCompletions,
            r#"{"steps":[{"text":"x","fault":"server_error"}]}"#,
            body,
        );
        assert_eq!(reply.status, 500);
    }
}
