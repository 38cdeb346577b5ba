//! `mission.proof.get` (contract §2.7): the sealed receipt of a `ready_to_close` or
//! `archived` mission, after checking that it still re-derives from what the mission stores.
//!
//! The receipt is about the workspace *at verification*; the workspace may have moved on
//! since, so nothing is assessed again. Instead every binding is recomputed from stored
//! state: the identity from the current run, the criteria and checkset digests from the
//! plan, each `fresh_evidence` entry from its stored evidence record (whose digest must
//! re-derive too), the evidence-set digest from those records, and the subject and seal
//! digests from all of it plus the receipt's own authority fields. Any difference is
//! `proof_binding_mismatch`.

use nagi_schema::mission::{MissionEvidenceAssessmentV1, MissionStatus};
use nagi_schema::proof::{ProofClosureDecisionV1, ProofReceiptV1};

use super::assess::recorded_evidence_to_wire;
use super::binding::{current_identity, identity_digest, identity_to_wire};
use super::error::ProofError;
use super::verify::{MAX_FRESH_EVIDENCE, plan_binding};
use nagi_mission::digest::{
    SealInput, evidence_set_digest, seal_digest, subject_digest, unresolved_attention_digest,
};
use nagi_mission::model::Mission;

/// The checked receipt of a sealed mission.
pub fn proof_receipt(mission: &Mission) -> Result<ProofReceiptV1, ProofError> {
    let (stored, decision) = match mission.status {
        MissionStatus::ReadyToClose => (
            mission.ready_receipt.as_ref(),
            ProofClosureDecisionV1::ReadyToClose,
        ),
        MissionStatus::Archived => (
            mission.archive_receipt.as_ref(),
            ProofClosureDecisionV1::Archived,
        ),
        other => {
            return Err(ProofError::ProofNotReady {
                detail: format!(
                    "mission {} is {}; a proof receipt exists only once it is ready_to_close or archived",
                    mission.mission_id,
                    other.as_str()
                ),
            });
        }
    };
    let not_ready = |what: &str| ProofError::ProofNotReady {
        detail: format!("mission {} has no {what}", mission.mission_id),
    };
    let receipt = stored.ok_or_else(|| not_ready("sealed receipt"))?;
    if mission.run.is_none() {
        return Err(not_ready("run"));
    }
    let mismatch = |detail: String| ProofError::ProofBindingMismatch { detail };
    if receipt.decision != decision {
        return Err(mismatch(format!(
            "the receipt stored for a {} mission is not a {} receipt",
            mission.status.as_str(),
            mission.status.as_str()
        )));
    }
    let identity = current_identity(mission).map_err(|error| mismatch(error.to_string()))?;
    if receipt.identity != identity_to_wire(&identity) {
        return Err(mismatch(
            "the receipt is bound to another run, repository, worktree or base revision".into(),
        ));
    }
    let identity_digest_hex = identity_digest(&identity);
    let plan = plan_binding(mission).map_err(|error| mismatch(error.to_string()))?;
    if let Some(problem) = plan.problems.first() {
        return Err(mismatch(problem.clone()));
    }
    if receipt.criteria_digest != plan.criteria_digest
        || receipt.checkset_digest != plan.checkset_digest
    {
        return Err(mismatch(
            "the closure plan differs from the one the receipt proves".into(),
        ));
    }
    check_fresh_evidence(mission, receipt, &identity_digest_hex)?;

    let records: Vec<(&str, &str)> = receipt
        .fresh_evidence
        .iter()
        .map(|entry| (entry.check_id.as_str(), entry.evidence_digest.as_str()))
        .collect();
    let evidence_digest = evidence_set_digest(&records);
    if receipt.evidence_digest != evidence_digest {
        return Err(mismatch(
            "the evidence-set digest does not re-derive from the fresh evidence".into(),
        ));
    }
    let attention_digest = unresolved_attention_digest::<&str>(&[]);
    if receipt.attention_digest != attention_digest {
        return Err(mismatch(
            "the receipt does not bind the empty unresolved-attention set".into(),
        ));
    }
    let subject = subject_digest(
        &identity_digest_hex,
        &receipt.workspace_digest,
        &plan.checkset_digest,
        &plan.criteria_digest,
    );
    if receipt.subject_digest != subject {
        return Err(mismatch("the subject digest does not re-derive".into()));
    }
    let seal = seal_digest(&SealInput {
        identity_digest: identity_digest_hex,
        workspace_digest: receipt.workspace_digest.clone(),
        checkset_digest: plan.checkset_digest,
        criteria_digest: plan.criteria_digest,
        attention_digest,
        evidence_digest,
        authority_head_digest: receipt.authority_head_digest.clone(),
        lease_digest: receipt.lease_digest.clone(),
        authority_sequence: receipt.authority_sequence,
        verified_at_millis: receipt.verified_at_millis,
    });
    if receipt.seal_digest != seal {
        return Err(mismatch("the seal digest does not re-derive".into()));
    }
    if receipt.authority_sequence == 0 {
        return Err(mismatch("the receipt has no authority sequence".into()));
    }
    Ok(receipt.clone())
}

/// `fresh_evidence` must be 1..=32 entries in plan order, include every required check, and
/// each entry must be exactly what its stored, passed, non-claim record of the current run
/// stands for.
fn check_fresh_evidence(
    mission: &Mission,
    receipt: &ProofReceiptV1,
    identity_digest_hex: &str,
) -> Result<(), ProofError> {
    let mismatch = |detail: String| ProofError::ProofBindingMismatch { detail };
    if receipt.fresh_evidence.is_empty() {
        return Err(mismatch("the receipt has no fresh evidence".into()));
    }
    if receipt.fresh_evidence.len() > MAX_FRESH_EVIDENCE {
        return Err(mismatch(format!(
            "the receipt lists more than {MAX_FRESH_EVIDENCE} pieces of evidence"
        )));
    }
    let declarations = mission
        .plan
        .as_ref()
        .map(|plan| plan.declarations.as_slice())
        .unwrap_or_default();
    let mut next_plan_index = 0;
    for entry in &receipt.fresh_evidence {
        let Some(offset) = declarations[next_plan_index..]
            .iter()
            .position(|declaration| declaration.check_id == entry.check_id)
        else {
            return Err(mismatch(format!(
                "fresh evidence for {} is not a check of the plan, or is out of plan order",
                entry.check_id
            )));
        };
        let declaration = &declarations[next_plan_index + offset];
        next_plan_index += offset + 1;
        let evidence = mission.evidence.get(&entry.check_id).ok_or_else(|| {
            mismatch(format!(
                "no evidence is stored for check {}",
                entry.check_id
            ))
        })?;
        if evidence.assessment != MissionEvidenceAssessmentV1::Passed {
            return Err(mismatch(format!(
                "the stored evidence of check {} is no longer passed",
                entry.check_id
            )));
        }
        if evidence.identity_digest.as_deref() != Some(identity_digest_hex) {
            return Err(mismatch(format!(
                "the stored evidence of check {} belongs to another run",
                entry.check_id
            )));
        }
        let rebuilt = recorded_evidence_to_wire(declaration, evidence).ok_or_else(|| {
            mismatch(format!(
                "the stored evidence of check {} is not a command or manual record of it",
                entry.check_id
            ))
        })?;
        if &rebuilt != entry {
            return Err(mismatch(format!(
                "the stored evidence of check {} differs from the receipt's",
                entry.check_id
            )));
        }
    }
    for declaration in declarations
        .iter()
        .filter(|declaration| declaration.required)
    {
        if !receipt
            .fresh_evidence
            .iter()
            .any(|entry| entry.check_id == declaration.check_id)
        {
            return Err(mismatch(format!(
                "required check {} has no fresh evidence in the receipt",
                declaration.check_id
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "receipt_tests.rs"]
mod tests;
