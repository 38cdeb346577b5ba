//! Running the declared command checks (MISSIONS.md §5.4): after a completed turn with
//! `execute_declared_checks`, on `mission.verify`, and on `mission.close`. Each check runs
//! in the run's worktree through the trusted runner (cleared environment, own process
//! group, timeout, output caps), its output streams into the run's transcript pane, and its
//! evidence is committed.

use std::sync::Arc;

use nagi_schema::mission::{MissionEvidenceAssessmentV1, MissionEvidenceKindV1, MissionPathRule};

use super::transcript::Transcript;
use crate::clock::now_millis;
use crate::digest::PathRule;
use crate::engine::Engine;
use crate::errors::EngineError;
use crate::mission::model::{Declaration, DeclarationKind, Evidence, EvidenceSource};
use crate::mission::{MissionError, MissionEvent};
use crate::runner::{CommandCheckRequest, OutputStream, RunnerConfig, run_command_check};
use crate::workspace::{ScanConfig, WorkspaceSnapshot, relevant_files_digest, scan_workspace};

pub fn path_rules(rules: &[MissionPathRule]) -> Vec<PathRule> {
    if rules.is_empty() {
        return vec![PathRule::All];
    }
    rules
        .iter()
        .map(|rule| match rule {
            MissionPathRule::All => PathRule::All,
            MissionPathRule::Exact { path } => PathRule::Exact { path: path.clone() },
            MissionPathRule::Prefix { prefix } => PathRule::Prefix { prefix: prefix.clone() },
        })
        .collect()
}

fn scan(worktree: &std::path::Path, include_ignored: bool) -> Result<WorkspaceSnapshot, String> {
    let config = ScanConfig { include_ignored, ..ScanConfig::default() };
    scan_workspace(worktree, &config).map_err(|error| error.to_string())
}

/// Runs one command declaration and builds its evidence.
fn run_one(
    declaration: &Declaration,
    worktree: &std::path::Path,
    run_id: &str,
    include_ignored: bool,
    transcript: Option<&Transcript>,
    markers: &[(std::ffi::OsString, std::ffi::OsString)],
) -> Evidence {
    let DeclarationKind::Command { program, args, cwd, relevant_paths, required_artifacts, include_ignored: own_ignored } = &declaration.kind else {
        unreachable!("only command checks run")
    };
    let request = CommandCheckRequest { worktree: worktree.to_path_buf(), cwd: cwd.clone(), program: program.clone(), args: args.clone() };
    let mut sink = |stream: OutputStream, bytes: &[u8]| {
        if let Some(transcript) = transcript {
            let _ = stream;
            transcript.check_output(bytes);
        }
    };
    let config = RunnerConfig { marker_environment: markers.to_vec(), ..RunnerConfig::default() };
    let outcome = run_command_check(&request, &config, &mut sink);
    let now = now_millis();
    let after = scan(worktree, include_ignored || *own_ignored);
    let rules = path_rules(relevant_paths);
    let (workspace_digest, relevant_digest) = match &after {
        Ok(snapshot) => (snapshot.digest.clone(), Some(relevant_files_digest(snapshot, &rules, *own_ignored))),
        Err(_) => ("0".repeat(64), None),
    };
    let mut evidence = Evidence {
        check_id: declaration.check_id.clone(),
        kind: MissionEvidenceKindV1::Command,
        assessment: MissionEvidenceAssessmentV1::Failed,
        workspace_digest,
        relevant_digest,
        declaration_digest: declaration.digest.clone(),
        run_id: run_id.to_string(),
        recorded_at_millis: now,
        duration_millis: None,
        exit_code: None,
        source: None,
        artifacts: Vec::new(),
        record_digest: None,
        detail: None,
        output_tail: None,
    };
    match outcome {
        Err(rejected) => evidence.detail = Some(format!("the command could not run: {rejected}")),
        Ok(outcome) => {
            evidence.duration_millis = Some(outcome.duration_millis);
            evidence.exit_code = Some(outcome.exit_code);
            let tail = format!("{}{}", outcome.stdout.tail, outcome.stderr.tail);
            let tail_start = tail.len().saturating_sub(2048);
            let mut start = tail_start;
            while !tail.is_char_boundary(start) {
                start += 1;
            }
            evidence.output_tail = Some(tail[start..].to_string()).filter(|text| !text.is_empty());
            evidence.source = Some(EvidenceSource::Command {
                program: program.clone(),
                args: args.clone(),
                cwd: cwd.clone(),
                exit_code: outcome.exit_code,
                started_at_millis: outcome.started_at_millis,
                finished_at_millis: outcome.finished_at_millis,
            });
            let missing: Vec<&String> = match &after {
                Ok(snapshot) => required_artifacts.iter().filter(|artifact| snapshot.entry(artifact).is_none()).collect(),
                Err(_) => required_artifacts.iter().collect(),
            };
            if let Some(failure) = &outcome.failure {
                evidence.detail = Some(failure.to_string());
            } else if outcome.exit_code != 0 {
                evidence.detail = Some(format!("exited with code {}", outcome.exit_code));
            } else if let Err(error) = &after {
                evidence.detail = Some(format!("the workspace could not be scanned after the check: {error}"));
            } else if !missing.is_empty() {
                evidence.detail = Some(format!("required artifact(s) missing: {}", missing.iter().map(|path| path.as_str()).collect::<Vec<_>>().join(", ")));
            } else {
                evidence.assessment = MissionEvidenceAssessmentV1::Passed;
            }
        }
    }
    evidence
}

/// Runs every command check of the mission's plan for `run_id`, committing their evidence.
/// Manual checks are never executed.
pub async fn run_declared_checks(
    engine: &Arc<Engine>,
    mission_id: &str,
    run_id: &str,
    purpose: &str,
    transcript: Option<Arc<Transcript>>,
) -> Result<(), EngineError> {
    let mission = engine.missions.get(mission_id)?.ok_or_else(|| MissionError::NotFound(format!("no mission {mission_id:?}")))?;
    let run = mission.run.clone().filter(|run| run.run_id == run_id).ok_or_else(|| MissionError::RunMismatch(format!("run {run_id} is not the current run")))?;
    let plan = mission.plan.clone().ok_or_else(|| MissionError::InvalidClosure("the mission has no closure plan".into()))?;
    let commands: Vec<Declaration> = plan.declarations.into_iter().filter(Declaration::is_command).collect();
    if !engine.runs.begin_checks(run_id, mission_id) {
        return Err(MissionError::Busy(format!("checks are already running for run {run_id}")).into());
    }
    let include_ignored = commands.iter().any(|declaration| matches!(declaration.kind, DeclarationKind::Command { include_ignored: true, .. }));
    let outcome = async {
        let started = MissionEvent::ChecksStarted {
            run_id: run_id.to_string(),
            purpose: purpose.to_string(),
            check_count: commands.len() as u32,
            at_millis: now_millis(),
        };
        engine.missions.mutate(mission_id, move |_| Ok((vec![started], ()))).await?;
        for declaration in commands {
            if let Some(transcript) = &transcript {
                transcript.check(&format!("{}: {}", declaration.check_id, describe(&declaration)));
            }
            let worktree = std::path::PathBuf::from(&run.worktree_path);
            let run_for_check = run_id.to_string();
            let transcript_for_check = transcript.clone();
            let markers = vec![
                (super::leftovers::SESSION_MARKER.into(), engine.config.paths.data_dir.clone().into_os_string()),
                (super::leftovers::RUN_MARKER.into(), run_id.into()),
            ];
            let evidence = tokio::task::spawn_blocking(move || {
                run_one(&declaration, &worktree, &run_for_check, include_ignored, transcript_for_check.as_deref(), &markers)
            })
            .await
            .map_err(|error| MissionError::Runtime(format!("a check panicked: {error}")))?;
            if let Some(transcript) = &transcript {
                transcript.check(&format!("{}: {:?}{}", evidence.check_id, evidence.assessment, evidence.detail.as_deref().map(|detail| format!(" ({detail})")).unwrap_or_default()));
            }
            let at = now_millis();
            engine.missions.mutate(mission_id, move |_| Ok((vec![MissionEvent::EvidenceRecorded { evidence, at_millis: at }], ()))).await?;
        }
        Ok::<(), EngineError>(())
    }
    .await;
    let finished = MissionEvent::ChecksFinished { run_id: run_id.to_string(), at_millis: now_millis() };
    let closing = engine.missions.mutate(mission_id, move |_| Ok((vec![finished], ()))).await;
    engine.runs.end_checks(run_id);
    outcome?;
    closing.map(|_| ())
}

/// Runs a mission's checks again after a restart interrupted them, holding the checkout
/// claim while they run.
pub async fn rerun_after_restart(engine: &Arc<Engine>, mission_id: &str, run_id: &str, purpose: &str) -> Result<(), EngineError> {
    let mission = engine.missions.get(mission_id)?.ok_or_else(|| MissionError::NotFound(format!("no mission {mission_id:?}")))?;
    let run = mission.run.clone().ok_or_else(|| MissionError::RunMismatch("the mission has no run".into()))?;
    let checkout = engine.checkouts.canonical_checkout(&run.worktree_path).map_err(MissionError::InvalidRepository)?;
    let key = checkout.claim_key();
    engine.claim_locks.acquire(&key).map_err(|error| MissionError::CheckoutClaimed(error.to_string()))?;
    let transcript = super::transcript::Transcript::open(&super::start::transcript_path(engine, mission_id, run_id)).ok().map(Arc::new);
    if let Some(transcript) = &transcript {
        transcript.nagi("the server restarted while checks were running; running them again");
    }
    let outcome = run_declared_checks(engine, mission_id, run_id, purpose, transcript).await;
    engine.claim_locks.release(&key);
    outcome
}

fn describe(declaration: &Declaration) -> String {
    match &declaration.kind {
        DeclarationKind::Command { program, args, cwd, .. } => {
            let mut words = vec![program.clone()];
            words.extend(args.iter().cloned());
            format!("{} (in {cwd})", shlex_join(&words))
        }
        DeclarationKind::Manual { .. } => "manual".into(),
    }
}

fn shlex_join(words: &[String]) -> String {
    words
        .iter()
        .map(|word| if word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:".contains(c)) { word.clone() } else { format!("'{}'", word.replace('\'', "'\\''")) })
        .collect::<Vec<_>>()
        .join(" ")
}
