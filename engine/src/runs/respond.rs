//! Delivering a person's answer to a provider (contract §2.6, the local path): the
//! decision × request-class table, answer validation, the attempt recorded before the
//! write, and delivery states. An uncertain delivery is never retried automatically.

use std::collections::BTreeMap;
use std::sync::Arc;

use nagi_providers::{ProviderCommand, Question, QuestionOption, Response};
use nagi_schema::attention::{AttentionDecisionV1, AttentionFailureCodeV1};
use nagi_schema::mission::MissionResponseDecision;

use crate::engine::Engine;
use crate::errors::EngineError;
use nagi_mission::clock::now_millis;
use nagi_mission::model::{
    AttemptState, Attention, AttentionLifecycle, RequestClass, ResponseAttempt,
};
use nagi_mission::{MissionError, MissionEvent};

pub use nagi_mission::attention::LOCAL_ACTOR;

/// The provider response a decision means for a request class, or why it does not fit.
pub fn provider_response(
    item: &Attention,
    decision: MissionResponseDecision,
    answers: &BTreeMap<String, Vec<String>>,
) -> Result<Response, MissionError> {
    let invalid = |why: &str| {
        MissionError::InvalidResponse(format!("{why} (attention {})", item.attention_id))
    };
    let approval = matches!(
        item.request_class,
        RequestClass::CommandApproval
            | RequestClass::FileChangeApproval
            | RequestClass::PermissionApproval
    );
    if approval && !answers.is_empty() {
        return Err(invalid("an approval takes no answers"));
    }
    match (item.request_class, decision) {
        (RequestClass::Notice, _) => Err(invalid(
            "this item is a notice, not a provider request; dismiss it instead",
        )),
        (RequestClass::UserInput, MissionResponseDecision::Answer) => {
            validate_answers(item, answers)?;
            Ok(Response::Answers(answers.clone()))
        }
        (RequestClass::UserInput, _) => {
            Err(invalid("a question is answered with decision \"answer\""))
        }
        (_, MissionResponseDecision::Answer) => Err(invalid(
            "an approval is answered with approve_once, approve_for_session or deny",
        )),
        (_, MissionResponseDecision::ApproveOnce) => Ok(Response::Approve),
        (_, MissionResponseDecision::Deny) => Ok(Response::Decline),
        (RequestClass::PermissionApproval, MissionResponseDecision::ApproveForSession) => Err(
            invalid("a permission request cannot be approved for the whole session"),
        ),
        (_, MissionResponseDecision::ApproveForSession) if !item.session_approval_available => Err(
            invalid("the provider did not offer to remember this approval for the session"),
        ),
        (_, MissionResponseDecision::ApproveForSession) => Ok(Response::ApproveForSession),
    }
}

fn validate_answers(
    item: &Attention,
    answers: &BTreeMap<String, Vec<String>>,
) -> Result<(), MissionError> {
    let questions: Vec<Question> = item
        .questions
        .iter()
        .map(|question| Question {
            id: question.id.clone(),
            header: question.header.clone(),
            prompt: question.prompt.clone(),
            options: question
                .options
                .iter()
                .map(|option| QuestionOption {
                    label: option.label.clone(),
                    description: option.description.clone(),
                })
                .collect(),
            multiple: question.multiple,
            custom_allowed: question.custom_allowed,
        })
        .collect();
    if questions.is_empty() || questions.len() > 4 {
        return Err(MissionError::InvalidResponse(format!(
            "the request has {} questions; 1 to 4 can be answered",
            questions.len()
        )));
    }
    nagi_providers::answers::check_answers(&questions, answers)
        .map_err(MissionError::InvalidResponse)
}

fn attention_decision(decision: MissionResponseDecision) -> AttentionDecisionV1 {
    match decision {
        MissionResponseDecision::ApproveOnce => AttentionDecisionV1::ApproveOnce,
        MissionResponseDecision::ApproveForSession => AttentionDecisionV1::ApproveForSession,
        MissionResponseDecision::Deny => AttentionDecisionV1::Deny,
        MissionResponseDecision::Answer => AttentionDecisionV1::Answer,
    }
}

/// The checks of §2.6 step 1 that need no write. Returns the item and its provider request key.
pub fn check_respondable(
    engine: &Engine,
    mission_id: &str,
    run_id: &str,
    attention_id: &str,
) -> Result<(Attention, String), MissionError> {
    if engine.runs.get(mission_id, run_id).is_none() {
        return Err(match engine.runs.get_in_any_mission(run_id) {
            Some(live) => MissionError::RunMismatch(format!(
                "run {run_id} belongs to mission {}",
                live.mission_id
            )),
            None => MissionError::RunNotActive(format!("run {run_id} has no live provider")),
        });
    }
    let Some((route_run, request_key)) = engine.runs.response_route(attention_id) else {
        return Err(MissionError::AttentionNotRespondable(format!(
            "attention {attention_id} has no live provider request behind it (the provider asks again after a restart if it still needs it)"
        )));
    };
    if route_run != run_id {
        return Err(MissionError::RunMismatch(format!(
            "attention {attention_id} belongs to run {route_run}"
        )));
    }
    let mission = engine
        .missions
        .get(mission_id)
        .map_err(|error| MissionError::Runtime(error.to_string()))?;
    let item = mission
        .and_then(|mission| mission.attention.get(attention_id).cloned())
        .ok_or_else(|| {
            MissionError::AttentionNotFound(format!("no attention item {attention_id:?}"))
        })?;
    Ok((item, request_key))
}

/// Records the attempt, then sends the response. The attention stays unresolved until the
/// provider acknowledges (the supervisor records that).
pub async fn respond(
    engine: &Arc<Engine>,
    mission_id: &str,
    run_id: &str,
    attention_id: &str,
    decision: MissionResponseDecision,
    answers: &BTreeMap<String, Vec<String>>,
) -> Result<(), EngineError> {
    let (item, request_key) = check_respondable(engine, mission_id, run_id, attention_id)?;
    let response = provider_response(&item, decision, answers)?;
    let attention = attention_id.to_string();
    let committed = engine
        .missions
        .mutate(mission_id, move |mission| {
            let mission =
                mission.ok_or_else(|| MissionError::NotFound("the mission vanished".into()))?;
            let item = mission
                .attention
                .get(&attention)
                .ok_or_else(|| MissionError::AttentionNotFound(attention.clone()))?;
            if item.lifecycle != AttentionLifecycle::Open {
                return Err(MissionError::Runtime(format!(
                    "attention {attention} is not open (a response is pending or it is settled)"
                ))
                .into());
            }
            let attempt = item
                .attempts
                .iter()
                .map(|attempt| attempt.attempt)
                .max()
                .unwrap_or(0)
                + 1;
            let now = now_millis();
            let event = MissionEvent::ResponseRequested {
                attention_id: attention.clone(),
                attempt: ResponseAttempt {
                    attempt,
                    decision: attention_decision(decision),
                    actor: LOCAL_ACTOR.into(),
                    state: AttemptState::Requested,
                    requested_at_millis: now,
                    updated_at_millis: now,
                },
                at_millis: now,
            };
            Ok((vec![event], attempt))
        })
        .await?;
    let attempt = committed.outcome;
    let sent = match engine.runs.get(mission_id, run_id) {
        Some(live) => live
            .commands
            .send(ProviderCommand::Respond {
                request_key,
                response,
            })
            .await
            .is_ok(),
        None => false,
    };
    if !sent {
        let attention = attention_id.to_string();
        let failed = MissionEvent::ResponseSettled {
            attention_id: attention.clone(),
            attempt,
            state: AttemptState::DefinitelyNotApplied {
                code: AttentionFailureCodeV1::DisconnectedBeforeWrite,
            },
            at_millis: now_millis(),
        };
        engine
            .missions
            .mutate(mission_id, move |_| Ok((vec![failed], ())))
            .await?;
        return Err(MissionError::ProviderUnavailable(format!(
            "the provider of run {run_id} went away before the response could be written; nothing was delivered"
        ))
        .into());
    }
    Ok(())
}
