//! What happens to a mission when its worktree is found deleted, and to the worktree when
//! the mission is archived. The decisions are `nagi_mission::worktree`'s; this commits
//! them and does the git work on a blocking thread.

use std::path::PathBuf;
use std::sync::Arc;

use nagi_mission::clock::now_millis;
use nagi_schema::worktree::MissionWorktreeState;

use super::supervisor::commit;
use crate::engine::Engine;
use crate::errors::EngineError;
use crate::worktrees;

/// Marks the mission's worktree missing and blocks the mission with the reason, if the
/// worktree is indeed gone. Returns whether it was.
pub async fn block_missing(engine: &Arc<Engine>, mission_id: &str) -> Result<bool, EngineError> {
    let mission = engine.missions.get_existing(mission_id)?;
    let Some(worktree) = mission.worktree.clone() else {
        return Ok(false);
    };
    if worktree.state != MissionWorktreeState::Present
        || worktrees::git::worktree_is_present(&PathBuf::from(&worktree.path))
    {
        return Ok(false);
    }
    let reason = worktrees::missing_reason(&worktree);
    commit(engine, mission_id, move |mission| {
        nagi_mission::worktree::on_worktree_missing(mission, &reason, None, now_millis())
    })
    .await?;
    Ok(true)
}

/// `worktree_missing` (and the mission blocked) when the mission's worktree is gone, for
/// an action that needs it (`doing`: what could not be done).
pub async fn require_present(
    engine: &Arc<Engine>,
    mission_id: &str,
    doing: &str,
) -> Result<(), EngineError> {
    if block_missing(engine, mission_id).await? {
        return Err(nagi_mission::MissionError::WorktreeMissing(format!(
            "the worktree of mission {mission_id} was deleted; the mission is blocked and {doing}"
        ))
        .into());
    }
    Ok(())
}

/// Runs blocking git work off the async workers.
pub async fn blocking<T: Send + 'static>(
    job: impl FnOnce() -> Result<T, nagi_mission::MissionError> + Send + 'static,
) -> Result<T, nagi_mission::MissionError> {
    tokio::task::spawn_blocking(job).await.map_err(|error| {
        nagi_mission::MissionError::Runtime(format!("the git thread panicked: {error}"))
    })?
}

/// After an archive: removes the mission's worktree (its branch stays), unless it holds
/// changes that were not landed; then it is kept, and the view says why.
pub async fn settle_after_archive(
    engine: &Arc<Engine>,
    mission_id: &str,
) -> Result<(), EngineError> {
    let mission = engine.missions.get_existing(mission_id)?;
    let Some(worktree) = mission.worktree.clone() else {
        return Ok(());
    };
    if worktree.state != MissionWorktreeState::Present
        || mission.status != nagi_schema::mission::MissionStatus::Archived
    {
        return Ok(());
    }
    let repository = PathBuf::from(&mission.repository_path);
    let id = mission.mission_id.to_string();
    let landed = mission.landing.is_some();
    let landed_revision = mission
        .landing
        .as_ref()
        .map(|landing| landing.mission_revision.clone());
    let kept_reason = tokio::task::spawn_blocking(move || {
        let path = PathBuf::from(&worktree.path);
        if !worktrees::git::worktree_is_present(&path) {
            return None;
        }
        if let Some(mission_revision) = &landed_revision
            && let Err(error) = worktrees::land::finish_mission_branch(&path, mission_revision)
        {
            return Some(format!(
                "its branch could not be moved to the landed commit ({error}), so it is kept"
            ));
        }
        // After a landing, the branch's commits are landed: only files changed since
        // count.
        let since = (!landed).then_some(worktree.base_revision.as_str());
        match worktrees::git::unlanded_changes(&path, since) {
            Ok(Some(changes)) => Some(format!(
                "{changes} not landed; the worktree {} and its branch {} are kept",
                worktree.path, worktree.branch
            )),
            Ok(None) => match worktrees::git::remove_worktree(&repository, &id, &path, None) {
                Ok(()) => None,
                Err(error) => Some(format!("the worktree could not be removed: {error}")),
            },
            Err(error) => Some(format!(
                "its changes could not be read ({error}), so it is kept"
            )),
        }
    })
    .await
    .unwrap_or_else(|error| Some(format!("the worktree thread failed: {error}")));
    commit(engine, mission_id, move |mission| {
        nagi_mission::worktree::on_worktree_archived(mission, kept_reason, now_millis())
    })
    .await
}
