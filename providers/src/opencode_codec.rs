//! Pure parsing for the OpenCode server: the listening line, the version range, the
//! capability probe of `/doc`, server-sent-event framing and the events the adapter uses.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("opencode protocol violation: {0}")]
pub struct OpenCodeCodecError(pub String);

fn violation(message: impl Into<String>) -> OpenCodeCodecError {
    OpenCodeCodecError(message.into())
}

/// OpenCode server versions this adapter was tested with: 1.18.0 up to, not including,
/// 2.0.0 (observed: 1.18.33). Other versions are refused with the range in the message.
pub const TESTED_VERSION_RANGE: ((u64, u64, u64), (u64, u64, u64)) = ((1, 18, 0), (2, 0, 0));

/// The HTTP operations the adapter needs, as `/doc` must list them (contract §8.1).
pub const REQUIRED_OPERATIONS: [(&str, &str); 10] = [
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
];

const LISTENING_PREFIX: &str = "opencode server listening on ";

/// The port from `opencode server listening on http://127.0.0.1:<port>`. `None` for any
/// other line; an error for a listening line that is not plain http on 127.0.0.1 with a
/// non-zero port in plain decimal (no sign, no leading zero) and path `/`.
pub fn parse_listening_line(line: &str) -> Option<Result<u16, OpenCodeCodecError>> {
    let url = line.trim().strip_prefix(LISTENING_PREFIX)?;
    let Some(rest) = url.strip_prefix("http://127.0.0.1:") else {
        return Some(Err(violation(format!(
            "opencode listens on {url}, not http://127.0.0.1"
        ))));
    };
    let (port_text, path) = match rest.find('/') {
        Some(index) => (&rest[..index], &rest[index..]),
        None => (rest, "/"),
    };
    if path != "/" {
        return Some(Err(violation(format!(
            "opencode listens under path {path}, not /"
        ))));
    }
    let plain_decimal =
        port_text.bytes().all(|byte| byte.is_ascii_digit()) && !port_text.starts_with('0');
    Some(match port_text.parse::<u16>() {
        Ok(port) if plain_decimal => Ok(port),
        Ok(_) | Err(_) => Err(violation(format!("opencode reported port {port_text:?}"))),
    })
}

pub fn parse_version(text: &str) -> Option<(u64, u64, u64)> {
    let core = text
        .trim()
        .trim_start_matches('v')
        .split(['-', '+'])
        .next()?;
    let mut parts = core.split('.').map(|part| part.parse::<u64>().ok());
    Some((
        parts.next()??,
        parts.next()??,
        parts.next().unwrap_or(Some(0))?,
    ))
}

/// Checks `GET /global/health`; returns the server version.
pub fn check_health(health: &Value) -> Result<String, OpenCodeCodecError> {
    if health.get("healthy").and_then(Value::as_bool) != Some(true) {
        return Err(violation(format!(
            "opencode reports itself unhealthy: {health}"
        )));
    }
    let version = health
        .get("version")
        .and_then(Value::as_str)
        .ok_or_else(|| violation("health has no version"))?;
    let parsed = parse_version(version)
        .ok_or_else(|| violation(format!("opencode version {version:?} is not a version")))?;
    let ((min_major, min_minor, min_patch), (max_major, max_minor, max_patch)) =
        TESTED_VERSION_RANGE;
    if parsed < (min_major, min_minor, min_patch) || parsed >= (max_major, max_minor, max_patch) {
        return Err(violation(format!(
            "opencode {version} is outside the tested range {min_major}.{min_minor}.{min_patch} to before {max_major}.{max_minor}.{max_patch}"
        )));
    }
    Ok(version.to_string())
}

/// The required operations `/doc` (an OpenAPI document) does not list, as `METHOD path`.
pub fn missing_operations(doc: &Value) -> Vec<String> {
    let paths = doc.get("paths");
    REQUIRED_OPERATIONS
        .iter()
        .filter(|(path, method)| {
            paths
                .and_then(|paths| paths.get(*path))
                .and_then(|item| item.get(*method))
                .is_none()
        })
        .map(|(path, method)| format!("{} {path}", method.to_uppercase()))
        .collect()
}

/// Assembles server-sent events from lines: `data:` lines accumulate, a blank line ends
/// the event. Comments and other fields are ignored.
#[derive(Debug, Default)]
pub struct SseAssembler {
    data: String,
    has_data: bool,
}

impl SseAssembler {
    /// Feeds one line (without its newline); returns a finished event's data.
    pub fn push_line(&mut self, line: &str) -> Option<String> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if !self.has_data {
                return None;
            }
            self.has_data = false;
            return Some(std::mem::take(&mut self.data));
        }
        if let Some(value) = line.strip_prefix("data:") {
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(value.strip_prefix(' ').unwrap_or(value));
            self.has_data = true;
        }
        None
    }
}

/// A message part, reduced to what the transcript shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenCodePart {
    Text {
        id: String,
        message_id: String,
        text: String,
        finished: bool,
    },
    Tool {
        call_id: String,
        tool: String,
        status: String,
        input: String,
        output: String,
    },
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenCodeEvent {
    ServerConnected,
    SessionStatus {
        session_id: String,
        status: String,
    },
    SessionError {
        session_id: Option<String>,
        name: String,
        message: String,
    },
    PermissionAsked {
        id: String,
        session_id: String,
        permission: String,
        patterns: Vec<String>,
        always: Vec<String>,
    },
    PermissionReplied {
        session_id: String,
        request_id: String,
        reply: String,
    },
    QuestionAsked {
        id: String,
        session_id: String,
        text: String,
    },
    PartUpdated {
        session_id: String,
        part: OpenCodePart,
    },
    /// `message.part.delta`: a piece appended to one field of a part (the text of a text
    /// part as the model streams it; reasoning parts stream this way too).
    PartDelta {
        session_id: String,
        part_id: String,
        field: String,
        delta: String,
    },
    /// `message.updated`: tells user messages (our prompt) from the assistant's.
    MessageUpdated {
        session_id: String,
        message_id: String,
        role: String,
        /// The user message an assistant message answers.
        parent_id: Option<String>,
        /// An assistant message's tokens and cost, once it is finished (`info.finish`):
        /// each assistant message is one model request.
        finished_usage: Option<nagi_schema::usage::TokenUsage>,
    },
    Other,
}

/// A finished assistant message's usage. OpenCode counts cache reads and writes apart from
/// `tokens.input`; nagi's input includes them. A cost of 0 is what OpenCode reports for a
/// model without a price, so it is not shown as a cost.
fn message_usage(info: &Value) -> Option<nagi_schema::usage::TokenUsage> {
    info.get("finish").and_then(Value::as_str)?;
    let tokens = info.get("tokens")?;
    let count = |pointer: &str| tokens.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let cached = count("/cache/read");
    Some(nagi_schema::usage::TokenUsage {
        input_tokens: count("/input") + cached + count("/cache/write"),
        cached_input_tokens: cached,
        output_tokens: count("/output"),
        reasoning_output_tokens: count("/reasoning"),
        cost_micro_usd: info
            .get("cost")
            .and_then(Value::as_f64)
            .filter(|cost| *cost > 0.0)
            .and_then(nagi_schema::usage::micro_usd),
    })
}

fn text(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn required(value: &Value, pointer: &str, what: &str) -> Result<String, OpenCodeCodecError> {
    text(value, pointer).ok_or_else(|| violation(format!("{what} without {pointer}")))
}

fn strings(value: &Value, pointer: &str) -> Vec<String> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Parses the data of one SSE event: `{"type": ..., "properties": {...}}`.
pub fn parse_opencode_event(data: &[u8]) -> Result<OpenCodeEvent, OpenCodeCodecError> {
    let event: Value = serde_json::from_slice(data)
        .map_err(|error| violation(format!("event is not JSON: {error}")))?;
    let kind = text(&event, "/type").ok_or_else(|| violation("event without a type"))?;
    let empty = Value::Null;
    let properties = event.get("properties").unwrap_or(&empty);
    Ok(match kind.as_str() {
        "server.connected" => OpenCodeEvent::ServerConnected,
        "session.status" => OpenCodeEvent::SessionStatus {
            session_id: required(properties, "/sessionID", "session.status")?,
            status: required(properties, "/status/type", "session.status")?,
        },
        "session.error" => OpenCodeEvent::SessionError {
            session_id: text(properties, "/sessionID"),
            name: text(properties, "/error/name").unwrap_or_else(|| "UnknownError".to_string()),
            message: text(properties, "/error/data/message")
                .unwrap_or_else(|| "the session failed".to_string()),
        },
        "permission.asked" => OpenCodeEvent::PermissionAsked {
            id: required(properties, "/id", "permission.asked")?,
            session_id: required(properties, "/sessionID", "permission.asked")?,
            permission: text(properties, "/permission").unwrap_or_default(),
            patterns: strings(properties, "/patterns"),
            always: strings(properties, "/always"),
        },
        "permission.replied" => OpenCodeEvent::PermissionReplied {
            session_id: required(properties, "/sessionID", "permission.replied")?,
            request_id: required(properties, "/requestID", "permission.replied")?,
            reply: text(properties, "/reply").unwrap_or_default(),
        },
        "question.asked" => OpenCodeEvent::QuestionAsked {
            id: required(properties, "/id", "question.asked")?,
            session_id: required(properties, "/sessionID", "question.asked")?,
            text: properties
                .get("questions")
                .and_then(Value::as_array)
                .map(|questions| {
                    questions
                        .iter()
                        .filter_map(|question| question.get("question").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join(" / ")
                })
                .unwrap_or_default(),
        },
        "message.updated" => OpenCodeEvent::MessageUpdated {
            session_id: required(properties, "/info/sessionID", "message.updated")?,
            message_id: required(properties, "/info/id", "message.updated")?,
            role: text(properties, "/info/role").unwrap_or_default(),
            parent_id: text(properties, "/info/parentID"),
            finished_usage: message_usage(properties.get("info").unwrap_or(&empty)),
        },
        "message.part.delta" => OpenCodeEvent::PartDelta {
            session_id: required(properties, "/sessionID", "message.part.delta")?,
            part_id: text(properties, "/partID").unwrap_or_default(),
            field: text(properties, "/field").unwrap_or_default(),
            delta: text(properties, "/delta").unwrap_or_default(),
        },
        "message.part.updated" => {
            let part = properties.get("part").unwrap_or(&empty);
            OpenCodeEvent::PartUpdated {
                session_id: required(part, "/sessionID", "message.part.updated")?,
                part: match part.get("type").and_then(Value::as_str) {
                    Some("text") => OpenCodePart::Text {
                        id: text(part, "/id").unwrap_or_default(),
                        message_id: text(part, "/messageID").unwrap_or_default(),
                        text: text(part, "/text").unwrap_or_default(),
                        finished: part.pointer("/time/end").is_some_and(|end| !end.is_null()),
                    },
                    Some("tool") => OpenCodePart::Tool {
                        call_id: text(part, "/callID").unwrap_or_default(),
                        tool: text(part, "/tool").unwrap_or_default(),
                        status: text(part, "/state/status").unwrap_or_default(),
                        input: part
                            .pointer("/state/input")
                            .map(Value::to_string)
                            .unwrap_or_default(),
                        output: text(part, "/state/output")
                            .or_else(|| text(part, "/state/error"))
                            .unwrap_or_default(),
                    },
                    _ => OpenCodePart::Other,
                },
            }
        }
        _ => OpenCodeEvent::Other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn listening_line_must_be_local_http() {
        assert_eq!(
            parse_listening_line("opencode server listening on http://127.0.0.1:4096")
                .unwrap()
                .unwrap(),
            4096
        );
        assert_eq!(
            parse_listening_line("opencode server listening on http://127.0.0.1:4096/")
                .unwrap()
                .unwrap(),
            4096
        );
        assert!(
            parse_listening_line("opencode server listening on http://0.0.0.0:4096")
                .unwrap()
                .is_err()
        );
        assert!(
            parse_listening_line("opencode server listening on http://127.0.0.1:0")
                .unwrap()
                .is_err()
        );
        assert!(
            parse_listening_line("opencode server listening on http://127.0.0.1:80/api")
                .unwrap()
                .is_err()
        );
        assert!(parse_listening_line("some log line").is_none());
        // Found by fuzz/run opencode_event: a port that is not plain decimal was read
        // as another number.
        for odd in ["00046", "+4096", "04096", "-1", ""] {
            let line = format!("opencode server listening on http://127.0.0.1:{odd}");
            assert!(parse_listening_line(&line).unwrap().is_err(), "{line:?}");
        }
    }

    #[test]
    fn versions_in_the_tested_range_pass() {
        assert_eq!(
            check_health(&json!({"healthy": true, "version": "1.18.33"})).unwrap(),
            "1.18.33"
        );
        assert!(check_health(&json!({"healthy": true, "version": "1.17.9"})).is_err());
        assert!(check_health(&json!({"healthy": true, "version": "2.0.0"})).is_err());
        assert!(check_health(&json!({"healthy": false, "version": "1.18.33"})).is_err());
    }

    #[test]
    fn missing_operations_are_named() {
        let doc = json!({"paths": {"/event": {"get": {}}}});
        let missing = missing_operations(&doc);
        assert_eq!(missing.len(), REQUIRED_OPERATIONS.len() - 1);
        assert!(missing.contains(&"POST /session/{sessionID}/abort".to_string()));
    }

    #[test]
    fn sse_events_are_assembled() {
        let mut assembler = SseAssembler::default();
        assert_eq!(assembler.push_line(": comment"), None);
        assert_eq!(assembler.push_line("data: {\"a\":"), None);
        assert_eq!(assembler.push_line("data: 1}"), None);
        assert_eq!(assembler.push_line(""), Some("{\"a\":\n1}".to_string()));
        assert_eq!(assembler.push_line(""), None);
    }

    #[test]
    fn events_are_parsed() {
        let idle =
            br#"{"type":"session.status","properties":{"sessionID":"s","status":{"type":"idle"}}}"#;
        assert_eq!(
            parse_opencode_event(idle).unwrap(),
            OpenCodeEvent::SessionStatus {
                session_id: "s".into(),
                status: "idle".into()
            }
        );
        assert!(parse_opencode_event(b"nope").is_err());
        assert!(parse_opencode_event(br#"{"type":"session.status","properties":{}}"#).is_err());
    }

    #[test]
    fn a_part_delta_names_its_part_and_field() {
        let event = br#"{"type":"message.part.delta","properties":{"sessionID":"ses_1","messageID":"msg_1","partID":"prt_1","field":"text","delta":"Hel"}}"#;
        assert_eq!(
            parse_opencode_event(event).unwrap(),
            OpenCodeEvent::PartDelta {
                session_id: "ses_1".into(),
                part_id: "prt_1".into(),
                field: "text".into(),
                delta: "Hel".into(),
            }
        );
    }
}
