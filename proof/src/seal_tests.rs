use nagi_schema::mission::MissionStatus;

use super::*;
use crate::test_support::*;
use nagi_exec::workspace::Disposition;
use nagi_mission::apply::apply;

/// A mission sealed ready at event 10 after a proof evaluated at event 9.
fn ready_mission() -> Mission {
    let mission = mission_with_passing_evidence(base_entries());
    let receipt = verified_receipt(verify_at(&mission, base_entries(), 9, 500));
    let event = seal_ready(&mission, &receipt, &head(9), 510).unwrap();
    apply(Some(mission), &event)
}

#[test]
fn a_ready_seal_needs_the_head_it_was_evaluated_at() {
    let mission = mission_with_passing_evidence(base_entries());
    let verdict = verify_at(&mission, base_entries(), 9, 500);
    let event = readiness_outcome(&mission, &verdict, &head(9), 510)
        .unwrap()
        .unwrap();
    let sealed = apply(Some(mission.clone()), &event);
    assert_eq!(sealed.status, MissionStatus::ReadyToClose);
    assert_eq!(sealed.ready_receipt.as_ref().unwrap().authority_sequence, 9);

    let stale = readiness_outcome(&mission, &verdict, &head(10), 510).unwrap_err();
    assert!(matches!(stale, ProofError::SealStale { .. }), "{stale}");
    let other_payload = crate::AuthorityHead {
        sequence: 9,
        payload_digest: "other".into(),
    };
    assert!(matches!(
        readiness_outcome(&mission, &verdict, &other_payload, 510),
        Err(ProofError::SealStale { .. })
    ));
    let future = readiness_outcome(&mission, &verdict, &head(9), 499).unwrap_err();
    assert!(matches!(future, ProofError::SealRefused { .. }), "{future}");
}

#[test]
fn a_proof_that_does_not_verify_leaves_the_mission_for_review() {
    let mission = mission();
    let verdict = verify_at(&mission, base_entries(), 9, 500);
    assert_eq!(
        readiness_outcome(&mission, &verdict, &head(9), 510).unwrap(),
        None
    );
}

#[test]
fn an_archive_seal_needs_the_same_subject_and_a_later_sequence() {
    let ready = ready_mission();
    let verdict = verify_at(&ready, base_entries(), 12, 600);
    let event = close_outcome(&ready, &verdict, &head(12), 610).unwrap();
    let archived = apply(Some(ready.clone()), &event);
    assert_eq!(archived.status, MissionStatus::Archived);
    let archive = archived.archive_receipt.as_ref().unwrap();
    assert_eq!(
        archive.subject_digest,
        ready.ready_receipt.as_ref().unwrap().subject_digest
    );
    assert!(archive.authority_sequence > ready.ready_receipt.as_ref().unwrap().authority_sequence);

    // Same sequence as the ready receipt, later clock: refused.
    let same_sequence = verified_receipt(verify_at(&ready, base_entries(), 9, 700));
    let refused = seal_archive(&ready, &same_sequence, &head(9), 710).unwrap_err();
    assert!(
        matches!(refused, ProofError::SealRefused { ref detail } if detail.contains("does not advance")),
        "{refused}"
    );

    // Verified before the ready proof: refused.
    let earlier = verified_receipt(verify_at(&ready, base_entries(), 12, 400));
    assert!(matches!(
        seal_archive(&ready, &earlier, &head(12), 710),
        Err(ProofError::SealRefused { .. })
    ));

    // A ready receipt cannot archive.
    let ready_receipt = ready.ready_receipt.clone().unwrap();
    assert!(matches!(
        seal_archive(&ready, &ready_receipt, &head(9), 710),
        Err(ProofError::SealRefused { .. })
    ));
}

#[test]
fn a_workspace_change_between_ready_and_close_blocks_instead_of_archiving() {
    let mut changed = base_entries();
    changed.push(file(
        "notes.txt",
        Disposition::Untracked,
        "not relevant to any check",
    ));
    // The reviewer looks again at the changed workspace, so every check is fresh; only the
    // subject differs from the ready receipt's.
    let ready = ready_mission();
    let identity = identity(&ready);
    let review = crate::evidence::manual_evidence(
        declaration(&ready, "review"),
        &identity,
        "alice",
        "reviewed again",
        false,
        &snapshot(changed.clone()),
        550,
    )
    .unwrap();
    let ready = record(ready, review);
    let verdict = verify_at(&ready, changed, 12, 600);
    let receipt = verified_receipt(verdict.clone());
    assert!(matches!(
        seal_archive(&ready, &receipt, &head(12), 610),
        Err(ProofError::ArchiveSubjectChanged { .. })
    ));
    let event = close_outcome(&ready, &verdict, &head(12), 610).unwrap();
    let MissionEvent::StatusChanged { status, reason, .. } = &event else {
        panic!("expected a status change, got {event:?}")
    };
    assert_eq!(*status, MissionStatus::Blocked);
    assert!(
        reason.as_deref().unwrap().contains("the workspace changed"),
        "{reason:?}"
    );
    assert_eq!(apply(Some(ready), &event).status, MissionStatus::Blocked);
}

#[test]
fn a_close_proof_that_does_not_verify_blocks_unless_the_head_moved() {
    let ready = open_attention(ready_mission(), "attention:7", "approve a command");
    let verdict = verify_at(&ready, base_entries(), 12, 600);
    let event = close_outcome(&ready, &verdict, &head(12), 610).unwrap();
    let MissionEvent::StatusChanged {
        status: MissionStatus::Blocked,
        reason: Some(reason),
        ..
    } = event
    else {
        panic!("blocked")
    };
    assert!(reason.contains("attention:7"), "{reason}");
    assert!(matches!(
        close_outcome(&ready, &verdict, &head(13), 610),
        Err(ProofError::SealStale { .. })
    ));
}
