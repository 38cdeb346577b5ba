use nagi_schema::mission::MissionStatus;
use nagi_schema::proof::{ProofClosureDecisionV1, ProofEvidenceSourceV1};

use super::*;
use crate::test_support::*;

#[test]
fn passing_required_checks_mint_a_ready_receipt_with_contract_digests() {
    let mission = mission_with_passing_evidence(base_entries());
    let receipt = verified_receipt(verify_at(&mission, base_entries(), 9, 500));
    assert_eq!(receipt.schema_version, 1);
    assert_eq!(receipt.decision, ProofClosureDecisionV1::ReadyToClose);
    assert_eq!(receipt.identity.run_id, "run-1");
    assert_eq!(receipt.head_revision, "b".repeat(40));
    assert_eq!(receipt.workspace_digest, snapshot(base_entries()).digest);
    assert_eq!(
        receipt.attention_digest,
        "3fee3088a6bac012817a1e32b01acbc8895f78c403506121151fbaca0c88dbab"
    );
    let criterion_ids: Vec<&str> = mission
        .criteria
        .iter()
        .map(|criterion| criterion.criterion_id.as_str())
        .collect();
    assert_eq!(
        receipt.criteria_digest,
        nagi_mission::digest::criteria_digest(&criterion_ids)
    );
    let declaration_digests: Vec<&str> = mission
        .plan
        .as_ref()
        .unwrap()
        .declarations
        .iter()
        .map(|declaration| declaration.digest.as_str())
        .collect();
    assert_eq!(
        receipt.checkset_digest,
        nagi_mission::digest::checkset_digest(&declaration_digests)
    );
    assert_eq!(receipt.authority_sequence, 9);
    assert_eq!(receipt.authority_head_digest, head(9).digest());
    assert_eq!(receipt.lease_digest, lease(&mission).digest());
    assert_eq!(receipt.verified_at_millis, 500);
    let ids: Vec<&str> = receipt
        .fresh_evidence
        .iter()
        .map(|entry| entry.check_id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["unit", "review"],
        "plan order; the optional lint check has no evidence"
    );
    assert!(matches!(
        receipt.fresh_evidence[0].source,
        ProofEvidenceSourceV1::Command { exit_code: 0, .. }
    ));
    assert!(
        matches!(&receipt.fresh_evidence[1].source, ProofEvidenceSourceV1::Manual { reviewer, .. } if reviewer == "alice")
    );

    let later = verified_receipt(verify_at(&mission, base_entries(), 10, 500));
    assert_eq!(
        later.subject_digest, receipt.subject_digest,
        "the subject is what was proven"
    );
    assert_ne!(
        later.seal_digest, receipt.seal_digest,
        "the seal is this exact verification"
    );
}

#[test]
fn a_ready_to_close_mission_verifies_for_archival() {
    let mut mission = mission_with_passing_evidence(base_entries());
    mission.status = MissionStatus::ReadyToClose;
    assert_eq!(
        verified_receipt(verify_at(&mission, base_entries(), 9, 500)).decision,
        ProofClosureDecisionV1::Archived
    );
    mission.status = MissionStatus::Active;
    let workspace = proof_workspace(&mission, snapshot(base_entries()));
    let error = verify(&VerificationInput {
        mission: &mission,
        workspace: &workspace,
        authority_head: &head(9),
        lease: &lease(&mission),
        verified_at_millis: 500,
    })
    .unwrap_err();
    assert!(matches!(error, ProofError::StatusNotSealable { .. }));
}

#[test]
fn a_failing_required_check_keeps_review_required_and_names_it() {
    let mission = mission_with_passing_evidence(base_entries());
    let edited = vec![
        file(
            "src/lib.rs",
            nagi_exec::workspace::Disposition::Unstaged,
            "pub fn lib() { broken }",
        ),
        file(
            "docs/guide.md",
            nagi_exec::workspace::Disposition::Tracked,
            "# Guide",
        ),
        file(
            "report.json",
            nagi_exec::workspace::Disposition::Untracked,
            "{\"ok\":true}",
        ),
    ];
    let reasons = review_reasons(verify_at(&mission, edited, 9, 500));
    assert!(
        reasons
            .iter()
            .any(|reason| reason.starts_with("required check unit is stale")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|reason| reason.starts_with("required check review is stale")),
        "{reasons:?}"
    );
}

#[test]
fn optional_checks_never_block_and_missing_required_ones_do() {
    let mission = mission();
    let reasons = review_reasons(verify_at(&mission, base_entries(), 9, 500));
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(reasons[0].contains("unit is missing"));
    assert!(reasons[1].contains("review is waiting for a reviewer"));
}

#[test]
fn unresolved_attention_blocks_verification() {
    let mission = open_attention(
        mission_with_passing_evidence(base_entries()),
        "attention:1",
        "run `rm -rf target`\nin the worktree",
    );
    let reasons = review_reasons(verify_at(&mission, base_entries(), 9, 500));
    assert_eq!(
        reasons,
        ["attention item attention:1 is unresolved: run `rm -rf target` in the worktree"]
    );
}

#[test]
fn the_authority_and_lease_must_bind_the_run() {
    let mission = mission_with_passing_evidence(base_entries());
    let reasons = review_reasons(verify_at(&mission, base_entries(), 0, 500));
    assert!(reasons[0].contains("no authority head"), "{reasons:?}");

    let workspace = proof_workspace(&mission, snapshot(base_entries()));
    let foreign = crate::WorktreeLease {
        run_id: "run-0".into(),
        ..lease(&mission)
    };
    let verdict = verify(&VerificationInput {
        mission: &mission,
        workspace: &workspace,
        authority_head: &head(9),
        lease: &foreign,
        verified_at_millis: 500,
    })
    .unwrap();
    assert!(review_reasons(verdict)[0].contains("worktree lease belongs to mission m1 run run-0"));
}

#[test]
fn an_altered_plan_never_verifies() {
    let mut mission = mission_with_passing_evidence(base_entries());
    let unit = &mut mission.plan.as_mut().unwrap().declarations[0];
    if let nagi_mission::model::DeclarationKind::Command { program, .. } = &mut unit.kind {
        *program = "true".into();
    }
    let reasons = review_reasons(verify_at(&mission, base_entries(), 9, 500));
    assert!(
        reasons
            .iter()
            .any(|reason| reason.contains("check unit no longer matches its declaration digest")),
        "{reasons:?}"
    );

    let mut uncovered = mission_with_passing_evidence(base_entries());
    uncovered.plan.as_mut().unwrap().declarations[1].required = false;
    let reasons = review_reasons(verify_at(&uncovered, base_entries(), 9, 500));
    assert!(
        reasons.iter().any(|reason| reason.contains("criterion 2")),
        "{reasons:?}"
    );
}
