//! One line from `codex app-server` (a hostile or broken provider binary), through the
//! frame parser and then the request or notification parser the adapter applies to it.
//!
//! Properties:
//! - nothing panics;
//! - a question request stays within the contract's limits (1–4 questions, at most 8
//!   options, headers ≤ 128 bytes, visible text ≤ 16 KiB, unique question ids);
//! - the id of a request survives our answer: the result we encode for it parses back as
//!   a response with the same id.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nagi_providers::codex_codec::{
    CodexFrame, CodexServerRequest, MAX_OPTIONS, MAX_QUESTIONS, encode_error, encode_result, parse_codex_frame,
    parse_notification, parse_server_request,
};
use nagi_providers::framing::MAX_VISIBLE_TEXT_BYTES;
use serde_json::Value;

fuzz_target!(|line: &[u8]| {
    let Ok(frame) = parse_codex_frame(line) else { return };
    match frame {
        CodexFrame::Request { id, method, params } => {
            if let Ok(CodexServerRequest::UserInput { questions }) = parse_server_request(&method, &params) {
                assert!((1..=MAX_QUESTIONS).contains(&questions.len()));
                for (index, question) in questions.iter().enumerate() {
                    assert!(question.options.len() <= MAX_OPTIONS);
                    assert!(question.header.len() <= 128);
                    assert!(question.prompt.len() <= MAX_VISIBLE_TEXT_BYTES);
                    assert!(!question.id.trim().is_empty());
                    assert!(questions[..index].iter().all(|earlier| earlier.id != question.id), "duplicate question id");
                    for option in &question.options {
                        assert!(option.label.len() <= MAX_VISIBLE_TEXT_BYTES);
                        assert!(option.description.len() <= MAX_VISIBLE_TEXT_BYTES);
                    }
                }
            }
            for answer in [encode_result(&id, Value::Null), encode_error(&id, -32601, "refused")] {
                match parse_codex_frame(answer.trim_ascii_end()) {
                    Ok(CodexFrame::Response { id: echoed, .. }) => assert_eq!(echoed, id),
                    other => panic!("our answer to {id:?} parses as {other:?}"),
                }
            }
        }
        CodexFrame::Notification { method, params } => {
            let _ = parse_notification(&method, &params);
        }
        CodexFrame::Response { .. } => {}
    }
});
