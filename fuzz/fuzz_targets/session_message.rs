//! One session-protocol line (the pane attach protocol of seed 004), in both directions:
//! client → server messages the server decodes, and server → client messages the
//! cockpit and CLI decode.
//!
//! Properties:
//! - nothing panics;
//! - a decoded message re-encodes to JSON that decodes to the same message;
//! - `SessionFrame::to_line` (hand-written to avoid a clone) writes exactly what the
//!   derived encoding of `SessionServerMessage::SessionFrame` writes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nagi_schema::session_protocol::{SessionClientMessage, SessionServerMessage};

fuzz_target!(|line: &[u8]| {
    if let Ok(message) = serde_json::from_slice::<SessionClientMessage>(line) {
        let encoded = serde_json::to_string(&message).expect("client messages serialize");
        let again: SessionClientMessage = serde_json::from_str(&encoded).unwrap_or_else(|error| panic!("{encoded}: {error}"));
        assert_eq!(again, message);
        assert!(encoded.contains(&serde_json::to_string(message.session_id()).unwrap()));
    }
    if let Ok(message) = serde_json::from_slice::<SessionServerMessage>(line) {
        let encoded = serde_json::to_value(&message).expect("server messages serialize");
        let again: SessionServerMessage =
            serde_json::from_value(encoded.clone()).unwrap_or_else(|error| panic!("{encoded}: {error}"));
        assert_eq!(again, message);
        if let SessionServerMessage::SessionFrame(frame) = &message {
            let line: serde_json::Value = serde_json::from_str(&frame.to_line()).expect("to_line writes JSON");
            assert_eq!(line, encoded, "to_line differs from the derived encoding");
        }
    }
});
