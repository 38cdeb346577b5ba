//! The consent dialog: it shows the server's preview of an action (every line, the
//! recipe's scope and the digest) and sends the person's decision with that digest.
//! Nothing is decided here: `y` and `n` only become `cockpit.decide` requests.

use nagi_schema::cockpit::{CockpitAction, CockpitDecision, CockpitPreview};
use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::Screen;
use crate::request::Request;

#[derive(Debug, Clone, PartialEq)]
pub struct ConsentDialog {
    pub action: CockpitAction,
    /// `None` while the server has not answered the preview yet.
    pub preview: Option<CockpitPreview>,
    /// A decision on its way to the server.
    pub deciding: Option<CockpitDecision>,
    /// Why the preview or the decision was refused.
    pub error: Option<String>,
    /// Said above the preview, e.g. that it changed since it was first shown.
    pub note: Option<String>,
    pub scroll: u16,
    /// Where Esc goes: the form the action came from.
    pub return_to: Box<Screen>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ConsentOutcome {
    Continue,
    Back,
    Send(Request),
}

impl ConsentDialog {
    pub fn new(action: CockpitAction, return_to: Screen) -> ConsentDialog {
        ConsentDialog {
            action,
            preview: None,
            deciding: None,
            error: None,
            note: None,
            scroll: 0,
            return_to: Box::new(return_to),
        }
    }

    fn decide(&mut self, decision: CockpitDecision) -> ConsentOutcome {
        let Some(preview) = &self.preview else {
            return ConsentOutcome::Continue;
        };
        if self.deciding.is_some() {
            return ConsentOutcome::Continue;
        }
        self.deciding = Some(decision);
        self.error = None;
        ConsentOutcome::Send(Request::Decide {
            action: self.action.clone(),
            shown_digest: preview.digest.clone(),
            decision,
        })
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> ConsentOutcome {
        match key.code {
            KeyCode::Esc => ConsentOutcome::Back,
            KeyCode::Char('y') => self.decide(CockpitDecision::Approve),
            KeyCode::Char('n') => self.decide(CockpitDecision::Deny),
            KeyCode::Down | KeyCode::Char('j') => {
                self.scroll = self.scroll.saturating_add(1);
                ConsentOutcome::Continue
            }
            KeyCode::Up | KeyCode::Char('k') => {
                self.scroll = self.scroll.saturating_sub(1);
                ConsentOutcome::Continue
            }
            KeyCode::PageDown => {
                self.scroll = self.scroll.saturating_add(10);
                ConsentOutcome::Continue
            }
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_sub(10);
                ConsentOutcome::Continue
            }
            _ => ConsentOutcome::Continue,
        }
    }
}
