//! The consent preview of a landing: the branch, the strategy, the files, the message, the
//! checkout that moves, and the push. Its digest covers all of it, plus the target's tip,
//! the tree that lands and the mission's ready seal, so a consent given to one landing
//! never approves another (`consent_stale`).

use std::sync::Arc;

use nagi_schema::attention::AttentionRiskV1;
use nagi_schema::cockpit::{CockpitAction, CockpitPreview};
use nagi_schema::land::MissionLandParams;

use super::preview::hasher;
use crate::engine::Engine;
use crate::errors::EngineError;

/// The landing params an action carries; `None` for other actions.
pub fn params_of(action: &CockpitAction) -> Option<MissionLandParams> {
    match action {
        CockpitAction::Land {
            mission_id,
            into,
            strategy,
            message,
            push_remote,
            pull_request,
        } => Some(MissionLandParams {
            mission_id: mission_id.clone(),
            into: into.clone(),
            strategy: *strategy,
            message: message.clone(),
            push_remote: push_remote.clone(),
            pull_request: *pull_request,
        }),
        _ => None,
    }
}

const SHOWN_FILES: usize = 30;

pub async fn build(
    engine: &Arc<Engine>,
    action: &CockpitAction,
) -> Result<CockpitPreview, EngineError> {
    let params =
        params_of(action).ok_or_else(|| EngineError::InvalidParams("not a landing".into()))?;
    let (mission, request, inspection) = crate::runs::land::inspect_now(engine, &params).await?;
    let seal = mission
        .ready_receipt
        .as_ref()
        .map(|receipt| receipt.seal_digest.clone())
        .unwrap_or_default();
    let short = &inspection.target_revision[..inspection.target_revision.len().min(12)];
    let mut lines = vec![
        format!("Land mission {} ({})", mission.mission_id, mission.title),
        if request.pull_request {
            format!(
                "pull request: push {} to {} and open a pull request into {} (at {short}); no local branch changes",
                request.mission_branch,
                request.push_remote.as_deref().unwrap_or("origin"),
                request.target_branch
            )
        } else {
            format!(
                "branch: {} (at {short}) gets the change of {} by {}",
                request.target_branch,
                request.mission_branch,
                request.strategy.as_str()
            )
        },
        "first: the declared checks run again on the worktree; a proof that no longer verifies lands nothing".into(),
    ];
    match &inspection.checkout {
        Some(checkout) => lines.push(format!(
            "checkout: {} has {} checked out; its files move with the branch (it is clean now)",
            checkout.display(),
            request.target_branch
        )),
        None if !request.pull_request => lines.push(format!(
            "checkout: no checkout has {} checked out; only the branch moves",
            request.target_branch
        )),
        None => {}
    }
    lines.push(format!(
        "files ({}): {}{}",
        inspection.files.len(),
        inspection
            .files
            .iter()
            .take(SHOWN_FILES)
            .cloned()
            .collect::<Vec<_>>()
            .join(", "),
        if inspection.files.len() > SHOWN_FILES {
            format!(" and {} more", inspection.files.len() - SHOWN_FILES)
        } else {
            String::new()
        }
    ));
    let first_line = request.message.lines().next().unwrap_or("");
    lines.push(format!(
        "message: {first_line} (+ trailers Nagi-Mission: {}, Nagi-Proof: the digest of what the fresh proof proves)",
        mission.mission_id
    ));
    if let (Some(remote), false) = (&request.push_remote, request.pull_request) {
        lines.push(format!("push: {} to {remote}", request.target_branch));
    }
    lines.push("then: the mission is archived and its worktree removed (the branch stays)".into());
    let mut digest = hasher("land");
    digest
        .string(mission.mission_id.as_str())
        .string(&request.target_branch)
        .string(&inspection.target_revision)
        .string(&inspection.change_tree)
        .string(request.strategy.as_str())
        .string(&request.message)
        .string(request.push_remote.as_deref().unwrap_or(""))
        .bool(request.pull_request)
        .string(
            &inspection
                .checkout
                .as_ref()
                .map(|path| path.display().to_string())
                .unwrap_or_default(),
        )
        .string_list(&inspection.files)
        .string(&seal);
    Ok(CockpitPreview {
        digest: digest.finish(),
        title: format!("Land {} into {}", mission.mission_id, request.target_branch),
        risk: AttentionRiskV1::High,
        lines,
        recipe: None,
    })
}

/// The consent preview of a sync: the branch, where it goes, the commits replayed. The
/// digest covers the tips of both branches, so a consent is stale once either moves.
pub async fn build_sync(
    engine: &Arc<Engine>,
    mission_id: &str,
    onto: Option<&str>,
) -> Result<CockpitPreview, EngineError> {
    let params = nagi_schema::land::MissionSyncParams {
        mission_id: mission_id.to_string(),
        onto: onto.map(str::to_string),
    };
    let (mission, request, planned) = crate::runs::sync::inspect_now(engine, &params).await?;
    let short = &planned.onto_revision[..planned.onto_revision.len().min(12)];
    let mut lines = vec![format!(
        "Sync mission {} ({})",
        mission.mission_id, mission.title
    )];
    if planned.up_to_date {
        lines.push(format!(
            "{} already contains {} ({short}): nothing will change",
            request.mission_branch, request.onto
        ));
    } else {
        lines.push(format!(
            "branch: {} is rebased onto {} (at {short}); {} commit{} replayed",
            request.mission_branch,
            request.onto,
            planned.commits,
            if planned.commits == 1 { "" } else { "s" }
        ));
        lines.push(format!(
            "worktree: {} keeps its uncommitted changes, now on the new base",
            request.worktree_path.display()
        ));
        if mission.status == nagi_schema::mission::MissionStatus::ReadyToClose {
            lines.push("proof: the mission becomes blocked until it is verified again".into());
        }
    }
    let mut digest = hasher("sync");
    digest
        .string(mission.mission_id.as_str())
        .string(&request.onto)
        .string(&planned.onto_revision)
        .string(&planned.previous_head)
        .bool(planned.up_to_date);
    Ok(CockpitPreview {
        digest: digest.finish(),
        title: format!("Sync {} onto {}", mission.mission_id, request.onto),
        risk: AttentionRiskV1::Medium,
        lines,
        recipe: None,
    })
}
