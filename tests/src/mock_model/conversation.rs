//! Reads the conversation history out of a request body, in each model API's own shape.
//!
//! The mock is stateless: it finds its place in the scenario from the history the CLI sends
//! (which tool calls were answered, which final texts were already said). That keeps it right
//! across retries, resumed sessions and restarts of either process.

use serde_json::Value;

/// Which model API a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelApi {
    /// OpenAI Responses API (`POST /v1/responses`), spoken by Codex.
    Responses,
    /// Anthropic Messages API (`POST /v1/messages`), spoken by Claude Code.
    Messages,
    /// OpenAI Chat Completions (`POST /v1/chat/completions`), spoken by OpenCode.
    ChatCompletions,
}

/// A tool result found in a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    pub call_id: String,
    /// The result flattened to text (structured parts joined with newlines).
    pub content: String,
}

/// What the mock needs to know about a request's conversation.
#[derive(Debug, Clone, Default)]
pub struct ConversationDigest {
    pub tool_results: Vec<ToolResult>,
    pub assistant_texts: Vec<String>,
    pub user_texts: Vec<String>,
    /// Names of the tools the request offers the model (empty for title calls).
    pub tool_names: Vec<String>,
    pub stream: bool,
    /// How a Codex (Responses API) request offers `apply_patch`, if it does.
    pub codex_apply_patch_kind: Option<ApplyPatchKind>,
}

/// How a Codex request offers `apply_patch`: as a JSON-argument function or as a freeform
/// "custom" tool taking the raw patch text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyPatchKind {
    Function,
    Custom,
}

impl ConversationDigest {
    /// Reads a request body of the given API. Unknown shapes yield an empty digest rather than
    /// an error: the request is still logged and answered from the first step.
    pub fn read(api: ModelApi, body: &Value) -> ConversationDigest {
        let mut digest = ConversationDigest {
            stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
            tool_names: tool_names(api, body),
            codex_apply_patch_kind: apply_patch_kind(api, body),
            ..ConversationDigest::default()
        };
        match api {
            ModelApi::Responses => digest.read_responses_input(body),
            ModelApi::Messages => digest.read_messages(body),
            ModelApi::ChatCompletions => digest.read_chat_messages(body),
        }
        digest
    }

    /// Whether the request offers the model a tool of this name.
    pub fn offers_tool(&self, name: &str) -> bool {
        self.tool_names.iter().any(|offered| offered == name)
    }

    fn read_responses_input(&mut self, body: &Value) {
        let Some(items) = body.get("input").and_then(Value::as_array) else {
            return;
        };
        for item in items {
            match item.get("type").and_then(Value::as_str) {
                Some("function_call_output") | Some("custom_tool_call_output") => {
                    if let Some(call_id) = item.get("call_id").and_then(Value::as_str) {
                        self.tool_results.push(ToolResult {
                            call_id: call_id.to_owned(),
                            content: flatten_text(item.get("output").unwrap_or(&Value::Null)),
                        });
                    }
                }
                Some("message") | None => {
                    let text = flatten_text(item.get("content").unwrap_or(&Value::Null));
                    match item.get("role").and_then(Value::as_str) {
                        Some("assistant") => self.assistant_texts.push(text),
                        Some("user") => self.user_texts.push(text),
                        _ => {}
                    }
                }
                _ => {}
            }
        }
    }

    fn read_messages(&mut self, body: &Value) {
        let Some(messages) = body.get("messages").and_then(Value::as_array) else {
            return;
        };
        for message in messages {
            let role = message
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let content = message.get("content").unwrap_or(&Value::Null);
            let mut plain_text = Vec::new();
            match content {
                Value::String(text) => plain_text.push(text.clone()),
                Value::Array(blocks) => {
                    for block in blocks {
                        match block.get("type").and_then(Value::as_str) {
                            Some("text") => {
                                plain_text.push(flatten_text(block));
                            }
                            Some("tool_result") => {
                                if let Some(call_id) =
                                    block.get("tool_use_id").and_then(Value::as_str)
                                {
                                    self.tool_results.push(ToolResult {
                                        call_id: call_id.to_owned(),
                                        content: flatten_text(
                                            block.get("content").unwrap_or(&Value::Null),
                                        ),
                                    });
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            if plain_text.is_empty() {
                continue;
            }
            let text = plain_text.join("\n");
            match role {
                "assistant" => self.assistant_texts.push(text),
                "user" => self.user_texts.push(text),
                _ => {}
            }
        }
    }

    fn read_chat_messages(&mut self, body: &Value) {
        let Some(messages) = body.get("messages").and_then(Value::as_array) else {
            return;
        };
        for message in messages {
            let content = flatten_text(message.get("content").unwrap_or(&Value::Null));
            match message.get("role").and_then(Value::as_str) {
                Some("tool") => {
                    if let Some(call_id) = message.get("tool_call_id").and_then(Value::as_str) {
                        self.tool_results.push(ToolResult {
                            call_id: call_id.to_owned(),
                            content,
                        });
                    }
                }
                Some("assistant") if !content.is_empty() => self.assistant_texts.push(content),
                Some("user") => self.user_texts.push(content),
                _ => {}
            }
        }
    }
}

fn tool_names(api: ModelApi, body: &Value) -> Vec<String> {
    let Some(tools) = body.get("tools").and_then(Value::as_array) else {
        return Vec::new();
    };
    tools
        .iter()
        .filter_map(|tool| {
            let name = match api {
                ModelApi::ChatCompletions => tool.pointer("/function/name"),
                ModelApi::Responses | ModelApi::Messages => tool.get("name"),
            };
            name.and_then(Value::as_str).map(str::to_owned)
        })
        .collect()
}

fn apply_patch_kind(api: ModelApi, body: &Value) -> Option<ApplyPatchKind> {
    if api != ModelApi::Responses {
        return None;
    }
    let tools = body.get("tools")?.as_array()?;
    let tool = tools
        .iter()
        .find(|tool| tool.get("name").and_then(Value::as_str) == Some("apply_patch"))?;
    match tool.get("type").and_then(Value::as_str) {
        Some("custom") => Some(ApplyPatchKind::Custom),
        _ => Some(ApplyPatchKind::Function),
    }
}

/// Flattens a content value (a string, a text part, or a list of parts) to plain text.
pub fn flatten_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(flatten_text)
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Object(object) => {
            if let Some(text) = object.get("text").and_then(Value::as_str) {
                text.to_owned()
            } else if let Some(content) = object.get("content") {
                flatten_text(content)
            } else {
                String::new()
            }
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn responses_input_yields_tool_results_and_texts() {
        let body = json!({
            "stream": true,
            "tools": [{"type":"function","name":"exec_command"}],
            "input": [
                {"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},
                {"type":"function_call","call_id":"call_mock_0","name":"exec_command","arguments":"{}"},
                {"type":"function_call_output","call_id":"call_mock_0","output":"file body"},
                {"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}
            ]
        });
        let digest = ConversationDigest::read(ModelApi::Responses, &body);
        assert!(digest.stream);
        assert!(digest.offers_tool("exec_command"));
        assert_eq!(
            digest.tool_results,
            vec![ToolResult {
                call_id: "call_mock_0".into(),
                content: "file body".into()
            }]
        );
        assert_eq!(digest.assistant_texts, vec!["done".to_owned()]);
        assert_eq!(digest.user_texts, vec!["hi".to_owned()]);
    }

    #[test]
    fn messages_tool_results_are_found_inside_user_turns() {
        let body = json!({
            "messages": [
                {"role":"user","content":"read it"},
                {"role":"assistant","content":[{"type":"tool_use","id":"call_mock_0","name":"Read","input":{}}]},
                {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_mock_0",
                    "content":[{"type":"text","text":"line one"}]}]}
            ]
        });
        let digest = ConversationDigest::read(ModelApi::Messages, &body);
        assert_eq!(digest.tool_results[0].content, "line one");
        assert_eq!(digest.user_texts, vec!["read it".to_owned()]);
        assert!(digest.assistant_texts.is_empty());
    }

    #[test]
    fn chat_tool_messages_are_results() {
        let body = json!({
            "messages": [
                {"role":"system","content":"sys"},
                {"role":"user","content":[{"type":"text","text":"go"}]},
                {"role":"assistant","content":"","tool_calls":[{"id":"call_mock_0"}]},
                {"role":"tool","tool_call_id":"call_mock_0","content":"contents"}
            ]
        });
        let digest = ConversationDigest::read(ModelApi::ChatCompletions, &body);
        assert_eq!(digest.tool_results[0].call_id, "call_mock_0");
        assert_eq!(digest.user_texts, vec!["go".to_owned()]);
        assert!(digest.tool_names.is_empty());
    }
}
