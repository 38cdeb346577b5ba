//! Giving a mission up (`mission.abandon`, nagi extension): a way out of a mission that can
//! no longer be finished — a frozen plan with a check that can never pass, a run that went
//! nowhere. The mission is archived without a proof, with the person's reason; its events,
//! evidence and runs stay, and every attention item still open is closed with the reason.

use nagi_schema::mission::MissionStatus;

use super::attention::LOCAL_ACTOR;
use super::error::MissionError;
use super::event::MissionEvent;
use super::model::Mission;
use super::validate::check_text;

/// The longest reason, in bytes.
pub const MAX_REASON_BYTES: usize = 1024;

/// The events of abandoning `mission` with `reason`.
pub fn decide_abandon(
    mission: &Mission,
    reason: &str,
    now: u64,
) -> Result<Vec<MissionEvent>, MissionError> {
    check_text("reason", reason, MAX_REASON_BYTES).map_err(MissionError::InvalidMission)?;
    if mission.status == MissionStatus::Archived {
        return Err(MissionError::NotReady(format!(
            "mission {} is already archived{}",
            mission.mission_id,
            mission
                .abandoned_reason
                .as_ref()
                .map(|reason| format!(" (abandoned: {reason})"))
                .unwrap_or_default()
        )));
    }
    let mut events: Vec<MissionEvent> = mission
        .attention
        .values()
        .filter(|item| item.is_unresolved())
        .map(|item| MissionEvent::AttentionClosed {
            attention_id: item.attention_id.clone(),
            expired: true,
            actor: LOCAL_ACTOR.to_string(),
            reason: format!("the mission was abandoned: {reason}"),
            at_millis: now,
        })
        .collect();
    events.push(MissionEvent::MissionAbandoned {
        reason: reason.to_string(),
        at_millis: now,
    });
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::apply;

    fn draft() -> Mission {
        apply(
            None,
            &MissionEvent::MissionCreated {
                mission_id: nagi_schema::ids::MissionId::parse("m1").unwrap(),
                title: "t".into(),
                repository_path: "/repo".into(),
                objective: "o".into(),
                acceptance_criteria: vec!["c".into()],
                at_millis: 1,
            },
        )
    }

    #[test]
    fn an_abandoned_mission_is_archived_with_its_reason_once() {
        let mission = draft();
        let events = decide_abandon(&mission, "the check has a typo", 5).unwrap();
        let mut after = mission;
        for event in &events {
            after = apply(Some(after), event);
        }
        assert_eq!(after.status, MissionStatus::Archived);
        assert_eq!(
            after.abandoned_reason.as_deref(),
            Some("the check has a typo")
        );
        assert_eq!(after.revision, 2, "its history is kept and grows");
        let again = decide_abandon(&after, "twice", 6).unwrap_err();
        assert!(again.to_string().contains("already archived"), "{again}");
        assert!(
            decide_abandon(&draft(), "  ", 6).is_err(),
            "a reason is required"
        );
    }
}
