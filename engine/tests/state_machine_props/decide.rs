//! Turning a command into the domain events the engine would decide for it, under the
//! rules of contract §4.2 and the server's preconditions (none when the rules refuse it).

use nagi_mission::create::{ConfigureDecision, CreateDecision, decide_configure, decide_create};
use nagi_mission::model::*;
use nagi_mission::status::{generic_transition_allowed, run_can_follow};
use nagi_mission::{Mission, MissionEvent};
use nagi_schema::attention::*;
use nagi_schema::mission::*;
use nagi_schema::proof::{ProofClosureDecisionV1, ProofIdentityV1, ProofReceiptV1};

use crate::commands::*;
use crate::*;

// ---------------------------------------------------------------------------------------
// Turning commands into events
// ---------------------------------------------------------------------------------------

pub(crate) fn create_params(criteria: usize, different_title: bool) -> MissionCreateParams {
    MissionCreateParams {
        mission_id: MISSION_ID.into(),
        title: if different_title {
            "Another title".into()
        } else {
            "Fix the login flow".into()
        },
        repository_path: "/repo".into(),
        objective: "Make login work again".into(),
        acceptance_criteria: (0..criteria)
            .map(|index| format!("criterion {index} holds"))
            .collect(),
        host: None,
    }
}

pub(crate) fn mission_check(spec: &CheckSpec) -> MissionCheck {
    let id = format!("check-{}", spec.id_index);
    if spec.manual {
        MissionCheck::Manual(ManualCheck {
            id,
            reviewers: if spec.broken {
                Vec::new()
            } else {
                vec!["alice".into()]
            },
            allow_override: false,
            required: spec.required,
            covers: spec.covers.clone(),
        })
    } else {
        MissionCheck::Command(CommandCheck {
            id,
            program: if spec.broken {
                String::new()
            } else {
                "cargo".into()
            },
            args: vec!["test".into()],
            cwd: if spec.broken {
                "../outside".into()
            } else {
                ".".into()
            },
            relevant_paths: vec![MissionPathRule::Prefix {
                prefix: "src".into(),
            }],
            required_artifacts: Vec::new(),
            include_ignored: false,
            required: spec.required,
            covers: spec.covers.clone(),
        })
    }
}

pub(crate) fn new_run(
    mission: &Mission,
    model: &Model,
    provider: usize,
    handoff: bool,
    at: u64,
) -> Run {
    Run {
        run_id: nagi_schema::ids::RunId::parse(&format!("run-{}", model.runs_started + 1)).unwrap(),
        provider: MissionProvider::ALL[provider],
        mode: MissionProviderMode::Managed,
        worktree_path: mission.repository_path.clone(),
        base_revision: "3f2a9c1d4e5b6a7980c1d2e3f4a5b6c7d8e9f0a1".into(),
        execute_declared_checks: true,
        execute_project_recipe: false,
        handoff_from_run_id: if handoff {
            mission.run.as_ref().map(|run| run.run_id.to_string())
        } else {
            None
        },
        handoff_artifact_sha256: handoff.then(|| "ab".repeat(32)),
        provider_session_id: None,
        sandbox: SandboxGrant::ReadOnly,
        consent_id: None,
        pane_id: None,
        enforcement: None,
        workspace_digest_at_start: None,
        started_at_millis: at,
        ended_at_millis: None,
        outcome: None,
        turns: 1,
        last_turn_outcome: None,
        queued_follow_ups: 0,
        usage: None,
        model: None,
        reasoning_effort: None,
    }
}

pub(crate) const ATTENTION_KINDS: [AttentionKindV1; 8] = [
    AttentionKindV1::PermissionRequest,
    AttentionKindV1::ProviderQuestion,
    AttentionKindV1::CommandFailed,
    AttentionKindV1::WorktreeConflict,
    AttentionKindV1::TurnComplete,
    AttentionKindV1::Disconnected,
    AttentionKindV1::SecurityWarning,
    AttentionKindV1::ManualVerification,
];
pub(crate) const RISKS: [AttentionRiskV1; 4] = [
    AttentionRiskV1::Low,
    AttentionRiskV1::Medium,
    AttentionRiskV1::High,
    AttentionRiskV1::Critical,
];
pub(crate) const DECISIONS: [AttentionDecisionV1; 5] = [
    AttentionDecisionV1::ApproveOnce,
    AttentionDecisionV1::ApproveForSession,
    AttentionDecisionV1::AllowForMission,
    AttentionDecisionV1::Deny,
    AttentionDecisionV1::Answer,
];
pub(crate) const ASSESSMENTS: [MissionEvidenceAssessmentV1; 8] = [
    MissionEvidenceAssessmentV1::Passed,
    MissionEvidenceAssessmentV1::Failed,
    MissionEvidenceAssessmentV1::Stale,
    MissionEvidenceAssessmentV1::ProviderClaimOnly,
    MissionEvidenceAssessmentV1::DeclarationMismatch,
    MissionEvidenceAssessmentV1::IdentityMismatch,
    MissionEvidenceAssessmentV1::ArtifactMissingOrChanged,
    MissionEvidenceAssessmentV1::ManualNotAuthorized,
];

pub(crate) fn attention_item(
    run: &Run,
    number: usize,
    kind: usize,
    risk: usize,
    at: u64,
) -> Attention {
    let kind = ATTENTION_KINDS[kind];
    let request_class = match kind {
        AttentionKindV1::PermissionRequest => RequestClass::CommandApproval,
        AttentionKindV1::ProviderQuestion => RequestClass::UserInput,
        _ => RequestClass::Notice,
    };
    Attention {
        attention_id: format!("att-{number}"),
        run_id: run.run_id.to_string(),
        kind,
        risk: RISKS[risk],
        requested_action: "run `cargo test`".into(),
        scope: "the worktree".into(),
        questions: Vec::new(),
        request_class,
        session_approval_available: request_class == RequestClass::CommandApproval,
        provider_request_key: Some(format!("number:{number}")),
        source: AttentionSourceV1::ProviderApi,
        lifecycle: AttentionLifecycle::Open,
        attempts: Vec::new(),
        closed_reason: None,
        closed_by: None,
        created_at_millis: at,
        updated_at_millis: at,
    }
}

/// The attention id `pick` selects among the items in a lifecycle `wanted` accepts.
pub(crate) fn pick_attention(
    model: &Model,
    pick: usize,
    wanted: impl Fn(AttentionLifecycle) -> bool,
) -> Option<String> {
    let candidates: Vec<&String> = model
        .attention
        .iter()
        .filter(|(_, lifecycle)| wanted(**lifecycle))
        .map(|(id, _)| id)
        .collect();
    (!candidates.is_empty()).then(|| candidates[pick % candidates.len()].clone())
}

pub(crate) fn evidence_for(
    mission: &Mission,
    run: &Run,
    declaration: &Declaration,
    assessment: MissionEvidenceAssessmentV1,
    at: u64,
) -> Evidence {
    let (kind, source) = match &declaration.kind {
        DeclarationKind::Command {
            program, args, cwd, ..
        } => (
            MissionEvidenceKindV1::Command,
            EvidenceSource::Command {
                program: program.clone(),
                args: args.clone(),
                cwd: cwd.clone(),
                exit_code: if assessment == MissionEvidenceAssessmentV1::Passed {
                    0
                } else {
                    1
                },
                started_at_millis: at.saturating_sub(10),
                finished_at_millis: at,
            },
        ),
        DeclarationKind::Manual { reviewers, .. } => (
            MissionEvidenceKindV1::Manual,
            EvidenceSource::Manual {
                reviewer: reviewers[0].clone(),
                reason: "looked at it".into(),
                is_override: false,
                recorded_at_millis: at,
            },
        ),
    };
    Evidence {
        check_id: declaration.check_id.clone(),
        kind,
        assessment,
        workspace_digest: "cd".repeat(32),
        relevant_digest: Some("ef".repeat(32)),
        declaration_digest: declaration.digest.clone(),
        run_id: run.run_id.to_string(),
        identity_digest: Some("ab".repeat(32)),
        output_digest: None,
        recorded_at_millis: at,
        duration_millis: Some(10),
        exit_code: None,
        source: Some(source),
        artifacts: Vec::new(),
        record_digest: Some(format!("{:064x}", mission.revision)),
        detail: None,
        output_tail: Some("test result: ok".into()),
    }
}

pub(crate) fn receipt(
    mission: &Mission,
    run: &Run,
    decision: ProofClosureDecisionV1,
    sequence: u64,
    at: u64,
) -> ProofReceiptV1 {
    let digest = |seed: &str| format!("{:0>64}", seed);
    ProofReceiptV1 {
        schema_version: 1,
        identity: ProofIdentityV1 {
            mission_id: mission.mission_id.to_string(),
            run_id: run.run_id.to_string(),
            repository_identity: digest("1"),
            worktree_identity: digest("2"),
            base_revision: run.base_revision.clone(),
        },
        head_revision: run.base_revision.clone(),
        workspace_digest: digest("3"),
        criteria_digest: digest("4"),
        checkset_digest: mission
            .plan
            .as_ref()
            .map(|plan| plan.declaration_set_digest.clone())
            .unwrap_or_default(),
        attention_digest: digest("5"),
        evidence_digest: digest("6"),
        subject_digest: digest("7"),
        seal_digest: digest("8"),
        authority_head_digest: digest("9"),
        lease_digest: digest("a"),
        authority_sequence: sequence,
        verified_at_millis: at,
        decision,
        fresh_evidence: Vec::new(),
        landing: None,
    }
}

/// Whether every required check has passing evidence of the current run: what a verified
/// proof needs.
pub(crate) fn proof_would_verify(mission: &Mission, run: &Run) -> bool {
    let Some(plan) = &mission.plan else {
        return false;
    };
    plan.declarations
        .iter()
        .filter(|declaration| declaration.required)
        .all(|declaration| {
            mission
                .evidence
                .get(&declaration.check_id)
                .is_some_and(|evidence| {
                    evidence.assessment == MissionEvidenceAssessmentV1::Passed
                        && evidence.run_id == run.run_id
                        && evidence.declaration_digest == declaration.digest
                })
        })
}

/// Decides one command: the events it writes, none when the engine would refuse it.
pub(crate) fn decide(
    mission: Option<&Mission>,
    model: &mut Model,
    command: &Command,
    at: u64,
) -> Vec<MissionEvent> {
    if let (Some(mission), Command::CheckRun { passing }) = (mission, command) {
        return check_run(mission, *passing, at);
    }
    decide_one(mission, model, command, at)
        .into_iter()
        .collect()
}

/// What a check run writes: started, evidence for each declared check, finished.
pub(crate) fn check_run(mission: &Mission, passing: bool, at: u64) -> Vec<MissionEvent> {
    let (Some(run), Some(plan)) = (&mission.run, &mission.plan) else {
        return Vec::new();
    };
    if mission.checks_in_flight.is_some() || mission.status == MissionStatus::Archived {
        return Vec::new();
    }
    let mut events = vec![MissionEvent::ChecksStarted {
        run_id: run.run_id.to_string(),
        purpose: "verify".into(),
        check_count: plan.declarations.len() as u32,
        at_millis: at,
    }];
    for (index, declaration) in plan.declarations.iter().enumerate() {
        let assessment = if passing || index > 0 {
            MissionEvidenceAssessmentV1::Passed
        } else {
            MissionEvidenceAssessmentV1::Failed
        };
        events.push(MissionEvent::EvidenceRecorded {
            evidence: evidence_for(mission, run, declaration, assessment, at),
            at_millis: at,
        });
    }
    events.push(MissionEvent::ChecksFinished {
        run_id: run.run_id.to_string(),
        outcome: None,
        at_millis: at,
    });
    events
}

pub(crate) fn decide_one(
    mission: Option<&Mission>,
    model: &mut Model,
    command: &Command,
    at: u64,
) -> Option<MissionEvent> {
    use MissionStatus::*;
    if let Command::Create {
        criteria,
        different_title,
    } = command
    {
        let params = create_params(*criteria, *different_title);
        return match decide_create(mission, &params, &params.repository_path, at) {
            Ok(CreateDecision::Create(event)) => {
                assert!(mission.is_none(), "a second mission_created was decided");
                Some(event)
            }
            Ok(CreateDecision::Unchanged) => None,
            Err(_) => {
                assert!(mission.is_some(), "a valid first create was refused");
                None
            }
        };
    }
    let mission = mission?;
    let status = mission.status;
    if status == Archived && !matches!(command, Command::Consent) {
        return None;
    }
    let run = mission.run.as_ref();
    match command {
        Command::Create { .. } | Command::CheckRun { .. } => unreachable!("handled above"),
        Command::ConfigureCovering { manual } => {
            let spec = CheckSpec {
                id_index: 0,
                manual: *manual,
                required: true,
                covers: (0..mission.criteria.len() as u64).collect(),
                broken: false,
            };
            match decide_configure(mission, &[mission_check(&spec)], at) {
                Ok(ConfigureDecision::Configure(event)) => Some(event),
                Ok(ConfigureDecision::Unchanged) | Err(_) => None,
            }
        }
        Command::Configure { checks } => {
            let checks: Vec<MissionCheck> = checks.iter().map(mission_check).collect();
            match decide_configure(mission, &checks, at) {
                Ok(ConfigureDecision::Configure(event)) => Some(event),
                Ok(ConfigureDecision::Unchanged) | Err(_) => None,
            }
        }
        Command::StartRun { provider } => {
            let allowed = (status == Draft && run.is_none() && mission.plan.is_some())
                || run_can_follow(status);
            allowed.then(|| MissionEvent::RunStarted {
                run: new_run(mission, model, *provider, false, at),
                at_millis: at,
            })
        }
        Command::ContinueRun { provider } => {
            (run.is_some() && run_can_follow(status)).then(|| MissionEvent::RunContinued {
                source_run_id: run.map(|run| run.run_id.to_string()).unwrap_or_default(),
                run: new_run(mission, model, *provider, true, at),
                at_millis: at,
            })
        }
        Command::AttachPane => run
            .filter(|run| run.pane_id.is_none() && status == Preparing)
            .map(|run| MissionEvent::RunPaneAttached {
                run_id: run.run_id.to_string(),
                pane_id: format!("pane-{}", run.run_id),
                enforcement: "provider_sandbox".into(),
                workspace_digest_at_start: Some("12".repeat(32)),
                at_millis: at,
            }),
        Command::BindSession => {
            run.filter(|_| status == Preparing)
                .map(|run| MissionEvent::ProviderSessionBound {
                    run_id: run.run_id.to_string(),
                    provider_session_id: format!("native-{}", run.run_id),
                    at_millis: at,
                })
        }
        Command::ChangeStatus { to, ends_run } => {
            let to = MissionStatus::ALL[*to];
            (run.is_some() && generic_transition_allowed(status, to)).then(|| {
                MissionEvent::StatusChanged {
                    status: to,
                    reason: Some(format!("now {}", to.as_str())),
                    run_outcome: (*ends_run && matches!(to, Failed | ReviewRequired | Blocked))
                        .then(|| "the turn ended".to_string()),
                    at_millis: at,
                }
            })
        }
        Command::Advance { pick } => {
            let allowed: Vec<MissionStatus> = MissionStatus::ALL
                .into_iter()
                .filter(|to| generic_transition_allowed(status, *to))
                .collect();
            let to = *allowed.get(pick % allowed.len().max(1))?;
            run.map(|_| MissionEvent::StatusChanged {
                status: to,
                reason: None,
                run_outcome: None,
                at_millis: at,
            })
        }
        Command::OpenAttention { kind, risk } => {
            let run =
                run.filter(|_| matches!(status, Preparing | Active | ReviewRequired | Blocked))?;
            model.attention_opened += 1;
            Some(MissionEvent::AttentionOpened {
                attention: attention_item(run, model.attention_opened, *kind, *risk, at),
                at_millis: at,
            })
        }
        Command::RequestResponse { pick, decision } => {
            let attention_id = pick_attention(model, *pick, |lifecycle| {
                matches!(
                    lifecycle,
                    AttentionLifecycle::Open | AttentionLifecycle::ReconciliationRequired
                )
            })?;
            let item = &mission.attention[&attention_id];
            Some(MissionEvent::ResponseRequested {
                attempt: ResponseAttempt {
                    attempt: item.attempts.len() as u32 + 1,
                    decision: DECISIONS[*decision],
                    actor: "cockpit:alice".into(),
                    state: AttemptState::Requested,
                    requested_at_millis: at,
                    updated_at_millis: at,
                },
                attention_id,
                at_millis: at,
            })
        }
        Command::SettleResponse { pick, outcome } => {
            let attention_id = pick_attention(model, *pick, |lifecycle| {
                lifecycle == AttentionLifecycle::PendingResponse
            })?;
            let attempt = mission.attention[&attention_id]
                .attempts
                .last()
                .expect("a pending item has an attempt")
                .attempt;
            let state = match outcome {
                0 => AttemptState::Acknowledged,
                1 => AttemptState::DefinitelyNotApplied {
                    code: AttentionFailureCodeV1::Rejected,
                },
                2 => AttemptState::DeliveryUnknown {
                    code: AttentionFailureCodeV1::Timeout,
                },
                _ => AttemptState::Requested,
            };
            Some(MissionEvent::ResponseSettled {
                attention_id,
                attempt,
                state,
                at_millis: at,
            })
        }
        Command::CloseAttention { pick, expired } => {
            let attention_id = pick_attention(model, *pick, |lifecycle| {
                matches!(
                    lifecycle,
                    AttentionLifecycle::Open
                        | AttentionLifecycle::PendingResponse
                        | AttentionLifecycle::ReconciliationRequired
                )
            })?;
            Some(MissionEvent::AttentionClosed {
                attention_id,
                expired: *expired,
                actor: if *expired {
                    "server".into()
                } else {
                    "cockpit:alice".into()
                },
                reason: "no longer relevant".into(),
                at_millis: at,
            })
        }
        Command::StartChecks { count } => run
            .filter(|_| mission.checks_in_flight.is_none() && mission.plan.is_some())
            .map(|run| MissionEvent::ChecksStarted {
                run_id: run.run_id.to_string(),
                purpose: "turn_completed".into(),
                check_count: *count,
                at_millis: at,
            }),
        Command::FinishChecks => {
            mission
                .checks_in_flight
                .as_ref()
                .map(|in_flight| MissionEvent::ChecksFinished {
                    run_id: in_flight.run_id.clone(),
                    outcome: None,
                    at_millis: at,
                })
        }
        Command::RecordEvidence { pick, assessment } => {
            let run = run?;
            let declarations = &mission.plan.as_ref()?.declarations;
            let declaration = &declarations[*pick % declarations.len()];
            Some(MissionEvent::EvidenceRecorded {
                evidence: evidence_for(mission, run, declaration, ASSESSMENTS[*assessment], at),
                at_millis: at,
            })
        }
        Command::RecordPack => run.map(|run| MissionEvent::EvidencePackRecorded {
            run_id: run.run_id.to_string(),
            pack_digest: format!("{:064x}", mission.revision + 1),
            at_millis: at,
        }),
        Command::Seal => {
            let run = run?;
            let decision = match status {
                ReviewRequired if proof_would_verify(mission, run) => {
                    ProofClosureDecisionV1::ReadyToClose
                }
                ReadyToClose
                    if mission.ready_receipt.is_some() && proof_would_verify(mission, run) =>
                {
                    ProofClosureDecisionV1::Archived
                }
                _ => return None,
            };
            model.authority_sequence += 1;
            Some(MissionEvent::MissionSealed {
                receipt: receipt(mission, run, decision, model.authority_sequence, at),
                at_millis: at,
            })
        }
        Command::Consent => Some(MissionEvent::ConsentRecorded {
            consent_id: format!("consent-{}", mission.revision + 1),
            subject: "execute_declared_checks".into(),
            decision: "granted".into(),
            at_millis: at,
        }),
    }
}
