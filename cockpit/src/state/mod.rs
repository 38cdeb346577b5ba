//! The cockpit's state, free of I/O: [`App::handle_key`] and [`App::apply`] are the
//! reducer. Keys and server updates go in; the new state and the [`Request`]s to send
//! come out. Rendering (`ui/`) only reads it, and the client threads (`client/`) only
//! carry requests and updates, so every flow can be unit-tested without a terminal or a
//! socket.

pub mod answer;
pub mod consent;
pub mod diff;
pub mod fields;
pub mod forms;
pub mod handoff;
mod keys;
mod updates;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use nagi_schema::attention::AttentionItemV1;
use nagi_schema::mission::{MissionStatus, MissionViewV1};

use answer::AnswerForm;
use consent::ConsentDialog;
use forms::{CloseConfirm, DismissForm, EvidenceForm, StartForm};
use handoff::HandoffForm;

pub use crate::request::{Request, ServerUpdate, WatchStatus};

/// Which list the arrow keys move in on the main screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Missions,
    Attention,
}

/// What fills the screen (the help overlay is drawn over any of them).
#[derive(Debug, Clone, PartialEq)]
pub enum Screen {
    Main,
    Start(StartForm),
    Evidence(EvidenceForm),
    Answer(AnswerForm),
    Dismiss(DismissForm),
    Handoff(HandoffForm),
    Close(CloseConfirm),
    Consent(ConsentDialog),
    /// The selected mission's change against its base.
    Diff(diff::DiffView),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Connection {
    Connecting,
    Connected,
    Unreachable(String),
}

/// What `cockpit.hello` said about this terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsentPermission {
    Unknown,
    Allowed,
    Refused(String),
}

/// The line above the key bar: what just happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub text: String,
    pub is_error: bool,
}

/// A check run in flight, from `mission_checks_started` until `mission_checks_finished`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChecksProgress {
    pub run_id: String,
    pub purpose: String,
    pub check_count: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchState {
    Joining,
    Live,
    Ended(String),
}

/// The pane shown live in the detail panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watching {
    pub pane_id: String,
    pub mission_id: String,
    pub state: WatchState,
}

/// Which attention item is selected. An attention id alone does not name an item: ids are
/// facts of the host that raised the item, and a fleet lists every host's items, so two
/// can share one. Their missions differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttentionKey {
    pub mission_id: String,
    pub attention_id: String,
}

impl AttentionKey {
    pub fn of(item: &AttentionItemV1) -> AttentionKey {
        AttentionKey {
            mission_id: item.mission_id.clone(),
            attention_id: item.attention_id.clone(),
        }
    }

    pub fn is_of(&self, item: &AttentionItemV1) -> bool {
        item.mission_id == self.mission_id && item.attention_id == self.attention_id
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct App {
    pub missions: Vec<MissionViewV1>,
    /// Unresolved attention items of every mission.
    pub attention: Vec<AttentionItemV1>,
    pub selected_mission: Option<String>,
    pub selected_attention: Option<AttentionKey>,
    pub focus: Focus,
    pub screen: Screen,
    pub help_open: bool,
    pub notice: Option<Notice>,
    pub connection: Connection,
    pub consent: ConsentPermission,
    /// Check runs in flight, by mission id.
    pub checks_running: BTreeMap<String, ChecksProgress>,
    pub watching: Option<Watching>,
    /// Advances with every tick of the main loop; drives the progress spinner.
    pub spinner: usize,
    /// What the person should hear of (an attention item opened, a mission that waits for
    /// review, is ready, failed or is blocked): rung and raised by the main loop.
    pub alerts: Vec<Alert>,
    pub quit: bool,
}

/// A notification the cockpit's own terminal shows (bell, OSC 9 and OSC 777).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    pub title: String,
    pub body: String,
}

impl Alert {
    /// The bytes that ring the terminal's bell and raise its notification: OSC 9 (iTerm2,
    /// Windows Terminal, …) and OSC 777 (rxvt, foot, kitty, …). Control characters and the
    /// `;` that separates OSC 777's fields are taken out of the text.
    pub fn escape_sequences(&self) -> String {
        let clean = |text: &str| -> String {
            text.chars()
                .map(|character| {
                    if character.is_control() || character == ';' {
                        ' '
                    } else {
                        character
                    }
                })
                .collect()
        };
        let (title, body) = (clean(&self.title), clean(&self.body));
        format!("\x07\x1b]9;{title}: {body}\x07\x1b]777;notify;{title};{body}\x07")
    }
}

impl Default for App {
    fn default() -> App {
        App::new()
    }
}

impl App {
    pub fn new() -> App {
        App {
            missions: Vec::new(),
            attention: Vec::new(),
            selected_mission: None,
            selected_attention: None,
            focus: Focus::Missions,
            screen: Screen::Main,
            help_open: false,
            notice: None,
            connection: Connection::Connecting,
            consent: ConsentPermission::Unknown,
            checks_running: BTreeMap::new(),
            watching: None,
            spinner: 0,
            alerts: Vec::new(),
            quit: false,
        }
    }

    pub fn tick(&mut self) {
        self.spinner = self.spinner.wrapping_add(1);
    }

    pub fn selected_mission(&self) -> Option<&MissionViewV1> {
        let id = self.selected_mission.as_deref()?;
        self.missions
            .iter()
            .find(|mission| mission.mission_id == id)
    }

    pub fn selected_mission_index(&self) -> Option<usize> {
        let id = self.selected_mission.as_deref()?;
        self.missions
            .iter()
            .position(|mission| mission.mission_id == id)
    }

    pub fn selected_attention(&self) -> Option<&AttentionItemV1> {
        let key = self.selected_attention.as_ref()?;
        self.attention.iter().find(|item| key.is_of(item))
    }

    pub fn selected_attention_index(&self) -> Option<usize> {
        let key = self.selected_attention.as_ref()?;
        self.attention.iter().position(|item| key.is_of(item))
    }

    /// Whether a long operation of this mission is under way: the provider or the
    /// recipe starting (`preparing`), or declared checks running.
    pub fn busy_with(&self, mission: &MissionViewV1) -> Option<String> {
        if let Some(checks) = self.checks_running.get(&mission.mission_id) {
            let noun = if checks.check_count == 1 {
                "check"
            } else {
                "checks"
            };
            return Some(format!(
                "running {} {noun} ({}) for run {}",
                checks.check_count, checks.purpose, checks.run_id
            ));
        }
        if mission.status == MissionStatus::Preparing {
            return Some(
                mission
                    .status_reason
                    .clone()
                    .unwrap_or_else(|| "preparing the run".into()),
            );
        }
        None
    }

    pub(crate) fn info(&mut self, text: impl Into<String>) {
        self.notice = Some(Notice {
            text: text.into(),
            is_error: false,
        });
    }

    pub(crate) fn error(&mut self, text: impl Into<String>) {
        self.notice = Some(Notice {
            text: text.into(),
            is_error: true,
        });
    }

    /// Keeps the selections on items that still exist (the first one otherwise).
    fn repair_selection(&mut self) {
        if self.selected_mission_index().is_none() {
            self.selected_mission = self
                .missions
                .first()
                .map(|mission| mission.mission_id.clone());
        }
        if self.selected_attention_index().is_none() {
            self.selected_attention = self.attention.first().map(AttentionKey::of);
        }
    }
}
