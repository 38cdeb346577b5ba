//! `mission.diff` (nagi extension): the mission's change against the commit its worktree
//! was made from (or, for a mission that runs in a checkout, its current run's base).

use std::path::PathBuf;
use std::sync::Arc;

use nagi_exec::workspace::mission_diff::{FileStatus, MissionDiffConfig, mission_diff};
use nagi_mission::MissionError;
use nagi_schema::results::ResponseResult;
use nagi_schema::worktree::{
    DiffFileStatus, MissionDiffFileV1, MissionDiffParams, MissionDiffV1, MissionWorktreeState,
};

use crate::engine::Engine;
use crate::errors::EngineError;

/// Hunks returned when the request names no cap.
pub const DEFAULT_MAX_PATCH_BYTES: u64 = 1024 * 1024;
/// The largest cap a request may name.
pub const MAX_PATCH_BYTES: u64 = 16 * 1024 * 1024;

pub async fn diff(
    engine: &Arc<Engine>,
    params: MissionDiffParams,
) -> Result<ResponseResult, EngineError> {
    let max_patch_bytes = params.max_patch_bytes.unwrap_or(DEFAULT_MAX_PATCH_BYTES);
    if max_patch_bytes > MAX_PATCH_BYTES {
        return Err(EngineError::InvalidParams(format!(
            "max_patch_bytes is {max_patch_bytes}; the limit is {MAX_PATCH_BYTES}"
        )));
    }
    let mission = engine.missions.get_checked(&params.mission_id)?;
    let (root, branch, base_revision) = match (&mission.worktree, &mission.run) {
        (Some(worktree), _) => match worktree.state {
            MissionWorktreeState::Present | MissionWorktreeState::Kept => (
                worktree.path.clone(),
                worktree.branch.clone(),
                worktree.base_revision.clone(),
            ),
            MissionWorktreeState::Missing => {
                return Err(
                    MissionError::WorktreeMissing(crate::worktrees::missing_reason(worktree))
                        .into(),
                );
            }
            MissionWorktreeState::Removed => {
                return Err(MissionError::WorktreeFailed(format!(
                    "mission {} was archived and its worktree removed; its change is on the branch {}",
                    mission.mission_id, worktree.branch
                ))
                .into());
            }
        },
        (None, Some(run)) => (
            run.worktree_path.clone(),
            String::new(),
            run.base_revision.clone(),
        ),
        (None, None) => {
            return Err(MissionError::NotReady(format!(
                "mission {} has not started: it has no worktree and no run to diff",
                mission.mission_id
            ))
            .into());
        }
    };
    if !crate::worktrees::git::worktree_is_present(&PathBuf::from(&root)) {
        if crate::runs::worktree::block_missing(engine, &mission.mission_id).await? {
            let worktree = engine.missions.get_existing(&mission.mission_id)?.worktree;
            if let Some(worktree) = worktree {
                return Err(
                    MissionError::WorktreeMissing(crate::worktrees::missing_reason(&worktree))
                        .into(),
                );
            }
        }
        return Err(
            MissionError::InvalidRepository(format!("{root} is no longer a checkout")).into(),
        );
    }
    let config = MissionDiffConfig {
        git: Default::default(),
        stat_only: params.stat_only,
        max_patch_bytes: max_patch_bytes as usize,
    };
    let diff_root = PathBuf::from(&root);
    let base = base_revision.clone();
    let computed = tokio::task::spawn_blocking(move || mission_diff(&diff_root, &base, &config))
        .await
        .map_err(|error| MissionError::Runtime(format!("the diff thread failed: {error}")))?
        .map_err(|error| MissionError::WorktreeFailed(format!("cannot diff {root}: {error}")))?;
    let files: Vec<MissionDiffFileV1> = computed
        .files
        .into_iter()
        .map(|file| MissionDiffFileV1 {
            binary: file.additions.is_none(),
            path: file.path,
            status: match file.status {
                FileStatus::Added => DiffFileStatus::Added,
                FileStatus::Modified => DiffFileStatus::Modified,
                FileStatus::Deleted => DiffFileStatus::Deleted,
                FileStatus::TypeChanged => DiffFileStatus::TypeChanged,
            },
            additions: file.additions,
            deletions: file.deletions,
            untracked: file.untracked,
        })
        .collect();
    Ok(ResponseResult::MissionDiff {
        diff: MissionDiffV1 {
            mission_id: mission.mission_id.to_string(),
            worktree_path: root,
            branch,
            base_revision,
            additions: files.iter().filter_map(|file| file.additions).sum(),
            deletions: files.iter().filter_map(|file| file.deletions).sum(),
            files,
            patch: computed.patch,
            omitted_patch_bytes: computed.omitted_patch_bytes,
        },
    })
}
