//! The request and response envelopes (contract §1.2–§1.4).
//!
//! A request line is `{"id": <string>, "method": <string>, "params": {...}}`. The server
//! first decodes only this envelope, keeping `params` raw, then decodes the params with the
//! method's own type, so that each method keeps its own unknown-field policy.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::codes::ErrorCode;

/// The request envelope with raw params. Extra top-level keys are ignored.
#[derive(Debug, Deserialize)]
pub struct RawRequest<'a> {
    pub id: String,
    pub method: String,
    #[serde(borrow)]
    pub params: &'a RawValue,
}

/// What can be salvaged from a line that failed to decode: the `id`, when it is a string.
#[derive(Debug, Deserialize)]
pub struct IdOnly {
    #[serde(default)]
    pub id: Option<serde_json::Value>,
}

impl IdOnly {
    /// The request id to echo in a decode error: the string id when readable, else `""`.
    pub fn salvage(line: &str) -> String {
        match serde_json::from_str::<IdOnly>(line) {
            Ok(IdOnly {
                id: Some(serde_json::Value::String(id)),
            }) => id,
            _ => String::new(),
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
    pub id: String,
    pub error: ErrorBody,
}

impl ErrorResponse {
    pub fn new(
        id: impl Into<String>,
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
    pub id: String,
    pub result: T,
}
