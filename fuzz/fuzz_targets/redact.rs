//! The redaction of text that leaves the server (contract §6.3).
//!
//! Properties, for any UTF-8 input:
//! - redaction never panics;
//! - it is idempotent: redacting the output again changes nothing;
//! - the output holds nothing contract rules 1, 2 and 4 would detect (a `Bearer` token,
//!   a whole-word `sk-`/`gh?_`/`AKIA` key, URL credentials) and no private-key block;
//! - the borrowed/owned answer is honest: an owned answer differs from the input.
//!
//! And for prose (letters, digits, spaces, newlines and `. , ! ? ( )`, the input mapped
//! onto that alphabet): it comes back unchanged unless it contains one of the prefixes
//! that make a token without punctuation (`bearer`, `akia`, `asia`, `aiza`, `eyj`).

#![no_main]

use std::borrow::Cow;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use nagi_mission::redact::redact;
use regex::Regex;

/// Detectors written from the contract's rules, independent of the implementation.
static DETECTORS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{12,}",
        r"(?i)\b(?:sk-[A-Za-z0-9_-]{12,}|gh[pousr]_[A-Za-z0-9_]{12,}|AKIA[0-9A-Z]{16})\b",
        r"(?i)\bhttps?://[^/\s:@]+:[^@\s/]+@",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY",
    ]
    .iter()
    .map(|pattern| Regex::new(pattern).expect("detector compiles"))
    .collect()
});

const PROSE: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n.,!?()";
const TOKEN_PREFIXES: [&str; 5] = ["bearer", "akia", "asia", "aiza", "eyj"];

fn check(text: &str) {
    let once = redact(text);
    if let Cow::Owned(owned) = &once {
        assert_ne!(owned, text, "an owned answer equal to the input");
    }
    let twice = redact(&once);
    assert_eq!(twice, once, "redaction is not idempotent for {text:?}");
    for detector in DETECTORS.iter() {
        if let Some(found) = detector.find(&once) {
            panic!("{:?} survived redaction of {text:?} (detector {})", found.as_str(), detector.as_str());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        check(text);
    }
    let prose: String = data.iter().map(|byte| PROSE[usize::from(*byte) % PROSE.len()] as char).collect();
    check(&prose);
    let lower = prose.to_ascii_lowercase();
    if !TOKEN_PREFIXES.iter().any(|prefix| lower.contains(prefix)) {
        assert_eq!(redact(&prose), prose.as_str(), "prose was changed");
    }
});
