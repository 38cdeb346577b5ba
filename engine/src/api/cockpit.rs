//! The cockpit channel: `cockpit.hello`, `cockpit.preview`, `cockpit.decide`. Every
//! request is checked against the authority rule first (`consent::peer`).

use std::sync::Arc;

use nagi_schema::cockpit::{
    CockpitAction, CockpitDecideParams, CockpitDecision, CockpitOutcome, CockpitPreviewParams,
};
use nagi_schema::mission::{MissionProviderMode, MissionStartParams, MissionStatus};
use nagi_schema::results::ResponseResult;

use super::Peer;
use super::missions::view;
use crate::consent::{self, peer::ConsentVerdict, preview};
use crate::engine::Engine;
use crate::errors::EngineError;
use crate::runs::start::StartAuthority;
use nagi_mission::MissionError;
use nagi_mission::attention::decide_dismiss;
use nagi_mission::clock::now_millis;
use nagi_mission::model::SandboxGrant;
use nagi_proof::handoff::HandoffAuthority;

fn forbid(peer: Peer) -> Result<(), EngineError> {
    match peer.consent {
        ConsentVerdict::Allowed => Ok(()),
        ConsentVerdict::Refused(reason) => {
            Err(MissionError::ConsentForbidden(format!("consent refused: {reason}")).into())
        }
    }
}

pub fn hello(peer: Peer) -> ResponseResult {
    match peer.consent {
        ConsentVerdict::Allowed => ResponseResult::CockpitHello {
            consent_allowed: true,
            reason: None,
        },
        ConsentVerdict::Refused(reason) => ResponseResult::CockpitHello {
            consent_allowed: false,
            reason: Some(reason.to_string()),
        },
    }
}

pub async fn preview(
    engine: &Arc<Engine>,
    peer: Peer,
    params: CockpitPreviewParams,
) -> Result<ResponseResult, EngineError> {
    forbid(peer)?;
    Ok(ResponseResult::CockpitPreview {
        preview: preview::build(engine, &params.action).await?,
    })
}

fn subject(action: &CockpitAction) -> (&'static str, Option<String>) {
    match action {
        CockpitAction::StartRun { mission_id, .. } => ("start_run", Some(mission_id.clone())),
        CockpitAction::Respond { mission_id, .. } => ("respond", Some(mission_id.clone())),
        CockpitAction::ManualEvidence { mission_id, .. } => {
            ("manual_evidence", Some(mission_id.clone()))
        }
        CockpitAction::HandoffStart { mission_id, .. } => {
            ("handoff_start", Some(mission_id.clone()))
        }
        CockpitAction::DismissAttention { mission_id, .. } => {
            ("dismiss_attention", mission_id.clone())
        }
        CockpitAction::Land { mission_id, .. } => ("land", Some(mission_id.clone())),
        CockpitAction::Sync { mission_id, .. } => ("sync", Some(mission_id.clone())),
    }
}

pub async fn decide(
    engine: &Arc<Engine>,
    peer: Peer,
    params: CockpitDecideParams,
) -> Result<ResponseResult, EngineError> {
    forbid(peer)?;
    let (current, handoff_artifact) = preview::build_for_decision(engine, &params.action).await?;
    if current.digest != params.shown_digest {
        return Err(MissionError::ConsentStale(format!(
            "what this consent covers changed since it was shown (shown {}, now {}); look at the new preview and decide again",
            params.shown_digest, current.digest
        ))
        .into());
    }
    let (subject, mission_id) = subject(&params.action);
    let mission_id = match (&params.action, mission_id) {
        (CockpitAction::DismissAttention { attention_id, .. }, None) => engine
            .missions
            .read(|reader| reader.attention_mission(attention_id))?,
        (_, mission_id) => mission_id,
    };
    let detail = consent_detail(&params.action, &current.lines);
    let consent_id = consent::record(
        engine,
        mission_id.as_deref(),
        subject,
        &current.digest,
        params.decision,
        detail,
    )
    .await?;
    if params.decision == CockpitDecision::Deny {
        let mission = mission_id
            .as_deref()
            .and_then(|id| engine.missions.get_existing(id).ok())
            .map(|mission| view(engine, &mission));
        return Ok(ResponseResult::CockpitDecided {
            outcome: CockpitOutcome {
                consent_id,
                decision: CockpitDecision::Deny,
                summary: "denied; nothing was done".into(),
                mission,
            },
        });
    }
    let recipe_scope = current
        .recipe
        .as_ref()
        .map(|recipe| recipe.scope_digest.as_str());
    let performed = perform(
        engine,
        &params.action,
        &consent_id,
        recipe_scope,
        handoff_artifact.as_deref(),
    )
    .await;
    let settled = match &performed {
        Ok(summary) => consent::settle(engine, &consent_id, Ok(summary)).await,
        Err(error) => {
            let (code, message) = crate::errors::wire_error(error);
            let reason = format!("{}: {message}", code.as_str());
            consent::settle(engine, &consent_id, Err(&reason)).await
        }
    };
    let summary = performed?;
    settled?;
    let mission = mission_id
        .as_deref()
        .and_then(|id| engine.missions.get_existing(id).ok())
        .map(|mission| view(engine, &mission));
    Ok(ResponseResult::CockpitDecided {
        outcome: CockpitOutcome {
            consent_id,
            decision: CockpitDecision::Approve,
            summary,
            mission,
        },
    })
}

/// What a consent record keeps: the action without the raw answer texts (contract §2.6:
/// only decisions, actors and routes are persisted), and the lines that were shown minus
/// the chosen answers.
fn consent_detail(action: &CockpitAction, lines: &[String]) -> serde_json::Value {
    let mut action_value = serde_json::to_value(action).unwrap_or_default();
    let mut shown: Vec<&String> = lines.iter().collect();
    if let CockpitAction::Respond { answers, .. } = action {
        let mut hasher = nagi_mission::digest::CanonicalHasher::new("cockpit-answers-v1");
        for (key, values) in answers {
            hasher.string(key).string_list(values);
        }
        action_value["answers"] = serde_json::json!({"question_ids": answers.keys().collect::<Vec<_>>(), "digest": hasher.finish()});
        shown.retain(|line| !line.trim_start().starts_with("your answer:"));
    }
    serde_json::json!({"action": action_value, "lines": shown})
}

/// Carries out an approved action. `recipe_scope` is the project recipe scope digest the
/// approved preview showed (a start that executes the recipe runs only that scope).
/// Carries out an approved action. `handoff_artifact` is the digest of the artifact the
/// handoff's preview showed (rebuilt then), which the continuation starts from.
async fn perform(
    engine: &Arc<Engine>,
    action: &CockpitAction,
    consent_id: &str,
    recipe_scope: Option<&str>,
    handoff_artifact: Option<&str>,
) -> Result<String, EngineError> {
    match action {
        CockpitAction::StartRun {
            mission_id,
            run_id,
            provider,
            worktree_path,
            worktree,
            base,
            write_scope,
            execute_project_recipe,
            execute_declared_checks,
            model,
            reasoning_effort,
        } => {
            let params = MissionStartParams {
                worktree: *worktree,
                base: base.clone(),
                mission_id: mission_id.clone(),
                run_id: run_id.clone(),
                provider: *provider,
                mode: MissionProviderMode::Managed,
                worktree_path: worktree_path.clone(),
                execute_declared_checks: *execute_declared_checks,
                execute_project_recipe: *execute_project_recipe,
                model: model.clone(),
                reasoning_effort: reasoning_effort.clone(),
            };
            let sandbox = if *write_scope {
                SandboxGrant::WorkspaceWrite
            } else {
                SandboxGrant::ReadOnly
            };
            crate::runs::start::start(
                engine,
                params,
                StartAuthority::Cockpit {
                    consent_id: consent_id.to_string(),
                    sandbox,
                    recipe_scope: recipe_scope.map(str::to_string),
                },
            )
            .await?;
            Ok(format!("run {run_id} started"))
        }
        CockpitAction::Respond {
            mission_id,
            run_id,
            attention_id,
            decision,
            answers,
        } => {
            crate::runs::respond::respond(
                engine,
                mission_id,
                run_id,
                attention_id,
                *decision,
                answers,
            )
            .await?;
            Ok(format!(
                "the response to {attention_id} was sent to the provider; it is settled when the provider confirms"
            ))
        }
        CockpitAction::ManualEvidence {
            mission_id,
            check_id,
            reviewer,
            reason,
            is_override,
        } => {
            crate::runs::checks::record_manual_evidence(
                engine,
                mission_id,
                check_id,
                reviewer,
                reason,
                *is_override,
            )
            .await
        }
        CockpitAction::HandoffStart {
            mission_id,
            to,
            generated_at_millis,
            artifact_sha256,
            write_scope,
        } => {
            let params = nagi_schema::mission::MissionHandoffStartParams {
                mission_id: mission_id.clone(),
                to: *to,
                generated_at_millis: *generated_at_millis,
                artifact_sha256: handoff_artifact.unwrap_or(artifact_sha256).to_string(),
                host: None,
            };
            let grant = crate::runs::handoff::CockpitGrant {
                consent_id: consent_id.to_string(),
                sandbox: if *write_scope {
                    SandboxGrant::WorkspaceWrite
                } else {
                    SandboxGrant::ReadOnly
                },
            };
            crate::runs::handoff::start_with(
                engine,
                params,
                HandoffAuthority::LocalCockpit,
                Some(grant),
            )
            .await?;
            Ok(format!(
                "mission {mission_id} continues with {}",
                to.as_str()
            ))
        }
        CockpitAction::Land { .. } => {
            let params = crate::consent::land_preview::params_of(action)
                .ok_or_else(|| MissionError::Runtime("not a landing".into()))?;
            crate::runs::land::land(engine, &params).await
        }
        CockpitAction::Sync { mission_id, onto } => {
            let params = nagi_schema::land::MissionSyncParams {
                mission_id: mission_id.clone(),
                onto: onto.clone(),
            };
            crate::runs::sync::sync(engine, &params).await
        }
        CockpitAction::DismissAttention {
            attention_id,
            mission_id,
            reason,
        } => {
            let mission_id = engine
                .missions
                .attention_item_mission(attention_id, mission_id.as_deref())?;
            // Decided again on the mission as it is inside the commit: an item answered or
            // closed since the preview is refused, and a live provider request too.
            let runs = engine.runs.clone();
            let attention = attention_id.clone();
            let reason = reason.clone();
            let committed = engine
                .missions
                .mutate(&mission_id, move |mission| {
                    if runs.response_route(&attention).is_some() {
                        return Err(MissionError::InvalidResponse(format!(
                            "attention {attention} has a live provider request; answer or deny it instead"
                        ))
                        .into());
                    }
                    let events = decide_dismiss(mission, &attention, &reason, now_millis())?;
                    Ok((events, ()))
                })
                .await?;
            let status = committed.mission.map(|mission| mission.status);
            let hint = if status == Some(MissionStatus::ReviewRequired) {
                "; verify the mission to evaluate its proof again"
            } else {
                ""
            };
            Ok(format!("attention {attention_id} dismissed{hint}"))
        }
    }
}
