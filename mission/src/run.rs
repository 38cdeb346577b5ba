//! Decisions about runs (contract §2.5, §4.3, §8.2): starting one, and what each
//! provider report does to the mission. Pure: the caller supplies the current mission and
//! what happened; the result is the events to commit (possibly none).

use nagi_schema::attention::{
    AttentionFailureCodeV1, AttentionKindV1, AttentionQuestionV1, AttentionRiskV1,
    AttentionSourceV1,
};
use nagi_schema::ids::RunId;
use nagi_schema::mission::{MissionProvider, MissionProviderMode, MissionStatus};

use super::error::MissionError;
use super::event::MissionEvent;
use super::model::*;
use super::status::generic_transition_allowed;
use super::validate::{MAX_ID_BYTES, MAX_PATH_BYTES};

/// Statuses from which `mission.start` may begin a run: the first run from `draft`, and a
/// new run after the previous one ended (nagi extension, contract preface item 4).
pub fn start_allowed_from(status: MissionStatus) -> bool {
    matches!(
        status,
        MissionStatus::Draft
            | MissionStatus::Blocked
            | MissionStatus::Failed
            | MissionStatus::ReviewRequired
    )
}

/// What `mission.start` asks for, after the checks that need no mission.
#[derive(Debug, Clone)]
pub struct StartRequest {
    pub run_id: String,
    pub provider: MissionProvider,
    pub worktree_path: String,
    pub execute_declared_checks: bool,
    pub execute_project_recipe: bool,
    pub sandbox: SandboxGrant,
    pub consent_id: Option<String>,
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
}

/// A model name as the providers spell them (`gpt-5.4`, `claude-sonnet-4-5`,
/// `openai/gpt-5`, `claude-opus-4-8[1m]`): 1–128 bytes of letters, digits and `. _ : / @ - [ ]`.
pub fn check_model(model: &str) -> Result<(), MissionError> {
    let allowed = |byte: u8| byte.is_ascii_alphanumeric() || b"._:/@-[]".contains(&byte);
    if model.is_empty() || model.len() > 128 || !model.bytes().all(allowed) {
        return Err(MissionError::InvalidMission(format!(
            "model {model:?} must be 1 to 128 letters, digits or . _ : / @ - [ ]"
        )));
    }
    Ok(())
}

/// A reasoning effort (`low`, `medium`, `high`, `xhigh`, …): 1–16 lower-case letters.
pub fn check_effort(effort: &str) -> Result<(), MissionError> {
    if effort.is_empty()
        || effort.len() > 16
        || !effort.bytes().all(|byte| byte.is_ascii_lowercase())
    {
        return Err(MissionError::InvalidMission(format!(
            "reasoning effort {effort:?} must be 1 to 16 lower-case letters (low, medium, high, …)"
        )));
    }
    Ok(())
}

/// Checks an optional model and effort.
pub fn check_model_choice(model: Option<&str>, effort: Option<&str>) -> Result<(), MissionError> {
    model.map(check_model).transpose()?;
    effort.map(check_effort).transpose()?;
    Ok(())
}

/// The run-id rule of step 8 (a blank or too long id cannot form a claim identity), then
/// the id rule: the typed run id everything after this step is built from.
pub fn parse_start_run_id(run_id: &str) -> Result<RunId, MissionError> {
    if run_id.trim().is_empty() || run_id.len() > MAX_ID_BYTES {
        return Err(MissionError::InvalidRun(format!(
            "run_id must be 1 to {MAX_ID_BYTES} bytes and not blank"
        )));
    }
    // The contract's ID rule (`invalid_mission`, as the run's other fields): a run id
    // names the run's transcript and scratch folder, so it is checked before either exists.
    RunId::parse(run_id)
        .map_err(|fault| MissionError::InvalidMission(fault.describe("run_id", run_id)))
}

/// Steps 9–10 of §2.5 on the stored mission: whether a run may start now.
pub fn check_can_start(mission: &Mission, run_id: &str) -> Result<(), MissionError> {
    let used_before = mission
        .run
        .iter()
        .chain(mission.run_history.iter())
        .any(|run| run.run_id == run_id);
    if !start_allowed_from(mission.status) {
        let detail = match mission.status {
            MissionStatus::Preparing | MissionStatus::Active => "its current run is still live",
            MissionStatus::ReadyToClose => {
                "it is ready to close (close it, or hand it off to continue)"
            }
            MissionStatus::Archived => "it is archived",
            _ => "of its status",
        };
        return Err(MissionError::Runtime(format!(
            "mission {} is {} and cannot start a run because {detail}",
            mission.mission_id,
            mission.status.as_str()
        )));
    }
    if used_before {
        return Err(MissionError::RunConflict(format!(
            "run id {run_id} was already used by mission {}; choose a new run id",
            mission.mission_id
        )));
    }
    if mission.plan.is_none() {
        return Err(MissionError::InvalidClosure(format!(
            "mission {} has no closure plan; configure its checks first (mission.configure)",
            mission.mission_id
        )));
    }
    Ok(())
}

/// Step 14: the `RunStarted` event. The run id syntax and the worktree length are checked
/// here, as the contract says (`invalid_mission`).
pub fn decide_run_started(
    mission: &Mission,
    request: &StartRequest,
    base_revision: &str,
    now: u64,
) -> Result<MissionEvent, MissionError> {
    check_can_start(mission, &request.run_id)?;
    check_model_choice(
        request.model.as_deref(),
        request.reasoning_effort.as_deref(),
    )?;
    let Ok(run_id) = RunId::parse(&request.run_id) else {
        return Err(MissionError::InvalidMission(format!(
            "run_id {:?} breaks the ID rule",
            request.run_id
        )));
    };
    if request.worktree_path.len() > MAX_PATH_BYTES {
        return Err(MissionError::InvalidMission(format!(
            "the worktree path is longer than {MAX_PATH_BYTES} bytes"
        )));
    }
    Ok(MissionEvent::RunStarted {
        run: Run {
            run_id,
            provider: request.provider,
            mode: MissionProviderMode::Managed,
            worktree_path: request.worktree_path.clone(),
            base_revision: base_revision.to_string(),
            execute_declared_checks: request.execute_declared_checks,
            execute_project_recipe: request.execute_project_recipe,
            handoff_from_run_id: None,
            handoff_artifact_sha256: None,
            provider_session_id: None,
            sandbox: request.sandbox,
            consent_id: request.consent_id.clone(),
            pane_id: None,
            enforcement: None,
            workspace_digest_at_start: None,
            started_at_millis: now,
            ended_at_millis: None,
            outcome: None,
            turns: 1,
            last_turn_outcome: None,
            queued_follow_ups: 0,
            usage: None,
            model: request.model.clone(),
            reasoning_effort: request.reasoning_effort.clone(),
        },
        at_millis: now,
    })
}

fn current_run<'a>(mission: &'a Mission, run_id: &str) -> Option<&'a Run> {
    mission.run.as_ref().filter(|run| run.run_id == run_id)
}

/// A generic status change, or nothing when the table forbids it (asynchronous provider
/// reports that arrive too late are ignored, as the contract says).
pub fn status_change(
    mission: &Mission,
    to: MissionStatus,
    reason: impl Into<String>,
    run_outcome: Option<String>,
    now: u64,
) -> Vec<MissionEvent> {
    if mission.status == to || !generic_transition_allowed(mission.status, to) {
        return Vec::new();
    }
    vec![MissionEvent::StatusChanged {
        status: to,
        reason: Some(reason.into()),
        run_outcome,
        at_millis: now,
    }]
}

/// A provider session id is 1–256 printable ASCII characters.
pub fn session_id_is_valid(session_id: &str) -> bool {
    !session_id.is_empty()
        && session_id.len() <= 256
        && session_id.bytes().all(|byte| (0x21..=0x7e).contains(&byte))
}

/// The provider reported its native session (§4.3 "provider reports session id").
pub fn on_session_bound(
    mission: &Mission,
    run_id: &str,
    session_id: &str,
    now: u64,
) -> Vec<MissionEvent> {
    let Some(run) = current_run(mission, run_id) else {
        return Vec::new();
    };
    if !session_id_is_valid(session_id) {
        return status_change(
            mission,
            MissionStatus::Failed,
            "the provider reported an invalid session id",
            Some("failed".into()),
            now,
        );
    }
    match (&run.provider_session_id, mission.status) {
        (Some(bound), MissionStatus::Active) if bound == session_id => Vec::new(),
        (Some(bound), _) if bound != session_id => status_change(
            mission,
            MissionStatus::Failed,
            "the resumed provider reported a different session than the one stored",
            Some("failed".into()),
            now,
        ),
        (_, MissionStatus::Preparing) => vec![MissionEvent::ProviderSessionBound {
            run_id: run_id.to_string(),
            provider_session_id: session_id.to_string(),
            at_millis: now,
        }],
        (_, MissionStatus::Blocked) if run.provider_session_id.as_deref() == Some(session_id) => {
            status_change(
                mission,
                MissionStatus::Active,
                "the provider resumed its session",
                None,
                now,
            )
        }
        _ => Vec::new(),
    }
}

/// How a provider's turn ended, as the engine sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEnd {
    Completed,
    /// `by`: who asked for it (`mission.interrupt`), when nagi knows.
    Interrupted {
        by: Option<String>,
    },
    /// The provider was stopped on request (`mission.stop`).
    Stopped {
        by: String,
    },
    Failed(String),
    /// The transport broke or the provider exited unexpectedly.
    TransportFailed(String),
}

/// In-flight responses become delivery-unknown when the provider goes away (§8.2).
fn in_flight_become_unknown(mission: &Mission, run_id: &str, now: u64) -> Vec<MissionEvent> {
    let mut events = Vec::new();
    for item in mission
        .attention
        .values()
        .filter(|item| item.run_id == run_id)
    {
        if let Some(attempt) = item.attempts.last()
            && attempt.state == AttemptState::Requested
        {
            events.push(MissionEvent::ResponseSettled {
                attention_id: item.attention_id.clone(),
                attempt: attempt.attempt,
                state: AttemptState::DeliveryUnknown {
                    code: AttentionFailureCodeV1::TransportClosed,
                },
                at_millis: now,
            });
        }
    }
    events
}

/// The provider part of a run ended (§4.3). `recovered` runs go to `blocked` instead of
/// `failed` when their transport fails.
pub fn on_turn_end(
    mission: &Mission,
    run_id: &str,
    end: &TurnEnd,
    recovered: bool,
    now: u64,
) -> Vec<MissionEvent> {
    if current_run(mission, run_id).is_none() {
        return Vec::new();
    }
    match end {
        TurnEnd::Completed => {
            // A turn that completes while still `preparing` (the provider never reported a
            // session) cannot pass through `active`; it is a protocol failure.
            if mission.status == MissionStatus::Preparing {
                return status_change(
                    mission,
                    MissionStatus::Failed,
                    format!(
                        "the provider finished a turn without reporting its session; start another run with `nagi mission start {} --provider PROVIDER`",
                        mission.mission_id
                    ),
                    Some("failed: no session".into()),
                    now,
                );
            }
            let checks_follow =
                current_run(mission, run_id).is_some_and(|run| run.execute_declared_checks);
            let reason = if checks_follow {
                "the provider's turn completed; the proof needs fresh evidence for every required check, and the declared checks run now".to_string()
            } else {
                format!(
                    "the provider's turn completed; the proof needs fresh evidence for every required check: run them with `nagi mission verify {} --execute-checks`",
                    mission.mission_id
                )
            };
            status_change(
                mission,
                MissionStatus::ReviewRequired,
                reason,
                Some("turn completed".into()),
                now,
            )
        }
        TurnEnd::Interrupted { by } => status_change(
            mission,
            MissionStatus::Blocked,
            format!(
                "{}; continue the conversation with `nagi mission send {id} TEXT`, or start another run with `nagi mission start {id} --provider PROVIDER`",
                match by {
                    Some(actor) => format!("interrupted by {actor}"),
                    None => "the provider's turn was interrupted".to_string(),
                },
                id = mission.mission_id
            ),
            Some("interrupted".into()),
            now,
        ),
        TurnEnd::Stopped { by } => {
            let mut events = in_flight_become_unknown(mission, run_id, now);
            events.extend(status_change(
                mission,
                MissionStatus::Blocked,
                format!(
                    "stopped by {by}; continue the conversation with `nagi mission send {id} TEXT`, or start another run with `nagi mission start {id} --provider PROVIDER`",
                    id = mission.mission_id
                ),
                Some("stopped".into()),
                now,
            ));
            events
        }
        TurnEnd::Failed(reason) => {
            let mut events = in_flight_become_unknown(mission, run_id, now);
            events.extend(status_change(
                mission,
                MissionStatus::Failed,
                format!(
                    "the provider's turn failed: {reason}; start another run with `nagi mission start {} --provider PROVIDER`",
                    mission.mission_id
                ),
                Some(format!("failed: {reason}")),
                now,
            ));
            events
        }
        TurnEnd::TransportFailed(reason) => {
            let mut events = in_flight_become_unknown(mission, run_id, now);
            let (status, verb) = if recovered {
                (MissionStatus::Blocked, "blocked")
            } else {
                (MissionStatus::Failed, "failed")
            };
            events.extend(status_change(
                mission,
                status,
                format!(
                    "the provider stopped unexpectedly: {reason}; start another run with `nagi mission start {} --provider PROVIDER`",
                    mission.mission_id
                ),
                Some(format!("{verb}: {reason}")),
                now,
            ));
            events
        }
    }
}

/// A provider request for a decision, as the engine stores it.
#[derive(Debug, Clone)]
pub struct ProviderRequest {
    pub attention_id: String,
    pub request_key: String,
    pub class: RequestClass,
    pub action: String,
    pub questions: Vec<AttentionQuestionV1>,
    pub session_approval_available: bool,
}

fn bounded_text(text: &str, fallback: &str) -> String {
    let trimmed = text.trim();
    let text = if trimmed.is_empty() {
        fallback
    } else {
        trimmed
    };
    text[..text.floor_char_boundary(4096)].to_string()
}

/// The provider asked for a decision: a durable attention item (§8.2). A repeat of an item
/// that is still open (a provider re-asking after a restart) opens nothing new.
pub fn on_attention_requested(
    mission: &Mission,
    run_id: &str,
    request: &ProviderRequest,
    now: u64,
) -> Vec<MissionEvent> {
    if current_run(mission, run_id).is_none() {
        return Vec::new();
    }
    if let Some(existing) = mission.attention.get(&request.attention_id)
        && existing.is_unresolved()
    {
        return Vec::new();
    }
    let (kind, risk) = match request.class {
        RequestClass::UserInput => (AttentionKindV1::ProviderQuestion, AttentionRiskV1::Low),
        RequestClass::CommandApproval | RequestClass::FileChangeApproval => {
            (AttentionKindV1::PermissionRequest, AttentionRiskV1::High)
        }
        RequestClass::PermissionApproval => (
            AttentionKindV1::PermissionRequest,
            AttentionRiskV1::Critical,
        ),
        RequestClass::Notice => (AttentionKindV1::SecurityWarning, AttentionRiskV1::High),
    };
    let action = bounded_text(&request.action, "the provider asks for a decision");
    vec![MissionEvent::AttentionOpened {
        attention: Attention {
            attention_id: request.attention_id.clone(),
            run_id: run_id.to_string(),
            kind,
            risk,
            requested_action: action.clone(),
            scope: action,
            questions: request.questions.clone(),
            request_class: request.class,
            session_approval_available: request.session_approval_available,
            provider_request_key: Some(request.request_key.clone()),
            source: AttentionSourceV1::ProviderApi,
            lifecycle: AttentionLifecycle::Open,
            attempts: Vec::new(),
            closed_reason: None,
            closed_by: None,
            created_at_millis: now,
            updated_at_millis: now,
        },
        at_millis: now,
    }]
}

/// A notice for a person (for example a read-only run that changed the workspace).
pub fn notice(
    mission: &Mission,
    run_id: &str,
    attention_id: &str,
    kind: AttentionKindV1,
    risk: AttentionRiskV1,
    text: &str,
    now: u64,
) -> Vec<MissionEvent> {
    if mission.attention.contains_key(attention_id) {
        return Vec::new();
    }
    let action = bounded_text(text, "review this run");
    vec![MissionEvent::AttentionOpened {
        attention: Attention {
            attention_id: attention_id.to_string(),
            run_id: run_id.to_string(),
            kind,
            risk,
            requested_action: action.clone(),
            scope: action,
            questions: Vec::new(),
            request_class: RequestClass::Notice,
            session_approval_available: false,
            provider_request_key: None,
            source: AttentionSourceV1::Process,
            lifecycle: AttentionLifecycle::Open,
            attempts: Vec::new(),
            closed_reason: None,
            closed_by: None,
            created_at_millis: now,
            updated_at_millis: now,
        },
        at_millis: now,
    }]
}

/// The provider acknowledged the response to a request (§2.6 step 7).
pub fn on_response_resolved(
    mission: &Mission,
    run_id: &str,
    request_key: &str,
    now: u64,
) -> Vec<MissionEvent> {
    let item = mission.attention.values().find(|item| {
        item.run_id == run_id && item.provider_request_key.as_deref() == Some(request_key)
    });
    let Some(item) = item else { return Vec::new() };
    match item.attempts.last() {
        Some(attempt)
            if matches!(
                attempt.state,
                AttemptState::Requested | AttemptState::DeliveryUnknown { .. }
            ) =>
        {
            vec![MissionEvent::ResponseSettled {
                attention_id: item.attention_id.clone(),
                attempt: attempt.attempt,
                state: AttemptState::Acknowledged,
                at_millis: now,
            }]
        }
        _ => Vec::new(),
    }
}

/// The run's pane and enforcement are known.
pub fn on_pane_attached(
    mission: &Mission,
    run_id: &str,
    pane_id: &str,
    enforcement: &str,
    digest: Option<String>,
    now: u64,
) -> Vec<MissionEvent> {
    if current_run(mission, run_id).is_none() {
        return Vec::new();
    }
    vec![MissionEvent::RunPaneAttached {
        run_id: run_id.to_string(),
        pane_id: pane_id.to_string(),
        enforcement: enforcement.to_string(),
        workspace_digest_at_start: digest,
        at_millis: now,
    }]
}

/// `mission.verify` on a `blocked` mission (nagi extension): the block is lifted to
/// `review_required` so the declared checks can run again and the proof be judged on their
/// evidence. Only once the blocked run's provider part is over (no provider may act while
/// the checks run) and not when the mission's worktree is gone.
pub fn decide_reverify_blocked(
    mission: &Mission,
    now: u64,
) -> Result<Vec<MissionEvent>, MissionError> {
    if mission.status != MissionStatus::Blocked {
        return Err(MissionError::NotReady(format!(
            "mission {} is {}, not blocked",
            mission.mission_id,
            mission.status.as_str()
        )));
    }
    let Some(run) = mission.run.as_ref() else {
        return Err(MissionError::NotReady(format!(
            "mission {} has no run to verify; start one with `nagi mission start {} --provider PROVIDER`",
            mission.mission_id, mission.mission_id
        )));
    };
    if run.ended_at_millis.is_none() {
        return Err(MissionError::Busy(format!(
            "run {} of mission {} has not ended; verify once it has",
            run.run_id, mission.mission_id
        )));
    }
    if mission.worktree.as_ref().is_some_and(|worktree| {
        worktree.state != nagi_schema::worktree::MissionWorktreeState::Present
    }) {
        return Err(MissionError::WorktreeMissing(format!(
            "mission {} has no worktree to verify in",
            mission.mission_id
        )));
    }
    let was = mission
        .status_reason
        .clone()
        .unwrap_or_else(|| "blocked".into());
    Ok(vec![MissionEvent::StatusChanged {
        status: MissionStatus::ReviewRequired,
        reason: Some(format!("verifying again after: {was}")),
        run_outcome: None,
        at_millis: now,
    }])
}
