//! Checks an engine's answers against the questions a provider asked, before anything is
//! sent (contract §2.6, step 3). The engine validates too; an adapter fails closed
//! rather than deliver answers its provider would misread.

use std::collections::BTreeMap;

use crate::spec::Question;

const MAX_KEY_BYTES: usize = 1024;
const MAX_VALUE_BYTES: usize = 4096;
const MAX_VALUES_PER_QUESTION: usize = 8;
const MAX_TOTAL_BYTES: usize = 32 * 1024;

/// `Ok` when `answers` has exactly one well-formed entry per question.
pub fn check_answers(
    questions: &[Question],
    answers: &BTreeMap<String, Vec<String>>,
) -> Result<(), String> {
    if questions.is_empty() {
        return Err("the request has no questions to answer".to_string());
    }
    if answers.len() != questions.len() {
        return Err(format!(
            "{} answers for {} questions",
            answers.len(),
            questions.len()
        ));
    }
    let mut total = 0usize;
    for question in questions {
        let Some(values) = answers.get(&question.id) else {
            return Err(format!("no answer for question {:?}", question.id));
        };
        if values.is_empty() || values.len() > MAX_VALUES_PER_QUESTION {
            return Err(format!(
                "question {:?} needs 1 to {MAX_VALUES_PER_QUESTION} answers",
                question.id
            ));
        }
        if !question.multiple && values.len() != 1 {
            return Err(format!(
                "question {:?} takes exactly one answer",
                question.id
            ));
        }
        if question.id.len() > MAX_KEY_BYTES {
            return Err("a question id is too long".to_string());
        }
        total += question.id.len();
        for value in values {
            if value.trim().is_empty() || value.len() > MAX_VALUE_BYTES || value.contains('\0') {
                return Err(format!(
                    "an answer to {:?} is empty, too long or contains NUL",
                    question.id
                ));
            }
            if !question.custom_allowed
                && !question.options.iter().any(|option| &option.label == value)
            {
                return Err(format!("{value:?} is not an option of {:?}", question.id));
            }
            total += value.len();
        }
    }
    if total > MAX_TOTAL_BYTES {
        return Err("the answers exceed 32 KiB".to_string());
    }
    Ok(())
}
