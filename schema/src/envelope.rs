//! The request and response envelopes (contract §1.2–§1.4).
//!
//! A request line is `{"id": <string>, "method": <string>, "params": {...}}`. The server
//! first decodes only this envelope, keeping `params` raw, then decodes the params with the
//! method's own type, so that each method keeps its own unknown-field policy.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::codes::ErrorCode;

/// A request id as the client gave it, echoed back in the same form: a string (the
/// contract), or a JSON integer (a nagi extension: JSON-RPC clients number their requests).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    Text(String),
    Number(serde_json::Number),
}

impl RequestId {
    /// The id of a line whose id could not be read.
    pub fn unknown() -> RequestId {
        RequestId::Text(String::new())
    }

    /// The id as text (a number in its JSON spelling).
    pub fn as_text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            RequestId::Text(text) => std::borrow::Cow::Borrowed(text),
            RequestId::Number(number) => std::borrow::Cow::Owned(number.to_string()),
        }
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, RequestId::Text(text) if text.is_empty())
    }
}

impl From<&str> for RequestId {
    fn from(text: &str) -> RequestId {
        RequestId::Text(text.to_string())
    }
}

impl From<String> for RequestId {
    fn from(text: String) -> RequestId {
        RequestId::Text(text)
    }
}

impl From<&RequestId> for RequestId {
    fn from(id: &RequestId) -> RequestId {
        id.clone()
    }
}

impl PartialEq<&str> for RequestId {
    fn eq(&self, other: &&str) -> bool {
        matches!(self, RequestId::Text(text) if text == other)
    }
}

impl Serialize for RequestId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Text(text) => serializer.serialize_str(text),
            RequestId::Number(number) => number.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<RequestId, D::Error> {
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(text) => Ok(RequestId::Text(text)),
            serde_json::Value::Number(number) if number.is_i64() || number.is_u64() => {
                Ok(RequestId::Number(number))
            }
            other => Err(serde::de::Error::custom(format!(
                "id must be a string or an integer, not {other}"
            ))),
        }
    }
}

impl JsonSchema for RequestId {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RequestId".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": ["string", "integer"],
            "description": "The request's id as the client sent it: a string, or an integer (echoed as given)."
        })
    }
}

/// The request envelope with raw params. Extra top-level keys are ignored.
#[derive(Debug, Deserialize)]
pub struct RawRequest<'a> {
    pub id: RequestId,
    pub method: String,
    #[serde(borrow)]
    pub params: &'a RawValue,
}

/// What can be salvaged from a line that failed to decode: the `id`, when it is a string
/// or an integer.
#[derive(Debug, Deserialize)]
pub struct IdOnly {
    #[serde(default)]
    pub id: Option<serde_json::Value>,
}

impl IdOnly {
    /// The request id to echo in a decode error: the id when readable, else `""`.
    pub fn salvage(line: &str) -> RequestId {
        match serde_json::from_str::<IdOnly>(line) {
            Ok(IdOnly {
                id: Some(serde_json::Value::String(id)),
            }) => RequestId::Text(id),
            Ok(IdOnly {
                id: Some(serde_json::Value::Number(number)),
            }) if number.is_i64() || number.is_u64() => RequestId::Number(number),
            _ => RequestId::unknown(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorResponse {
    pub id: RequestId,
    pub error: ErrorBody,
}

impl ErrorResponse {
    pub fn new(
        id: impl Into<RequestId>,
        code: ErrorCode,
        message: impl Into<String>,
    ) -> ErrorResponse {
        ErrorResponse {
            id: id.into(),
            error: ErrorBody {
                code,
                message: message.into(),
            },
        }
    }

    /// The response as one JSON line (without the newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| {
            r#"{"id":"","error":{"code":"serialization_failed","message":"response encoding failed"}}"#.to_string()
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuccessResponse<T> {
    pub id: RequestId,
    pub result: T,
}
