use nagi_schema::mission::MissionStatus;

use super::*;
use crate::seal::{seal_archive, seal_ready};
use crate::test_support::*;
use nagi_mission::apply::apply;

fn ready_mission() -> Mission {
    let mission = mission_with_passing_evidence(base_entries());
    let receipt = verified_receipt(verify_at(&mission, base_entries(), 9, 500));
    apply(
        Some(mission.clone()),
        &seal_ready(&mission, &receipt, &head(9), 510).unwrap(),
    )
}

#[test]
fn the_ready_and_archive_receipts_are_returned_when_they_re_derive() {
    let ready = ready_mission();
    let receipt = proof_receipt(&ready).unwrap();
    assert_eq!(&receipt, ready.ready_receipt.as_ref().unwrap());

    let archive = verified_receipt(verify_at(&ready, base_entries(), 12, 600));
    let archived = apply(
        Some(ready.clone()),
        &seal_archive(&ready, &archive, &head(12), 610).unwrap(),
    );
    assert_eq!(archived.status, MissionStatus::Archived);
    assert_eq!(proof_receipt(&archived).unwrap(), archive);
}

#[test]
fn missions_without_a_sealed_proof_are_not_ready() {
    let mission = mission_with_passing_evidence(base_entries());
    assert!(matches!(
        proof_receipt(&mission),
        Err(ProofError::ProofNotReady { .. })
    ));
    let mut no_receipt = ready_mission();
    no_receipt.ready_receipt = None;
    assert!(matches!(
        proof_receipt(&no_receipt),
        Err(ProofError::ProofNotReady { .. })
    ));
}

#[test]
fn any_drift_between_receipt_and_stored_state_is_a_binding_mismatch() {
    let ready = ready_mission();
    type Drift = Box<dyn Fn(&mut Mission)>;
    let cases: Vec<(&str, Drift)> = vec![
        (
            "evidence re-recorded",
            Box::new(|mission| mission.evidence.get_mut("unit").unwrap().recorded_at_millis += 1),
        ),
        (
            "evidence went stale",
            Box::new(|mission| {
                mission.evidence.get_mut("review").unwrap().assessment =
                    nagi_schema::mission::MissionEvidenceAssessmentV1::Stale
            }),
        ),
        (
            "evidence removed",
            Box::new(|mission| {
                mission.evidence.remove("review");
            }),
        ),
        (
            "another run",
            Box::new(|mission| {
                mission.run.as_mut().unwrap().run_id =
                    nagi_schema::ids::RunId::parse("run-2").unwrap()
            }),
        ),
        (
            "seal edited",
            Box::new(|mission| mission.ready_receipt.as_mut().unwrap().authority_sequence += 1),
        ),
        (
            "workspace edited",
            Box::new(|mission| {
                mission.ready_receipt.as_mut().unwrap().workspace_digest = "0".repeat(64)
            }),
        ),
        (
            "evidence list emptied",
            Box::new(|mission| {
                mission
                    .ready_receipt
                    .as_mut()
                    .unwrap()
                    .fresh_evidence
                    .clear()
            }),
        ),
        (
            "evidence list reordered",
            Box::new(|mission| {
                mission
                    .ready_receipt
                    .as_mut()
                    .unwrap()
                    .fresh_evidence
                    .reverse()
            }),
        ),
        (
            "required evidence dropped",
            Box::new(|mission| {
                mission.ready_receipt.as_mut().unwrap().fresh_evidence.pop();
            }),
        ),
        (
            "plan edited",
            Box::new(|mission| mission.plan.as_mut().unwrap().declarations[2].required = true),
        ),
    ];
    for (what, change) in cases {
        let mut drifted = ready.clone();
        change(&mut drifted);
        let error = proof_receipt(&drifted).unwrap_err();
        assert!(
            matches!(error, ProofError::ProofBindingMismatch { .. }),
            "{what}: {error}"
        );
    }
}
