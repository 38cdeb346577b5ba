//! Decisions about a mission's own worktree: when one may be made, and what its loss or
//! its end at archive does to the mission. The worktree itself is made and removed by the
//! engine (`engine/src/worktrees/`); these functions only decide the events.

use nagi_schema::mission::MissionStatus;
use nagi_schema::worktree::MissionWorktreeState;

use super::error::MissionError;
use super::event::MissionEvent;
use super::model::{Mission, MissionWorktree};
use super::run::status_change;

/// The branch of a mission's worktree.
pub fn mission_branch(mission_id: &str) -> String {
    format!("mission/{mission_id}")
}

/// `WorktreeCreated`, decided with the first run's `RunStarted`: a mission gets one
/// worktree, made while it is still a draft.
pub fn decide_worktree_created(
    mission: &Mission,
    worktree: MissionWorktree,
    now: u64,
) -> Result<MissionEvent, MissionError> {
    if let Some(existing) = &mission.worktree {
        return Err(MissionError::Runtime(format!(
            "mission {} already has the worktree {}",
            mission.mission_id, existing.path
        )));
    }
    if mission.status != MissionStatus::Draft {
        return Err(MissionError::Runtime(format!(
            "mission {} is {}; its worktree is made at its first start",
            mission.mission_id,
            mission.status.as_str()
        )));
    }
    Ok(MissionEvent::WorktreeCreated {
        worktree,
        at_millis: now,
    })
}

/// The mission's worktree is gone from the disk: it is marked missing, and a mission that
/// is not archived becomes `blocked` with `reason` (its runs have nowhere to work).
/// `run_outcome` is set when this ends the provider part of the current run.
pub fn on_worktree_missing(
    mission: &Mission,
    reason: &str,
    run_outcome: Option<String>,
    now: u64,
) -> Vec<MissionEvent> {
    let Some(worktree) = &mission.worktree else {
        return Vec::new();
    };
    if worktree.state != MissionWorktreeState::Present {
        return Vec::new();
    }
    let mut events = vec![MissionEvent::WorktreeSettled {
        path: worktree.path.clone(),
        state: MissionWorktreeState::Missing,
        reason: Some(reason.to_string()),
        at_millis: now,
    }];
    if mission.status != MissionStatus::Archived {
        events.extend(status_change(
            mission,
            MissionStatus::Blocked,
            reason,
            run_outcome,
            now,
        ));
    }
    events
}

/// What archiving did with the worktree: removed (the branch stays), or kept because it
/// holds changes that were not landed (`kept_reason`).
pub fn on_worktree_archived(
    mission: &Mission,
    kept_reason: Option<String>,
    now: u64,
) -> Vec<MissionEvent> {
    match &mission.worktree {
        Some(worktree) if worktree.state == MissionWorktreeState::Present => {
            vec![MissionEvent::WorktreeSettled {
                path: worktree.path.clone(),
                state: if kept_reason.is_some() {
                    MissionWorktreeState::Kept
                } else {
                    MissionWorktreeState::Removed
                },
                reason: kept_reason,
                at_millis: now,
            }]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::apply;

    fn draft() -> Mission {
        let created = MissionEvent::MissionCreated {
            mission_id: nagi_schema::ids::MissionId::parse("m1").unwrap(),
            title: "t".into(),
            repository_path: "/repo".into(),
            objective: "o".into(),
            acceptance_criteria: vec!["c".into()],
            at_millis: 1,
        };
        apply(None, &created)
    }

    fn worktree() -> MissionWorktree {
        MissionWorktree {
            path: "/worktrees/repo/m1".into(),
            branch: mission_branch("m1"),
            base_revision: "a".repeat(40),
            base_ref: "HEAD".into(),
            created_at_millis: 2,
            state: MissionWorktreeState::Present,
            kept_reason: None,
            target_branch: Some("main".into()),
        }
    }

    #[test]
    fn a_mission_gets_one_worktree_while_it_is_a_draft() {
        let mission = draft();
        let event = decide_worktree_created(&mission, worktree(), 2).unwrap();
        let with_worktree = apply(Some(mission), &event);
        assert_eq!(with_worktree.worktree, Some(worktree()));
        assert!(decide_worktree_created(&with_worktree, worktree(), 3).is_err());
    }

    #[test]
    fn a_deleted_worktree_blocks_the_mission_once_with_the_reason() {
        let mission = draft();
        let event = decide_worktree_created(&mission, worktree(), 2).unwrap();
        let mut mission = apply(Some(mission), &event);
        mission.status = MissionStatus::Active;
        let events = on_worktree_missing(&mission, "the worktree was deleted", None, 3);
        assert_eq!(events.len(), 2, "{events:?}");
        let mut after = mission;
        for event in &events {
            after = apply(Some(after), event);
        }
        assert_eq!(after.status, MissionStatus::Blocked);
        assert_eq!(
            after.status_reason.as_deref(),
            Some("the worktree was deleted")
        );
        assert_eq!(
            after.worktree.as_ref().unwrap().state,
            MissionWorktreeState::Missing
        );
        assert!(on_worktree_missing(&after, "again", None, 4).is_empty());
    }

    #[test]
    fn archive_removes_a_clean_worktree_and_keeps_one_with_unlanded_changes() {
        let mission = draft();
        let event = decide_worktree_created(&mission, worktree(), 2).unwrap();
        let mission = apply(Some(mission), &event);
        let removed = on_worktree_archived(&mission, None, 3);
        let after = apply(Some(mission.clone()), &removed[0]);
        assert_eq!(after.worktree.unwrap().state, MissionWorktreeState::Removed);
        let kept = on_worktree_archived(&mission, Some("2 files changed".into()), 3);
        let after = apply(Some(mission), &kept[0]);
        let worktree = after.worktree.unwrap();
        assert_eq!(worktree.state, MissionWorktreeState::Kept);
        assert_eq!(worktree.kept_reason.as_deref(), Some("2 files changed"));
    }
}
