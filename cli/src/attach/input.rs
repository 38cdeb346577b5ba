//! Keyboard bytes of an attach: the detach key, and UTF-8 assembly for `session_input`
//! (whose `data` is a string), so that a character split across two reads stays whole.

/// `Ctrl-\` (ASCII FS, 0x1c).
pub const DETACH_BYTE: u8 = 0x1c;

/// Whether a read from the keyboard asks an observer to leave: an observer cannot type,
/// so `q` and Ctrl-C (which a person tries first) detach too, besides the detach key.
pub fn observer_leaves(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .any(|byte| matches!(*byte, b'q' | b'Q' | 0x03 | DETACH_BYTE))
}

/// What one read from the keyboard means.
#[derive(Debug, PartialEq, Eq)]
pub struct KeyboardChunk {
    /// Input for the pane (before the detach key, if any).
    pub input: String,
    /// The detach key was pressed.
    pub detach: bool,
}

#[derive(Default)]
pub struct InputDecoder {
    /// The start of a UTF-8 sequence whose remaining bytes have not arrived yet.
    partial: Vec<u8>,
}

impl InputDecoder {
    pub fn feed(&mut self, bytes: &[u8]) -> KeyboardChunk {
        let (before, detach) = match bytes.iter().position(|byte| *byte == DETACH_BYTE) {
            Some(index) => (&bytes[..index], true),
            None => (bytes, false),
        };
        let mut pending = std::mem::take(&mut self.partial);
        pending.extend_from_slice(before);
        let mut input = String::new();
        let mut rest = pending.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    input.push_str(text);
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    input.push_str(std::str::from_utf8(valid).expect("checked valid"));
                    match error.error_len() {
                        // Bytes that can never be UTF-8: sent as the replacement character.
                        Some(length) => {
                            input.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[length..];
                        }
                        // An incomplete sequence at the end: keep it for the next read,
                        // unless the detach key ends the input here.
                        None => {
                            if !detach {
                                self.partial = after.to_vec();
                            }
                            break;
                        }
                    }
                }
            }
        }
        KeyboardChunk { input, detach }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_observer_leaves_with_q_ctrl_c_or_the_detach_key_and_not_with_other_keys() {
        for leave in [&b"q"[..], b"Q", b"\x03", b"\x1c", b"abcq"] {
            assert!(observer_leaves(leave), "{leave:?}");
        }
        for stay in [&b"a"[..], b"\r", b"\x1b[A", b""] {
            assert!(!observer_leaves(stay), "{stay:?}");
        }
    }

    #[test]
    fn the_detach_key_ends_the_input_and_earlier_bytes_are_kept() {
        let mut decoder = InputDecoder::default();
        assert_eq!(
            decoder.feed(b"ls\r"),
            KeyboardChunk {
                input: "ls\r".into(),
                detach: false
            }
        );
        assert_eq!(
            decoder.feed(b"ab\x1ccd"),
            KeyboardChunk {
                input: "ab".into(),
                detach: true
            }
        );
    }

    #[test]
    fn a_character_split_across_reads_is_sent_whole() {
        let mut decoder = InputDecoder::default();
        let bytes = "é".as_bytes();
        assert_eq!(decoder.feed(&bytes[..1]).input, "");
        assert_eq!(decoder.feed(&bytes[1..]).input, "é");
        assert_eq!(decoder.feed(b"\xffx").input, "\u{fffd}x");
    }
}
