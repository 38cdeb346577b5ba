//! Keyboard bytes of an attached terminal, read by the attach client (stream mode) or by
//! the server itself (direct mode): the detach key, the scroll keys, and UTF-8 assembly for
//! `session_input` (whose `data` is a string), so that a character split across two reads
//! stays whole.
//!
//! Shift+PageUp and Shift+PageDown scroll the pane's history (`session_scroll`) instead of
//! reaching the pane, as they scroll a terminal's own history. The mouse wheel is left to
//! the person's terminal: scrolling with it would need mouse reporting switched on, which
//! takes text selection away from the terminal and sends every click here, where clicks
//! meant for a program in the pane could not be told from the wheel.

use nagi_schema::session_protocol::SessionScrollStep;

/// `Ctrl-\` (ASCII FS, 0x1c).
pub const DETACH_BYTE: u8 = 0x1c;

/// The keys that scroll the pane's history, as xterm-style terminals send them (a
/// terminal sends a key's whole sequence in one write, so it arrives in one read).
const SCROLL_KEYS: [(&[u8], SessionScrollStep); 2] = [
    (b"\x1b[5;2~", SessionScrollStep::PageUp),
    (b"\x1b[6;2~", SessionScrollStep::PageDown),
];

/// Whether a read from the keyboard asks an observer to leave: an observer cannot type,
/// so `q` and Ctrl-C (which a person tries first) detach too, besides the detach key.
pub fn observer_leaves(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .any(|byte| matches!(*byte, b'q' | b'Q' | 0x03 | DETACH_BYTE))
}

/// One thing the keyboard asked for, in the order it was pressed.
#[derive(Debug, PartialEq, Eq)]
pub enum KeyboardAction {
    /// Input for the pane.
    Input(String),
    /// Move the pane's view of its history.
    Scroll(SessionScrollStep),
}

/// What one read from the keyboard means.
#[derive(Debug, PartialEq, Eq)]
pub struct KeyboardChunk {
    /// Input and scrolls (before the detach key, if any).
    pub actions: Vec<KeyboardAction>,
    /// The detach key was pressed.
    pub detach: bool,
}

/// The first scroll key in `bytes`: where it starts, how long it is, and its step.
fn find_scroll_key(bytes: &[u8]) -> Option<(usize, usize, SessionScrollStep)> {
    SCROLL_KEYS
        .iter()
        .filter_map(|(sequence, step)| {
            bytes
                .windows(sequence.len())
                .position(|window| window == *sequence)
                .map(|at| (at, sequence.len(), *step))
        })
        .min_by_key(|(at, _, _)| *at)
}

#[derive(Default)]
pub struct InputDecoder {
    /// The start of a UTF-8 sequence whose remaining bytes have not arrived yet.
    partial: Vec<u8>,
}

impl InputDecoder {
    pub fn feed(&mut self, bytes: &[u8]) -> KeyboardChunk {
        let (mut before, detach) = match bytes.iter().position(|byte| *byte == DETACH_BYTE) {
            Some(index) => (&bytes[..index], true),
            None => (bytes, false),
        };
        let mut actions = Vec::new();
        while let Some((at, length, step)) = find_scroll_key(before) {
            // A key's sequence ends whatever was typed before it: a character cut short
            // there can no longer be completed.
            let input = self.decode(&before[..at], false);
            if !input.is_empty() {
                actions.push(KeyboardAction::Input(input));
            }
            actions.push(KeyboardAction::Scroll(step));
            before = &before[at + length..];
        }
        let input = self.decode(before, !detach);
        if !input.is_empty() {
            actions.push(KeyboardAction::Input(input));
        }
        KeyboardChunk { actions, detach }
    }

    /// Decodes `bytes` after what is left of the last read. An incomplete sequence at the
    /// end is kept for the next read when `keep_partial`, else dropped.
    fn decode(&mut self, bytes: &[u8], keep_partial: bool) -> String {
        let mut pending = std::mem::take(&mut self.partial);
        pending.extend_from_slice(bytes);
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
                        // An incomplete sequence at the end: kept for the next read.
                        None => {
                            if keep_partial {
                                self.partial = after.to_vec();
                            }
                            break;
                        }
                    }
                }
            }
        }
        input
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

    fn input(text: &str) -> KeyboardAction {
        KeyboardAction::Input(text.into())
    }

    #[test]
    fn the_detach_key_ends_the_input_and_earlier_bytes_are_kept() {
        let mut decoder = InputDecoder::default();
        assert_eq!(
            decoder.feed(b"ls\r"),
            KeyboardChunk {
                actions: vec![input("ls\r")],
                detach: false
            }
        );
        assert_eq!(
            decoder.feed(b"ab\x1ccd"),
            KeyboardChunk {
                actions: vec![input("ab")],
                detach: true
            }
        );
    }

    #[test]
    fn a_character_split_across_reads_is_sent_whole() {
        let mut decoder = InputDecoder::default();
        let bytes = "é".as_bytes();
        assert_eq!(decoder.feed(&bytes[..1]).actions, []);
        assert_eq!(decoder.feed(&bytes[1..]).actions, [input("é")]);
        assert_eq!(decoder.feed(b"\xffx").actions, [input("\u{fffd}x")]);
    }

    #[test]
    fn shift_page_up_and_down_scroll_in_the_order_they_were_pressed() {
        use SessionScrollStep::*;
        let mut decoder = InputDecoder::default();
        assert_eq!(
            decoder.feed(b"\x1b[5;2~").actions,
            [KeyboardAction::Scroll(PageUp)]
        );
        assert_eq!(
            decoder.feed(b"a\x1b[6;2~\x1b[5;2~b").actions,
            [
                input("a"),
                KeyboardAction::Scroll(PageDown),
                KeyboardAction::Scroll(PageUp),
                input("b")
            ]
        );
        // PageUp without Shift, and Shift with other keys, still reach the pane.
        assert_eq!(
            decoder.feed(b"\x1b[5~\x1b[1;2A").actions,
            [input("\x1b[5~\x1b[1;2A")]
        );
        // After the detach key nothing counts.
        let chunk = decoder.feed(b"\x1c\x1b[5;2~");
        assert_eq!(chunk.actions, []);
        assert!(chunk.detach);
    }
}
