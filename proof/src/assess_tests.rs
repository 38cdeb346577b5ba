use nagi_schema::mission::{MissionCheckStatusV1, MissionEvidenceKindV1};

use super::*;
use crate::binding::identity_digest;
use crate::test_support::*;
use nagi_exec::workspace::{Disposition, Fingerprint, WorkspaceEntry};

fn status_of(
    mission: &Mission,
    entries: Vec<WorkspaceEntry>,
    check_id: &str,
) -> (MissionCheckStatusV1, String) {
    let workspace = proof_workspace(mission, snapshot(entries));
    let identity_digest = identity_digest(&identity(mission));
    let assessed = assess_plan(mission, &identity_digest, &workspace);
    let check = assessed
        .checks
        .iter()
        .find(|check| check.check_id == check_id)
        .unwrap();
    assert_eq!(
        check.is_passed(),
        check.status == MissionCheckStatusV1::Passed
    );
    (check.status, check.reason.clone())
}

fn with_replaced(path: &str, entry: Option<WorkspaceEntry>) -> Vec<WorkspaceEntry> {
    let mut entries: Vec<WorkspaceEntry> = base_entries()
        .into_iter()
        .filter(|existing| existing.path != path)
        .collect();
    entries.extend(entry);
    entries
}

#[test]
fn fresh_evidence_passes_in_plan_order() {
    let mission = mission_with_passing_evidence(base_entries());
    let workspace = proof_workspace(&mission, snapshot(base_entries()));
    let assessed = assess_plan(&mission, &identity_digest(&identity(&mission)), &workspace);
    let ids: Vec<&str> = assessed
        .checks
        .iter()
        .map(|check| check.check_id.as_str())
        .collect();
    assert_eq!(ids, ["unit", "review", "lint"]);
    assert_eq!(assessed.checks[0].status, MissionCheckStatusV1::Passed);
    assert_eq!(assessed.checks[1].status, MissionCheckStatusV1::Passed);
    assert_eq!(assessed.checks[2].status, MissionCheckStatusV1::Missing);
    let wire = assessed.checks[0].passed_evidence().unwrap().to_wire();
    assert_eq!(wire.check_id, "unit");
    assert_eq!(wire.artifacts.len(), 1);
    assert_eq!(
        Some(wire.evidence_digest.as_str()),
        mission.evidence["unit"].record_digest.as_deref()
    );
}

#[test]
fn checks_without_evidence_are_missing() {
    let mission = mission();
    assert_eq!(
        status_of(&mission, base_entries(), "unit").0,
        MissionCheckStatusV1::Missing
    );
    assert_eq!(
        status_of(&mission, base_entries(), "review").0,
        MissionCheckStatusV1::ManualMissing
    );
}

#[test]
fn relevant_changes_make_command_evidence_stale() {
    let mission = mission_with_passing_evidence(base_entries());
    let edited = with_replaced(
        "src/lib.rs",
        Some(file(
            "src/lib.rs",
            Disposition::Unstaged,
            "pub fn lib() { changed() }",
        )),
    );
    let staged = with_replaced(
        "src/lib.rs",
        Some(file("src/lib.rs", Disposition::Staged, "pub fn lib() {}")),
    );
    let deleted = with_replaced(
        "src/lib.rs",
        Some(WorkspaceEntry {
            path: "src/lib.rs".into(),
            disposition: Disposition::Unstaged,
            fingerprint: Fingerprint::Missing,
        }),
    );
    let mode_changed = with_replaced(
        "src/lib.rs",
        Some(WorkspaceEntry {
            path: "src/lib.rs".into(),
            disposition: Disposition::Tracked,
            fingerprint: Fingerprint::File {
                sha256: nagi_mission::digest::sha256_hex(b"pub fn lib() {}"),
                executable: true,
                size: 15,
            },
        }),
    );
    let added = {
        let mut entries = base_entries();
        entries.push(file("src/new.rs", Disposition::Untracked, "fn new() {}"));
        entries
    };
    for (what, entries) in [
        ("edited", edited),
        ("staged", staged),
        ("deleted", deleted),
        ("mode", mode_changed),
        ("added", added),
    ] {
        let (status, reason) = status_of(&mission, entries, "unit");
        assert_eq!(status, MissionCheckStatusV1::Stale, "{what}");
        assert!(reason.contains("relevant"), "{reason}");
    }
}

#[test]
fn irrelevant_changes_keep_command_evidence_fresh_but_manual_evidence_goes_stale() {
    let mission = mission_with_passing_evidence(base_entries());
    let mut entries = with_replaced(
        "docs/guide.md",
        Some(file(
            "docs/guide.md",
            Disposition::Unstaged,
            "# Guide, edited",
        )),
    );
    entries.push(file(
        "src2/lib.rs",
        Disposition::Untracked,
        "component-wise, not a prefix match",
    ));
    assert_eq!(
        status_of(&mission, entries.clone(), "unit").0,
        MissionCheckStatusV1::Passed
    );
    let (status, reason) = status_of(&mission, entries, "review");
    assert_eq!(status, MissionCheckStatusV1::Stale);
    assert!(reason.contains("alice"));
}

#[test]
fn a_changed_or_missing_artifact_outside_the_relevant_paths_is_reported() {
    let mission = mission_with_passing_evidence(base_entries());
    let changed = with_replaced(
        "report.json",
        Some(file(
            "report.json",
            Disposition::Untracked,
            "{\"ok\":false}",
        )),
    );
    let (status, reason) = status_of(&mission, changed, "unit");
    assert_eq!(status, MissionCheckStatusV1::ArtifactMissingOrChanged);
    assert!(reason.contains("`report.json` changed"), "{reason}");
    let (status, reason) = status_of(&mission, with_replaced("report.json", None), "unit");
    assert_eq!(status, MissionCheckStatusV1::ArtifactMissingOrChanged);
    assert!(reason.contains("`report.json` is missing now"), "{reason}");
}

#[test]
fn a_failed_command_stays_failed_with_its_detail() {
    let mission = mission();
    let identity = identity(&mission);
    let current = snapshot(base_entries());
    let evidence = crate::evidence::command_evidence(
        &crate::evidence::CommandEvidenceInput {
            declaration: declaration(&mission, "unit"),
            identity: &identity,
            before: &current,
            after: &current,
            recorded_at_millis: 200,
        },
        &outcome(101),
    )
    .unwrap();
    let mission = record(mission, evidence);
    assert_eq!(
        status_of(&mission, base_entries(), "unit"),
        (
            MissionCheckStatusV1::Failed,
            "the command exited with code 101".into()
        )
    );
}

#[test]
fn provider_claims_never_pass_even_with_a_well_formed_record() {
    let mut mission = mission_with_passing_evidence(base_entries());
    let evidence = mission.evidence.get_mut("unit").unwrap();
    evidence.kind = MissionEvidenceKindV1::ProviderClaim;
    evidence.record_digest = crate::evidence::evidence_record_digest(evidence);
    assert_eq!(
        status_of(&mission, base_entries(), "unit").0,
        MissionCheckStatusV1::ProviderClaimOnly
    );
}

#[test]
fn evidence_of_another_declaration_run_or_content_does_not_count() {
    let passing = mission_with_passing_evidence(base_entries());

    let mut other_declaration = passing.clone();
    let evidence = other_declaration.evidence.get_mut("unit").unwrap();
    evidence.declaration_digest = "d".repeat(64);
    evidence.record_digest = crate::evidence::evidence_record_digest(evidence);
    assert_eq!(
        status_of(&other_declaration, base_entries(), "unit").0,
        MissionCheckStatusV1::DeclarationMismatch
    );

    let mut tampered = passing.clone();
    tampered.evidence.get_mut("unit").unwrap().exit_code = Some(7);
    let (status, reason) = status_of(&tampered, base_entries(), "unit");
    assert_eq!(status, MissionCheckStatusV1::DeclarationMismatch);
    assert!(reason.contains("digest"));

    let mut wrong_kind = passing.clone();
    let manual = wrong_kind.evidence["review"].clone();
    wrong_kind.evidence.insert(
        "unit".into(),
        nagi_mission::model::Evidence {
            check_id: "unit".into(),
            ..manual
        },
    );
    assert_eq!(
        status_of(&wrong_kind, base_entries(), "unit").0,
        MissionCheckStatusV1::DeclarationMismatch
    );

    let mut other_run = passing;
    other_run.run.as_mut().unwrap().run_id = nagi_schema::ids::RunId::parse("run-2").unwrap();
    assert_eq!(
        status_of(&other_run, base_entries(), "unit").0,
        MissionCheckStatusV1::IdentityMismatch
    );
    assert_eq!(
        status_of(&other_run, base_entries(), "review").0,
        MissionCheckStatusV1::IdentityMismatch
    );
}

#[test]
fn manual_evidence_of_an_unlisted_reviewer_or_a_forbidden_override_is_not_authorised() {
    for (reviewer, is_override) in [("mallory", false), ("alice", true)] {
        let mut mission = mission_with_passing_evidence(base_entries());
        let evidence = mission.evidence.get_mut("review").unwrap();
        evidence.source = Some(nagi_mission::model::EvidenceSource::Manual {
            reviewer: reviewer.into(),
            reason: "forged".into(),
            is_override,
            recorded_at_millis: 210,
        });
        evidence.record_digest = crate::evidence::evidence_record_digest(evidence);
        assert_eq!(
            status_of(&mission, base_entries(), "review").0,
            MissionCheckStatusV1::ManualNotAuthorized,
            "{reviewer}"
        );
    }
}

#[test]
fn duplicate_declarations_are_reported_and_skipped() {
    let mut mission = mission_with_passing_evidence(base_entries());
    let plan = mission.plan.as_mut().unwrap();
    let copy = plan.declarations[0].clone();
    plan.declarations.push(copy);
    let workspace = proof_workspace(&mission, snapshot(base_entries()));
    let assessed = assess_plan(&mission, &identity_digest(&identity(&mission)), &workspace);
    assert_eq!(assessed.checks.len(), 3);
    assert_eq!(assessed.duplicate_check_ids, ["unit"]);
}
