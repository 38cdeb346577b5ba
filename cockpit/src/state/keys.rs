//! The key half of the reducer.

use nagi_schema::cockpit::CockpitAction;
use nagi_schema::mission::MissionStatus;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use super::answer::{AnswerForm, AnswerMode, answer_mode};
use super::consent::{ConsentDialog, ConsentOutcome};
use super::fields::{cycle, is_ctrl_c};
use super::forms::{
    CloseConfirm, DismissForm, EvidenceField, EvidenceForm, FormOutcome, StartField, StartForm,
};
use super::handoff::HandoffForm;
use super::{App, AttentionKey, Focus, Screen, WatchState, Watching};
use crate::request::Request;

impl Screen {
    /// Whether typed characters go into a text field (then `?` is text, not help).
    pub fn takes_text(&self) -> bool {
        match self {
            Screen::Start(form) => matches!(
                form.current_field(),
                StartField::RunId | StartField::WorktreePath
            ),
            Screen::Evidence(form) => matches!(
                form.current_field(),
                EvidenceField::Reviewer | EvidenceField::Reason
            ),
            Screen::Dismiss(_) => true,
            Screen::Answer(form) => {
                form.mode() == AnswerMode::Questions && {
                    let question = &form.item.questions[form.question];
                    form.inputs[form.question].cursor >= question.options.len()
                }
            }
            Screen::Main
            | Screen::Handoff(_)
            | Screen::Close(_)
            | Screen::Consent(_)
            | Screen::Diff(_) => false,
        }
    }
}

impl App {
    /// Applies one key; returns what to send.
    pub fn handle_key(&mut self, key: KeyEvent) -> Vec<Request> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        if is_ctrl_c(&key) {
            return self.quit_requests();
        }
        if self.help_open {
            // Any key closes the help.
            self.help_open = false;
            return Vec::new();
        }
        if key.code == KeyCode::F(1)
            || (key.code == KeyCode::Char('?') && !self.screen.takes_text())
        {
            self.help_open = true;
            return Vec::new();
        }
        let screen = std::mem::replace(&mut self.screen, Screen::Main);
        match screen {
            Screen::Main => self.main_key(key),
            Screen::Consent(mut dialog) => match dialog.handle_key(key) {
                ConsentOutcome::Continue => {
                    self.screen = Screen::Consent(dialog);
                    Vec::new()
                }
                ConsentOutcome::Back => {
                    self.info("nothing was decided");
                    self.screen = *dialog.return_to;
                    Vec::new()
                }
                ConsentOutcome::Send(request) => {
                    self.screen = Screen::Consent(dialog);
                    vec![request]
                }
            },
            mut screen => {
                let outcome = match &mut screen {
                    Screen::Start(form) => form.handle_key(key),
                    Screen::Evidence(form) => form.handle_key(key),
                    Screen::Answer(form) => form.handle_key(key),
                    Screen::Dismiss(form) => form.handle_key(key),
                    Screen::Handoff(form) => form.handle_key(key),
                    Screen::Close(form) => form.handle_key(key),
                    Screen::Diff(view) => view.handle_key(key),
                    Screen::Main | Screen::Consent(_) => unreachable!("handled above"),
                };
                self.form_outcome(outcome, screen)
            }
        }
    }

    fn form_outcome(&mut self, outcome: FormOutcome, screen: Screen) -> Vec<Request> {
        match outcome {
            FormOutcome::Continue => {
                self.screen = screen;
                Vec::new()
            }
            FormOutcome::Cancel => {
                self.notice = None;
                Vec::new()
            }
            FormOutcome::Problem(problem) => {
                self.error(problem);
                self.screen = screen;
                Vec::new()
            }
            FormOutcome::Submit(Request::Preview(action)) => {
                self.notice = None;
                self.screen = Screen::Consent(ConsentDialog::new(action.clone(), screen));
                vec![Request::Preview(action)]
            }
            FormOutcome::Submit(request @ Request::HandoffPreview { .. }) => {
                self.info("asking the server for the handoff artifact…");
                self.screen = screen;
                vec![request]
            }
            FormOutcome::Submit(request @ Request::Close { .. }) => {
                self.info("closing: the command checks run again before the mission is archived…");
                vec![request]
            }
            FormOutcome::Submit(request) => {
                self.screen = screen;
                vec![request]
            }
        }
    }

    fn quit_requests(&mut self) -> Vec<Request> {
        self.quit = true;
        if self.watching.take().is_some() {
            vec![Request::StopWatching]
        } else {
            Vec::new()
        }
    }

    fn move_selection(&mut self, delta: isize) {
        match self.focus {
            Focus::Missions => {
                let index = cycle(
                    self.selected_mission_index().unwrap_or(0),
                    self.missions.len(),
                    delta,
                );
                self.selected_mission = self
                    .missions
                    .get(index)
                    .map(|mission| mission.mission_id.clone());
            }
            Focus::Attention => {
                let index = cycle(
                    self.selected_attention_index().unwrap_or(0),
                    self.attention.len(),
                    delta,
                );
                self.selected_attention = self.attention.get(index).map(AttentionKey::of);
            }
        }
    }

    /// Runs the selected mission's declared checks again now (`mission.verify`).
    fn verify(&mut self) -> Vec<Request> {
        let Some(mission) = self.selected_mission() else {
            self.error("select a mission to verify");
            return Vec::new();
        };
        let mission_id = mission.mission_id.clone();
        self.info(format!(
            "{mission_id}: running the declared checks with your OS permissions…"
        ));
        vec![Request::Verify { mission_id }]
    }

    /// The consent dialog of landing the selected mission the default way: squash into
    /// the branch its worktree was made from (`nagi mission land` has the other choices).
    fn open_land(&mut self) -> Vec<Request> {
        let Some(mission) = self.selected_mission() else {
            self.error("select a mission to land");
            return Vec::new();
        };
        let action = CockpitAction::Land {
            mission_id: mission.mission_id.clone(),
            into: None,
            strategy: nagi_schema::land::LandStrategy::Squash,
            message: None,
            push_remote: None,
            pull_request: false,
        };
        self.notice = None;
        self.screen = Screen::Consent(ConsentDialog::new(action.clone(), Screen::Main));
        vec![Request::Preview(action)]
    }

    /// The consent dialog of syncing the selected mission's branch onto the branch it
    /// lands in.
    fn open_sync(&mut self) -> Vec<Request> {
        let Some(mission) = self.selected_mission() else {
            self.error("select a mission to sync");
            return Vec::new();
        };
        let action = CockpitAction::Sync {
            mission_id: mission.mission_id.clone(),
            onto: None,
        };
        self.notice = None;
        self.screen = Screen::Consent(ConsentDialog::new(action.clone(), Screen::Main));
        vec![Request::Preview(action)]
    }

    /// The diff view of the selected mission; the server is asked for the diff.
    fn open_diff(&mut self) -> Vec<Request> {
        let Some(mission) = self.selected_mission() else {
            self.error("select a mission to see its diff");
            return Vec::new();
        };
        let mission_id = mission.mission_id.clone();
        self.screen = Screen::Diff(super::diff::DiffView::new(&mission_id));
        vec![Request::Diff { mission_id }]
    }

    fn main_key(&mut self, key: KeyEvent) -> Vec<Request> {
        match key.code {
            KeyCode::Char('q') => return self.quit_requests(),
            KeyCode::Tab | KeyCode::BackTab => {
                self.focus = match self.focus {
                    Focus::Missions => Focus::Attention,
                    Focus::Attention => Focus::Missions,
                };
            }
            KeyCode::Up | KeyCode::Char('k') => self.move_selection(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_selection(1),
            KeyCode::Char('r') => return vec![Request::Refresh],
            KeyCode::Esc if self.watching.is_some() => return self.toggle_watch(),
            KeyCode::Char('w') => return self.toggle_watch(),
            KeyCode::Enter if self.focus == Focus::Attention => self.open_attention(false),
            KeyCode::Enter => {
                // From a mission, Enter goes to its first open attention item.
                let mission_id = self.selected_mission.clone();
                if let Some(item) = self
                    .attention
                    .iter()
                    .find(|item| Some(&item.mission_id) == mission_id.as_ref())
                {
                    self.selected_attention = Some(AttentionKey::of(item));
                    self.focus = Focus::Attention;
                }
            }
            KeyCode::Char('x') if self.focus == Focus::Attention => self.open_attention(true),
            KeyCode::Char('s') => self.open_start(),
            KeyCode::Char('e') => self.open_evidence(),
            KeyCode::Char('h') => self.open_handoff(),
            KeyCode::Char('c') => self.open_close(),
            KeyCode::Char('d') => return self.open_diff(),
            KeyCode::Char('v') => return self.verify(),
            KeyCode::Char('L') => return self.open_land(),
            KeyCode::Char('S') => return self.open_sync(),
            _ => {}
        }
        Vec::new()
    }

    fn open_attention(&mut self, dismiss: bool) {
        let Some(item) = self.selected_attention().cloned() else {
            self.info("no open attention item");
            return;
        };
        if dismiss || answer_mode(&item) == AnswerMode::DismissOnly {
            let about = format!(
                "{} ({:?}): {}",
                item.attention_id, item.kind, item.requested_action
            );
            self.screen = Screen::Dismiss(DismissForm {
                attention_id: item.attention_id.clone(),
                mission_id: item.mission_id.clone(),
                about,
                reason: Default::default(),
            });
        } else {
            self.screen = Screen::Answer(AnswerForm::new(item));
        }
    }

    fn open_start(&mut self) {
        let Some(mission) = self.selected_mission() else {
            return self.info("no mission selected");
        };
        if mission.status == MissionStatus::Archived {
            return self.error(format!("{} is archived", mission.mission_id));
        }
        if !mission.closure_configured {
            return self.error(format!(
                "{} has no closure plan yet: configure it first (nagi mission configure)",
                mission.mission_id
            ));
        }
        self.screen = Screen::Start(StartForm::new(mission));
    }

    fn open_evidence(&mut self) {
        let Some(mission) = self.selected_mission() else {
            return self.info("no mission selected");
        };
        match EvidenceForm::new(mission) {
            Some(form) => self.screen = Screen::Evidence(form),
            None => {
                let id = mission.mission_id.clone();
                self.error(format!("{id} declares no manual check"))
            }
        }
    }

    fn open_handoff(&mut self) {
        let Some(mission) = self.selected_mission() else {
            return self.info("no mission selected");
        };
        match &mission.run {
            Some(run) => {
                self.screen =
                    Screen::Handoff(HandoffForm::new(&mission.mission_id, Some(run.provider)))
            }
            None => {
                let id = mission.mission_id.clone();
                self.error(format!("{id} has no run to hand off"))
            }
        }
    }

    fn open_close(&mut self) {
        let Some(mission) = self.selected_mission() else {
            return self.info("no mission selected");
        };
        self.screen = Screen::Close(CloseConfirm {
            mission_id: mission.mission_id.clone(),
            title: mission.title.clone(),
        });
    }

    fn toggle_watch(&mut self) -> Vec<Request> {
        if self.watching.take().is_some() {
            self.info("stopped watching the pane");
            return vec![Request::StopWatching];
        }
        let Some(mission) = self.selected_mission() else {
            self.info("no mission selected");
            return Vec::new();
        };
        let Some(pane_id) = mission.run.as_ref().and_then(|run| run.pane_id.clone()) else {
            let id = mission.mission_id.clone();
            self.error(format!("{id} has no run pane to watch"));
            return Vec::new();
        };
        self.watching = Some(Watching {
            pane_id: pane_id.clone(),
            mission_id: mission.mission_id.clone(),
            state: WatchState::Joining,
        });
        vec![Request::Watch { pane_id }]
    }
}
