//! One line from an ACP agent (a hostile or broken provider binary): our framing check
//! (`parse_acp_frame`), then the SDK's decoding of the params of every agent-to-client
//! message our client handles (`session/update`, `session/request_permission`,
//! `fs/read_text_file`, `fs/write_text_file`) and of the prompt result.
//!
//! Properties:
//! - nothing panics;
//! - a line passes the framing check exactly when it is a JSON object;
//! - a decoded message re-encodes to JSON that decodes to the same message.

#![no_main]

use agent_client_protocol::v1::schema::{
    PromptResponse, ReadTextFileRequest, RequestPermissionRequest, SessionNotification, WriteTextFileRequest,
};
use libfuzzer_sys::fuzz_target;
use nagi_providers::acp_transport::parse_acp_frame;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn round_trip<T: DeserializeOwned + Serialize + PartialEq + std::fmt::Debug>(value: &Value) {
    let Ok(decoded) = serde_json::from_value::<T>(value.clone()) else { return };
    let encoded = serde_json::to_value(&decoded).expect("SDK messages serialize");
    let again: T = serde_json::from_value(encoded.clone()).unwrap_or_else(|error| panic!("{encoded} no longer decodes: {error}"));
    assert_eq!(again, decoded);
}

fuzz_target!(|line: &[u8]| {
    let framed = parse_acp_frame(line);
    let is_object = matches!(serde_json::from_slice::<Value>(line), Ok(Value::Object(_)));
    assert_eq!(framed.is_ok(), is_object);
    let Ok(object) = framed else { return };
    let params = object.get("params").cloned().unwrap_or(Value::Null);
    match object.get("method").and_then(Value::as_str) {
        Some("session/update") => round_trip::<SessionNotification>(&params),
        Some("session/request_permission") => round_trip::<RequestPermissionRequest>(&params),
        Some("fs/read_text_file") => round_trip::<ReadTextFileRequest>(&params),
        Some("fs/write_text_file") => round_trip::<WriteTextFileRequest>(&params),
        _ => {
            if let Some(result) = object.get("result") {
                round_trip::<PromptResponse>(result);
            }
        }
    }
});
