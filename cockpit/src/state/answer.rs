//! Answering an attention item: a provider's question (options and, where allowed, free
//! text) or an approval request (once, for the session, or deny). The form only builds
//! the `respond` action; the consent dialog shows what the server says it covers.

use std::collections::{BTreeMap, BTreeSet};

use nagi_schema::attention::{AttentionItemV1, AttentionKindV1, AttentionQuestionV1};
use nagi_schema::cockpit::CockpitAction;
use nagi_schema::mission::MissionResponseDecision;
use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::fields::{TextField, cycle};
use super::forms::FormOutcome;
use crate::request::Request;

/// How an item can be settled from the cockpit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerMode {
    /// Answer the provider's questions.
    Questions,
    /// Approve once, approve for the session, or deny.
    Approval,
    /// Nobody waits for an answer (a warning, a lost response): it can only be dismissed.
    DismissOnly,
}

pub fn answer_mode(item: &AttentionItemV1) -> AnswerMode {
    match item.kind {
        AttentionKindV1::ProviderQuestion if !item.questions.is_empty() => AnswerMode::Questions,
        AttentionKindV1::PermissionRequest => AnswerMode::Approval,
        _ => AnswerMode::DismissOnly,
    }
}

/// The person's input for one question.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuestionInput {
    /// Row under the cursor: an option, or (last) the free-text row.
    pub cursor: usize,
    pub chosen: BTreeSet<usize>,
    pub custom: TextField,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AnswerForm {
    pub item: AttentionItemV1,
    pub inputs: Vec<QuestionInput>,
    /// The question being edited.
    pub question: usize,
}

fn row_count(question: &AttentionQuestionV1) -> usize {
    question.options.len() + usize::from(question.custom_allowed || question.options.is_empty())
}

fn on_custom_row(question: &AttentionQuestionV1, input: &QuestionInput) -> bool {
    input.cursor >= question.options.len()
}

impl AnswerForm {
    pub fn new(item: AttentionItemV1) -> AnswerForm {
        let inputs = item
            .questions
            .iter()
            .map(|_| QuestionInput::default())
            .collect();
        AnswerForm {
            item,
            inputs,
            question: 0,
        }
    }

    pub fn mode(&self) -> AnswerMode {
        answer_mode(&self.item)
    }

    fn respond(
        &self,
        decision: MissionResponseDecision,
        answers: BTreeMap<String, Vec<String>>,
    ) -> FormOutcome {
        FormOutcome::Submit(Request::Preview(CockpitAction::Respond {
            mission_id: self.item.mission_id.clone(),
            run_id: self.item.run_id.clone(),
            attention_id: self.item.attention_id.clone(),
            decision,
            answers,
        }))
    }

    /// The chosen answers, keyed by the provider's question ids.
    pub fn answers(&self) -> Result<BTreeMap<String, Vec<String>>, String> {
        let mut answers = BTreeMap::new();
        for (question, input) in self.item.questions.iter().zip(&self.inputs) {
            let mut values: Vec<String> = input
                .chosen
                .iter()
                .map(|index| question.options[*index].label.clone())
                .collect();
            if !input.custom.value().is_empty() {
                values.push(input.custom.value().to_string());
            }
            // A single-choice question with nothing chosen takes the option under the cursor.
            if values.is_empty() && !question.multiple && input.cursor < question.options.len() {
                values.push(question.options[input.cursor].label.clone());
            }
            if values.is_empty() {
                return Err(format!("answer \"{}\" first", question.header));
            }
            if !question.multiple && values.len() > 1 {
                return Err(format!("\"{}\" takes one answer", question.header));
            }
            answers.insert(question.id.clone(), values);
        }
        Ok(answers)
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> FormOutcome {
        if key.code == KeyCode::Esc {
            return FormOutcome::Cancel;
        }
        match self.mode() {
            AnswerMode::Approval => match key.code {
                KeyCode::Char('o') | KeyCode::Enter => {
                    self.respond(MissionResponseDecision::ApproveOnce, BTreeMap::new())
                }
                KeyCode::Char('s') => {
                    self.respond(MissionResponseDecision::ApproveForSession, BTreeMap::new())
                }
                KeyCode::Char('d') => self.respond(MissionResponseDecision::Deny, BTreeMap::new()),
                _ => FormOutcome::Continue,
            },
            AnswerMode::DismissOnly => FormOutcome::Continue,
            AnswerMode::Questions => self.question_key(key),
        }
    }

    fn question_key(&mut self, key: KeyEvent) -> FormOutcome {
        let count = self.item.questions.len();
        match key.code {
            KeyCode::Enter => {
                return match self.answers() {
                    Ok(answers) => self.respond(MissionResponseDecision::Answer, answers),
                    Err(problem) => FormOutcome::Problem(problem),
                };
            }
            KeyCode::Tab => {
                self.question = cycle(self.question, count, 1);
                return FormOutcome::Continue;
            }
            KeyCode::BackTab => {
                self.question = cycle(self.question, count, -1);
                return FormOutcome::Continue;
            }
            _ => {}
        }
        let question = &self.item.questions[self.question];
        let input = &mut self.inputs[self.question];
        let rows = row_count(question);
        match key.code {
            KeyCode::Up => input.cursor = cycle(input.cursor, rows, -1),
            KeyCode::Down => input.cursor = cycle(input.cursor, rows, 1),
            _ if on_custom_row(question, input)
                && input.custom.edit(key)
                && !question.multiple
                && !input.custom.value().is_empty() =>
            {
                // A typed answer replaces a chosen option of a single-choice question.
                input.chosen.clear();
            }
            KeyCode::Char(' ') => {
                let option = input.cursor;
                if question.multiple {
                    if !input.chosen.remove(&option) {
                        input.chosen.insert(option);
                    }
                } else {
                    input.chosen = BTreeSet::from([option]);
                    input.custom = TextField::default();
                }
            }
            _ => {}
        }
        FormOutcome::Continue
    }
}
