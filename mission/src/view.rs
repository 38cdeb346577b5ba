//! Projections of the aggregate onto the wire (contract §3). Views are rebuilt from
//! durable state only, so the same mission read twice without a mutation in between is
//! byte-identical.

use nagi_schema::attention::*;
use nagi_schema::mission::*;

use super::model::*;

/// Whether the server holds a live provider for a mission's run; views say so in
/// `run.live`. Two missions may each have a run of one id: the mission is part of the
/// question.
pub trait LiveRuns {
    fn is_live(&self, mission_id: &str, run_id: &str) -> bool;
}

pub struct NoLiveRuns;

impl LiveRuns for NoLiveRuns {
    fn is_live(&self, _mission_id: &str, _run_id: &str) -> bool {
        false
    }
}

pub fn run_view(run: &Run, live: Option<bool>) -> MissionRunViewV1 {
    MissionRunViewV1 {
        run_id: run.run_id.to_string(),
        provider: run.provider,
        mode: run.mode,
        worktree_path: run.worktree_path.clone(),
        base_revision: run.base_revision.clone(),
        execute_declared_checks: run.execute_declared_checks,
        execute_project_recipe: run.execute_project_recipe,
        handoff_from_run_id: run.handoff_from_run_id.clone(),
        handoff_artifact_sha256: run.handoff_artifact_sha256.clone(),
        pane_id: run.pane_id.clone(),
        enforcement: run.enforcement.clone(),
        live,
        turns: Some(run.turns),
        last_turn_outcome: run.last_turn_outcome.clone(),
        queued_follow_ups: (run.queued_follow_ups > 0).then_some(run.queued_follow_ups),
        usage: run.usage.map(|usage| usage.to_wire()),
        model: run.model.clone(),
        reasoning_effort: run.reasoning_effort.clone(),
    }
}

/// The native session and the vendor's command that resumes it by hand (in the run's
/// worktree). ACP agents have no common command. Never part of the mission view (contract:
/// the session id is not on the wire); `mission.session` shows it to a person.
pub fn provider_session(
    provider: nagi_schema::mission::MissionProvider,
    id: &str,
) -> nagi_schema::steer::ProviderSessionV1 {
    use nagi_schema::mission::MissionProvider;
    let resume_command = match provider {
        MissionProvider::Codex => Some(format!("codex resume {id}")),
        MissionProvider::ClaudeCode => Some(format!("claude --resume {id}")),
        MissionProvider::OpenCode => Some(format!("opencode --session {id}")),
        MissionProvider::Acp => None,
    };
    nagi_schema::steer::ProviderSessionV1 {
        id: id.to_string(),
        resume_command,
    }
}

pub fn check_summaries(mission: &Mission) -> Vec<MissionCheckSummaryV1> {
    let Some(plan) = &mission.plan else {
        return Vec::new();
    };
    plan.declarations
        .iter()
        .map(|declaration| {
            let kind = if declaration.is_command() {
                MissionCheckKindV1::Command
            } else {
                MissionCheckKindV1::Manual
            };
            let status = match mission.evidence.get(&declaration.check_id) {
                Some(evidence) => match evidence.assessment {
                    MissionEvidenceAssessmentV1::Passed => MissionCheckStatusV1::Passed,
                    MissionEvidenceAssessmentV1::Failed => MissionCheckStatusV1::Failed,
                    MissionEvidenceAssessmentV1::Stale => MissionCheckStatusV1::Stale,
                    MissionEvidenceAssessmentV1::ProviderClaimOnly => {
                        MissionCheckStatusV1::ProviderClaimOnly
                    }
                    MissionEvidenceAssessmentV1::DeclarationMismatch => {
                        MissionCheckStatusV1::DeclarationMismatch
                    }
                    MissionEvidenceAssessmentV1::IdentityMismatch => {
                        MissionCheckStatusV1::IdentityMismatch
                    }
                    MissionEvidenceAssessmentV1::ArtifactMissingOrChanged => {
                        MissionCheckStatusV1::ArtifactMissingOrChanged
                    }
                    MissionEvidenceAssessmentV1::ManualNotAuthorized => {
                        MissionCheckStatusV1::ManualNotAuthorized
                    }
                },
                None if declaration.is_command() => MissionCheckStatusV1::Missing,
                None => MissionCheckStatusV1::ManualMissing,
            };
            MissionCheckSummaryV1 {
                check_id: declaration.check_id.clone(),
                kind,
                required: declaration.required,
                covered_criterion_ids: declaration.covered_criterion_ids.clone(),
                status,
            }
        })
        .collect()
}

fn evidence_summary(mission: &Mission, evidence: &Evidence) -> MissionEvidenceSummaryV1 {
    let kind = match mission.declaration(&evidence.check_id) {
        Some(declaration) if !declaration.is_command() => MissionEvidenceKindV1::Manual,
        _ => evidence.kind,
    };
    let (reviewer, manual_override, source) = match &evidence.source {
        Some(EvidenceSource::Manual {
            reviewer,
            is_override,
            ..
        }) => (
            Some(reviewer.clone()),
            Some(*is_override),
            Some(format!("manual:{reviewer}")),
        ),
        Some(EvidenceSource::Command { program, .. }) => (
            None,
            None,
            Some(truncate(&format!("command:{program}"), 128)),
        ),
        None => (None, None, None),
    };
    MissionEvidenceSummaryV1 {
        check_id: evidence.check_id.clone(),
        kind,
        assessment: evidence.assessment,
        workspace_digest: evidence.workspace_digest.clone(),
        recorded_at_millis: evidence.recorded_at_millis,
        duration_millis: evidence.duration_millis,
        exit_code: evidence.exit_code,
        artifact_count: evidence.artifacts.len() as u32,
        reviewer,
        manual_override,
        source,
        detail: evidence.detail.clone(),
        output_tail: evidence.output_tail.clone(),
    }
}

fn truncate(text: &str, max_bytes: usize) -> String {
    text[..text.floor_char_boundary(max_bytes)].to_string()
}

pub fn mission_view(mission: &Mission, live_runs: &dyn LiveRuns) -> MissionViewV1 {
    let checks = check_summaries(mission);
    let criteria = mission
        .criteria
        .iter()
        .map(|criterion| {
            let required_check_ids: Vec<String> = mission
                .plan
                .iter()
                .flat_map(|plan| plan.declarations.iter())
                .filter(|declaration| {
                    declaration.required
                        && declaration
                            .covered_criterion_ids
                            .contains(&criterion.criterion_id)
                })
                .map(|declaration| declaration.check_id.clone())
                .collect();
            MissionCriterionSummaryV1 {
                criterion_id: Some(criterion.criterion_id.clone()),
                description: criterion.description.clone(),
                coverage: if required_check_ids.is_empty() {
                    MissionCriterionCoverageV1::Uncovered
                } else {
                    MissionCriterionCoverageV1::Covered
                },
                required_check_ids,
            }
        })
        .collect();
    MissionViewV1 {
        schema_version: 1,
        mission_id: mission.mission_id.to_string(),
        title: mission.title.clone(),
        repository_path: mission.repository_path.clone(),
        objective: mission.objective.clone(),
        criteria,
        closure_configured: mission.plan.is_some(),
        declared_check_count: checks.len() as u32,
        checks,
        evidence: mission
            .evidence
            .values()
            .map(|evidence| evidence_summary(mission, evidence))
            .collect(),
        evidence_pack_digest: mission.evidence_pack_digest.clone(),
        details_available: true,
        status: mission.status,
        status_reason: mission.status_reason.clone(),
        run: mission.run.as_ref().map(|run| {
            let live = live_runs.is_live(&mission.mission_id, &run.run_id);
            run_view(run, Some(live))
        }),
        run_history: mission
            .run_history
            .iter()
            .map(|run| run_view(run, None))
            .collect(),
        checks_running: mission
            .checks_in_flight
            .as_ref()
            .map(|checks| ChecksRunningV1 {
                run_id: checks.run_id.clone(),
                purpose: checks.purpose.clone(),
                started_at_millis: checks.started_at_millis,
            }),
        abandoned_reason: mission.abandoned_reason.clone(),
        worktree: mission.worktree.as_ref().map(worktree_view),
        landing: mission.landing.clone().map(Box::new),
        usage: nagi_schema::usage::total(
            mission
                .run_history
                .iter()
                .chain(mission.run.iter())
                .filter_map(|run| run.usage.as_ref()),
        )
        .map(|usage| usage.to_wire()),
        unresolved_attention_count: mission.unresolved_attention_count(),
        updated_at_millis: mission.updated_at_millis,
        host: None,
    }
}

pub fn worktree_view(
    worktree: &crate::model::MissionWorktree,
) -> nagi_schema::worktree::MissionWorktreeViewV1 {
    nagi_schema::worktree::MissionWorktreeViewV1 {
        path: worktree.path.clone(),
        branch: worktree.branch.clone(),
        base_revision: worktree.base_revision.clone(),
        base_ref: worktree.base_ref.clone(),
        created_at_millis: worktree.created_at_millis,
        state: worktree.state,
        kept_reason: worktree.kept_reason.clone(),
        target_branch: worktree.target_branch.clone(),
    }
}

pub fn mission_summary(mission: &Mission) -> MissionSummary {
    MissionSummary {
        mission_id: mission.mission_id.to_string(),
        title: mission.title.clone(),
        repository_path: mission.repository_path.clone(),
        status: mission.status,
        unresolved_attention_count: mission.unresolved_attention_count() as u64,
        updated_at_millis: mission.updated_at_millis,
        host: None,
    }
}

/// Whether a live response channel exists for an attention item.
pub trait LiveAttention {
    fn is_respondable(&self, attention_id: &str) -> bool;
}

pub fn attention_view(
    mission: &Mission,
    item: &Attention,
    live: &dyn LiveAttention,
) -> AttentionItemV1 {
    let run = mission.run.as_ref();
    let provider = run
        .map(|run| run.provider)
        .unwrap_or(MissionProvider::Codex);
    let run_id = run
        .map(|run| run.run_id.to_string())
        .unwrap_or_else(|| item.run_id.clone());
    let session_id = run
        .and_then(|run| run.provider_session_id.clone())
        .filter(|session| !session.is_empty())
        .unwrap_or_else(|| run_id.clone());
    let respondable = live.is_respondable(&item.attention_id);
    let latest = item.attempts.last();
    let state = match item.lifecycle {
        AttentionLifecycle::Open => AttentionStateV1::Open,
        AttentionLifecycle::PendingResponse => match latest {
            Some(attempt) => AttentionStateV1::PendingResponse {
                decision: attempt.decision,
                actor: attempt.actor.clone(),
                requested_at_millis: attempt.requested_at_millis,
            },
            None => AttentionStateV1::Open,
        },
        AttentionLifecycle::Resolved => match latest {
            Some(attempt) => AttentionStateV1::Resolved {
                decision: attempt.decision,
                actor: attempt.actor.clone(),
                at_millis: attempt.updated_at_millis,
            },
            None => AttentionStateV1::Resolved {
                decision: AttentionDecisionV1::ApproveOnce,
                actor: "local-user".into(),
                at_millis: item.updated_at_millis,
            },
        },
        AttentionLifecycle::ReconciliationRequired => {
            let (decision, actor, code, at) = match latest {
                Some(attempt) => {
                    let code = match attempt.state {
                        AttemptState::DeliveryUnknown { code }
                        | AttemptState::DefinitelyNotApplied { code } => code,
                        _ => AttentionFailureCodeV1::TransportClosed,
                    };
                    (
                        attempt.decision,
                        attempt.actor.clone(),
                        code,
                        attempt.updated_at_millis,
                    )
                }
                None => (
                    AttentionDecisionV1::Deny,
                    "local-user".into(),
                    AttentionFailureCodeV1::TransportClosed,
                    item.updated_at_millis,
                ),
            };
            AttentionStateV1::ReconciliationRequired {
                decision,
                actor,
                code,
                at_millis: at,
            }
        }
        AttentionLifecycle::Dismissed => AttentionStateV1::Dismissed {
            actor: item.closed_by.clone().unwrap_or_else(|| "nagi".into()),
            reason: item
                .closed_reason
                .clone()
                .unwrap_or_else(|| "dismissed".into()),
            at_millis: item.updated_at_millis,
        },
        AttentionLifecycle::Expired => AttentionStateV1::Expired {
            at_millis: item.updated_at_millis,
        },
    };
    let delivery = match (item.lifecycle, latest) {
        (AttentionLifecycle::Dismissed | AttentionLifecycle::Expired, _) => {
            AttentionDeliveryStateV1::NotApplicable
        }
        (_, None) => AttentionDeliveryStateV1::NotRequested,
        (_, Some(attempt)) => match attempt.state {
            AttemptState::Requested => AttentionDeliveryStateV1::Pending {
                attempt: attempt.attempt,
                requested_at_millis: attempt.requested_at_millis,
            },
            AttemptState::Acknowledged => AttentionDeliveryStateV1::Acknowledged {
                attempt: attempt.attempt,
                at_millis: attempt.updated_at_millis,
            },
            AttemptState::DefinitelyNotApplied { code } => {
                AttentionDeliveryStateV1::DefinitelyNotApplied {
                    attempt: attempt.attempt,
                    code,
                    at_millis: attempt.updated_at_millis,
                }
            }
            AttemptState::DeliveryUnknown { code } => AttentionDeliveryStateV1::DeliveryUnknown {
                attempt: attempt.attempt,
                code,
                at_millis: attempt.updated_at_millis,
            },
        },
    };
    let pane_id = run
        .and_then(|run| run.pane_id.clone())
        .unwrap_or_else(|| run_id.clone());
    AttentionItemV1 {
        schema_version: 1,
        attention_id: item.attention_id.clone(),
        mission_id: mission.mission_id.to_string(),
        run_id,
        session_id: truncate(&session_id, 256),
        pane: AttentionPaneTargetV1 {
            workspace_id: pane_workspace(&pane_id, &mission.mission_id),
            pane_id,
        },
        kind: item.kind,
        requested_action: item.requested_action.clone(),
        scope: item.scope.clone(),
        risk: item.risk,
        provider,
        source: if respondable {
            AttentionSourceV1::ProviderApi
        } else {
            item.source_when_not_live()
        },
        response_capability: if respondable {
            AttentionResponseCapabilityV1::Reliable
        } else {
            AttentionResponseCapabilityV1::OpenPaneOnly
        },
        questions: item.questions.clone(),
        created_at_millis: item.created_at_millis,
        expires_at_millis: None,
        occurrence_count: 1,
        unread: item.is_unresolved(),
        state,
        delivery,
        host: None,
    }
}

/// The workspace part of a pane id (`w3` of `w3:p1`); the mission id when the run has no
/// real pane.
fn pane_workspace(pane_id: &str, mission_id: &str) -> String {
    match pane_id.split_once(':') {
        Some((workspace, _)) if workspace.starts_with('w') => workspace.to_string(),
        _ => mission_id.to_string(),
    }
}

impl Attention {
    fn source_when_not_live(&self) -> AttentionSourceV1 {
        match self.request_class {
            RequestClass::Notice => self.source,
            _ => AttentionSourceV1::Process,
        }
    }
}
