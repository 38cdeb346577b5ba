//! Key-combo strings of `pane.send_keys` / `pane.send_input.keys`, one per input line.
//!
//! Properties:
//! - parsing never panics;
//! - a combo that parsed encodes in both cursor modes (the parser validates in normal
//!   mode only, and `encode` panics on a combo it cannot express);
//! - a refusal names the exact string it refused;
//! - the list parser accepts a list exactly when every element parses, and then yields
//!   the same combos.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nagi_pane::PaneError;
use nagi_pane::keys::{encode_key_combos, parse_key_combo, parse_key_combos};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let keys: Vec<String> = text.split('\n').map(str::to_string).collect();
    let mut singles = Vec::new();
    for key in &keys {
        match parse_key_combo(key) {
            Ok(combo) => {
                for application_cursor in [false, true] {
                    let mut bytes = Vec::new();
                    combo.encode(application_cursor, &mut bytes);
                    assert!(!bytes.is_empty(), "{key:?} sends nothing");
                }
                singles.push(Some(combo));
            }
            Err(PaneError::InvalidKey { key: refused, reason }) => {
                assert_eq!(&refused, key, "the error names another string");
                assert!(!reason.is_empty());
                singles.push(None);
            }
            Err(other) => panic!("{key:?}: unexpected error kind {other:?}"),
        }
    }
    match parse_key_combos(&keys) {
        Ok(combos) => {
            let expected: Vec<_> = singles.iter().map(|combo| combo.expect("the list parsed, so each element does")).collect();
            assert_eq!(combos, expected);
            let joined = encode_key_combos(&combos, false);
            let separately: Vec<u8> = combos.iter().flat_map(|combo| encode_key_combos(std::slice::from_ref(combo), false)).collect();
            assert_eq!(joined, separately, "a list encodes as its combos one after another");
        }
        Err(_) => assert!(singles.iter().any(Option::is_none), "the list was refused although every element parses"),
    }
});
