//! Steering a run (nagi extensions `mission.send`, `mission.interrupt`, `mission.stop`).
//! Pure: the caller says whether the run's provider is live in this process; the result is
//! the events to commit and, for a follow-up, how it reaches the agent.
//!
//! Steering grants no authority. A follow-up to a run that ended starts its provider again
//! on the stored session, under the sandbox and consent the run was started with; nothing
//! here can widen them.

use nagi_schema::mission::{MissionProviderMode, MissionStatus};
use nagi_schema::steer::{FollowUpDelivery, MAX_FOLLOW_UP_BYTES, RunActorV1};

use super::error::MissionError;
use super::event::{MissionEvent, Steer};
use super::model::{Mission, Run};
use super::validate::check_text;

/// Statuses a run that ended may be continued from with a follow-up: after a completed,
/// interrupted, stopped or failed turn.
fn resumable_status(status: MissionStatus) -> bool {
    matches!(
        status,
        MissionStatus::ReviewRequired
            | MissionStatus::ReadyToClose
            | MissionStatus::Blocked
            | MissionStatus::Failed
    )
}

fn steerable_run(mission: &Mission) -> Result<&Run, MissionError> {
    if mission.status == MissionStatus::Archived {
        return Err(MissionError::NotReady(format!(
            "mission {} is archived; its runs cannot be steered",
            mission.mission_id
        )));
    }
    let run = mission.run.as_ref().ok_or_else(|| {
        MissionError::RunNotActive(format!(
            "mission {} has no run yet; start one with `nagi mission start {} --provider PROVIDER`",
            mission.mission_id, mission.mission_id
        ))
    })?;
    if run.mode != MissionProviderMode::Managed {
        return Err(MissionError::ProviderModeUnavailable(format!(
            "run {} is not managed by nagi",
            run.run_id
        )));
    }
    Ok(run)
}

/// `mission.send`: the events of a follow-up, and how it is delivered.
/// A follow-up's words, and the model and effort it asks for from its turn on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FollowUp {
    pub text: String,
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
}

pub fn decide_send(
    mission: &Mission,
    follow_up: &FollowUp,
    actor: &RunActorV1,
    run_is_live: bool,
    now: u64,
) -> Result<(Vec<MissionEvent>, FollowUpDelivery), MissionError> {
    let text = follow_up.text.as_str();
    check_text("text", text, MAX_FOLLOW_UP_BYTES).map_err(MissionError::InvalidMission)?;
    super::run::check_model_choice(
        follow_up.model.as_deref(),
        follow_up.reasoning_effort.as_deref(),
    )?;
    let changes_model = follow_up.model.is_some() || follow_up.reasoning_effort.is_some();
    if text.contains('\0') {
        return Err(MissionError::InvalidMission(
            "text must not contain NUL".into(),
        ));
    }
    let run = steerable_run(mission)?;
    let delivery = if run_is_live {
        if !matches!(
            mission.status,
            MissionStatus::Preparing | MissionStatus::Active
        ) {
            return Err(MissionError::Busy(format!(
                "mission {} is {} while its provider is still stopping; send again in a moment",
                mission.mission_id,
                mission.status.as_str()
            )));
        }
        if changes_model {
            return Err(MissionError::InvalidMission(format!(
                "a model or effort takes effect when the provider starts, and mission {}'s provider is working on a turn: send it without --model/--effort, or after the turn ended (`nagi mission interrupt {}` ends it now)",
                mission.mission_id, mission.mission_id
            )));
        }
        FollowUpDelivery::Queued
    } else {
        if mission.checks_in_flight.is_some() {
            return Err(MissionError::Busy(format!(
                "the checks of mission {} are running; send the follow-up when they finish (`nagi mission wait {}`)",
                mission.mission_id, mission.mission_id
            )));
        }
        if !resumable_status(mission.status) {
            return Err(MissionError::Busy(format!(
                "mission {} is {} and its run is not live in this server yet; send again in a moment",
                mission.mission_id,
                mission.status.as_str()
            )));
        }
        if run.provider_session_id.is_none() {
            return Err(MissionError::RunNotActive(format!(
                "run {} never got a provider session, so there is no conversation to continue; start another run with `nagi mission start {} --provider PROVIDER`",
                run.run_id, mission.mission_id
            )));
        }
        FollowUpDelivery::Resumed
    };
    Ok((
        vec![MissionEvent::RunSteered {
            run_id: run.run_id.to_string(),
            steer: Steer::Send {
                text: text.to_string(),
                delivery,
                model: follow_up.model.clone(),
                reasoning_effort: follow_up.reasoning_effort.clone(),
            },
            actor: actor.clone(),
            at_millis: now,
        }],
        delivery,
    ))
}

/// `mission.interrupt`: only a live run with a turn that has not ended.
pub fn decide_interrupt(
    mission: &Mission,
    actor: &RunActorV1,
    run_is_live: bool,
    now: u64,
) -> Result<Vec<MissionEvent>, MissionError> {
    let run = steerable_run(mission)?;
    if !run_is_live
        || !matches!(
            mission.status,
            MissionStatus::Preparing | MissionStatus::Active
        )
    {
        return Err(MissionError::RunNotActive(format!(
            "mission {} has no turn in progress (it is {}); send it a follow-up with `nagi mission send {} TEXT`",
            mission.mission_id,
            mission.status.as_str(),
            mission.mission_id
        )));
    }
    Ok(vec![MissionEvent::RunSteered {
        run_id: run.run_id.to_string(),
        steer: Steer::Interrupt,
        actor: actor.clone(),
        at_millis: now,
    }])
}

/// `mission.stop`: only a run whose provider is live.
pub fn decide_stop(
    mission: &Mission,
    actor: &RunActorV1,
    run_is_live: bool,
    now: u64,
) -> Result<Vec<MissionEvent>, MissionError> {
    let run = steerable_run(mission)?;
    if !run_is_live {
        return Err(MissionError::RunNotActive(format!(
            "mission {} has no live provider to stop (it is {})",
            mission.mission_id,
            mission.status.as_str()
        )));
    }
    Ok(vec![MissionEvent::RunSteered {
        run_id: run.run_id.to_string(),
        steer: Steer::Stop,
        actor: actor.clone(),
        at_millis: now,
    }])
}

/// The words of a turn's outcome as the run view shows them.
pub fn turn_outcome_words(end: &super::run::TurnEnd) -> String {
    use super::run::TurnEnd;
    match end {
        TurnEnd::Completed => "completed".into(),
        TurnEnd::Interrupted { .. } => "interrupted".into(),
        TurnEnd::Stopped { .. } => "stopped".into(),
        TurnEnd::Failed(reason) => format!("failed: {reason}"),
        TurnEnd::TransportFailed(reason) => format!("failed: {reason}"),
    }
}

/// A turn ended: whether a queued follow-up starts now (only after a completed turn; an
/// interrupt, a stop or a failure drops the queue).
pub fn on_turn_ended(
    mission: &Mission,
    run_id: &str,
    end: &super::run::TurnEnd,
    next_turn_starts: bool,
    usage: Option<nagi_schema::usage::TokenUsage>,
    now: u64,
) -> Vec<MissionEvent> {
    let Some(run) = mission.run.as_ref().filter(|run| run.run_id == run_id) else {
        return Vec::new();
    };
    vec![MissionEvent::TurnEnded {
        run_id: run_id.to_string(),
        turn: run.turns,
        outcome: turn_outcome_words(end),
        next_turn_starts: next_turn_starts && *end == super::run::TurnEnd::Completed,
        usage,
        at_millis: now,
    }]
}

#[cfg(test)]
mod tests;
