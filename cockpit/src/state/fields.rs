//! The small input pieces forms are made of: a one-line text field, and key helpers.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A one-line text field edited at its end (typing appends, Backspace removes the last
/// character, Ctrl-U clears). Forms are short; a movable cursor is not worth its keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextField {
    pub text: String,
}

impl TextField {
    pub fn with_text(text: &str) -> TextField {
        TextField {
            text: text.to_string(),
        }
    }

    /// Applies an editing key; `true` when the key was one.
    pub fn edit(&mut self, key: KeyEvent) -> bool {
        match key.code {
            KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.text.clear();
                true
            }
            KeyCode::Char(character)
                if !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                self.text.push(character);
                true
            }
            KeyCode::Backspace => {
                self.text.pop();
                true
            }
            _ => false,
        }
    }

    /// The text without surrounding blanks.
    pub fn value(&self) -> &str {
        self.text.trim()
    }
}

/// Moves a cursor over `count` entries by `delta`, wrapping around.
pub fn cycle(index: usize, count: usize, delta: isize) -> usize {
    if count == 0 {
        return 0;
    }
    (index as isize + delta).rem_euclid(count as isize) as usize
}

pub fn is_ctrl_c(key: &KeyEvent) -> bool {
    key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_fields_append_remove_and_clear() {
        let mut field = TextField::default();
        for character in "ab c".chars() {
            assert!(field.edit(KeyEvent::from(KeyCode::Char(character))));
        }
        assert!(field.edit(KeyEvent::from(KeyCode::Backspace)));
        assert_eq!(field.text, "ab ");
        assert_eq!(field.value(), "ab");
        assert!(!field.edit(KeyEvent::from(KeyCode::Enter)));
        assert!(field.edit(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)));
        assert_eq!(field.text, "");
    }

    #[test]
    fn cycling_wraps_both_ways() {
        assert_eq!(cycle(0, 3, -1), 2);
        assert_eq!(cycle(2, 3, 1), 0);
        assert_eq!(cycle(0, 0, 1), 0);
    }
}
