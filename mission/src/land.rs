//! Decisions about landing a mission's change (`mission.land`): whether the mission can be
//! landed now, into which branch, and with what commit message. The git work is the
//! engine's (`engine/src/worktrees/land.rs`); the archive seal is the proof's.

use nagi_schema::mission::MissionStatus;
use nagi_schema::worktree::MissionWorktreeState;

use super::error::MissionError;
use super::event::MissionEvent;
use super::model::{Mission, MissionWorktree};

/// The mission's worktree, if the mission can be landed now: it is `ready_to_close` (its
/// proof verified), it works in its own worktree, and that worktree is still there.
pub fn check_landable(mission: &Mission) -> Result<&MissionWorktree, MissionError> {
    if mission.landing.is_some() {
        return Err(MissionError::NotReady(format!(
            "mission {} has already landed",
            mission.mission_id
        )));
    }
    if mission.status != MissionStatus::ReadyToClose {
        let why = match mission.status {
            MissionStatus::ReviewRequired => {
                "; its proof does not verify yet (nagi mission verify)"
            }
            MissionStatus::Archived => "; an archived mission has nothing left to land",
            _ => "",
        };
        return Err(MissionError::NotReady(format!(
            "mission {} is {}; only a ready_to_close mission can land{why}",
            mission.mission_id,
            mission.status.as_str()
        )));
    }
    let worktree = mission.worktree.as_ref().ok_or_else(|| {
        MissionError::NotReady(format!(
            "mission {} ran in the checkout itself (--in-place), not in a mission worktree: its change is already in {}; commit it there, or close the mission",
            mission.mission_id, mission.repository_path
        ))
    })?;
    if worktree.state != MissionWorktreeState::Present {
        return Err(MissionError::WorktreeMissing(format!(
            "the worktree {} of mission {} is {}; there is nothing to land from",
            worktree.path,
            mission.mission_id,
            match worktree.state {
                MissionWorktreeState::Missing => "deleted",
                MissionWorktreeState::Removed => "removed",
                MissionWorktreeState::Kept => "kept after the archive",
                MissionWorktreeState::Present => "present",
            }
        )));
    }
    Ok(worktree)
}

/// The branch a landing goes into: `into` when given, else the branch the checkout had
/// when the worktree was made.
pub fn target_branch(
    mission: &Mission,
    worktree: &MissionWorktree,
    into: Option<&str>,
) -> Result<String, MissionError> {
    let branch = match into {
        Some(into) => into.trim().to_string(),
        None => worktree.target_branch.clone().ok_or_else(|| {
            MissionError::LandFailed(format!(
                "the checkout's HEAD was detached when the worktree of mission {} was made, so there is no branch to land into by default; name one with --into",
                mission.mission_id
            ))
        })?,
    };
    let branch = branch
        .strip_prefix("refs/heads/")
        .unwrap_or(&branch)
        .to_string();
    if branch.is_empty()
        || branch.len() > 256
        || branch.starts_with('-')
        || branch.contains(['\0', '\n', '\r', ' ', '~', '^', ':', '?', '*', '[', '\\'])
        || branch.contains("..")
    {
        return Err(MissionError::LandFailed(format!(
            "{branch:?} is not a branch name"
        )));
    }
    if branch == worktree.branch {
        return Err(MissionError::LandFailed(format!(
            "{branch} is the mission's own branch; land into the branch its change is for"
        )));
    }
    Ok(branch)
}

/// The mission's worktree, if its branch can be synced now: the mission has its own
/// worktree, still there, and is not archived (a live run is the engine's to refuse).
pub fn check_syncable(mission: &Mission) -> Result<&MissionWorktree, MissionError> {
    if mission.status == MissionStatus::Archived {
        return Err(MissionError::NotReady(format!(
            "mission {} is archived; there is nothing left to sync",
            mission.mission_id
        )));
    }
    let worktree = mission.worktree.as_ref().ok_or_else(|| {
        MissionError::NotReady(match mission.run {
            None => format!(
                "mission {} has not started: it has no worktree and no mission branch to sync yet",
                mission.mission_id
            ),
            Some(_) => format!(
                "mission {} runs in the checkout itself (--in-place), not in a mission worktree; there is no mission branch to sync",
                mission.mission_id
            ),
        })
    })?;
    if worktree.state != MissionWorktreeState::Present {
        return Err(MissionError::WorktreeMissing(format!(
            "the worktree {} of mission {} is not there; there is nothing to sync",
            worktree.path, mission.mission_id
        )));
    }
    Ok(worktree)
}

/// What a sync onto `onto` at `base_revision` records: the worktree's new base, and for a
/// mission whose proof had verified, `blocked` until it is verified again (its workspace
/// changed under the proof).
pub fn decide_synced(
    mission: &Mission,
    onto: &str,
    base_revision: &str,
    now: u64,
) -> Result<Vec<MissionEvent>, MissionError> {
    let worktree = check_syncable(mission)?;
    let mut events = vec![MissionEvent::WorktreeSynced {
        path: worktree.path.clone(),
        onto: onto.to_string(),
        base_revision: base_revision.to_string(),
        at_millis: now,
    }];
    if mission.status == MissionStatus::ReadyToClose {
        events.extend(crate::run::status_change(
            mission,
            MissionStatus::Blocked,
            format!(
                "the mission branch was synced onto {onto}, so its proof no longer matches the worktree: verify it again (nagi mission verify, or v in the cockpit)"
            ),
            None,
            now,
        ));
    }
    Ok(events)
}

/// The commit message without trailers: `message` when given, else the mission's title
/// and objective.
pub fn land_message(mission: &Mission, message: Option<&str>) -> String {
    match message.map(str::trim).filter(|text| !text.is_empty()) {
        Some(text) => text.to_string(),
        None => format!("{}\n\n{}", mission.title.trim(), mission.objective.trim()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::apply;

    fn mission_with_worktree(status: MissionStatus) -> Mission {
        let created = MissionEvent::MissionCreated {
            mission_id: nagi_schema::ids::MissionId::parse("m1").unwrap(),
            title: "Fix the parser".into(),
            repository_path: "/repo".into(),
            objective: "It must accept empty input.".into(),
            acceptance_criteria: vec!["c".into()],
            at_millis: 1,
        };
        let mut mission = apply(None, &created);
        mission.worktree = Some(MissionWorktree {
            path: "/worktrees/repo/m1".into(),
            branch: "mission/m1".into(),
            base_revision: "a".repeat(40),
            base_ref: "HEAD".into(),
            created_at_millis: 2,
            state: MissionWorktreeState::Present,
            kept_reason: None,
            target_branch: Some("main".into()),
        });
        mission.status = status;
        mission
    }

    #[test]
    fn only_a_ready_mission_in_its_own_worktree_can_land() {
        assert!(check_landable(&mission_with_worktree(MissionStatus::ReadyToClose)).is_ok());
        let review = check_landable(&mission_with_worktree(MissionStatus::ReviewRequired))
            .unwrap_err()
            .to_string();
        assert!(review.contains("does not verify yet"), "{review}");
        let mut in_place = mission_with_worktree(MissionStatus::ReadyToClose);
        in_place.worktree = None;
        assert!(
            check_landable(&in_place)
                .unwrap_err()
                .to_string()
                .contains("--in-place")
        );
        let mut deleted = mission_with_worktree(MissionStatus::ReadyToClose);
        deleted.worktree.as_mut().unwrap().state = MissionWorktreeState::Missing;
        assert!(matches!(
            check_landable(&deleted),
            Err(MissionError::WorktreeMissing(_))
        ));
    }

    #[test]
    fn the_target_is_the_starting_branch_unless_one_is_named() {
        let mission = mission_with_worktree(MissionStatus::ReadyToClose);
        let worktree = mission.worktree.clone().unwrap();
        assert_eq!(target_branch(&mission, &worktree, None).unwrap(), "main");
        assert_eq!(
            target_branch(&mission, &worktree, Some("refs/heads/release")).unwrap(),
            "release"
        );
        for bad in ["", "a..b", "-x", "mission/m1", "has space"] {
            assert!(
                target_branch(&mission, &worktree, Some(bad)).is_err(),
                "{bad}"
            );
        }
        let mut detached = worktree.clone();
        detached.target_branch = None;
        assert!(
            target_branch(&mission, &detached, None)
                .unwrap_err()
                .to_string()
                .contains("--into")
        );
    }

    #[test]
    fn a_sync_moves_the_base_and_a_ready_mission_must_verify_again() {
        let ready = mission_with_worktree(MissionStatus::ReadyToClose);
        let events = decide_synced(&ready, "main", &"b".repeat(40), 5).unwrap();
        let mut after = ready;
        for event in &events {
            after = apply(Some(after), event);
        }
        assert_eq!(
            after.worktree.as_ref().unwrap().base_revision,
            "b".repeat(40)
        );
        assert_eq!(after.status, MissionStatus::Blocked);
        assert!(after.status_reason.unwrap().contains("verify it again"));
        let review = mission_with_worktree(MissionStatus::ReviewRequired);
        let events = decide_synced(&review, "main", &"b".repeat(40), 5).unwrap();
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(
            decide_synced(
                &mission_with_worktree(MissionStatus::Archived),
                "main",
                "c",
                5
            )
            .is_err()
        );
    }

    #[test]
    fn a_sync_without_a_worktree_says_whether_the_mission_ever_started() {
        let mut draft = mission_with_worktree(MissionStatus::Draft);
        draft.worktree = None;
        let never_started = check_syncable(&draft).unwrap_err().to_string();
        assert!(never_started.contains("has not started"), "{never_started}");
        // The same mission, started in the checkout itself, through the start's own decision.
        let configured = apply(
            Some(draft),
            &MissionEvent::ClosureConfigured {
                declarations: Vec::new(),
                declaration_set_digest: "d".into(),
                at_millis: 2,
            },
        );
        let request = crate::run::StartRequest {
            run_id: "r1".into(),
            provider: nagi_schema::mission::MissionProvider::Codex,
            worktree_path: "/repo".into(),
            execute_declared_checks: true,
            execute_project_recipe: false,
            sandbox: crate::model::SandboxGrant::ReadOnly,
            consent_id: None,
            model: None,
            reasoning_effort: None,
        };
        let started =
            crate::run::decide_run_started(&configured, &request, &"a".repeat(40), 3).unwrap();
        let in_place = apply(Some(configured), &started);
        let ran_in_place = check_syncable(&in_place).unwrap_err().to_string();
        assert!(ran_in_place.contains("--in-place"), "{ran_in_place}");
    }

    #[test]
    fn the_message_defaults_to_title_and_objective() {
        let mission = mission_with_worktree(MissionStatus::ReadyToClose);
        assert_eq!(
            land_message(&mission, None),
            "Fix the parser\n\nIt must accept empty input."
        );
        assert_eq!(land_message(&mission, Some("  mine ")), "mine");
    }
}
