//! The proof and handoff engines against real Git repositories and real check processes.

mod support;

use std::os::unix::fs::PermissionsExt;

use nagi_exec::workspace::{ScanConfig, handoff_diff};
use nagi_mission::digest::suggested_handoff_run_id;
use nagi_mission::event::MissionEvent;
use nagi_mission::view::NoLiveRuns;
use nagi_proof::handoff::{
    HandoffArtifactConfig, HandoffAuthority, HandoffError, HandoffStartPrecheck,
    build_handoff_artifact, confirm_rebuilt_artifact, decide_run_continued, handoff_prompt,
    precheck_handoff_start,
};
use nagi_proof::{
    ProofError, Verdict, close_outcome, current_identity, manual_evidence, proof_receipt,
    readiness_outcome,
};
use nagi_schema::handoff::MissionHandoffArtifactV1;
use nagi_schema::mission::{MissionCheckStatusV1, MissionProvider, MissionStatus};
use nagi_schema::proof::ProofClosureDecisionV1;
use support::*;

const CRITERIA: [&str; 2] = ["The login redirect works", "A person reviewed the change"];

fn command_only_ledger(repository: &TestRepository) -> Ledger {
    Ledger::start(
        repository,
        "Fix the login redirect",
        &CRITERIA,
        vec![unit_check()],
    )
}

fn check_status(verdict: &Verdict, check_id: &str) -> MissionCheckStatusV1 {
    verdict
        .checks()
        .iter()
        .find(|check| check.check_id == check_id)
        .unwrap()
        .status
}

/// Collects, evaluates and seals readiness; returns the verdict.
fn make_ready(ledger: &mut Ledger, repository: &TestRepository) -> Verdict {
    ledger.collect_command_evidence();
    let verdict = ledger.verify_now(&repository.root());
    let head = ledger.head();
    let at = ledger.tick();
    if let Some(event) = readiness_outcome(&ledger.mission, &verdict, &head, at).unwrap() {
        ledger.commit(event);
    }
    verdict
}

#[test]
fn a_passing_mission_becomes_ready_then_archives_with_a_later_sequence() {
    let repository = TestRepository::new();
    let mut ledger = Ledger::start(
        &repository,
        "Fix the login redirect",
        &CRITERIA,
        vec![unit_check(), review_check(false)],
    );
    ledger.collect_command_evidence();
    assert_eq!(
        ledger.mission.evidence["unit"].artifacts[0].path,
        "report.json"
    );

    // The manual check: a listed reviewer passes it, anyone else is refused.
    let identity = current_identity(&ledger.mission).unwrap();
    let review = ledger.mission.declaration("review").unwrap().clone();
    let snapshot = repository.scan();
    let refused = manual_evidence(
        &review,
        &identity,
        "bob",
        "looks fine",
        false,
        &snapshot,
        5_000,
    )
    .unwrap_err();
    assert!(matches!(refused, ProofError::ReviewerNotListed { .. }));
    assert!(matches!(
        manual_evidence(
            &review, &identity, "alice", "ship it", true, &snapshot, 5_000
        ),
        Err(ProofError::OverrideNotAllowed { .. })
    ));
    let evidence = manual_evidence(
        &review,
        &identity,
        "alice",
        "Read the diff; the redirect is right.",
        false,
        &snapshot,
        ledger.tick(),
    )
    .unwrap();
    let at_millis = evidence.recorded_at_millis;
    ledger.commit(MissionEvent::EvidenceRecorded {
        evidence,
        at_millis,
    });

    let verdict = ledger.verify_now(&repository.root());
    assert!(
        matches!(verdict, Verdict::Verified { .. }),
        "{:?}",
        reasons(&verdict)
    );
    let head = ledger.head();
    let at = ledger.tick();
    let sealed = readiness_outcome(&ledger.mission, &verdict, &head, at)
        .unwrap()
        .unwrap();
    ledger.commit(sealed);
    assert_eq!(ledger.mission.status, MissionStatus::ReadyToClose);
    let ready = proof_receipt(&ledger.mission).unwrap();
    assert_eq!(ready.decision, ProofClosureDecisionV1::ReadyToClose);
    assert_eq!(ready.head_revision, repository.head());
    assert_eq!(
        ready
            .fresh_evidence
            .iter()
            .map(|entry| entry.check_id.as_str())
            .collect::<Vec<_>>(),
        ["unit", "review"]
    );

    // mission.close: the command checks run again on the unchanged workspace.
    ledger.collect_command_evidence();
    let verdict = ledger.verify_now(&repository.root());
    let head = ledger.head();
    let at = ledger.tick();
    let event = close_outcome(&ledger.mission, &verdict, &head, at).unwrap();
    assert!(
        matches!(&event, MissionEvent::MissionSealed { .. }),
        "{event:?}"
    );
    ledger.commit(event);
    assert_eq!(ledger.mission.status, MissionStatus::Archived);
    let archive = proof_receipt(&ledger.mission).unwrap();
    assert_eq!(archive.decision, ProofClosureDecisionV1::Archived);
    assert_eq!(archive.subject_digest, ready.subject_digest);
    assert!(archive.authority_sequence > ready.authority_sequence);
    assert!(archive.verified_at_millis >= ready.verified_at_millis);
    assert_ne!(archive.seal_digest, ready.seal_digest);
}

#[test]
fn a_failing_check_keeps_the_mission_in_review_with_a_reason() {
    let repository = TestRepository::new();
    repository.write(
        "src/lib.rs",
        "pub fn login() -> &'static str { \"broken\" }\n",
    );
    let mut ledger = command_only_ledger(&repository);
    let verdict = make_ready(&mut ledger, &repository);
    assert_eq!(ledger.mission.status, MissionStatus::ReviewRequired);
    assert_eq!(check_status(&verdict, "unit"), MissionCheckStatusV1::Failed);
    let reasons = reasons(&verdict);
    assert!(
        reasons
            .iter()
            .any(|reason| reason.starts_with("required check unit is failed")),
        "{reasons:?}"
    );
    assert!(matches!(
        proof_receipt(&ledger.mission),
        Err(ProofError::ProofNotReady { .. })
    ));
}

#[test]
fn a_missing_required_artifact_fails_the_check() {
    let repository = TestRepository::new();
    let mut ledger = command_only_ledger(&repository);
    // The check's program exists but writes no artifact.
    let plan = ledger.mission.plan.as_mut().unwrap();
    if let nagi_mission::model::DeclarationKind::Command { args, .. } =
        &mut plan.declarations[0].kind
    {
        args[1] = "true".into();
    }
    ledger.collect_command_evidence();
    let evidence = &ledger.mission.evidence["unit"];
    assert_eq!(
        evidence.assessment,
        nagi_schema::mission::MissionEvidenceAssessmentV1::Failed
    );
    assert!(
        evidence
            .detail
            .as_deref()
            .unwrap()
            .contains("required artifact `report.json` missing"),
        "{:?}",
        evidence.detail
    );
    assert_eq!(evidence.record_digest, None);
}

#[test]
fn artifacts_are_hashed_from_their_bytes_and_a_changed_one_fails_the_proof() {
    let repository = TestRepository::new();
    // A committed report the check rewrites unchanged: the scan sees a clean tracked file.
    repository.write("report.json", "{\"ok\":true}");
    repository.git(&["add", "report.json"]);
    repository.git(&["commit", "-q", "-m", "report"]);
    let mut ledger = command_only_ledger(&repository);
    ledger.collect_command_evidence();
    let artifact = &ledger.mission.evidence["unit"].artifacts[0];
    assert_eq!(
        artifact.content_digest,
        nagi_mission::digest::sha256_hex(b"{\"ok\":true}")
    );
    assert_eq!(artifact.media_type, "application/json");
    assert!(matches!(
        ledger.verify_now(&repository.root()),
        Verdict::Verified { .. }
    ));

    repository.write("report.json", "{\"ok\":false}");
    let verdict = ledger.verify_now(&repository.root());
    assert_eq!(
        check_status(&verdict, "unit"),
        MissionCheckStatusV1::ArtifactMissingOrChanged
    );
    std::fs::remove_file(repository.path("report.json")).unwrap();
    let verdict = ledger.verify_now(&repository.root());
    assert_eq!(
        check_status(&verdict, "unit"),
        MissionCheckStatusV1::ArtifactMissingOrChanged
    );
}

#[test]
fn relevant_edits_staging_deletion_and_mode_changes_make_evidence_stale() {
    type Change = fn(&TestRepository);
    let changes: [(&str, Change); 4] = [
        ("edited", |repository| {
            repository.write(
                "src/lib.rs",
                "pub fn login() -> &'static str { \"ok\" } // edited\n",
            )
        }),
        ("staged", |repository| {
            repository.git(&["add", "src/lib.rs"]);
        }),
        ("deleted", |repository| {
            std::fs::remove_file(repository.path("src/lib.rs")).unwrap()
        }),
        ("mode", |repository| {
            std::fs::set_permissions(
                repository.path("src/lib.rs"),
                std::fs::Permissions::from_mode(0o755),
            )
            .unwrap()
        }),
    ];
    for (what, change) in changes {
        let repository = TestRepository::new();
        // An unstaged edit first, so that staging it changes only its disposition.
        repository.write(
            "src/lib.rs",
            "pub fn login() -> &'static str { \"ok\" } // wip\n",
        );
        let mut ledger = command_only_ledger(&repository);
        ledger.collect_command_evidence();
        assert_eq!(
            check_status(&ledger.verify_now(&repository.root()), "unit"),
            MissionCheckStatusV1::Passed,
            "{what}"
        );
        change(&repository);
        let verdict = ledger.verify_now(&repository.root());
        assert_eq!(
            check_status(&verdict, "unit"),
            MissionCheckStatusV1::Stale,
            "{what}"
        );
        assert!(
            reasons(&verdict)
                .iter()
                .any(|reason| reason.starts_with("required check unit is stale")),
            "{what}"
        );
    }
}

#[test]
fn irrelevant_changes_keep_command_evidence_fresh_but_close_refuses_to_archive() {
    let repository = TestRepository::new();
    let mut ledger = command_only_ledger(&repository);
    make_ready(&mut ledger, &repository);
    assert_eq!(ledger.mission.status, MissionStatus::ReadyToClose);

    repository.write("docs/guide.md", "# Guide, edited after readiness\n");
    repository.write("notes.txt", "untracked and irrelevant\n");
    let before_close = ledger.verify_now(&repository.root());
    assert_eq!(
        check_status(&before_close, "unit"),
        MissionCheckStatusV1::Passed,
        "evidence from before the change is still fresh"
    );
    ledger.collect_command_evidence();
    let verdict = ledger.verify_now(&repository.root());
    assert_eq!(
        check_status(&verdict, "unit"),
        MissionCheckStatusV1::Passed,
        "irrelevant files keep the check fresh"
    );
    assert!(matches!(verdict, Verdict::Verified { .. }));
    let head = ledger.head();
    let at = ledger.tick();
    let event = close_outcome(&ledger.mission, &verdict, &head, at).unwrap();
    let MissionEvent::StatusChanged {
        status: MissionStatus::Blocked,
        reason: Some(reason),
        ..
    } = &event
    else {
        panic!("expected blocked, got {event:?}")
    };
    assert!(reason.contains("workspace changed"), "{reason}");
    ledger.commit(event);
    assert_eq!(ledger.mission.status, MissionStatus::Blocked);
}

#[test]
fn an_override_counts_only_where_the_plan_allows_it() {
    let repository = TestRepository::new();
    let mut ledger = Ledger::start(
        &repository,
        "Fix the login redirect",
        &CRITERIA,
        vec![unit_check(), review_check(true)],
    );
    ledger.collect_command_evidence();
    let identity = current_identity(&ledger.mission).unwrap();
    let review = ledger.mission.declaration("review").unwrap().clone();
    let evidence = manual_evidence(
        &review,
        &identity,
        "alice",
        "flaky on CI, accepted",
        true,
        &repository.scan(),
        ledger.tick(),
    )
    .unwrap();
    let at_millis = evidence.recorded_at_millis;
    ledger.commit(MissionEvent::EvidenceRecorded {
        evidence,
        at_millis,
    });
    let verdict = ledger.verify_now(&repository.root());
    assert!(
        matches!(verdict, Verdict::Verified { .. }),
        "{:?}",
        reasons(&verdict)
    );
}

// ---------------------------------------------------------------------------------------
// Handoff
// ---------------------------------------------------------------------------------------

fn preview(
    ledger: &Ledger,
    to: MissionProvider,
    generated_at_millis: u64,
) -> MissionHandoffArtifactV1 {
    let run = ledger.mission.run.as_ref().unwrap();
    let (_, diff) = handoff_diff(
        std::path::Path::new(&run.worktree_path),
        &run.base_revision,
        &ScanConfig::default(),
    )
    .unwrap();
    build_handoff_artifact(
        &ledger.mission,
        to,
        generated_at_millis,
        &diff,
        &HandoffArtifactConfig::default(),
    )
    .unwrap()
}

#[test]
fn the_artifact_digest_follows_every_input_and_is_stable_otherwise() {
    let repository = TestRepository::new();
    let mut ledger = command_only_ledger(&repository);
    let first = preview(&ledger, MissionProvider::ClaudeCode, 7_000);
    assert_eq!(
        preview(&ledger, MissionProvider::ClaudeCode, 7_000),
        first,
        "a rescan of an unchanged workspace gives the same artifact"
    );
    assert!(!first.diff.dirty);
    assert_eq!(
        first.suggested_run_id,
        suggested_handoff_run_id(
            &ledger.mission.mission_id,
            ledger.mission.updated_at_millis,
            "claude",
            &first.diff.workspace_digest
        )
    );

    let mut digests = vec![first.artifact_sha256.clone()];
    let mut expect_new = |artifact: MissionHandoffArtifactV1, what: &str| {
        assert!(
            !digests.contains(&artifact.artifact_sha256),
            "{what} did not change the digest"
        );
        digests.push(artifact.artifact_sha256);
    };
    expect_new(
        preview(&ledger, MissionProvider::OpenCode, 7_000),
        "another target",
    );
    repository.write(
        "src/lib.rs",
        "pub fn login() -> &'static str { \"ok\" } // edited\n",
    );
    let edited = preview(&ledger, MissionProvider::ClaudeCode, 7_000);
    assert_eq!(edited.diff.changed_paths, ["src/lib.rs"]);
    assert!(edited.diff.dirty && edited.diff.stat.contains("src/lib.rs"));
    expect_new(edited, "an edited file");
    repository.write("todo.txt", "new untracked file\n");
    let untracked = preview(&ledger, MissionProvider::ClaudeCode, 7_000);
    assert!(
        untracked.diff.stat.ends_with("1 untracked path(s)"),
        "{}",
        untracked.diff.stat
    );
    expect_new(untracked, "a new untracked file");

    // The artifact the check writes, ahead of time, so that running it changes no file.
    repository.write("report.json", "{\"ok\":true}");
    let before_checks = preview(&ledger, MissionProvider::ClaudeCode, 7_000);
    expect_new(before_checks.clone(), "the report file");
    ledger.collect_command_evidence();
    let after_checks = preview(&ledger, MissionProvider::ClaudeCode, 7_000);
    assert_eq!(
        after_checks.diff, before_checks.diff,
        "the check changed no file"
    );
    assert_eq!(after_checks.checks[0].status, MissionCheckStatusV1::Passed);
    expect_new(after_checks, "a check status change");
    let before_consent = preview(&ledger, MissionProvider::ClaudeCode, 7_000);
    let at_millis = ledger.tick();
    ledger.commit(MissionEvent::ConsentRecorded {
        consent_id: "c1".into(),
        subject: "handoff_start".into(),
        decision: "approve".into(),
        at_millis,
    });
    // The consent to a handoff is recorded before the handoff starts: it must not change
    // the artifact it approves (it once moved `updated_at_millis`, and with it the
    // suggested run id, so every cockpit handoff was refused as changed).
    assert_eq!(
        preview(&ledger, MissionProvider::ClaudeCode, 7_000).artifact_sha256,
        before_consent.artifact_sha256,
        "a recorded consent changed the artifact"
    );
    let before_decision = preview(&ledger, MissionProvider::ClaudeCode, 7_000);
    let attention = open_and_answer(&mut ledger);
    let decided = preview(&ledger, MissionProvider::ClaudeCode, 7_000);
    assert_eq!(decided.decisions.len(), 1);
    assert_eq!(decided.decisions[0].attention_id, attention);
    assert_ne!(
        decided.artifact_sha256, before_decision.artifact_sha256,
        "a new attention decision"
    );
}

/// Opens an attention item and records an acknowledged answer to it.
fn open_and_answer(ledger: &mut Ledger) -> String {
    use nagi_mission::model::{
        AttemptState, Attention, AttentionLifecycle, RequestClass, ResponseAttempt,
    };
    use nagi_schema::attention::{
        AttentionDecisionV1, AttentionKindV1, AttentionRiskV1, AttentionSourceV1,
    };
    let attention_id = "attention:one".to_string();
    let at_millis = ledger.tick();
    let attention = Attention {
        attention_id: attention_id.clone(),
        run_id: "run-1".into(),
        kind: AttentionKindV1::PermissionRequest,
        risk: AttentionRiskV1::High,
        requested_action: "cargo test".into(),
        scope: "cargo test".into(),
        questions: vec![],
        request_class: RequestClass::CommandApproval,
        session_approval_available: false,
        provider_request_key: Some("number:1".into()),
        source: AttentionSourceV1::ProviderApi,
        lifecycle: AttentionLifecycle::Open,
        attempts: vec![],
        closed_reason: None,
        closed_by: None,
        created_at_millis: at_millis,
        updated_at_millis: at_millis,
    };
    ledger.commit(MissionEvent::AttentionOpened {
        attention,
        at_millis,
    });
    let at_millis = ledger.tick();
    let attempt = ResponseAttempt {
        attempt: 1,
        decision: AttentionDecisionV1::ApproveOnce,
        actor: "local-user".into(),
        state: AttemptState::Requested,
        requested_at_millis: at_millis,
        updated_at_millis: at_millis,
    };
    ledger.commit(MissionEvent::ResponseRequested {
        attention_id: attention_id.clone(),
        attempt,
        at_millis,
    });
    let at_millis = ledger.tick();
    ledger.commit(MissionEvent::ResponseSettled {
        attention_id: attention_id.clone(),
        attempt: 1,
        state: AttemptState::Acknowledged,
        at_millis,
    });
    attention_id
}

#[test]
fn planted_secrets_never_reach_the_artifact_or_the_prompt() {
    let secrets = [
        "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "AKIAIOSFODNN7EXAMPLE",
        "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM",
        "hunter2-correct-horse",
        "s3cr3tpass",
    ];
    let objective = format!(
        "Fix login; the staging key is {}\npassword={}\n-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\nmirror: https://deploy:{}@git.example.com/app",
        secrets[0], secrets[4], secrets[3], secrets[5]
    );
    let criterion = format!("Works with the token {}", secrets[1]);
    let repository = TestRepository::new();
    // Git shortens this name in its stat to `...<end of the token>_with_a_long…`, cutting
    // the token below the length any redaction rule recognises.
    repository.write(
        &format!(
            "docs/{}_with_a_long_descriptive_suffix_for_the_name.txt",
            secrets[1]
        ),
        "one\n",
    );
    repository.write(&format!("config/{}.env", secrets[2]), "two\n");
    repository.git(&["add", "-A"]);
    repository.git(&["commit", "-q", "-m", "files named after secrets"]);
    repository.write(&format!("config/{}.env", secrets[2]), "two, edited\n");
    // The run's base is the commit before, so both files differ from it.
    let mut ledger = Ledger::start(
        &repository,
        &objective,
        &[&criterion, CRITERIA[1]],
        vec![unit_check()],
    );
    ledger.mission.run.as_mut().unwrap().base_revision = repository.git(&["rev-parse", "HEAD~1"]);

    let artifact = preview(&ledger, MissionProvider::ClaudeCode, 9_000);
    assert_eq!(
        artifact.diff.changed_paths.len(),
        2,
        "{:?}",
        artifact.diff.changed_paths
    );
    assert!(
        artifact.diff.stat.contains("[REDACTED]"),
        "{}",
        artifact.diff.stat
    );
    let serialised = serde_json::to_string(&artifact).unwrap();
    let prompt = handoff_prompt(&artifact);
    for secret in secrets {
        assert!(
            !serialised.contains(secret),
            "{secret} leaked into the artifact: {serialised}"
        );
        assert!(!prompt.contains(secret), "{secret} leaked into the prompt");
    }
    // No tail of the GitHub token survives a shortened stat name either.
    assert!(
        !serialised.contains(&secrets[1][24..]),
        "{}",
        artifact.diff.stat
    );
    assert!(
        artifact.diff.stat.contains("docs/[REDACTED].txt | 1 +"),
        "{}",
        artifact.diff.stat
    );
    assert!(prompt.contains("Fix login; the staging key is [REDACTED]"));
}

#[test]
fn a_handoff_start_continues_the_run_only_with_the_inspected_artifact() {
    let repository = TestRepository::new();
    let mut ledger = command_only_ledger(&repository);
    make_ready(&mut ledger, &repository);
    assert_eq!(ledger.mission.status, MissionStatus::ReadyToClose);

    let inspected = preview(&ledger, MissionProvider::ClaudeCode, 8_000);
    let supplied = inspected.artifact_sha256.clone();
    let precheck = precheck_handoff_start(
        &ledger.mission,
        MissionProvider::ClaudeCode,
        &supplied,
        HandoffAuthority::PublicSocket,
        &NoLiveRuns,
    );
    assert_eq!(precheck, Ok(HandoffStartPrecheck::Rebuild));

    // The workspace drifts: the rebuilt artifact no longer matches.
    repository.write(
        "src/lib.rs",
        "pub fn login() -> &'static str { \"ok\" } // drift\n",
    );
    let drifted = preview(&ledger, MissionProvider::ClaudeCode, 8_000);
    assert!(matches!(
        confirm_rebuilt_artifact(&drifted, &supplied),
        Err(HandoffError::ArtifactChanged { .. })
    ));

    // Back to the inspected state: the same generated_at rebuilds the same artifact.
    repository.write("src/lib.rs", "pub fn login() -> &'static str { \"ok\" }\n");
    let rebuilt = preview(&ledger, MissionProvider::ClaudeCode, 8_000);
    assert_eq!(confirm_rebuilt_artifact(&rebuilt, &supplied), Ok(()));
    let at = ledger.tick();
    let event = decide_run_continued(&ledger.mission, &rebuilt, at).unwrap();
    ledger.commit(event);
    let mission = &ledger.mission;
    assert_eq!(mission.status, MissionStatus::Preparing);
    let run = mission.run.as_ref().unwrap();
    assert_eq!(run.run_id, inspected.suggested_run_id);
    assert_eq!(run.handoff_from_run_id.as_deref(), Some("run-1"));
    assert_eq!(run.base_revision, mission.run_history[0].base_revision);
    assert!(matches!(
        proof_receipt(mission),
        Err(ProofError::ProofNotReady { .. })
    ));
    assert!(
        mission.evidence.values().all(|evidence| evidence.assessment
            == nagi_schema::mission::MissionEvidenceAssessmentV1::Stale)
    );

    // Evidence of the source run never proves the continuation.
    let at_millis = ledger.tick();
    ledger.commit(MissionEvent::StatusChanged {
        status: MissionStatus::ReviewRequired,
        reason: None,
        run_outcome: None,
        at_millis,
    });
    let mut continuation = ledger;
    continuation.mission.run.as_mut().unwrap().run_id =
        nagi_schema::ids::RunId::parse(&inspected.suggested_run_id).unwrap();
    let verdict = continuation.verify_now(&repository.root());
    assert_eq!(
        check_status(&verdict, "unit"),
        MissionCheckStatusV1::IdentityMismatch
    );
}
