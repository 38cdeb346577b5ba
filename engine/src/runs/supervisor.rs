//! One task per live run: it reads the adapter's reports and commits what they mean for
//! the mission (adapters report; the engine decides, through `mission::run`).

use crate::runs::HeldClaim;
use std::path::PathBuf;
use std::sync::Arc;

use nagi_providers::{
    ProviderCommand, ProviderEvent, ProviderHandle, RequestClass as ProviderRequestClass,
    TurnOutcome,
};
use nagi_schema::attention::{
    AttentionKindV1, AttentionQuestionOptionV1, AttentionQuestionV1, AttentionRiskV1,
};
use nagi_schema::mission::MissionStatus;

use crate::engine::Engine;
use crate::errors::EngineError;
use crate::transcript::Transcript;
use nagi_mission::clock::now_millis;
use nagi_mission::digest::stable_runtime_id;
use nagi_mission::model::{RequestClass, SandboxGrant};
use nagi_mission::run::{self, ProviderRequest, TurnEnd};
use nagi_mission::{MissionError, MissionEvent};

/// The turn a resumed session gets after a restart. It is not the mission prompt.
pub const CONTINUE_AFTER_RESTART: &str = "The nagi server restarted while you were working on this mission, and your previous \
turn was cut short. Re-read the workspace to see where you stopped, then continue the same mission. Do not start over.";

/// What the supervisor knows about its run.
#[derive(Clone)]
pub struct RunContext {
    pub mission_id: String,
    pub run_id: String,
    pub worktree: PathBuf,
    /// The commit the run's checkout started from: a turn's end shows the diff stat
    /// against it.
    pub base_revision: String,
    pub sandbox: SandboxGrant,
    pub execute_declared_checks: bool,
    pub recovered: bool,
    pub claim_key: String,
    pub transcript: Arc<Transcript>,
    /// Workspace digest when the provider started, for the read-only guard. Filled once the
    /// scan that runs alongside the provider's start-up is done, before the first turn is sent.
    pub digest_at_start: StartDigest,
    /// Notified once the session's binding is committed, or when supervision ends without
    /// one (the launch opens the run's pane after it, off the path to a bound session).
    pub session_settled: Arc<tokio::sync::Notify>,
    /// Follow-ups, interrupts and stops asked of this run (`runs/steer.rs`).
    pub steering: Arc<crate::live::steering::RunSteering>,
    /// A provider that has bound no session this long after its start is stopped, and the
    /// run fails with that reason.
    pub start_timeout: std::time::Duration,
    /// The run's pane, once open: it names the provider as its agent process while the
    /// provider runs (`pane.process_info`).
    pub pane_id: Arc<std::sync::OnceLock<String>>,
}

/// The read-only guard's "before" digest: unset while the scan runs, then `Some(digest)`, or
/// `None` when the workspace could not be fingerprinted.
pub type StartDigest = Arc<std::sync::OnceLock<Option<String>>>;

/// Commits the events a pure decision returns for the mission's current state.
pub async fn commit(
    engine: &Arc<Engine>,
    mission_id: &str,
    decide: impl FnOnce(&nagi_mission::Mission) -> Vec<MissionEvent> + Send + 'static,
) -> Result<(), EngineError> {
    engine
        .missions
        .mutate(mission_id, move |mission| {
            let mission = mission.ok_or_else(|| {
                MissionError::NotFound("the mission of a live run vanished".into())
            })?;
            Ok((decide(mission), ()))
        })
        .await
        .map(|_| ())
}

fn request_class(class: ProviderRequestClass) -> RequestClass {
    match class {
        ProviderRequestClass::CommandApproval => RequestClass::CommandApproval,
        ProviderRequestClass::FileChangeApproval => RequestClass::FileChangeApproval,
        ProviderRequestClass::PermissionApproval => RequestClass::PermissionApproval,
        ProviderRequestClass::UserInput => RequestClass::UserInput,
    }
}

fn truncated(text: &str, max: usize) -> String {
    text[..text.floor_char_boundary(max)].to_string()
}

pub fn provider_request(
    run_id: &str,
    request: &nagi_providers::AttentionRequest,
) -> ProviderRequest {
    ProviderRequest {
        attention_id: stable_runtime_id("attention", &[run_id, request.request_key.as_str()]),
        request_key: request.request_key.clone(),
        class: request_class(request.class),
        action: request.action.clone(),
        questions: request
            .questions
            .iter()
            .take(4)
            .map(|question| AttentionQuestionV1 {
                id: truncated(&question.id, 1024),
                header: {
                    let header = truncated(question.header.trim(), 128);
                    if header.is_empty() {
                        "Question".into()
                    } else {
                        header
                    }
                },
                prompt: {
                    let prompt = truncated(question.prompt.trim(), 4096);
                    if prompt.is_empty() {
                        truncated(&question.id, 4096)
                    } else {
                        prompt
                    }
                },
                options: question
                    .options
                    .iter()
                    .take(8)
                    .map(|option| AttentionQuestionOptionV1 {
                        label: truncated(&option.label, 1024),
                        description: truncated(&option.description, 4096),
                    })
                    .collect(),
                multiple: question.multiple,
                custom_allowed: question.custom_allowed,
            })
            .collect(),
        session_approval_available: request.session_approval_available,
    }
}

/// How a turn ended, as the mission records it: an interrupt names who asked for it, and a
/// turn ended by `mission.stop` is a stop, whatever the provider reported.
async fn turn_end(outcome: &TurnOutcome, context: &RunContext) -> TurnEnd {
    if let Some(by) = context.steering.stopped_by().await {
        return TurnEnd::Stopped { by };
    }
    match outcome {
        TurnOutcome::Completed => TurnEnd::Completed,
        TurnOutcome::Interrupted => TurnEnd::Interrupted {
            by: context.steering.interrupted_by().await,
        },
        TurnOutcome::Failed(reason) => TurnEnd::Failed(reason.clone()),
    }
}

/// Records that a turn ended, with what the provider reported for it, and whether a
/// queued follow-up starts now; and shows it on the run's console with the worktree's diff
/// stat. Returns the number of the turn that ended.
async fn record_turn_end(
    engine: &Arc<Engine>,
    context: &RunContext,
    end: &TurnEnd,
    next_turn_starts: bool,
    usage: Option<nagi_schema::usage::TokenUsage>,
) -> Result<u32, EngineError> {
    let (run_id, decided_end) = (context.run_id.clone(), end.clone());
    let ended_turn = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let turn_of_decision = ended_turn.clone();
    commit(engine, &context.mission_id, move |mission| {
        let events = nagi_mission::steer::on_turn_ended(
            mission,
            &run_id,
            &decided_end,
            next_turn_starts,
            usage,
            now_millis(),
        );
        for event in &events {
            if let MissionEvent::TurnEnded { turn, .. } = event {
                turn_of_decision.store(*turn, std::sync::atomic::Ordering::Relaxed);
            }
        }
        events
    })
    .await?;
    let turn = ended_turn.load(std::sync::atomic::Ordering::Relaxed);
    let files = diff_stat(context).await;
    context.transcript.turn_ended(
        turn,
        &nagi_mission::steer::turn_outcome_words(end),
        usage,
        files,
    );
    Ok(turn)
}

/// What the run's checkout holds changed against its base, for the console (empty when it
/// cannot be computed: the console only shows it).
async fn diff_stat(context: &RunContext) -> Vec<nagi_schema::console::FileStat> {
    let (root, base) = (context.worktree.clone(), context.base_revision.clone());
    let config = nagi_exec::workspace::mission_diff::MissionDiffConfig {
        git: Default::default(),
        stat_only: true,
        max_patch_bytes: 0,
    };
    let diff = tokio::task::spawn_blocking(move || {
        nagi_exec::workspace::mission_diff::mission_diff(&root, &base, &config)
    })
    .await;
    match diff {
        Ok(Ok(diff)) => diff
            .files
            .into_iter()
            .map(|file| nagi_schema::console::FileStat {
                path: file.path,
                added: file.additions,
                removed: file.deletions,
            })
            .collect(),
        _ => Vec::new(),
    }
}

pub fn spawn_supervisor(engine: Arc<Engine>, context: RunContext, handle: ProviderHandle) {
    let supervisors = engine.supervisors.clone();
    supervisors.spawn(async move {
        let supervised = supervise(&engine, &context, handle).await;
        context.session_settled.notify_one();
        // The provider has exited and its checks are over: its scratch folder goes.
        let paths = engine.config.current().paths.clone();
        let (mission_id, run_id) = (context.mission_id.clone(), context.run_id.clone());
        let _ = tokio::task::spawn_blocking(move || {
            crate::launch::scratch::remove_run_scratch(&paths, &mission_id, &run_id)
        })
        .await;
        if let Err(error) = supervised {
            tracing::error!(mission = %context.mission_id, run = %context.run_id, %error, "run supervision failed");
        }
    });
}

async fn supervise(
    engine: &Arc<Engine>,
    context: &RunContext,
    mut handle: ProviderHandle,
) -> Result<(), EngineError> {
    let mission_id = context.mission_id.clone();
    let run_id = context.run_id.clone();
    let mut end: Option<TurnEnd> = None;
    // Whether the end of the last turn was recorded (`TurnEnded`).
    let mut turn_recorded = false;
    // What the provider reported for the running turn.
    let mut turn_usage = None;
    let mut exit_code = None;
    let mut start_deadline = Some(tokio::time::Instant::now() + context.start_timeout);
    loop {
        let event = match start_deadline {
            None => handle.events.recv().await,
            Some(deadline) => match tokio::time::timeout_at(deadline, handle.events.recv()).await {
                Ok(event) => event,
                Err(_) => {
                    start_deadline = None;
                    let reason = format!(
                        "the provider did not start its session within {} s (is something in its start-up hanging, such as a repository hook or fsmonitor? see the transcript); it was stopped",
                        context.start_timeout.as_secs()
                    );
                    context.transcript.nagi(&reason);
                    end.get_or_insert(TurnEnd::TransportFailed(reason));
                    let _ = handle.commands.send(ProviderCommand::Shutdown).await;
                    continue;
                }
            },
        };
        let Some(event) = event else { break };
        match event {
            ProviderEvent::SessionBound { session_id } => {
                start_deadline = None;
                context.transcript.nagi("the provider session is bound");
                if context.recovered {
                    context
                        .transcript
                        .nagi("asking the resumed session to continue where it stopped");
                }
                let run_id = run_id.clone();
                let bound = commit(engine, &mission_id, move |mission| {
                    run::on_session_bound(mission, &run_id, &session_id, now_millis())
                })
                .await;
                context.session_settled.notify_one();
                bound?;
            }
            ProviderEvent::Working => {}
            ProviderEvent::Usage(usage) => turn_usage = Some(usage),
            ProviderEvent::Transcript(line) => context.transcript.line(&line),
            ProviderEvent::AttentionRequested(request) => {
                let request = provider_request(&run_id, &request);
                context
                    .transcript
                    .waiting(&request.attention_id, &request.action);
                engine.runs.set_respondable(
                    &request.attention_id,
                    &mission_id,
                    &run_id,
                    &request.request_key,
                );
                let run_id = run_id.clone();
                commit(engine, &mission_id, move |mission| {
                    run::on_attention_requested(mission, &run_id, &request, now_millis())
                })
                .await?;
            }
            ProviderEvent::ResponseResolved { request_key } => {
                let attention_id =
                    stable_runtime_id("attention", &[run_id.as_str(), request_key.as_str()]);
                engine.runs.clear_respondable(&attention_id);
                let run_id = run_id.clone();
                commit(engine, &mission_id, move |mission| {
                    run::on_response_resolved(mission, &run_id, &request_key, now_millis())
                })
                .await?;
            }
            ProviderEvent::TurnCompleted(outcome) => {
                context
                    .transcript
                    .nagi(&format!("the turn ended: {outcome:?}"));
                let ended = turn_end(&outcome, context).await;
                // A completed turn with a follow-up waiting goes on in the same session;
                // otherwise the provider's part is over and it is shut down (no idle
                // provider processes: a later follow-up starts it again on its session).
                let next = if ended == TurnEnd::Completed && end.is_none() {
                    context.steering.next_follow_up().await
                } else {
                    let dropped = context.steering.close().await;
                    if dropped > 0 {
                        context.transcript.nagi(&format!(
                            "{dropped} queued follow-up(s) were not sent: the turn did not complete"
                        ));
                    }
                    None
                };
                let mut ended_turn = 0;
                if end.is_none() {
                    ended_turn =
                        record_turn_end(engine, context, &ended, next.is_some(), turn_usage.take())
                            .await?;
                    // A follow-up that starts now is a turn whose end is still to come.
                    turn_recorded = next.is_none();
                }
                if let Some(text) = next {
                    context.transcript.turn_started(ended_turn + 1, Some(&text));
                    let _ = handle.commands.send(ProviderCommand::SendTurn(text)).await;
                    continue;
                }
                if end.is_none() {
                    end = Some(ended);
                }
                let _ = handle.commands.send(ProviderCommand::Shutdown).await;
            }
            ProviderEvent::TransportFailed { kind, reason } => {
                context.transcript.nagi(&format!(
                    "the provider transport failed ({kind:?}): {reason}"
                ));
                if end.is_none() {
                    end = Some(TurnEnd::TransportFailed(format!("{kind:?}: {reason}")));
                }
            }
            ProviderEvent::Stopped { exit_code: code } => {
                exit_code = code;
                break;
            }
        }
    }
    engine.runs.remove(&mission_id, &run_id);
    if let Some(pane_id) = context.pane_id.get() {
        let _ = engine.panes.set_agent_process(pane_id, None);
    }
    if engine.shutdown.is_triggered() {
        // The server is stopping: the run stays live in the store and recovery resumes it.
        context
            .transcript
            .nagi("the server is stopping; the run will be resumed when it starts again");
        return Ok(());
    }
    context.steering.close().await;
    let end = match context.steering.stopped_by().await {
        Some(by) => TurnEnd::Stopped { by },
        None => end.unwrap_or_else(|| {
            TurnEnd::TransportFailed(match exit_code {
                Some(code) => {
                    format!("the provider exited with code {code} before finishing its turn")
                }
                None => "the provider exited before finishing its turn".to_string(),
            })
        }),
    };
    if !turn_recorded {
        record_turn_end(engine, context, &end, false, turn_usage.take()).await?;
    }
    finish_run(engine, context, end).await
}

/// Scans the workspace and compares it with the digest taken at start.
async fn workspace_changed(context: &RunContext) -> Option<String> {
    let before = context.digest_at_start.get().cloned().flatten()?;
    let worktree = context.worktree.clone();
    let after = tokio::task::spawn_blocking(move || {
        nagi_exec::workspace::scan_workspace(&worktree, &Default::default())
    })
    .await
    .ok()?
    .ok()?;
    (after.digest != before).then_some(after.digest)
}

/// Raises the critical security warning of a read-only run whose workspace changed (one
/// per run and digest: the same change found twice is one item).
pub async fn warn_workspace_changed(
    engine: &Arc<Engine>,
    mission_id: &str,
    run_id: &str,
    digest: &str,
    transcript: &Transcript,
) -> Result<(), EngineError> {
    transcript.nagi("WARNING: the workspace changed during a read-only run");
    let attention_id = stable_runtime_id("security-warning", &[run_id, digest]);
    let text = format!(
        "The workspace changed during read-only run {run_id} (workspace digest {digest}); review the changes before trusting any evidence"
    );
    let run_for_notice = run_id.to_string();
    commit(engine, mission_id, move |mission| {
        run::notice(
            mission,
            &run_for_notice,
            &attention_id,
            AttentionKindV1::SecurityWarning,
            AttentionRiskV1::Critical,
            &text,
            now_millis(),
        )
    })
    .await
}

/// The provider part of the run is over: the read-only guard, the status change, the
/// declared checks when consented, and the claim's release.
pub async fn finish_run(
    engine: &Arc<Engine>,
    context: &RunContext,
    end: TurnEnd,
) -> Result<(), EngineError> {
    let mission_id = context.mission_id.clone();
    let run_id = context.run_id.clone();
    // Every end of a read-only run is compared, a crash or a failed turn included: a write
    // followed by a crash is still a write.
    let changed = if context.sandbox == SandboxGrant::ReadOnly {
        workspace_changed(context).await
    } else {
        None
    };
    if let Some(digest) = &changed {
        warn_workspace_changed(engine, &mission_id, &run_id, digest, &context.transcript).await?;
    }
    let recovered = context.recovered;
    let end_for_commit = end.clone();
    let run_for_end = run_id.clone();
    // When no checks can follow, the claim ends in the same transaction as the turn: whoever
    // sees the run end may start the next run on the checkout at once. The provider has
    // stopped, so the OS lock goes first.
    let checks_may_follow = end == TurnEnd::Completed && context.execute_declared_checks;
    if !checks_may_follow {
        engine.claim_locks.release(&context.claim_key);
    }
    let (claim_key, mission_for_claim, run_for_claim) = (
        context.claim_key.clone(),
        mission_id.clone(),
        run_id.clone(),
    );
    let committed = engine
        .missions
        .mutate_with(
            &mission_id,
            move |mission| {
                let mission = mission.ok_or_else(|| {
                    MissionError::NotFound("the mission of a live run vanished".into())
                })?;
                Ok((
                    run::on_turn_end(
                        mission,
                        &run_for_end,
                        &end_for_commit,
                        recovered,
                        now_millis(),
                    ),
                    (),
                ))
            },
            move |writer, _| {
                if !checks_may_follow {
                    writer.release_claim(&claim_key, &mission_for_claim, &run_for_claim)?;
                }
                Ok(())
            },
        )
        .await?;
    let status = committed.mission.map(|mission| mission.status);
    if checks_may_follow && status == Some(MissionStatus::ReviewRequired) {
        context.transcript.nagi("running the declared checks");
        let purpose = super::checks::Purpose::TurnCompleted;
        if let Err(error) = super::checks::run_proof_worker(
            engine,
            &mission_id,
            &run_id,
            purpose,
            &context.claim_key,
            Some(context.transcript.clone()),
            None,
        )
        .await
        {
            context
                .transcript
                .nagi(&format!("the checks could not run: {error}"));
        }
    }
    let released = if checks_may_follow {
        crate::runs::release_claim(
            engine,
            HeldClaim {
                mission_id: &mission_id,
                run_id: &run_id,
                checkout_key: &context.claim_key,
            },
        )
        .await
    } else {
        Ok(())
    };
    // A run released while its mission is `failed` stops its project services (§11).
    super::recipe::stop_if_failed(engine, &mission_id, &run_id).await;
    released
}
