//! One stream-json line from Claude Code (a hostile or broken provider binary), through
//! the frame parser and the `AskUserQuestion` and permission-suggestion rules.
//!
//! Properties:
//! - nothing panics;
//! - questions stay within contract §8.1 (1–4 questions with unique texts, 2–4 options
//!   with labels, headers ≤ 128 bytes, visible text ≤ 16 KiB);
//! - "approve for session" never applies a suggestion that is not scoped to the session.

#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use nagi_providers::claude_codec::{
    ClaudeFrame, answered_input, encode_control_success, parse_ask_user_question, parse_claude_frame,
    session_scoped_suggestions,
};
use nagi_providers::framing::MAX_VISIBLE_TEXT_BYTES;
use serde_json::Value;

fuzz_target!(|line: &[u8]| {
    let Ok(frame) = parse_claude_frame(line) else { return };
    if let ClaudeFrame::ToolPermission { request_id, request } = frame {
        for suggestion in session_scoped_suggestions(&request.suggestions) {
            assert_eq!(suggestion.get("destination").and_then(Value::as_str), Some("session"));
        }
        if let Ok(questions) = parse_ask_user_question(&request.input) {
            assert!((1..=4).contains(&questions.len()));
            let mut answers = BTreeMap::new();
            for (index, question) in questions.iter().enumerate() {
                assert!((2..=4).contains(&question.options.len()));
                assert!(question.header.len() <= 128);
                assert!(question.prompt.len() <= MAX_VISIBLE_TEXT_BYTES);
                assert!(questions[..index].iter().all(|earlier| earlier.id != question.id), "duplicate question");
                for option in &question.options {
                    assert!(option.label.len() <= MAX_VISIBLE_TEXT_BYTES);
                    assert!(option.description.len() <= MAX_VISIBLE_TEXT_BYTES);
                }
                answers.insert(question.id.clone(), vec![question.options[0].label.clone()]);
            }
            let updated = answered_input(&request.input, &answers);
            let reply = encode_control_success(&request_id, serde_json::json!({"behavior": "allow", "updatedInput": updated}));
            let reply: Value = serde_json::from_slice(&reply).expect("our reply is JSON");
            assert_eq!(reply.pointer("/response/request_id").and_then(Value::as_str), Some(request_id.as_str()));
        }
    }
});
