//! Deleting a draft (`mission.delete`, nagi extension): a mission that never ran — a typo
//! in its title, a check that can never pass — goes, and its id is free again. Only a
//! draft: anything that ran has a history worth keeping, and `mission.abandon` archives it
//! instead. The log keeps the mission's events and the deletion.

use nagi_schema::mission::MissionStatus;

use super::error::MissionError;
use super::event::MissionEvent;
use super::model::Mission;

/// The event of deleting `mission`, or why it may not be deleted.
pub fn decide_delete(mission: &Mission, now: u64) -> Result<MissionEvent, MissionError> {
    let ran = mission.run.is_some() || !mission.run_history.is_empty();
    if mission.status != MissionStatus::Draft || ran {
        return Err(MissionError::NotDraft(format!(
            "mission {} is {} and {}; only a draft that never ran can be deleted — give it up with `nagi mission abandon {} --reason TEXT`, which archives it and keeps its history",
            mission.mission_id,
            mission.status.as_str(),
            if ran { "has run" } else { "is past its draft" },
            mission.mission_id
        )));
    }
    Ok(MissionEvent::MissionDeleted { at_millis: now })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::{apply, fold};
    use crate::event::MissionEvent;

    fn created(mission_id: &str, title: &str) -> MissionEvent {
        MissionEvent::MissionCreated {
            mission_id: nagi_schema::ids::MissionId::parse(mission_id).unwrap(),
            title: title.into(),
            repository_path: "/repo".into(),
            objective: "do it".into(),
            acceptance_criteria: vec!["it works".into()],
            at_millis: 1,
        }
    }

    #[test]
    fn a_draft_is_deleted_and_its_id_can_start_a_new_mission() {
        let draft = apply(None, &created("m1", "first"));
        let deleted = decide_delete(&draft, 2).unwrap();
        assert_eq!(fold(Some(draft), &deleted), None);
        let again = fold(None, &created("m1", "second")).unwrap();
        assert_eq!(again.title, "second");
        assert_eq!(again.status, MissionStatus::Draft);
    }

    #[test]
    fn a_mission_past_its_draft_is_not_deleted() {
        let mut mission = apply(None, &created("m1", "first"));
        mission.status = MissionStatus::Archived;
        let refused = decide_delete(&mission, 2).unwrap_err();
        assert!(
            refused.to_string().contains("nagi mission abandon m1"),
            "{refused}"
        );
    }
}
