//! Key-combo strings of `pane.send_keys` / `pane.send_input.keys`, and the bytes a
//! terminal (xterm) sends for them.
//!
//! Grammar: `[modifier+]*key`, modifiers and key names case-insensitive.
//! - A key is one printable character (`a`, `A`, `+`, `é`), or a name:
//!   `enter`/`return`, `esc`/`escape`, `tab`, `backspace`/`bspace`, `space`,
//!   `up`, `down`, `left`, `right`, `home`, `end`, `pageup`/`pgup`, `pagedown`/`pgdn`,
//!   `insert`/`ins`, `delete`/`del`, `f1`…`f12`, or one of the punctuation names in
//!   [`PUNCTUATION_NAMES`] (`minus`, `plus`, `comma`, `period`, `slash`, …).
//! - Modifiers: `ctrl`/`control`, `alt`/`meta`, `shift`.
//! - `ctrl` works with letters, `space`, `@ [ \ ] ^ _ ? /`, the digits 2–8 (xterm's legacy
//!   codes), `backspace` and the navigation and function keys. `shift` works with
//!   letters, `tab` and the navigation and function keys. `alt` prefixes ESC, or sets the
//!   xterm modifier parameter on navigation and function keys.
//! - Combos a terminal cannot express (`ctrl+1`, `shift+enter`, `ctrl+shift+a`) and tmux
//!   style `prefix+…` bindings are rejected, naming the key.

use super::error::PaneError;

/// Named punctuation keys and the character each sends.
pub const PUNCTUATION_NAMES: &[(&str, char)] = &[
    ("minus", '-'),
    ("plus", '+'),
    ("comma", ','),
    ("period", '.'),
    ("dot", '.'),
    ("slash", '/'),
    ("backslash", '\\'),
    ("semicolon", ';'),
    ("colon", ':'),
    ("quote", '\''),
    ("apostrophe", '\''),
    ("doublequote", '"'),
    ("dquote", '"'),
    ("backtick", '`'),
    ("grave", '`'),
    ("tilde", '~'),
    ("bang", '!'),
    ("exclamation", '!'),
    ("at", '@'),
    ("hash", '#'),
    ("dollar", '$'),
    ("percent", '%'),
    ("caret", '^'),
    ("ampersand", '&'),
    ("asterisk", '*'),
    ("star", '*'),
    ("lparen", '('),
    ("rparen", ')'),
    ("lbracket", '['),
    ("rbracket", ']'),
    ("lbrace", '{'),
    ("rbrace", '}'),
    ("less", '<'),
    ("lt", '<'),
    ("greater", '>'),
    ("gt", '>'),
    ("equal", '='),
    ("equals", '='),
    ("question", '?'),
    ("underscore", '_'),
    ("pipe", '|'),
];

/// A key without modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Enter,
    Escape,
    Tab,
    Backspace,
    Space,
    /// Cursor and Home/End keys: the final byte of their escape sequence (`A` for up).
    Cursor(u8),
    /// Keys sent as `ESC [ n ~` (Insert, Delete, PageUp/Down, F5–F12).
    Tilde(u8),
    /// F1–F4, sent as `ESC O P`…`ESC O S`.
    Function(u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Modifiers {
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
}

impl Modifiers {
    fn any(self) -> bool {
        self.ctrl || self.alt || self.shift
    }

    /// xterm's modifier parameter: 1 + shift + 2·alt + 4·ctrl.
    fn xterm_parameter(self) -> u8 {
        1 + u8::from(self.shift) + 2 * u8::from(self.alt) + 4 * u8::from(self.ctrl)
    }
}

/// A parsed, valid key combo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyCombo {
    pub modifiers: Modifiers,
    pub key: Key,
}

fn invalid(text: &str, reason: impl Into<String>) -> PaneError {
    PaneError::InvalidKey {
        key: text.to_string(),
        reason: reason.into(),
    }
}

fn single_printable_char(text: &str) -> Option<char> {
    let mut chars = text.chars();
    let first = chars.next()?;
    (chars.next().is_none() && !first.is_control()).then_some(first)
}

fn named_key(name: &str) -> Option<Key> {
    let lower = name.to_ascii_lowercase();
    let key = match lower.as_str() {
        "enter" | "return" => Key::Enter,
        "esc" | "escape" => Key::Escape,
        "tab" => Key::Tab,
        "backspace" | "bspace" => Key::Backspace,
        "space" => Key::Space,
        "up" => Key::Cursor(b'A'),
        "down" => Key::Cursor(b'B'),
        "right" => Key::Cursor(b'C'),
        "left" => Key::Cursor(b'D'),
        "home" => Key::Cursor(b'H'),
        "end" => Key::Cursor(b'F'),
        "insert" | "ins" => Key::Tilde(2),
        "delete" | "del" => Key::Tilde(3),
        "pageup" | "pgup" => Key::Tilde(5),
        "pagedown" | "pgdn" => Key::Tilde(6),
        "f1" => Key::Function(b'P'),
        "f2" => Key::Function(b'Q'),
        "f3" => Key::Function(b'R'),
        "f4" => Key::Function(b'S'),
        "f5" => Key::Tilde(15),
        "f6" => Key::Tilde(17),
        "f7" => Key::Tilde(18),
        "f8" => Key::Tilde(19),
        "f9" => Key::Tilde(20),
        "f10" => Key::Tilde(21),
        "f11" => Key::Tilde(23),
        "f12" => Key::Tilde(24),
        _ => {
            return PUNCTUATION_NAMES
                .iter()
                .find(|(known, _)| *known == lower)
                .map(|(_, character)| Key::Char(*character));
        }
    };
    Some(key)
}

/// Parses one key-combo string.
pub fn parse_key_combo(text: &str) -> Result<KeyCombo, PaneError> {
    if text.is_empty() {
        return Err(invalid(text, "empty key"));
    }
    if let Some(character) = single_printable_char(text) {
        let key = if character == ' ' {
            Key::Space
        } else {
            Key::Char(character)
        };
        return Ok(KeyCombo {
            modifiers: Modifiers::default(),
            key,
        });
    }
    let parts: Vec<&str> = text.split('+').collect();
    if parts[0].eq_ignore_ascii_case("prefix") {
        return Err(invalid(
            text,
            "prefix+ bindings are multiplexer shortcuts, not keys",
        ));
    }
    if parts.iter().any(|part| part.is_empty()) {
        return Err(invalid(
            text,
            "empty part in key combo (write the plus key as `plus`)",
        ));
    }
    let (key_name, modifier_names) = parts.split_last().expect("split yields at least one part");
    let mut modifiers = Modifiers::default();
    for name in modifier_names {
        let flag = match name.to_ascii_lowercase().as_str() {
            "ctrl" | "control" => &mut modifiers.ctrl,
            "alt" | "meta" => &mut modifiers.alt,
            "shift" => &mut modifiers.shift,
            other => return Err(invalid(text, format!("unknown modifier `{other}`"))),
        };
        if *flag {
            return Err(invalid(text, format!("modifier `{name}` given twice")));
        }
        *flag = true;
    }
    let key = match single_printable_char(key_name) {
        Some(' ') => Key::Space,
        Some(character) => Key::Char(character),
        None => named_key(key_name)
            .ok_or_else(|| invalid(text, format!("unknown key name `{key_name}`")))?,
    };
    let combo = KeyCombo { modifiers, key };
    // Validate by encoding once; the encoding does not depend on terminal modes for
    // validity.
    combo
        .encode_into(false, &mut Vec::new())
        .map_err(|reason| invalid(text, reason))?;
    Ok(combo)
}

/// Parses every combo, failing on the first invalid one, so that nothing is sent when any
/// is invalid.
pub fn parse_key_combos(texts: &[String]) -> Result<Vec<KeyCombo>, PaneError> {
    texts.iter().map(|text| parse_key_combo(text)).collect()
}

fn ctrl_code(character: char) -> Option<u8> {
    let code = match character {
        'a'..='z' | 'A'..='Z' => (character.to_ascii_lowercase() as u8) & 0x1f,
        '@' | '2' => 0x00,
        '[' | '3' => 0x1b,
        '\\' | '4' => 0x1c,
        ']' | '5' => 0x1d,
        '^' | '6' => 0x1e,
        '_' | '7' | '/' => 0x1f,
        '?' | '8' => 0x7f,
        _ => return None,
    };
    Some(code)
}

fn push_char(out: &mut Vec<u8>, character: char) {
    let mut buffer = [0u8; 4];
    out.extend_from_slice(character.encode_utf8(&mut buffer).as_bytes());
}

impl KeyCombo {
    /// Appends the bytes of this combo. `application_cursor` is the terminal's DECCKM mode,
    /// which changes unmodified cursor keys from `ESC [ A` to `ESC O A`.
    pub fn encode(&self, application_cursor: bool, out: &mut Vec<u8>) {
        self.encode_into(application_cursor, out)
            .expect("combos are validated when parsed");
    }

    fn encode_into(&self, application_cursor: bool, out: &mut Vec<u8>) -> Result<(), String> {
        let modifiers = self.modifiers;
        match self.key {
            Key::Cursor(final_byte) | Key::Function(final_byte) => {
                if modifiers.any() {
                    out.extend_from_slice(
                        format!("\x1b[1;{}", modifiers.xterm_parameter()).as_bytes(),
                    );
                    out.push(final_byte);
                } else if application_cursor || matches!(self.key, Key::Function(_)) {
                    out.extend_from_slice(&[0x1b, b'O', final_byte]);
                } else {
                    out.extend_from_slice(&[0x1b, b'[', final_byte]);
                }
            }
            Key::Tilde(number) => {
                if modifiers.any() {
                    out.extend_from_slice(
                        format!("\x1b[{number};{}~", modifiers.xterm_parameter()).as_bytes(),
                    );
                } else {
                    out.extend_from_slice(format!("\x1b[{number}~").as_bytes());
                }
            }
            Key::Tab if modifiers.shift => {
                if modifiers.ctrl || modifiers.alt {
                    return Err("only shift+tab is supported with modifiers on tab".into());
                }
                out.extend_from_slice(b"\x1b[Z");
            }
            Key::Char(_) | Key::Enter | Key::Escape | Key::Tab | Key::Backspace | Key::Space => {
                if modifiers.alt {
                    out.push(0x1b);
                }
                out.push_plain(self.key, modifiers)?;
            }
        }
        Ok(())
    }
}

trait PushPlain {
    fn push_plain(&mut self, key: Key, modifiers: Modifiers) -> Result<(), String>;
}

impl PushPlain for Vec<u8> {
    /// The bytes of a character-like key with ctrl/shift (alt is handled by the caller).
    fn push_plain(&mut self, key: Key, modifiers: Modifiers) -> Result<(), String> {
        if modifiers.ctrl && modifiers.shift {
            return Err("terminals cannot tell ctrl+shift from ctrl; send the ctrl combo".into());
        }
        match key {
            Key::Char(character) if modifiers.ctrl => {
                let code = ctrl_code(character)
                    .ok_or_else(|| format!("ctrl+{character} has no terminal encoding"))?;
                self.push(code);
            }
            Key::Char(character) if modifiers.shift => {
                if !character.is_ascii_alphabetic() {
                    return Err(format!(
                        "shift+{character} depends on the keyboard layout; send the character itself"
                    ));
                }
                self.push(character.to_ascii_uppercase() as u8);
            }
            Key::Char(character) => push_char(self, character),
            Key::Space if modifiers.ctrl => self.push(0x00),
            Key::Space if modifiers.shift => {
                return Err("shift+space has no terminal encoding".into());
            }
            Key::Space => self.push(b' '),
            Key::Backspace if modifiers.ctrl => self.push(0x08),
            Key::Backspace if modifiers.shift => {
                return Err("shift+backspace has no terminal encoding".into());
            }
            Key::Backspace => self.push(0x7f),
            Key::Enter if modifiers.ctrl || modifiers.shift => {
                return Err("enter only combines with alt".into());
            }
            Key::Enter => self.push(b'\r'),
            Key::Escape if modifiers.ctrl || modifiers.shift => {
                return Err("esc only combines with alt".into());
            }
            Key::Escape => self.push(0x1b),
            Key::Tab if modifiers.ctrl => return Err("ctrl+tab has no terminal encoding".into()),
            Key::Tab => self.push(b'\t'),
            Key::Cursor(_) | Key::Tilde(_) | Key::Function(_) => {
                unreachable!("escape-sequence keys are encoded by the caller")
            }
        }
        Ok(())
    }
}

/// Parses and encodes a list of combos into the bytes to write.
pub fn encode_key_combos(combos: &[KeyCombo], application_cursor: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for combo in combos {
        combo.encode(application_cursor, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> Vec<u8> {
        let combo = parse_key_combo(text).unwrap_or_else(|error| panic!("{text}: {error}"));
        let mut out = Vec::new();
        combo.encode(false, &mut out);
        out
    }

    fn rejected(text: &str) -> String {
        match parse_key_combo(text) {
            Err(PaneError::InvalidKey { key, reason }) => {
                assert_eq!(key, text, "the error names the offending key");
                reason
            }
            other => panic!("{text} should be rejected, got {other:?}"),
        }
    }

    #[test]
    fn printable_keys_are_sent_literally() {
        assert_eq!(bytes("a"), b"a");
        assert_eq!(bytes("A"), b"A");
        assert_eq!(bytes("+"), b"+");
        assert_eq!(bytes("é"), "é".as_bytes());
        assert_eq!(bytes(" "), b" ");
        assert_eq!(bytes("中"), "中".as_bytes());
    }

    #[test]
    fn special_keys() {
        assert_eq!(bytes("enter"), b"\r");
        assert_eq!(bytes("Return"), b"\r");
        assert_eq!(bytes("esc"), b"\x1b");
        assert_eq!(bytes("ESCAPE"), b"\x1b");
        assert_eq!(bytes("tab"), b"\t");
        assert_eq!(bytes("backspace"), b"\x7f");
        assert_eq!(bytes("bspace"), b"\x7f");
        assert_eq!(bytes("space"), b" ");
        assert_eq!(bytes("up"), b"\x1b[A");
        assert_eq!(bytes("down"), b"\x1b[B");
        assert_eq!(bytes("right"), b"\x1b[C");
        assert_eq!(bytes("left"), b"\x1b[D");
        assert_eq!(bytes("home"), b"\x1b[H");
        assert_eq!(bytes("end"), b"\x1b[F");
        assert_eq!(bytes("insert"), b"\x1b[2~");
        assert_eq!(bytes("delete"), b"\x1b[3~");
        assert_eq!(bytes("del"), b"\x1b[3~");
        assert_eq!(bytes("pageup"), b"\x1b[5~");
        assert_eq!(bytes("pgdn"), b"\x1b[6~");
    }

    #[test]
    fn application_cursor_mode_changes_unmodified_cursor_keys_only() {
        let up = parse_key_combo("up").unwrap();
        let mut out = Vec::new();
        up.encode(true, &mut out);
        assert_eq!(out, b"\x1bOA");
        let ctrl_up = parse_key_combo("ctrl+up").unwrap();
        let mut out = Vec::new();
        ctrl_up.encode(true, &mut out);
        assert_eq!(out, b"\x1b[1;5A");
    }

    #[test]
    fn function_keys() {
        let expected: [&[u8]; 12] = [
            b"\x1bOP",
            b"\x1bOQ",
            b"\x1bOR",
            b"\x1bOS",
            b"\x1b[15~",
            b"\x1b[17~",
            b"\x1b[18~",
            b"\x1b[19~",
            b"\x1b[20~",
            b"\x1b[21~",
            b"\x1b[23~",
            b"\x1b[24~",
        ];
        for (index, expected) in expected.iter().enumerate() {
            assert_eq!(
                bytes(&format!("f{}", index + 1)),
                *expected,
                "f{}",
                index + 1
            );
        }
        assert_eq!(bytes("shift+f1"), b"\x1b[1;2P");
        assert_eq!(bytes("ctrl+f5"), b"\x1b[15;5~");
        assert!(rejected("f13").contains("unknown key name"));
        assert!(rejected("f0").contains("unknown key name"));
    }

    #[test]
    fn ctrl_combos() {
        assert_eq!(bytes("ctrl+c"), b"\x03");
        assert_eq!(bytes("ctrl+C"), b"\x03");
        assert_eq!(bytes("ctrl+h"), b"\x08");
        assert_eq!(bytes("control+j"), b"\x0a");
        assert_eq!(bytes("CTRL+a"), b"\x01");
        assert_eq!(bytes("ctrl+z"), b"\x1a");
        assert_eq!(bytes("ctrl+space"), b"\x00");
        assert_eq!(bytes("ctrl+@"), b"\x00");
        assert_eq!(bytes("ctrl+["), b"\x1b");
        assert_eq!(bytes("ctrl+backslash"), b"\x1c");
        assert_eq!(bytes("ctrl+]"), b"\x1d");
        assert_eq!(bytes("ctrl+^"), b"\x1e");
        assert_eq!(bytes("ctrl+underscore"), b"\x1f");
        assert_eq!(bytes("ctrl+slash"), b"\x1f");
        assert_eq!(bytes("ctrl+question"), b"\x7f");
        assert_eq!(bytes("ctrl+2"), b"\x00");
        assert_eq!(bytes("ctrl+8"), b"\x7f");
        assert_eq!(bytes("ctrl+backspace"), b"\x08");
        assert_eq!(bytes("ctrl+right"), b"\x1b[1;5C");
        assert_eq!(bytes("ctrl+delete"), b"\x1b[3;5~");
    }

    #[test]
    fn alt_and_shift_combos() {
        assert_eq!(bytes("alt+x"), b"\x1bx");
        assert_eq!(bytes("meta+x"), b"\x1bx");
        assert_eq!(bytes("alt+X"), b"\x1bX");
        assert_eq!(bytes("alt+enter"), b"\x1b\r");
        assert_eq!(bytes("alt+backspace"), b"\x1b\x7f");
        assert_eq!(bytes("alt+ctrl+a"), b"\x1b\x01");
        assert_eq!(bytes("ctrl+alt+a"), b"\x1b\x01");
        assert_eq!(bytes("alt+up"), b"\x1b[1;3A");
        assert_eq!(bytes("alt+minus"), b"\x1b-");
        assert_eq!(bytes("shift+tab"), b"\x1b[Z");
        assert_eq!(bytes("shift+a"), b"A");
        assert_eq!(bytes("shift+up"), b"\x1b[1;2A");
        assert_eq!(bytes("ctrl+shift+up"), b"\x1b[1;6A");
        assert_eq!(bytes("shift+pageup"), b"\x1b[5;2~");
    }

    #[test]
    fn every_punctuation_name_maps_to_its_character() {
        for (name, character) in PUNCTUATION_NAMES {
            assert_eq!(bytes(name), character.to_string().as_bytes(), "{name}");
            assert_eq!(
                bytes(&name.to_uppercase()),
                character.to_string().as_bytes(),
                "{name} upper case"
            );
        }
        assert_eq!(bytes("minus"), b"-");
        assert_eq!(bytes("plus"), b"+");
        assert_eq!(bytes("comma"), b",");
        assert_eq!(bytes("period"), b".");
        assert_eq!(bytes("slash"), b"/");
    }

    #[test]
    fn invalid_combos_are_rejected_with_a_reason() {
        assert!(rejected("").contains("empty"));
        assert!(rejected("prefix+c").contains("prefix"));
        assert!(rejected("PREFIX+%").contains("prefix"));
        assert!(rejected("ctrl++").contains("plus"));
        assert!(rejected("ctrl+").contains("empty part"));
        assert!(rejected("+a").contains("empty part"));
        assert!(rejected("hyper+a").contains("unknown modifier"));
        assert!(rejected("ctrl+ctrl+a").contains("twice"));
        assert!(rejected("ctrl+1").contains("no terminal encoding"));
        assert!(rejected("ctrl+é").contains("no terminal encoding"));
        assert!(rejected("shift+enter").contains("alt"));
        assert!(rejected("ctrl+enter").contains("alt"));
        assert!(rejected("shift+1").contains("layout"));
        assert!(rejected("ctrl+shift+a").contains("ctrl+shift"));
        assert!(rejected("ctrl+tab").contains("ctrl+tab"));
        assert!(rejected("alt+shift+tab").contains("shift+tab"));
        assert!(rejected("shift+space").contains("shift+space"));
        assert!(rejected("ctrl+esc").contains("esc"));
        assert!(rejected("enterr").contains("unknown key name"));
        assert!(rejected("C-x").contains("unknown key name"));
        assert!(rejected("\u{7}").contains("unknown key name"));
        assert!(rejected("\n").contains("unknown key name"));
    }

    #[test]
    fn a_list_with_one_bad_combo_is_rejected_as_a_whole() {
        let keys = vec![
            "a".to_string(),
            "ctrl+c".to_string(),
            "nope".to_string(),
            "enter".to_string(),
        ];
        match parse_key_combos(&keys) {
            Err(PaneError::InvalidKey { key, .. }) => assert_eq!(key, "nope"),
            other => panic!("expected invalid_key, got {other:?}"),
        }
        let good = parse_key_combos(&[
            "e".into(),
            "c".into(),
            "h".into(),
            "o".into(),
            "enter".into(),
        ])
        .unwrap();
        assert_eq!(encode_key_combos(&good, false), b"echo\r");
    }
}
