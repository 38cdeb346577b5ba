//! What a consent covers, shown to the person, and its digest. The digest covers the
//! action and every piece of state the person was shown (the recipe's scope, the attention
//! item's request and questions, the workspace a manual review looked at, the handoff
//! artifact); `cockpit.decide` rebuilds the preview and refuses the consent as stale when
//! the digest differs.

use std::sync::Arc;

use nagi_schema::attention::AttentionRiskV1;
use nagi_schema::cockpit::{CockpitAction, CockpitPreview, RecipeScopeView, RecipeServiceView};
use nagi_schema::mission::{MissionProvider, MissionResponseDecision};

use crate::engine::Engine;
use crate::errors::EngineError;
use crate::recipe::{ProjectRecipe, load_project_recipe, scope_digest};
use nagi_mission::MissionError;
use nagi_mission::digest::CanonicalHasher;

pub(super) fn hasher(kind: &str) -> CanonicalHasher {
    CanonicalHasher::new(&format!("cockpit-consent-{kind}-v1"))
}

pub fn recipe_view(recipe: &ProjectRecipe, path: &str) -> RecipeScopeView {
    RecipeScopeView {
        path: path.to_string(),
        setup: recipe.setup.as_ref().map(|setup| setup.command.clone()),
        services: recipe
            .services
            .iter()
            .map(|(id, service)| RecipeServiceView {
                id: id.clone(),
                command: service.command.clone(),
                port_env: service.port_env.clone(),
                health: service.health.clone(),
            })
            .collect(),
        copy_ignored: recipe.worktree.copy_ignored.clone(),
        cleanup: recipe
            .cleanup
            .iter()
            .map(|command| command.command.clone())
            .collect(),
        scope_digest: scope_digest(recipe),
    }
}

pub(super) fn quote(argv: &[String]) -> String {
    argv.iter()
        .map(|word| {
            if !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@".contains(c))
            {
                word.clone()
            } else {
                format!("'{}'", word.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Builds the preview of an action against the current state.
pub async fn build(
    engine: &Arc<Engine>,
    action: &CockpitAction,
) -> Result<CockpitPreview, EngineError> {
    match action {
        CockpitAction::StartRun {
            mission_id,
            run_id,
            provider,
            worktree_path,
            worktree: mission_worktree,
            base,
            write_scope,
            execute_project_recipe,
            execute_declared_checks,
            // The model is part of the approved action (and its digest); it grants nothing.
            ..
        } => {
            let mission = engine.missions.get_existing(mission_id)?;
            crate::runs::start::check_run_id_is_free(engine, mission_id, run_id)?;
            if *provider == MissionProvider::Acp && !write_scope {
                return Err(EngineError::InvalidParams(
                    "an ACP agent runs only with write scope; turn write scope on to start it"
                        .into(),
                ));
            }
            let (worktree, worktree_line, recipe_root, base_ref) = if *mission_worktree {
                if worktree_path.is_some() {
                    return Err(EngineError::InvalidParams(
                        "give a worktree path or the mission's own worktree, not both".into(),
                    ));
                }
                let repository = engine
                    .checkouts
                    .canonical_checkout(&mission.repository_path)
                    .await
                    .map_err(MissionError::InvalidRepository)?;
                let branch = nagi_mission::worktree::mission_branch(mission_id);
                match crate::worktrees::choose_for_start(
                    &engine.config.current(),
                    &repository,
                    &mission,
                    base.as_deref(),
                )? {
                    crate::worktrees::WorktreeForStart::Existing(path) => {
                        let shown = path.display().to_string();
                        let line =
                            format!("worktree: {shown} — the mission's own, on branch {branch}");
                        (shown, line, path, String::new())
                    }
                    crate::worktrees::WorktreeForStart::ToMake { planned, .. } => {
                        let shown = planned.target.display().to_string();
                        let line = format!(
                            "worktree: {shown} — made now for this mission, on a new branch {branch} from {}",
                            planned.base_ref
                        );
                        (shown, line, repository.root, planned.base_ref)
                    }
                }
            } else {
                let requested = worktree_path
                    .clone()
                    .unwrap_or_else(|| mission.repository_path.clone());
                let checkout = engine
                    .checkouts
                    .canonical_checkout(&requested)
                    .await
                    .map_err(MissionError::InvalidRepository)?;
                let shown = checkout.root.display().to_string();
                let line = format!("worktree: {shown}");
                (shown, line, checkout.root, String::new())
            };
            let resolved = crate::launch::version::resolve_supported_provider(
                &engine.config.current(),
                &engine.provider_versions,
                *provider,
            )
            .await
            .map_err(MissionError::ProviderUnavailable)?;
            let mut lines = vec![
                format!(
                    "Start run {run_id} of mission {mission_id} ({})",
                    mission.title
                ),
                format!(
                    "provider: {} ({}), executable {}",
                    provider.display_name(),
                    provider.as_str(),
                    resolved.program.display()
                ),
                worktree_line,
                if *write_scope {
                    format!("write scope: the provider MAY CHANGE FILES in {worktree}")
                } else {
                    "write scope: none — the run is read-only".to_string()
                },
                if *execute_declared_checks {
                    "checks: the declared command checks run with your OS permissions when the turn completes".to_string()
                } else {
                    "checks: not run automatically".to_string()
                },
            ];
            let mut recipe = None;
            let mut digest = hasher("start");
            digest
                .string(mission_id)
                .string(run_id)
                .string(provider.as_str())
                .string(&worktree)
                .bool(*mission_worktree)
                .string(&base_ref)
                .string(&resolved.program.display().to_string())
                .bool(*write_scope)
                .bool(*execute_project_recipe)
                .bool(*execute_declared_checks);
            if *execute_project_recipe {
                let loaded = load_project_recipe(&recipe_root).map_err(|problems| {
                    MissionError::ProjectRecipeFailed(
                        problems
                            .iter()
                            .map(|problem| format!("{}: {}", problem.path, problem.message))
                            .collect::<Vec<_>>()
                            .join("; "),
                    )
                })?;
                let Some(loaded) = loaded else {
                    return Err(MissionError::ProjectRecipeFailed(format!(
                        "{worktree} has no .nagi/project.toml"
                    ))
                    .into());
                };
                let view = recipe_view(&loaded, &format!("{worktree}/.nagi/project.toml"));
                match &view.setup {
                    Some(setup) => lines.push(format!("recipe setup: {}", quote(setup))),
                    None => lines.push("recipe setup: none".into()),
                }
                for service in &view.services {
                    lines.push(format!(
                        "recipe service {}: {} — port in ${} (leased from 41000–49000), healthy when {} answers 2xx",
                        service.id,
                        quote(&service.command),
                        service.port_env,
                        service.health
                    ));
                }
                for path in &view.copy_ignored {
                    lines.push(format!(
                        "recipe copies the ignored file {path} into new worktrees"
                    ));
                }
                for command in &view.cleanup {
                    lines.push(format!("recipe cleanup on archive: {}", quote(command)));
                }
                digest.string(&view.scope_digest);
                recipe = Some(view);
            }
            let risk = if *write_scope || *execute_project_recipe {
                AttentionRiskV1::High
            } else {
                AttentionRiskV1::Medium
            };
            Ok(CockpitPreview {
                digest: digest.finish(),
                title: format!("Start {run_id}"),
                risk,
                lines,
                recipe,
            })
        }
        CockpitAction::Respond {
            mission_id,
            run_id,
            attention_id,
            decision,
            answers,
        } => {
            let (item, _request_key) =
                crate::runs::respond::check_respondable(engine, mission_id, run_id, attention_id)?;
            crate::runs::respond::provider_response(&item, *decision, answers)?;
            let mut lines = vec![format!(
                "{} asks: {}",
                item.kind_label(),
                item.requested_action
            )];
            for question in &item.questions {
                lines.push(format!("question {}: {}", question.header, question.prompt));
                if let Some(chosen) = answers.get(&question.id) {
                    lines.push(format!("  your answer: {}", chosen.join(", ")));
                }
            }
            lines.push(format!(
                "decision: {}",
                match decision {
                    MissionResponseDecision::ApproveOnce => "approve this once",
                    MissionResponseDecision::ApproveForSession =>
                        "approve for the rest of the provider's session",
                    MissionResponseDecision::Deny => "deny",
                    MissionResponseDecision::Answer => "answer",
                }
            ));
            let mut digest = hasher("respond");
            digest
                .string(mission_id)
                .string(run_id)
                .string(attention_id)
                .string(&item.requested_action);
            for question in &item.questions {
                digest.string(&question.id).string(&question.prompt);
            }
            digest.string(&serde_json::to_string(decision).unwrap_or_default());
            for (key, values) in answers {
                digest.string(key).string_list(values);
            }
            Ok(CockpitPreview {
                digest: digest.finish(),
                title: format!("Answer {attention_id}"),
                risk: item.risk,
                lines,
                recipe: None,
            })
        }
        CockpitAction::ManualEvidence {
            mission_id,
            check_id,
            reviewer,
            reason,
            is_override,
        } => {
            let mission = engine.missions.get_existing(mission_id)?;
            let declaration = mission.declaration(check_id).ok_or_else(|| {
                MissionError::InvalidClosure(format!(
                    "mission {mission_id} declares no check {check_id:?}"
                ))
            })?;
            let run = mission.run.clone().ok_or_else(|| {
                MissionError::NotReady(format!("mission {mission_id} has no run yet"))
            })?;
            let worktree = std::path::PathBuf::from(&run.worktree_path);
            let snapshot = tokio::task::spawn_blocking(move || {
                nagi_exec::workspace::scan_workspace(&worktree, &Default::default())
            })
            .await
            .map_err(|error| MissionError::Runtime(error.to_string()))?
            .map_err(|error| {
                MissionError::Runtime(format!("the workspace cannot be scanned: {error}"))
            })?;
            let lines = vec![
                format!("Manual evidence for check {check_id} of mission {mission_id}"),
                format!(
                    "reviewer: {reviewer}{}",
                    if *is_override { " (OVERRIDE)" } else { "" }
                ),
                format!("reason: {reason}"),
                format!(
                    "it covers the workspace as it is now (digest {})",
                    snapshot.digest
                ),
            ];
            let mut digest = hasher("manual");
            digest
                .string(mission_id)
                .string(check_id)
                .string(&declaration.digest)
                .string(reviewer)
                .string(reason)
                .bool(*is_override)
                .string(&snapshot.digest);
            Ok(CockpitPreview {
                digest: digest.finish(),
                title: format!("Record {check_id}"),
                risk: AttentionRiskV1::Medium,
                lines,
                recipe: None,
            })
        }
        CockpitAction::HandoffStart { .. } => {
            handoff(engine, action).await.map(|(preview, _)| preview)
        }
        CockpitAction::Land { .. } => super::land_preview::build(engine, action).await,
        CockpitAction::Sync { mission_id, onto } => {
            super::land_preview::build_sync(engine, mission_id, onto.as_deref()).await
        }
        CockpitAction::DismissAttention {
            attention_id,
            mission_id,
            reason,
        } => {
            let mission_id = engine
                .missions
                .attention_item_mission(attention_id, mission_id.as_deref())?;
            let mission = engine.missions.get_existing(&mission_id)?;
            let item = mission
                .attention
                .get(attention_id)
                .ok_or_else(|| MissionError::AttentionNotFound(attention_id.clone()))?;
            if !item.is_unresolved() {
                return Err(MissionError::InvalidResponse(format!(
                    "attention {attention_id} is already settled"
                ))
                .into());
            }
            if engine.runs.response_route(attention_id).is_some() {
                return Err(MissionError::InvalidResponse(format!(
                    "attention {attention_id} has a live provider request; answer or deny it instead"
                ))
                .into());
            }
            let lines = vec![
                format!(
                    "Dismiss {} of mission {mission_id}: {}",
                    item.kind_label(),
                    item.requested_action
                ),
                format!("reason: {reason}"),
            ];
            let mut digest = hasher("dismiss");
            digest
                .string(&mission_id)
                .string(attention_id)
                .string(&item.requested_action)
                .u64(item.updated_at_millis)
                .string(reason);
            Ok(CockpitPreview {
                digest: digest.finish(),
                title: format!("Dismiss {attention_id}"),
                risk: item.risk,
                lines,
                recipe: None,
            })
        }
    }
}

/// What `cockpit.decide` needs of a preview: the preview, and for a handoff the digest of
/// the artifact it shows (the one the consent starts the continuation from).
pub async fn build_for_decision(
    engine: &Arc<Engine>,
    action: &CockpitAction,
) -> Result<(CockpitPreview, Option<String>), EngineError> {
    match action {
        CockpitAction::HandoffStart { .. } => handoff(engine, action)
            .await
            .map(|(preview, artifact)| (preview, Some(artifact))),
        _ => build(engine, action).await.map(|preview| (preview, None)),
    }
}

/// A handoff's preview rebuilds the artifact (at the inspected `generated_at_millis`) and
/// binds its digest: a change of the mission or its workspace after the preview was shown
/// makes the decision `consent_stale`, and the preview shown again is of the artifact as it
/// is then. Returns the preview and the rebuilt artifact's digest.
async fn handoff(
    engine: &Arc<Engine>,
    action: &CockpitAction,
) -> Result<(CockpitPreview, String), EngineError> {
    let CockpitAction::HandoffStart {
        mission_id,
        to,
        generated_at_millis,
        artifact_sha256,
        write_scope,
    } = action
    else {
        unreachable!("only a handoff action is previewed here");
    };
    let mission = engine.missions.get_existing(mission_id)?;
    if *to == MissionProvider::Acp && !write_scope {
        return Err(EngineError::InvalidParams(
            "an ACP agent runs only with write scope".into(),
        ));
    }
    let artifact = crate::runs::handoff::build(&mission, *to, *generated_at_millis).await?;
    let source = mission
        .run
        .as_ref()
        .map(|run| run.run_id.to_string())
        .unwrap_or_default();
    let changed_paths = artifact.diff.changed_paths.len();
    let mut lines = vec![
        format!(
            "Hand mission {mission_id} from run {source} to {}",
            to.display_name()
        ),
        format!(
            "artifact {} (generated {})",
            artifact.artifact_sha256,
            nagi_mission::clock::format_utc(*generated_at_millis)
        ),
        format!(
            "workspace: {changed_paths} changed path{} since the base commit",
            if changed_paths == 1 { "" } else { "s" }
        ),
    ];
    if artifact.artifact_sha256 != *artifact_sha256 {
        lines.push(format!(
            "the mission or its workspace changed since artifact {} was previewed: this is the artifact as it is now",
            &artifact_sha256[..artifact_sha256.len().min(12)]
        ));
    }
    lines.push(if *write_scope {
        "write scope: the new provider MAY CHANGE FILES".into()
    } else {
        "write scope: none — read-only".into()
    });
    let mut digest = hasher("handoff");
    digest
        .string(mission_id)
        .string(to.as_str())
        .u64(*generated_at_millis)
        .string(&artifact.artifact_sha256)
        .bool(*write_scope);
    Ok((
        CockpitPreview {
            digest: digest.finish(),
            title: format!("Hand off {mission_id}"),
            risk: AttentionRiskV1::High,
            lines,
            recipe: None,
        },
        artifact.artifact_sha256,
    ))
}
