//! The frame parsers are the adapters' attack surface: arbitrary provider output must give
//! a frame or an error, never a panic.

use nagi_providers::acp_transport::parse_acp_frame;
use nagi_providers::claude_codec::{parse_ask_user_question, parse_claude_frame};
use nagi_providers::codex_codec::{parse_codex_frame, parse_notification, parse_server_request};
use nagi_providers::opencode_codec::{SseAssembler, parse_listening_line, parse_opencode_event};
use proptest::prelude::*;

fn json_like() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..256),
        "\\{\"(id|method|type|params|result|error|request|subtype)\":[ -~]{0,80}\\}"
            .prop_map(String::into_bytes),
    ]
}

proptest! {
    #[test]
    fn codex_parsing_never_panics(bytes in json_like()) {
        if let Ok(nagi_providers::codex_codec::CodexFrame::Request { method, params, .. }) = parse_codex_frame(&bytes) {
            let _ = parse_server_request(&method, &params);
        }
        if let Ok(nagi_providers::codex_codec::CodexFrame::Notification { method, params }) = parse_codex_frame(&bytes) {
            let _ = parse_notification(&method, &params);
        }
    }

    #[test]
    fn claude_parsing_never_panics(bytes in json_like()) {
        if let Ok(nagi_providers::claude_codec::ClaudeFrame::ToolPermission { request, .. }) = parse_claude_frame(&bytes) {
            let _ = parse_ask_user_question(&request.input);
        }
    }

    #[test]
    fn opencode_and_acp_parsing_never_panics(bytes in json_like(), line in "[ -~]{0,120}") {
        let _ = parse_opencode_event(&bytes);
        let _ = parse_acp_frame(&bytes);
        let _ = parse_listening_line(&line);
        let mut assembler = SseAssembler::default();
        for piece in line.split(' ') {
            let _ = assembler.push_line(piece);
        }
    }
}

#[test]
fn known_shapes_with_wrong_types_are_errors_not_panics() {
    for frame in [
        &br#"{"id":{"x":1},"result":{}}"#[..],
        br#"{"method":7}"#,
        br#"{"id":1}"#,
    ] {
        assert!(
            parse_codex_frame(frame).is_err(),
            "{}",
            String::from_utf8_lossy(frame)
        );
    }
    for frame in [
        &br#"{"type":"system","subtype":"init","session_id":"s","tools":[1]}"#[..],
        br#"{"type":"control_response","response":{"subtype":"weird","request_id":"r"}}"#,
        br#"{"type":"result","subtype":"success"}"#,
    ] {
        assert!(
            parse_claude_frame(frame).is_err(),
            "{}",
            String::from_utf8_lossy(frame)
        );
    }
}
