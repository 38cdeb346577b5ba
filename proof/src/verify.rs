//! The verification conditions of contract §5.7 and the receipt of §3.8.
//!
//! [`verify`] is a pure function of the mission as the caller read it at the authority head
//! it passes, the current workspace and the lease held: it either mints the receipt (every
//! digest built by `crate::digest`) or says, check by check, why review is still required.
//! Sealing the receipt is `seal.rs`; nothing here writes.

use std::collections::BTreeSet;

use nagi_schema::mission::MissionStatus;
use nagi_schema::proof::{ProofClosureDecisionV1, ProofReceiptV1};

use super::assess::{CheckAssessment, assess_plan};
use super::binding::{
    AuthorityHead, WorktreeLease, current_identity, identity_digest, identity_to_wire,
};
use super::error::ProofError;
use super::workspace::ProofWorkspace;
use nagi_mission::canonical::recomputed_declaration_digest;
use nagi_mission::digest::{
    SealInput, checkset_digest, criteria_digest, declaration_set_digest, evidence_set_digest,
    seal_digest, subject_digest, unresolved_attention_digest,
};
use nagi_mission::model::Mission;
use nagi_mission::redact::redact;

/// At most this many fresh evidence entries fit a receipt (§3.8).
pub const MAX_FRESH_EVIDENCE: usize = 32;

/// What one evaluation needs besides the mission.
#[derive(Debug, Clone, Copy)]
pub struct VerificationInput<'a> {
    /// The mission exactly as read at `authority_head`.
    pub mission: &'a Mission,
    /// The final scan of the run's worktree (§5.4 step 4) with its artifact digests.
    pub workspace: &'a ProofWorkspace,
    pub authority_head: &'a AuthorityHead,
    /// The worktree lease held while the checks ran.
    pub lease: &'a WorktreeLease,
    pub verified_at_millis: u64,
}

/// The outcome of an evaluation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every condition holds; the receipt is ready to be sealed.
    Verified {
        receipt: Box<ProofReceiptV1>,
        checks: Vec<CheckAssessment>,
    },
    /// At least one condition fails; no receipt is minted. `evaluated_head` is the head the
    /// evaluation read, so a decision taken on it can be refused once the head moved.
    ReviewRequired {
        reasons: Vec<String>,
        checks: Vec<CheckAssessment>,
        evaluated_head: AuthorityHead,
    },
}

impl Verdict {
    pub fn checks(&self) -> &[CheckAssessment] {
        match self {
            Verdict::Verified { checks, .. } | Verdict::ReviewRequired { checks, .. } => checks,
        }
    }
}

/// The plan's identity, and what is wrong with the plan if anything (§5.2, §5.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanBinding {
    pub criteria_digest: String,
    pub checkset_digest: String,
    pub problems: Vec<String>,
}

/// Rebuilds the plan's digests and checks its validity: criteria present, at least one
/// required check, no duplicate ids, every criterion covered by a required check, covers
/// only of this mission's criteria, and every stored declaration digest re-derives from its
/// content (so the checkset digest is the plan's own).
pub fn plan_binding(mission: &Mission) -> Result<PlanBinding, ProofError> {
    let plan = mission
        .plan
        .as_ref()
        .ok_or_else(|| ProofError::NoClosurePlan {
            mission_id: mission.mission_id.to_string(),
        })?;
    let criterion_ids: Vec<&str> = mission
        .criteria
        .iter()
        .map(|criterion| criterion.criterion_id.as_str())
        .collect();
    let mut problems = Vec::new();
    if criterion_ids.is_empty() {
        problems.push("the mission has no acceptance criteria".to_string());
    }
    if !plan
        .declarations
        .iter()
        .any(|declaration| declaration.required)
    {
        problems.push("the closure plan has no required check".to_string());
    }
    let mut seen = BTreeSet::new();
    for declaration in &plan.declarations {
        if !seen.insert(declaration.check_id.as_str()) {
            problems.push(format!(
                "check id {} is declared more than once",
                declaration.check_id
            ));
        }
        if let Some(foreign) = declaration
            .covered_criterion_ids
            .iter()
            .find(|id| !criterion_ids.contains(&id.as_str()))
        {
            problems.push(format!(
                "check {} covers {foreign}, which is not a criterion of this mission",
                declaration.check_id
            ));
        }
        if recomputed_declaration_digest(declaration) != declaration.digest {
            problems.push(format!(
                "check {} no longer matches its declaration digest",
                declaration.check_id
            ));
        }
    }
    for (index, criterion) in mission.criteria.iter().enumerate() {
        let covered = plan.declarations.iter().any(|declaration| {
            declaration.required
                && declaration
                    .covered_criterion_ids
                    .contains(&criterion.criterion_id)
        });
        if !covered {
            problems.push(format!(
                "acceptance criterion {} ({:?}) is not covered by a required check",
                index + 1,
                criterion.description
            ));
        }
    }
    let declaration_digests: Vec<&str> = plan
        .declarations
        .iter()
        .map(|declaration| declaration.digest.as_str())
        .collect();
    if declaration_set_digest(&declaration_digests) != plan.declaration_set_digest {
        problems.push(
            "the closure plan's declarations do not match the plan digest frozen at configuration"
                .to_string(),
        );
    }
    Ok(PlanBinding {
        criteria_digest: criteria_digest(&criterion_ids),
        checkset_digest: checkset_digest(&declaration_digests),
        problems,
    })
}

/// Which sealed transition a verified proof of a mission in `status` would make.
pub fn decision_for_status(mission: &Mission) -> Result<ProofClosureDecisionV1, ProofError> {
    match mission.status {
        MissionStatus::ReviewRequired => Ok(ProofClosureDecisionV1::ReadyToClose),
        MissionStatus::ReadyToClose => Ok(ProofClosureDecisionV1::Archived),
        other => Err(ProofError::StatusNotSealable {
            mission_id: mission.mission_id.to_string(),
            status: other.as_str().to_string(),
        }),
    }
}

/// Evaluates the proof (§5.6–§5.7). A `review_required` mission yields a `ready_to_close`
/// receipt, a `ready_to_close` mission an `archived` one; other statuses are an error.
pub fn verify(input: &VerificationInput<'_>) -> Result<Verdict, ProofError> {
    let mission = input.mission;
    let decision = decision_for_status(mission)?;
    let identity = current_identity(mission)?;
    let identity_digest_hex = identity_digest(&identity);
    let plan = plan_binding(mission)?;
    let assessment = assess_plan(mission, &identity_digest_hex, input.workspace);

    let mut reasons = plan.problems.clone();
    for check in assessment
        .checks
        .iter()
        .filter(|check| check.required && !check.is_passed())
    {
        reasons.push(format!(
            "required check {} is {}: {}",
            check.check_id,
            status_words(check),
            check.reason
        ));
    }
    for item in mission
        .attention
        .values()
        .filter(|item| item.is_unresolved())
    {
        reasons.push(format!(
            "attention item {} is unresolved: {}",
            item.attention_id,
            shortened(&redact(&item.requested_action), 120)
        ));
    }
    if input.authority_head.sequence == 0 {
        reasons.push(
            "no durable event has been recorded, so there is no authority head to bind to"
                .to_string(),
        );
    }
    if let Some(problem) = input.lease.scope_problem(&identity) {
        reasons.push(problem);
    }
    let passed: Vec<_> = assessment
        .checks
        .iter()
        .filter_map(CheckAssessment::passed_evidence)
        .collect();
    if passed.is_empty() && reasons.is_empty() {
        reasons.push("no check has fresh passing evidence".to_string());
    }
    if passed.len() > MAX_FRESH_EVIDENCE {
        reasons.push(format!(
            "{} checks passed; a receipt holds at most {MAX_FRESH_EVIDENCE}",
            passed.len()
        ));
    }
    if !reasons.is_empty() {
        return Ok(Verdict::ReviewRequired {
            reasons,
            checks: assessment.checks,
            evaluated_head: input.authority_head.clone(),
        });
    }

    let records: Vec<(&str, &str)> = passed
        .iter()
        .map(|evidence| (evidence.check_id(), evidence.record_digest()))
        .collect();
    let evidence_digest = evidence_set_digest(&records);
    let attention_digest = unresolved_attention_digest::<&str>(&[]);
    let workspace_digest = input.workspace.snapshot.digest.clone();
    let authority_head_digest = input.authority_head.digest();
    let lease_digest = input.lease.digest();
    let seal = SealInput {
        identity_digest: identity_digest_hex.clone(),
        workspace_digest: workspace_digest.clone(),
        checkset_digest: plan.checkset_digest.clone(),
        criteria_digest: plan.criteria_digest.clone(),
        attention_digest: attention_digest.clone(),
        evidence_digest: evidence_digest.clone(),
        authority_head_digest: authority_head_digest.clone(),
        lease_digest: lease_digest.clone(),
        authority_sequence: input.authority_head.sequence,
        verified_at_millis: input.verified_at_millis,
    };
    let receipt = ProofReceiptV1 {
        schema_version: 1,
        identity: identity_to_wire(&identity),
        head_revision: input.workspace.snapshot.head_commit.clone(),
        subject_digest: subject_digest(
            &identity_digest_hex,
            &workspace_digest,
            &plan.checkset_digest,
            &plan.criteria_digest,
        ),
        seal_digest: seal_digest(&seal),
        workspace_digest,
        criteria_digest: plan.criteria_digest,
        checkset_digest: plan.checkset_digest,
        attention_digest,
        evidence_digest,
        authority_head_digest,
        lease_digest,
        authority_sequence: input.authority_head.sequence,
        verified_at_millis: input.verified_at_millis,
        decision,
        fresh_evidence: passed.iter().map(|evidence| evidence.to_wire()).collect(),
        landing: None,
    };
    Ok(Verdict::Verified {
        receipt: Box::new(receipt),
        checks: assessment.checks,
    })
}

fn status_words(check: &CheckAssessment) -> &'static str {
    use nagi_schema::mission::MissionCheckStatusV1::*;
    match check.status {
        Passed => "passed",
        Failed => "failed",
        Stale => "stale",
        Missing => "missing",
        ManualMissing => "waiting for a reviewer",
        ProviderClaimOnly => "only claimed by the provider",
        DeclarationMismatch => "recorded under another declaration",
        IdentityMismatch => "recorded for another run",
        ArtifactMissingOrChanged => "missing an artifact",
        ManualNotAuthorized => "not authorised",
    }
}

fn shortened(text: &str, max_chars: usize) -> String {
    let single_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if single_line.chars().count() <= max_chars {
        return single_line;
    }
    let mut cut: String = single_line.chars().take(max_chars).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
