//! What the OpenCode server (a hostile or broken provider binary) sends: its stdout lines
//! (the listening line), and the server-sent-event stream of `/event`, assembled line by
//! line and parsed as events; plus the health and `/doc` probes on any JSON value.
//!
//! Properties:
//! - nothing panics;
//! - an accepted listening line names a non-zero port on 127.0.0.1 over plain http;
//! - the assembler yields at most one event per blank line, and an event's data is the
//!   `data:` lines of that event joined with `\n`;
//! - an accepted health report has a version inside the tested range.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nagi_providers::opencode_codec::{
    SseAssembler, TESTED_VERSION_RANGE, check_health, missing_operations, parse_listening_line, parse_opencode_event,
    parse_version,
};

fuzz_target!(|data: &[u8]| {
    let _ = parse_opencode_event(data);
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        if let Ok(version) = check_health(&value) {
            let parsed = parse_version(&version).expect("an accepted version parses");
            let (low, high) = TESTED_VERSION_RANGE;
            assert!(parsed >= low && parsed < high, "{version} is outside the tested range");
        }
        assert!(missing_operations(&value).len() <= 10);
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut assembler = SseAssembler::default();
    let mut pending: Vec<String> = Vec::new();
    for line in text.split('\n') {
        if let Some(Ok(port)) = parse_listening_line(line) {
            assert_ne!(port, 0);
            assert!(line.contains(&format!("http://127.0.0.1:{port}")), "{line:?} accepted as port {port}");
        }
        let _ = parse_version(line);
        let bare = line.strip_suffix('\r').unwrap_or(line);
        if let Some(value) = bare.strip_prefix("data:") {
            pending.push(value.strip_prefix(' ').unwrap_or(value).to_string());
        }
        match assembler.push_line(line) {
            Some(event) => {
                assert!(bare.is_empty(), "an event ended on a non-blank line {line:?}");
                assert_eq!(event, pending.join("\n"));
                pending.clear();
                let _ = parse_opencode_event(event.as_bytes());
            }
            None => assert!(!bare.is_empty() || pending.is_empty(), "a blank line after data ended no event"),
        }
    }
});
