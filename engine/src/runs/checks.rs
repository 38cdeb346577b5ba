//! The proof worker (contract §5.4–§5.8): it runs the declared command checks — after a
//! completed turn with `execute_declared_checks`, on `mission.verify`, and on
//! `mission.close` — records their evidence, evaluates the proof on the final scan, and
//! seals `ready_to_close` or `archived` (or blocks a close) in the same transaction that
//! ends the check run. Each check runs in the run's worktree through the trusted runner
//! (cleared environment, own process group, timeout, output caps), and its output streams
//! into the run's transcript pane.

use crate::runs::HeldClaim;
use nagi_schema::ids::{MissionId, RunId};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::engine::Engine;
use crate::errors::EngineError;
use crate::transcript::Transcript;
use nagi_exec::runner::{CommandCheckRequest, OutputStream, RunnerConfig, run_command_check};
use nagi_exec::workspace::{ScanConfig, WorkspaceSnapshot, scan_workspace};
use nagi_mission::clock::now_millis;
use nagi_mission::digest::ProofIdentity;
use nagi_mission::model::{Declaration, DeclarationKind, Mission};
use nagi_mission::{MissionError, MissionEvent};
use nagi_proof::{
    AuthorityHead, CommandEvidenceInput, ProofError, ProofWorkspace, Verdict, VerificationInput,
    WorktreeLease, close_outcome, command_evidence, current_identity, readiness_outcome,
    rejected_command_evidence, verify,
};

/// Why the checks run; it decides what a verified proof seals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    TurnCompleted,
    Verify,
    Close,
    /// `mission.land`: a close whose verified proof lands the change before the seal.
    Land,
}

impl Purpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::TurnCompleted => "turn_completed",
            Purpose::Verify => "verify",
            Purpose::Close => "close",
            Purpose::Land => "land",
        }
    }

    /// The purpose a check run recorded (a turn's for any other text).
    pub fn from_recorded(text: &str) -> Purpose {
        match text {
            "close" => Purpose::Close,
            "land" => Purpose::Land,
            "verify" => Purpose::Verify,
            _ => Purpose::TurnCompleted,
        }
    }
}

fn scan(worktree: &Path, include_ignored: bool) -> Result<WorkspaceSnapshot, ProofError> {
    let config = ScanConfig {
        include_ignored,
        ..ScanConfig::default()
    };
    scan_workspace(worktree, &config).map_err(|error| ProofError::WorkspaceUnavailable {
        detail: error.to_string(),
    })
}

/// Runs one command check between two scans and builds its evidence.
fn run_one(
    declaration: &Declaration,
    identity: &ProofIdentity,
    include_ignored: bool,
    transcript: Option<&Transcript>,
    markers: &[(std::ffi::OsString, std::ffi::OsString)],
) -> Result<nagi_mission::model::Evidence, ProofError> {
    let DeclarationKind::Command {
        program, args, cwd, ..
    } = &declaration.kind
    else {
        return Err(ProofError::NotACommandCheck {
            check_id: declaration.check_id.clone(),
        });
    };
    let worktree = PathBuf::from(&identity.worktree_identity);
    let before = scan(&worktree, include_ignored)?;
    let request = CommandCheckRequest {
        worktree: worktree.clone(),
        cwd: cwd.clone(),
        program: program.clone(),
        args: args.clone(),
    };
    let mut sink = |_stream: OutputStream, bytes: &[u8]| {
        if let Some(transcript) = transcript {
            transcript.check_output(bytes);
        }
    };
    let config = RunnerConfig {
        marker_environment: markers.to_vec(),
        ..RunnerConfig::default()
    };
    match run_command_check(&request, &config, &mut sink) {
        Err(rejected) => {
            rejected_command_evidence(declaration, identity, &before, &rejected, now_millis())
        }
        Ok(outcome) => {
            let after = scan(&worktree, include_ignored)?;
            command_evidence(
                &CommandEvidenceInput {
                    declaration,
                    identity,
                    before: &before,
                    after: &after,
                    recorded_at_millis: now_millis(),
                },
                &outcome,
            )
        }
    }
}

fn head_of(row: Option<nagi_store::EventRow>) -> AuthorityHead {
    match row {
        Some(row) => AuthorityHead {
            sequence: row.seq,
            payload_digest: hex::encode(Sha256::digest(row.payload.as_bytes())),
        },
        None => AuthorityHead {
            sequence: 0,
            payload_digest: hex::encode(Sha256::digest(b"")),
        },
    }
}

/// Runs every command check of the plan for the mission's current run, then evaluates and
/// seals. The caller holds the checkout claim `claim_key` while this runs.
pub async fn run_proof_worker(
    engine: &Arc<Engine>,
    mission_id: &str,
    run_id: &str,
    purpose: Purpose,
    claim_key: &str,
    transcript: Option<Arc<Transcript>>,
    land: Option<super::land::LandStep>,
) -> Result<(), EngineError> {
    if !engine.runs.begin_checks(mission_id, run_id) {
        return Err(
            MissionError::Busy(format!("checks are already running for run {run_id}")).into(),
        );
    }
    let outcome = collect_and_seal(
        engine,
        mission_id,
        run_id,
        purpose,
        claim_key,
        transcript.clone(),
        land,
    )
    .await;
    if outcome.is_ok() {
        crate::faults::pause_task_at("checks_sealed").await;
    }
    engine.runs.end_checks(mission_id, run_id);
    if let Err(error) = &outcome {
        // The check run ends either way; it never stays in flight.
        let reason = format!("the checks could not complete: {error}");
        if let Some(transcript) = &transcript {
            transcript.nagi(&reason);
        }
        let finished = MissionEvent::ChecksFinished {
            run_id: run_id.to_string(),
            outcome: Some(reason),
            at_millis: now_millis(),
        };
        let _ = engine
            .missions
            .mutate(mission_id, move |mission| {
                let still_in_flight =
                    mission.is_some_and(|mission| mission.checks_in_flight.is_some());
                Ok((
                    if still_in_flight {
                        vec![finished]
                    } else {
                        Vec::new()
                    },
                    (),
                ))
            })
            .await;
    }
    outcome
}

async fn collect_and_seal(
    engine: &Arc<Engine>,
    mission_id: &str,
    run_id: &str,
    purpose: Purpose,
    claim_key: &str,
    transcript: Option<Arc<Transcript>>,
    mut land: Option<super::land::LandStep>,
) -> Result<(), EngineError> {
    let mission = engine
        .missions
        .get(mission_id)?
        .ok_or_else(|| MissionError::no_mission(mission_id))?;
    if mission.run.as_ref().map(|run| run.run_id.as_str()) != Some(run_id) {
        return Err(MissionError::RunMismatch(format!(
            "run {run_id} is not the mission's current run"
        ))
        .into());
    }
    let identity = current_identity(&mission)?;
    let plan = mission
        .plan
        .clone()
        .ok_or_else(|| ProofError::NoClosurePlan {
            mission_id: mission.mission_id.to_string(),
        })?;
    let commands: Vec<Declaration> = plan
        .declarations
        .iter()
        .filter(|declaration| declaration.is_command())
        .cloned()
        .collect();
    let include_ignored = commands.iter().any(|declaration| {
        matches!(
            declaration.kind,
            DeclarationKind::Command {
                include_ignored: true,
                ..
            }
        )
    });
    let started = MissionEvent::ChecksStarted {
        run_id: run_id.to_string(),
        purpose: purpose.as_str().to_string(),
        check_count: commands.len() as u32,
        at_millis: now_millis(),
    };
    engine
        .missions
        .mutate(mission_id, move |_| Ok((vec![started], ())))
        .await?;
    let markers = vec![
        (
            crate::leftovers::SESSION_MARKER.into(),
            crate::leftovers::session_marker_value(&engine.config.current().paths.data_dir).into(),
        ),
        (crate::leftovers::RUN_MARKER.into(), run_id.into()),
    ];
    for declaration in commands {
        if let Some(transcript) = &transcript {
            transcript.check(&format!(
                "{}: {}",
                declaration.check_id,
                describe(&declaration)
            ));
        }
        let (identity, transcript_for_check, markers) =
            (identity.clone(), transcript.clone(), markers.clone());
        let evidence = tokio::task::spawn_blocking(move || {
            run_one(
                &declaration,
                &identity,
                include_ignored,
                transcript_for_check.as_deref(),
                &markers,
            )
        })
        .await
        .map_err(|error| MissionError::Runtime(format!("a check panicked: {error}")))??;
        if let Some(transcript) = &transcript {
            let detail = evidence
                .detail
                .as_deref()
                .map(|detail| format!(" — {detail}"))
                .unwrap_or_default();
            transcript.check(&format!(
                "{}: {:?}{detail}",
                evidence.check_id, evidence.assessment
            ));
        }
        let at = now_millis();
        engine
            .missions
            .mutate(mission_id, move |_| {
                Ok((
                    vec![MissionEvent::EvidenceRecorded {
                        evidence,
                        at_millis: at,
                    }],
                    (),
                ))
            })
            .await?;
    }
    let worktree = PathBuf::from(&identity.worktree_identity);
    let plan_for_scan = plan.clone();
    let workspace = tokio::task::spawn_blocking(move || {
        let snapshot = scan(&worktree, include_ignored)?;
        ProofWorkspace::observe(&worktree, snapshot, &plan_for_scan)
    })
    .await
    .map_err(|error| MissionError::Runtime(format!("the final scan panicked: {error}")))??;
    for _attempt in 0..5 {
        match evaluate_and_seal(
            engine,
            mission_id,
            run_id,
            purpose,
            claim_key,
            &workspace,
            land.as_mut(),
        )
        .await
        {
            Ok(summary) => {
                if let Some(transcript) = &transcript {
                    transcript.nagi(&summary);
                }
                return Ok(());
            }
            // Another event landed between evaluation and seal: evaluate again.
            Err(EngineError::Proof(ProofError::SealStale { .. })) => continue,
            Err(other) => return Err(other),
        }
    }
    Err(MissionError::Runtime(
        "the proof could not be sealed: the mission kept changing during evaluation".into(),
    )
    .into())
}

/// Evaluates the proof at the current head and commits the outcome with the end of the
/// check run. Returns a one-line summary.
async fn evaluate_and_seal(
    engine: &Arc<Engine>,
    mission_id: &str,
    run_id: &str,
    purpose: Purpose,
    claim_key: &str,
    workspace: &ProofWorkspace,
    land: Option<&mut super::land::LandStep>,
) -> Result<String, EngineError> {
    let (mission, head, claim) = engine.missions.read(|reader| {
        let doc = reader.mission_doc(mission_id)?;
        Ok((doc, head_of(reader.last_event()?), reader.claim(claim_key)?))
    })?;
    let mission =
        Mission::from_document(&mission.ok_or_else(|| MissionError::no_mission(mission_id))?)?;
    let claim = claim.ok_or_else(|| {
        MissionError::Runtime("the checkout claim was lost while the checks ran".into())
    })?;
    let lease = WorktreeLease {
        mission_id: claim.mission_id.clone(),
        run_id: claim.run_id.clone(),
        checkout_root: claim.checkout_root.clone(),
        claim_nonce: claim.nonce.clone(),
    };
    let verdict = verify(&VerificationInput {
        mission: &mission,
        workspace,
        authority_head: &head,
        lease: &lease,
        verified_at_millis: now_millis(),
    })?;
    let landing = match purpose {
        Purpose::Land => {
            super::land::land_when_verified(engine, &mission, &verdict, &head, run_id, land).await?
        }
        _ => None,
    };
    let summary = match &verdict {
        Verdict::Verified { .. } => match purpose {
            Purpose::Close | Purpose::Land => "the fresh proof verified".to_string(),
            _ => "the proof verified: the mission is ready to close".to_string(),
        },
        Verdict::ReviewRequired { reasons, .. } => {
            let unresolved = mission
                .attention
                .values()
                .filter(|item| item.is_unresolved())
                .count();
            let first = if unresolved > 0 {
                format!(
                    "answer or dismiss the {unresolved} open attention item{} in the cockpit (`nagi cockpit`), ",
                    if unresolved == 1 { "" } else { "s" }
                )
            } else {
                format!(
                    "fix what fails (yourself, or with another run: `nagi mission start {mission_id} --provider PROVIDER`), "
                )
            };
            format!(
                "the proof does not verify yet: {}; {first}then run the checks again with `nagi mission verify {mission_id} --execute-checks`",
                reasons.join("; ")
            )
        }
    };
    let (mission_id, run_id, summary_for_job) =
        (mission_id.to_string(), run_id.to_string(), summary.clone());
    engine
        .missions
        .mutate_writing(&mission_id.clone(), move |writer, mission| {
            let mission = mission.ok_or_else(|| MissionError::no_mission(&mission_id))?;
            let current_head = head_of(writer.reader().last_event()?);
            let now = now_millis();
            let mut events = Vec::new();
            match purpose {
                Purpose::Close => {
                    events.push(close_outcome(mission, &verdict, &current_head, now)?)
                }
                Purpose::Land => {
                    events.push(close_outcome(mission, &verdict, &current_head, now)?);
                    if let Some(landing) = landing {
                        events.push(MissionEvent::MissionLanded {
                            landing,
                            at_millis: now,
                        });
                    }
                }
                Purpose::TurnCompleted | Purpose::Verify => {
                    if let Some(event) = readiness_outcome(mission, &verdict, &current_head, now)? {
                        events.push(event);
                    }
                }
            }
            let outcome = match &verdict {
                Verdict::Verified { .. } => None,
                Verdict::ReviewRequired { .. } => Some(summary_for_job),
            };
            events.push(MissionEvent::ChecksFinished {
                run_id: run_id.clone(),
                outcome,
                at_millis: now,
            });
            Ok((events, ()))
        })
        .await?;
    Ok(summary)
}

/// Holds the checkout for a verification that no run holds (`mission.verify`,
/// `mission.close`, checks re-run after a restart): the OS lock and a claim row with a
/// fresh nonce. Returns the claim key.
pub async fn claim_for_checks(
    engine: &Arc<Engine>,
    mission: &Mission,
    request_id: &str,
) -> Result<String, EngineError> {
    let run = mission
        .run
        .clone()
        .ok_or_else(|| MissionError::Runtime("the mission has no run".into()))?;
    let checkout = engine
        .checkouts
        .canonical_checkout(&run.worktree_path)
        .await
        .map_err(MissionError::InvalidRepository)?;
    let key = checkout.claim_key();
    // The mission's own run may be releasing this claim right now (its proof was sealed a
    // moment ago); give it a few seconds before calling the checkout taken.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match engine.claim_locks.acquire(&key) {
            Ok(()) => break,
            Err(crate::live::claims::ClaimLockError::HeldHere)
                if tokio::time::Instant::now() < deadline
                    && engine
                        .missions
                        .read(|reader| reader.claim(&key))?
                        .is_some_and(|claim| claim.mission_id == mission.mission_id) =>
            {
                tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            }
            Err(error) => {
                return Err(MissionError::CheckoutClaimed(format!(
                    "the checkout {} is claimed by another live run: {error}",
                    checkout.root.display()
                ))
                .into());
            }
        }
    }
    let claim = nagi_store::ClaimRow {
        checkout_key: key.clone(),
        checkout_root: run.worktree_path.clone(),
        mission_id: mission.mission_id.to_string(),
        run_id: run.run_id.to_string(),
        request_id: request_id.to_string(),
        nonce: super::start::random_nonce(),
        claimed_at_millis: now_millis(),
    };
    let claimed = engine
        .missions
        .transact(move |writer| match writer.claim_checkout(&claim)? {
            nagi_store::ClaimOutcome::Claimed | nagi_store::ClaimOutcome::AlreadyHeld(_) => Ok(()),
            nagi_store::ClaimOutcome::HeldByOther(holder) => {
                Err(MissionError::CheckoutClaimed(format!(
                    "the checkout {} is claimed by mission {} run {}",
                    holder.checkout_root, holder.mission_id, holder.run_id
                ))
                .into())
            }
        })
        .await;
    if let Err(error) = claimed {
        engine.claim_locks.release(&key);
        return Err(error);
    }
    Ok(key)
}

/// Runs the proof worker in the background with its own claim, releasing it at the end.
pub fn spawn_claimed_worker(
    engine: &Arc<Engine>,
    mission_id: MissionId,
    run_id: RunId,
    purpose: Purpose,
    claim_key: String,
) {
    let engine = engine.clone();
    tokio::spawn(async move {
        let transcript = Transcript::open(&super::launch_run::transcript_path(
            &engine,
            &mission_id,
            &run_id,
        ))
        .ok()
        .map(Arc::new);
        if let Some(transcript) = &transcript {
            transcript.nagi(&format!(
                "running the declared checks ({})",
                purpose.as_str()
            ));
        }
        // Checks in a deleted worktree would prove nothing: the mission is blocked instead.
        let missing = super::worktree::block_missing(&engine, &mission_id).await;
        if let Ok(true) = missing {
            if let Some(transcript) = &transcript {
                transcript.nagi("the mission worktree was deleted; the checks did not run and the mission is blocked");
            }
        } else if let Err(error) = run_proof_worker(
            &engine,
            &mission_id,
            &run_id,
            purpose,
            &claim_key,
            transcript,
            resumed_landing(&engine, &mission_id, purpose),
        )
        .await
        {
            tracing::warn!(%mission_id, %error, "the proof worker failed");
        }
        let _ = crate::runs::release_claim(
            &engine,
            HeldClaim {
                mission_id: &mission_id,
                run_id: &run_id,
                checkout_key: &claim_key,
            },
        )
        .await;
        if matches!(purpose, Purpose::Close | Purpose::Land) {
            after_archive(&engine, &mission_id).await;
        }
    });
}

/// A landing check run a restart interrupted resumes from the mission's pending landing.
fn resumed_landing(
    engine: &Arc<Engine>,
    mission_id: &str,
    purpose: Purpose,
) -> Option<super::land::LandStep> {
    if purpose != Purpose::Land {
        return None;
    }
    let mission = engine.missions.get(mission_id).ok().flatten()?;
    Some(super::land::resume_step(&mission))
}

/// Once a close or a landing archived the mission: the recipe's cleanup, the worktree
/// removed (or kept, with the reason), the panes closed after their linger.
pub async fn after_archive(engine: &Arc<Engine>, mission_id: &str) {
    let archived = engine
        .missions
        .get(mission_id)
        .ok()
        .flatten()
        .is_some_and(|mission| mission.status == nagi_schema::mission::MissionStatus::Archived);
    if !archived {
        return;
    }
    super::recipe::cleanup_on_archive(engine, mission_id).await;
    if let Err(error) = super::worktree::settle_after_archive(engine, mission_id).await {
        tracing::warn!(%mission_id, %error, "the archived mission's worktree could not be settled");
    }
    tokio::spawn(close_panes_of_archived(
        engine.clone(),
        mission_id.to_string(),
    ));
}

/// Runs a mission's checks again after a restart interrupted them.
pub async fn rerun_after_restart(
    engine: &Arc<Engine>,
    mission_id: &str,
    purpose: &str,
) -> Result<(), EngineError> {
    let mission = engine
        .missions
        .get(mission_id)?
        .ok_or_else(|| MissionError::no_mission(mission_id))?;
    let run_id = mission
        .run
        .as_ref()
        .map(|run| run.run_id.clone())
        .ok_or_else(|| MissionError::Runtime("no run".into()))?;
    let key = claim_for_checks(engine, &mission, &format!("recovery:{run_id}")).await?;
    spawn_claimed_worker(
        engine,
        mission.mission_id.clone(),
        run_id,
        Purpose::from_recorded(purpose),
        key,
    );
    Ok(())
}

fn describe(declaration: &Declaration) -> String {
    match &declaration.kind {
        DeclarationKind::Command {
            program, args, cwd, ..
        } => {
            let mut words = vec![program.clone()];
            words.extend(args.iter().cloned());
            let quoted: Vec<String> = words
                .iter()
                .map(|word| {
                    if !word.is_empty()
                        && word
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "-_./=:".contains(c))
                    {
                        word.clone()
                    } else {
                        format!("'{}'", word.replace('\'', "'\\''"))
                    }
                })
                .collect();
            format!("{} (in {cwd})", quoted.join(" "))
        }
        DeclarationKind::Manual { .. } => "manual".into(),
    }
}

/// Records a listed reviewer's evidence for a manual check (contract preface item 6), then
/// evaluates the proof, sealing `ready_to_close` when it verifies.
pub async fn record_manual_evidence(
    engine: &Arc<Engine>,
    mission_id: &str,
    check_id: &str,
    reviewer: &str,
    reason: &str,
    is_override: bool,
) -> Result<String, EngineError> {
    // The run's checks may have sealed a moment ago without yet letting go.
    let mission = super::settle::settled_mission(engine, mission_id).await?;
    let run = mission
        .run
        .clone()
        .ok_or_else(|| MissionError::NotReady(format!("mission {mission_id} has no run yet")))?;
    if engine.runs.get(&mission.mission_id, &run.run_id).is_some()
        || engine.runs.checks_running(&mission.mission_id, &run.run_id)
    {
        return Err(MissionError::Busy(format!(
            "run {} is still working; record the evidence when it has ended",
            run.run_id
        ))
        .into());
    }
    let declaration = mission.declaration(check_id).cloned().ok_or_else(|| {
        MissionError::InvalidClosure(format!(
            "mission {mission_id} declares no check {check_id:?}"
        ))
    })?;
    let identity = current_identity(&mission)?;
    let plan = mission
        .plan
        .clone()
        .ok_or_else(|| ProofError::NoClosurePlan {
            mission_id: mission_id.to_string(),
        })?;
    let include_ignored = plan.declarations.iter().any(|declaration| {
        matches!(
            declaration.kind,
            DeclarationKind::Command {
                include_ignored: true,
                ..
            }
        )
    });
    let worktree = PathBuf::from(&run.worktree_path);
    let key = claim_for_checks(engine, &mission, &format!("manual:{}", run.run_id)).await?;
    let outcome = async {
        let (worktree_for_scan, plan_for_scan) = (worktree.clone(), plan.clone());
        let workspace = tokio::task::spawn_blocking(move || {
            let snapshot = scan(&worktree_for_scan, include_ignored)?;
            ProofWorkspace::observe(&worktree_for_scan, snapshot, &plan_for_scan)
        })
        .await
        .map_err(|error| MissionError::Runtime(error.to_string()))??;
        let evidence = nagi_proof::manual_evidence(
            &declaration,
            &identity,
            reviewer,
            reason,
            is_override,
            &workspace.snapshot,
            now_millis(),
        )?;
        let at = now_millis();
        engine
            .missions
            .mutate(mission_id, move |_| {
                Ok((
                    vec![MissionEvent::EvidenceRecorded {
                        evidence,
                        at_millis: at,
                    }],
                    (),
                ))
            })
            .await?;
        if engine.missions.get(mission_id)?.is_some_and(|mission| {
            mission.status == nagi_schema::mission::MissionStatus::ReviewRequired
        }) {
            for _attempt in 0..5 {
                match evaluate_and_seal(
                    engine,
                    mission_id,
                    &run.run_id,
                    Purpose::Verify,
                    &key,
                    &workspace,
                    None,
                )
                .await
                {
                    Ok(summary) => return Ok(summary),
                    Err(EngineError::Proof(ProofError::SealStale { .. })) => continue,
                    Err(other) => return Err(other),
                }
            }
        }
        Ok(format!("manual evidence for {check_id} recorded"))
    }
    .await;
    let _ = crate::runs::release_claim(
        engine,
        HeldClaim {
            mission_id,
            run_id: &run.run_id,
            checkout_key: &key,
        },
    )
    .await;
    outcome
}

/// Once a mission is archived, its runs' panes close after
/// `[server] archived_pane_linger_seconds`, so that panes do not pile up; the transcripts
/// stay. A pane already closed, or a server that stops first, is no error.
pub(super) async fn close_panes_of_archived(engine: Arc<Engine>, mission_id: String) {
    let Ok(Some(mission)) = engine.missions.get(&mission_id) else {
        return;
    };
    if mission.status != nagi_schema::mission::MissionStatus::Archived {
        return;
    }
    let workspaces: Vec<String> = mission
        .run_history
        .iter()
        .chain(mission.run.iter())
        .filter_map(|run| run.pane_id.as_deref())
        .filter_map(|pane_id| engine.panes.pane_info(pane_id).ok())
        .map(|pane| pane.workspace_id)
        .collect();
    if workspaces.is_empty() {
        return;
    }
    let linger = std::time::Duration::from_secs(
        engine
            .config
            .current()
            .user
            .server
            .archived_pane_linger_seconds,
    );
    tokio::select! {
        _ = tokio::time::sleep(linger) => {}
        _ = engine.shutdown.wait() => return,
    }
    for workspace_id in workspaces {
        if let Err(error) = engine.panes.close_workspace(&workspace_id).await {
            tracing::debug!(%mission_id, %workspace_id, %error, "an archived run's pane was already gone");
        }
    }
}
