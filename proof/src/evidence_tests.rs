use nagi_schema::mission::{MissionEvidenceAssessmentV1, MissionEvidenceKindV1};

use super::*;
use crate::test_support::*;
use nagi_exec::runner::{CommandFailure, RunnerError};
use nagi_exec::workspace::Disposition;
use nagi_mission::model::Mission;

fn input<'a>(
    mission: &'a Mission,
    identity: &'a ProofIdentity,
    before: &'a WorkspaceSnapshot,
    after: &'a WorkspaceSnapshot,
) -> CommandEvidenceInput<'a> {
    CommandEvidenceInput {
        declaration: declaration(mission, "unit"),
        identity,
        before,
        after,
        recorded_at_millis: 200,
    }
}

#[test]
fn a_zero_exit_with_its_artifact_passes_with_a_record() {
    let mission = mission();
    let identity = identity(&mission);
    let before = snapshot(base_entries());
    let evidence =
        command_evidence(&input(&mission, &identity, &before, &before), &outcome(0)).unwrap();
    assert_eq!(evidence.assessment, MissionEvidenceAssessmentV1::Passed);
    assert_eq!(evidence.kind, MissionEvidenceKindV1::Command);
    assert_eq!(evidence.exit_code, Some(0));
    assert_eq!(evidence.duration_millis, Some(50));
    assert_eq!(evidence.workspace_digest, before.digest);
    assert_eq!(evidence.detail, None);
    assert_eq!(evidence.artifacts.len(), 1);
    assert_eq!(evidence.artifacts[0].media_type, "application/json");
    assert_eq!(
        evidence.artifacts[0].content_digest,
        nagi_mission::digest::sha256_hex(b"{\"ok\":true}")
    );
    assert_eq!(evidence.record_digest, evidence_record_digest(&evidence));
    assert!(evidence.record_digest.is_some());
    assert_eq!(
        evidence.output_tail.as_deref(),
        Some("[stdout]\nrunning 3 tests\ntest result: ok")
    );
}

#[test]
fn a_non_zero_exit_fails_but_keeps_its_record() {
    let mission = mission();
    let identity = identity(&mission);
    let before = snapshot(base_entries());
    let evidence =
        command_evidence(&input(&mission, &identity, &before, &before), &outcome(3)).unwrap();
    assert_eq!(evidence.assessment, MissionEvidenceAssessmentV1::Failed);
    assert_eq!(
        evidence.detail.as_deref(),
        Some("the command exited with code 3")
    );
    assert!(evidence.record_digest.is_some());
}

#[test]
fn a_missing_artifact_fails_without_a_record_and_says_which() {
    let mission = mission();
    let identity = identity(&mission);
    let mut entries = base_entries();
    entries.retain(|entry| entry.path != "report.json");
    let before = snapshot(entries);
    let evidence =
        command_evidence(&input(&mission, &identity, &before, &before), &outcome(0)).unwrap();
    assert_eq!(evidence.assessment, MissionEvidenceAssessmentV1::Failed);
    assert_eq!(evidence.record_digest, None);
    assert!(
        evidence
            .detail
            .unwrap()
            .contains("required artifact `report.json` missing")
    );
}

#[test]
fn timeouts_and_output_limits_fail_without_a_record() {
    let mission = mission();
    let identity = identity(&mission);
    let before = snapshot(base_entries());
    for failure in [
        CommandFailure::TimedOut {
            timeout_millis: 600_000,
        },
        CommandFailure::StdoutLimitExceeded { limit_bytes: 16 },
    ] {
        let mut stopped = outcome(-1);
        stopped.signal = Some(9);
        stopped.failure = Some(failure.clone());
        let evidence =
            command_evidence(&input(&mission, &identity, &before, &before), &stopped).unwrap();
        assert_eq!(evidence.assessment, MissionEvidenceAssessmentV1::Failed);
        assert_eq!(evidence.record_digest, None);
        assert_eq!(evidence.exit_code, Some(-1));
        assert_eq!(
            evidence.detail.as_deref(),
            Some(failure.to_string().as_str())
        );
    }
    let mut cancelled = outcome(-1);
    cancelled.failure = Some(CommandFailure::Cancelled);
    assert!(matches!(
        command_evidence(&input(&mission, &identity, &before, &before), &cancelled),
        Err(ProofError::CollectionCancelled { .. })
    ));
}

#[test]
fn a_signal_is_reported_as_exit_code_minus_one() {
    let mission = mission();
    let identity = identity(&mission);
    let before = snapshot(base_entries());
    let mut killed = outcome(-1);
    killed.signal = Some(15);
    let evidence =
        command_evidence(&input(&mission, &identity, &before, &before), &killed).unwrap();
    assert_eq!(evidence.assessment, MissionEvidenceAssessmentV1::Failed);
    assert!(evidence.detail.unwrap().contains("killed by signal 15"));
}

#[test]
fn a_refused_command_fails_with_the_runner_reason() {
    let mission = mission();
    let identity = identity(&mission);
    let before = snapshot(base_entries());
    let error = RunnerError::ProgramNotFound {
        program: "cargo".into(),
        searched: vec![],
    };
    let evidence =
        rejected_command_evidence(declaration(&mission, "unit"), &identity, &before, &error, 5)
            .unwrap();
    assert_eq!(evidence.assessment, MissionEvidenceAssessmentV1::Failed);
    assert_eq!(evidence.record_digest, None);
    assert!(
        evidence
            .detail
            .unwrap()
            .starts_with("the command could not be started: program `cargo` was not found")
    );
    assert!(
        rejected_command_evidence(
            declaration(&mission, "review"),
            &identity,
            &before,
            &error,
            5
        )
        .is_err()
    );
}

#[test]
fn changes_the_command_made_are_named_in_the_detail() {
    let mission = mission();
    let identity = identity(&mission);
    let before = snapshot(base_entries());
    let mut after_entries = base_entries();
    after_entries.push(file(
        "src/generated.rs",
        Disposition::Untracked,
        "// generated",
    ));
    let after = snapshot(after_entries);
    let evidence =
        command_evidence(&input(&mission, &identity, &before, &after), &outcome(0)).unwrap();
    assert_eq!(evidence.assessment, MissionEvidenceAssessmentV1::Passed);
    assert_eq!(evidence.workspace_digest, after.digest);
    assert_eq!(
        evidence.detail.as_deref(),
        Some("the command changed 1 workspace path(s): src/generated.rs")
    );
}

#[test]
fn output_tails_are_redacted_and_bounded() {
    let mission = mission();
    let identity = identity(&mission);
    let before = snapshot(base_entries());
    let mut noisy = outcome(1);
    let long_stderr = format!(
        "{}\nerror: token sk-proj-abcdefghijklmnopqrstuvwx rejected\n",
        "x".repeat(10_000)
    );
    noisy.stderr = nagi_exec::runner::OutputSummary {
        total_bytes: 20_000,
        sha256: "0".repeat(64),
        tail: long_stderr,
    };
    let evidence = command_evidence(&input(&mission, &identity, &before, &before), &noisy).unwrap();
    let tail = evidence.output_tail.unwrap();
    assert!(!tail.contains("sk-proj-abcdefghijklmnopqrstuvwx"), "{tail}");
    assert!(tail.contains("[stderr, end]"));
    assert!(tail.len() <= 2 * STREAM_TAIL_BYTES + 64);
}

#[test]
fn a_record_digest_covers_source_artifacts_and_identity_but_not_the_summary() {
    let mission = mission();
    let identity = identity(&mission);
    let before = snapshot(base_entries());
    let evidence =
        command_evidence(&input(&mission, &identity, &before, &before), &outcome(0)).unwrap();
    let digest = evidence_record_digest(&evidence).unwrap();
    let mut stale = evidence.clone();
    stale.assessment = MissionEvidenceAssessmentV1::Stale;
    stale.detail = Some("anything".into());
    assert_eq!(evidence_record_digest(&stale).unwrap(), digest);
    let mut other_artifact = evidence.clone();
    other_artifact.artifacts[0].content_digest = "f".repeat(64);
    assert_ne!(evidence_record_digest(&other_artifact).unwrap(), digest);
    let mut other_run = evidence.clone();
    other_run.identity_digest = Some("e".repeat(64));
    assert_ne!(evidence_record_digest(&other_run).unwrap(), digest);
    let mut other_exit = evidence;
    other_exit.source = Some(EvidenceSource::Command {
        program: "cargo".into(),
        args: vec!["test".into()],
        cwd: ".".into(),
        exit_code: 1,
        started_at_millis: 100,
        finished_at_millis: 150,
    });
    assert_ne!(evidence_record_digest(&other_exit).unwrap(), digest);
}

#[test]
fn manual_evidence_needs_a_listed_reviewer_and_an_allowed_override() {
    let mission = mission();
    let identity = identity(&mission);
    let current = snapshot(base_entries());
    let review = declaration(&mission, "review");
    let evidence = manual_evidence(
        review,
        &identity,
        "alice",
        "Read the diff; the redirect is right.",
        false,
        &current,
        300,
    )
    .unwrap();
    assert_eq!(evidence.kind, MissionEvidenceKindV1::Manual);
    assert_eq!(evidence.assessment, MissionEvidenceAssessmentV1::Passed);
    assert_eq!(evidence.workspace_digest, current.digest);
    assert!(evidence.record_digest.is_some());

    let stranger = manual_evidence(
        review,
        &identity,
        "mallory",
        "looks fine",
        false,
        &current,
        300,
    )
    .unwrap_err();
    assert_eq!(
        stranger,
        ProofError::ReviewerNotListed {
            check_id: "review".into(),
            reviewer: "mallory".into(),
            allowed: "alice".into()
        }
    );
    let override_refused =
        manual_evidence(review, &identity, "alice", "ship it", true, &current, 300).unwrap_err();
    assert_eq!(
        override_refused,
        ProofError::OverrideNotAllowed {
            check_id: "review".into()
        }
    );
    assert!(matches!(
        manual_evidence(review, &identity, "alice", "   ", false, &current, 300),
        Err(ProofError::InvalidManualEvidence { .. })
    ));
    assert!(matches!(
        manual_evidence(
            declaration(&mission, "unit"),
            &identity,
            "alice",
            "ok",
            false,
            &current,
            300
        ),
        Err(ProofError::NotAManualCheck { .. })
    ));
}

#[test]
fn an_override_is_accepted_where_the_plan_allows_it() {
    let mut mission = mission();
    let plan = mission.plan.as_mut().unwrap();
    let review = plan
        .declarations
        .iter_mut()
        .find(|declaration| declaration.check_id == "review")
        .unwrap();
    review.kind = nagi_mission::model::DeclarationKind::Manual {
        reviewers: vec!["alice".into()],
        allow_override: true,
    };
    let identity = identity(&mission);
    let current = snapshot(base_entries());
    let evidence = manual_evidence(
        declaration(&mission, "review"),
        &identity,
        "alice",
        "known flaky, accepted",
        true,
        &current,
        300,
    )
    .unwrap();
    assert_eq!(
        evidence.detail.as_deref(),
        Some("passed by an override of reviewer alice")
    );
}
