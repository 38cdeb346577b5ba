//! Finds which scenario step answers a request, from the conversation the request carries.

use super::conversation::ConversationDigest;
use super::scenario::{Scenario, call_id_for_step};

/// The step that answers this request: one past the last step the conversation shows as done.
/// A tool-call step is done when the request carries a result for its call id; a final-text
/// step is done when its text is among the assistant messages. `None` means the scenario has
/// no step left.
pub fn next_step_index(scenario: &Scenario, digest: &ConversationDigest) -> Option<usize> {
    let mut last_done: Option<usize> = None;
    for (index, step) in scenario.steps.iter().enumerate() {
        let done = match (&step.call, &step.text) {
            (Some(_), _) => {
                let call_id = call_id_for_step(index);
                digest
                    .tool_results
                    .iter()
                    .any(|result| result.call_id == call_id)
            }
            (None, Some(text)) => digest
                .assistant_texts
                .iter()
                .any(|said| said.trim() == text.trim()),
            (None, None) => false,
        };
        if done {
            last_done = Some(index);
        }
    }
    let next = last_done.map_or(0, |index| index + 1);
    (next < scenario.steps.len()).then_some(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock_model::conversation::ToolResult;

    fn scenario() -> Scenario {
        Scenario::from_json(
            r#"{"steps":[
                {"call":{"read":{"path":"/w/a.txt"}}},
                {"text":"first turn done"},
                {"text":"second turn done"}
            ]}"#,
        )
        .expect("valid scenario")
    }

    #[test]
    fn a_fresh_conversation_starts_at_the_first_step() {
        assert_eq!(
            next_step_index(&scenario(), &ConversationDigest::default()),
            Some(0)
        );
    }

    #[test]
    fn an_answered_tool_call_moves_to_the_next_step() {
        let digest = ConversationDigest {
            tool_results: vec![ToolResult {
                call_id: "call_mock_0".into(),
                content: "x".into(),
            }],
            ..ConversationDigest::default()
        };
        assert_eq!(next_step_index(&scenario(), &digest), Some(1));
    }

    #[test]
    fn a_resumed_conversation_continues_after_the_last_said_text() {
        let digest = ConversationDigest {
            tool_results: vec![ToolResult {
                call_id: "call_mock_0".into(),
                content: "x".into(),
            }],
            assistant_texts: vec!["first turn done".into()],
            ..ConversationDigest::default()
        };
        assert_eq!(next_step_index(&scenario(), &digest), Some(2));
    }

    #[test]
    fn an_exhausted_scenario_has_no_step() {
        let digest = ConversationDigest {
            assistant_texts: vec!["second turn done".into()],
            ..ConversationDigest::default()
        };
        assert_eq!(next_step_index(&scenario(), &digest), None);
    }
}
