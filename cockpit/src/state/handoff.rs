//! The handoff screen: choose a target provider, read the server's digest-bound artifact
//! (`mission.handoff.preview`), then ask for consent to start it with exactly that
//! artifact (`generated_at_millis` + `artifact_sha256`).

use nagi_schema::cockpit::CockpitAction;
use nagi_schema::handoff::MissionHandoffArtifactV1;
use nagi_schema::mission::MissionProvider;
use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::fields::cycle;
use super::forms::FormOutcome;
use crate::request::Request;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandoffField {
    Target,
    WriteScope,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HandoffForm {
    pub mission_id: String,
    pub to: MissionProvider,
    pub write_scope: bool,
    pub field: HandoffField,
    /// The artifact the server built for `to`; `None` until previewed.
    pub artifact: Option<MissionHandoffArtifactV1>,
    /// A preview request is on its way.
    pub waiting: bool,
    pub scroll: u16,
}

impl HandoffForm {
    pub fn new(mission_id: &str, current: Option<MissionProvider>) -> HandoffForm {
        // Offer a provider other than the current one first.
        let to = MissionProvider::ALL
            .into_iter()
            .find(|provider| Some(*provider) != current)
            .unwrap_or(MissionProvider::Codex);
        HandoffForm {
            mission_id: mission_id.to_string(),
            to,
            write_scope: false,
            field: HandoffField::Target,
            artifact: None,
            waiting: false,
            scroll: 0,
        }
    }

    /// An ACP target always gets write scope.
    pub fn effective_write_scope(&self) -> bool {
        self.write_scope || self.to == MissionProvider::Acp
    }

    fn preview_request(&mut self) -> FormOutcome {
        self.waiting = true;
        FormOutcome::Submit(Request::HandoffPreview {
            mission_id: self.mission_id.clone(),
            to: self.to,
        })
    }

    pub fn accept_artifact(
        &mut self,
        mission_id: &str,
        to: MissionProvider,
        artifact: MissionHandoffArtifactV1,
    ) {
        if mission_id == self.mission_id && to == self.to {
            self.waiting = false;
            self.artifact = Some(artifact);
            self.scroll = 0;
        }
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> FormOutcome {
        match key.code {
            KeyCode::Esc => FormOutcome::Cancel,
            KeyCode::Up | KeyCode::Down | KeyCode::Tab | KeyCode::BackTab => {
                self.field = match self.field {
                    HandoffField::Target => HandoffField::WriteScope,
                    HandoffField::WriteScope => HandoffField::Target,
                };
                FormOutcome::Continue
            }
            KeyCode::PageDown => {
                self.scroll = self.scroll.saturating_add(5);
                FormOutcome::Continue
            }
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_sub(5);
                FormOutcome::Continue
            }
            KeyCode::Left | KeyCode::Right | KeyCode::Char(' ') => {
                match self.field {
                    HandoffField::Target => {
                        let delta = if key.code == KeyCode::Left { -1 } else { 1 };
                        let index = MissionProvider::ALL
                            .iter()
                            .position(|provider| *provider == self.to)
                            .unwrap_or(0);
                        self.to =
                            MissionProvider::ALL[cycle(index, MissionProvider::ALL.len(), delta)];
                        // The artifact names its target: another target needs another preview.
                        self.artifact = None;
                    }
                    HandoffField::WriteScope => self.write_scope = !self.write_scope,
                }
                FormOutcome::Continue
            }
            KeyCode::Char('p') => self.preview_request(),
            KeyCode::Enter => match &self.artifact {
                None if self.waiting => {
                    FormOutcome::Problem("waiting for the server's handoff preview".into())
                }
                None => self.preview_request(),
                Some(artifact) => {
                    FormOutcome::Submit(Request::Preview(CockpitAction::HandoffStart {
                        mission_id: self.mission_id.clone(),
                        to: self.to,
                        generated_at_millis: artifact.generated_at_millis,
                        artifact_sha256: artifact.artifact_sha256.clone(),
                        write_scope: self.effective_write_scope(),
                    }))
                }
            },
            _ => FormOutcome::Continue,
        }
    }
}
