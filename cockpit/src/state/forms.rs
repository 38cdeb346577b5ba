//! The forms that end in a consent preview: starting a run, recording manual evidence,
//! dismissing an attention item, and confirming a close. Each form turns keys into a
//! [`FormOutcome`]; only a complete form produces a request.

use nagi_schema::cockpit::CockpitAction;
use nagi_schema::mission::{MissionCheckKindV1, MissionProvider, MissionViewV1};
use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::fields::{TextField, cycle};
use crate::request::Request;

/// What a key did to a form.
#[derive(Debug, Clone, PartialEq)]
pub enum FormOutcome {
    Continue,
    Cancel,
    Submit(Request),
    /// The form is not complete; the text says what is missing.
    Problem(String),
}

/// Moves the field cursor with ↑/↓/Tab/Shift-Tab; `true` when the key did.
fn move_field(field: &mut usize, count: usize, key: &KeyEvent) -> bool {
    let delta = match key.code {
        KeyCode::Up | KeyCode::BackTab => -1,
        KeyCode::Down | KeyCode::Tab => 1,
        _ => return false,
    };
    *field = cycle(*field, count, delta);
    true
}

fn is_toggle_key(key: &KeyEvent) -> bool {
    matches!(
        key.code,
        KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right
    )
}

/// Rows of the start form, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartField {
    Provider,
    RunId,
    WorktreePath,
    InPlace,
    WriteScope,
    ProjectRecipe,
    DeclaredChecks,
}

pub const START_FIELDS: [StartField; 7] = [
    StartField::Provider,
    StartField::RunId,
    StartField::WorktreePath,
    StartField::InPlace,
    StartField::WriteScope,
    StartField::ProjectRecipe,
    StartField::DeclaredChecks,
];

/// Start a run of a configured mission with the authority only the cockpit can grant.
#[derive(Debug, Clone, PartialEq)]
pub struct StartForm {
    pub mission_id: String,
    pub provider: MissionProvider,
    pub run_id: TextField,
    /// Empty: the mission's own worktree (or, with `in_place`, the repository's checkout).
    pub worktree_path: TextField,
    /// Run in the repository's checkout itself rather than the mission's own worktree.
    pub in_place: bool,
    pub write_scope: bool,
    pub execute_project_recipe: bool,
    pub execute_declared_checks: bool,
    pub field: usize,
}

/// The first `rN` not used by the mission's runs.
pub fn next_run_id(mission: &MissionViewV1) -> String {
    let used: Vec<&str> = mission
        .run
        .iter()
        .chain(mission.run_history.iter())
        .map(|run| run.run_id.as_str())
        .collect();
    (1..)
        .map(|number| format!("r{number}"))
        .find(|candidate| !used.contains(&candidate.as_str()))
        .expect("an unused run id")
}

impl StartForm {
    pub fn new(mission: &MissionViewV1) -> StartForm {
        StartForm {
            mission_id: mission.mission_id.clone(),
            provider: MissionProvider::Codex,
            run_id: TextField::with_text(&next_run_id(mission)),
            worktree_path: TextField::default(),
            in_place: false,
            // Read-only is the contract's default; only an ACP agent needs write scope
            // (`effective_write_scope`).
            write_scope: false,
            execute_project_recipe: false,
            execute_declared_checks: true,
            field: 0,
        }
    }

    pub fn current_field(&self) -> StartField {
        START_FIELDS[self.field]
    }

    /// An ACP agent always runs with write scope (it cannot run without it).
    pub fn effective_write_scope(&self) -> bool {
        self.write_scope || self.provider == MissionProvider::Acp
    }

    pub fn action(&self) -> Result<CockpitAction, String> {
        if self.run_id.value().is_empty() {
            return Err("the run needs a run id".into());
        }
        let worktree_path =
            Some(self.worktree_path.value().to_string()).filter(|path| !path.is_empty());
        let worktree = worktree_path.is_none() && !self.in_place;
        Ok(CockpitAction::StartRun {
            mission_id: self.mission_id.clone(),
            run_id: self.run_id.value().to_string(),
            provider: self.provider,
            worktree_path,
            worktree,
            base: None,
            write_scope: self.effective_write_scope(),
            execute_project_recipe: self.execute_project_recipe,
            execute_declared_checks: self.execute_declared_checks,
            // The form has no model field yet: the provider's default.
            model: None,
            reasoning_effort: None,
        })
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> FormOutcome {
        match key.code {
            KeyCode::Esc => return FormOutcome::Cancel,
            KeyCode::Enter => {
                return match self.action() {
                    Ok(action) => FormOutcome::Submit(Request::Preview(action)),
                    Err(problem) => FormOutcome::Problem(problem),
                };
            }
            _ => {}
        }
        if move_field(&mut self.field, START_FIELDS.len(), &key) {
            return FormOutcome::Continue;
        }
        match self.current_field() {
            StartField::Provider => {
                let delta = match key.code {
                    KeyCode::Left => -1,
                    KeyCode::Right | KeyCode::Char(' ') => 1,
                    _ => 0,
                };
                let index = MissionProvider::ALL
                    .iter()
                    .position(|provider| *provider == self.provider)
                    .unwrap_or(0);
                self.provider =
                    MissionProvider::ALL[cycle(index, MissionProvider::ALL.len(), delta)];
            }
            StartField::RunId => {
                self.run_id.edit(key);
            }
            StartField::WorktreePath => {
                self.worktree_path.edit(key);
            }
            StartField::InPlace if is_toggle_key(&key) => self.in_place = !self.in_place,
            StartField::WriteScope if is_toggle_key(&key) => self.write_scope = !self.write_scope,
            StartField::ProjectRecipe if is_toggle_key(&key) => {
                self.execute_project_recipe = !self.execute_project_recipe
            }
            StartField::DeclaredChecks if is_toggle_key(&key) => {
                self.execute_declared_checks = !self.execute_declared_checks
            }
            _ => {}
        }
        FormOutcome::Continue
    }
}

/// Rows of the manual-evidence form, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidenceField {
    Check,
    Reviewer,
    Reason,
    Override,
}

pub const EVIDENCE_FIELDS: [EvidenceField; 4] = [
    EvidenceField::Check,
    EvidenceField::Reviewer,
    EvidenceField::Reason,
    EvidenceField::Override,
];

/// The reviewer name offered first: the actor the server records for the local person.
pub const DEFAULT_REVIEWER: &str = "local-user";

/// Record a listed reviewer's verdict on one of the mission's manual checks.
#[derive(Debug, Clone, PartialEq)]
pub struct EvidenceForm {
    pub mission_id: String,
    pub check_ids: Vec<String>,
    pub check: usize,
    pub reviewer: TextField,
    pub reason: TextField,
    pub is_override: bool,
    pub field: usize,
}

impl EvidenceForm {
    /// `None` when the mission declares no manual check.
    pub fn new(mission: &MissionViewV1) -> Option<EvidenceForm> {
        let check_ids: Vec<String> = mission
            .checks
            .iter()
            .filter(|check| check.kind == MissionCheckKindV1::Manual)
            .map(|check| check.check_id.clone())
            .collect();
        if check_ids.is_empty() {
            return None;
        }
        Some(EvidenceForm {
            mission_id: mission.mission_id.clone(),
            check_ids,
            check: 0,
            reviewer: TextField::with_text(DEFAULT_REVIEWER),
            reason: TextField::default(),
            is_override: false,
            field: 0,
        })
    }

    pub fn current_field(&self) -> EvidenceField {
        EVIDENCE_FIELDS[self.field]
    }

    pub fn action(&self) -> Result<CockpitAction, String> {
        if self.reviewer.value().is_empty() {
            return Err("name the reviewer".into());
        }
        if self.reason.value().is_empty() {
            return Err("give a reason: what did you check?".into());
        }
        Ok(CockpitAction::ManualEvidence {
            mission_id: self.mission_id.clone(),
            check_id: self.check_ids[self.check].clone(),
            reviewer: self.reviewer.value().to_string(),
            reason: self.reason.value().to_string(),
            is_override: self.is_override,
        })
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> FormOutcome {
        match key.code {
            KeyCode::Esc => return FormOutcome::Cancel,
            KeyCode::Enter => {
                return match self.action() {
                    Ok(action) => FormOutcome::Submit(Request::Preview(action)),
                    Err(problem) => FormOutcome::Problem(problem),
                };
            }
            _ => {}
        }
        if move_field(&mut self.field, EVIDENCE_FIELDS.len(), &key) {
            return FormOutcome::Continue;
        }
        match self.current_field() {
            EvidenceField::Check => {
                let delta = if key.code == KeyCode::Left {
                    -1
                } else if is_toggle_key(&key) {
                    1
                } else {
                    0
                };
                self.check = cycle(self.check, self.check_ids.len(), delta);
            }
            EvidenceField::Reviewer => {
                self.reviewer.edit(key);
            }
            EvidenceField::Reason => {
                self.reason.edit(key);
            }
            EvidenceField::Override if is_toggle_key(&key) => self.is_override = !self.is_override,
            EvidenceField::Override => {}
        }
        FormOutcome::Continue
    }
}

/// Settle an attention item no provider will answer, with a reason.
#[derive(Debug, Clone, PartialEq)]
pub struct DismissForm {
    pub attention_id: String,
    pub mission_id: String,
    /// What the item is about, shown above the reason.
    pub about: String,
    pub reason: TextField,
}

impl DismissForm {
    pub fn handle_key(&mut self, key: KeyEvent) -> FormOutcome {
        match key.code {
            KeyCode::Esc => FormOutcome::Cancel,
            KeyCode::Enter if self.reason.value().is_empty() => {
                FormOutcome::Problem("give a reason for dismissing it".into())
            }
            KeyCode::Enter => {
                FormOutcome::Submit(Request::Preview(CockpitAction::DismissAttention {
                    attention_id: self.attention_id.clone(),
                    mission_id: Some(self.mission_id.clone()),
                    reason: self.reason.value().to_string(),
                }))
            }
            _ => {
                self.reason.edit(key);
                FormOutcome::Continue
            }
        }
    }
}

/// `mission.close` needs no consent, but it re-runs the checks and archives: ask first.
#[derive(Debug, Clone, PartialEq)]
pub struct CloseConfirm {
    pub mission_id: String,
    pub title: String,
}

impl CloseConfirm {
    pub fn handle_key(&mut self, key: KeyEvent) -> FormOutcome {
        match key.code {
            KeyCode::Char('y') | KeyCode::Enter => FormOutcome::Submit(Request::Close {
                mission_id: self.mission_id.clone(),
            }),
            KeyCode::Char('n') | KeyCode::Esc => FormOutcome::Cancel,
            _ => FormOutcome::Continue,
        }
    }
}
