//! Per-check assessment of the proof evaluator (contract §5.6): how the stored evidence of
//! one declaration stands against the *current* workspace and the *current* run identity.
//!
//! Provider claims never count (§5.9), by construction: the only way to a passing
//! assessment is [`PassedEvidence`], whose fields are private and which only this file
//! creates, from a command or manual evidence record whose kind matches its declaration.
//! Its wire form `ProofEvidenceV1` has no provider-claim source at all.

use std::collections::BTreeSet;

use nagi_schema::mission::{MissionCheckStatusV1, MissionEvidenceKindV1};
use nagi_schema::proof::{ProofArtifactV1, ProofEvidenceSourceV1, ProofEvidenceV1};

use super::evidence::evidence_record_digest;
use super::workspace::ProofWorkspace;
use nagi_exec::workspace::relevant_files_digest;
use nagi_mission::canonical::relevant_path_rules;
use nagi_mission::model::{Declaration, DeclarationKind, Evidence, EvidenceSource, Mission};

/// How one declared check stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckAssessment {
    pub check_id: String,
    pub required: bool,
    /// The evaluator's status (the full `MissionCheckStatusV1` range).
    pub status: MissionCheckStatusV1,
    /// Why, in words a person can act on.
    pub reason: String,
    passed: Option<PassedEvidence>,
}

impl CheckAssessment {
    pub fn is_passed(&self) -> bool {
        self.passed.is_some()
    }

    /// The record that made the check pass; `None` unless the status is `passed`.
    pub fn passed_evidence(&self) -> Option<&PassedEvidence> {
        self.passed.as_ref()
    }

    fn not_passed(
        declaration: &Declaration,
        status: MissionCheckStatusV1,
        reason: String,
    ) -> CheckAssessment {
        CheckAssessment {
            check_id: declaration.check_id.clone(),
            required: declaration.required,
            status,
            reason,
            passed: None,
        }
    }
}

/// A command or manual evidence record that passed its check. Only [`assess_check`] makes
/// one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedEvidence {
    check_id: String,
    declaration_digest: String,
    record_digest: String,
    required: bool,
    covered_criterion_ids: Vec<String>,
    source: ProofEvidenceSourceV1,
    artifacts: Vec<ProofArtifactV1>,
}

impl PassedEvidence {
    pub fn check_id(&self) -> &str {
        &self.check_id
    }

    pub fn record_digest(&self) -> &str {
        &self.record_digest
    }

    /// `ProofEvidenceV1` of a receipt's `fresh_evidence`.
    pub fn to_wire(&self) -> ProofEvidenceV1 {
        ProofEvidenceV1 {
            check_id: self.check_id.clone(),
            declaration_digest: self.declaration_digest.clone(),
            evidence_digest: self.record_digest.clone(),
            required: self.required,
            covered_criterion_ids: self.covered_criterion_ids.clone(),
            source: self.source.clone(),
            artifacts: self.artifacts.clone(),
        }
    }
}

/// Every declaration of the plan, in plan order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanAssessment {
    pub checks: Vec<CheckAssessment>,
    /// Check ids declared more than once; their later declarations are not assessed.
    pub duplicate_check_ids: Vec<String>,
}

/// Assesses every declaration of the mission's plan against `workspace` (§5.6), in plan
/// order. `current_identity_digest` is the digest of the current run's identity.
pub fn assess_plan(
    mission: &Mission,
    current_identity_digest: &str,
    workspace: &ProofWorkspace,
) -> PlanAssessment {
    let mut seen = BTreeSet::new();
    let mut checks = Vec::new();
    let mut duplicate_check_ids = Vec::new();
    for declaration in mission
        .plan
        .iter()
        .flat_map(|plan| plan.declarations.iter())
    {
        if !seen.insert(declaration.check_id.as_str()) {
            duplicate_check_ids.push(declaration.check_id.clone());
            continue;
        }
        let evidence = mission.evidence.get(&declaration.check_id);
        checks.push(assess_check(
            declaration,
            evidence,
            current_identity_digest,
            workspace,
        ));
    }
    PlanAssessment {
        checks,
        duplicate_check_ids,
    }
}

/// Assesses one declaration's evidence (§5.6 steps 1–7).
pub fn assess_check(
    declaration: &Declaration,
    evidence: Option<&Evidence>,
    current_identity_digest: &str,
    workspace: &ProofWorkspace,
) -> CheckAssessment {
    let Some(evidence) = evidence else {
        return if declaration.is_command() {
            CheckAssessment::not_passed(
                declaration,
                MissionCheckStatusV1::Missing,
                "no evidence has been recorded yet".into(),
            )
        } else {
            CheckAssessment::not_passed(
                declaration,
                MissionCheckStatusV1::ManualMissing,
                "no reviewer has recorded manual evidence yet".into(),
            )
        };
    };
    if evidence.kind == MissionEvidenceKindV1::ProviderClaim {
        return CheckAssessment::not_passed(
            declaration,
            MissionCheckStatusV1::ProviderClaimOnly,
            "only the provider's own claim exists; a provider's statement is never proof".into(),
        );
    }
    let Some(record_digest) = &evidence.record_digest else {
        // A summary without a record: the command failed before a record could be made.
        let why = evidence
            .detail
            .clone()
            .unwrap_or_else(|| "the check failed without an evidence record".into());
        return CheckAssessment::not_passed(declaration, MissionCheckStatusV1::Failed, why);
    };
    let source_kind_matches = matches!(
        (&declaration.kind, evidence.kind, &evidence.source),
        (
            DeclarationKind::Command { .. },
            MissionEvidenceKindV1::Command,
            Some(EvidenceSource::Command { .. })
        ) | (
            DeclarationKind::Manual { .. },
            MissionEvidenceKindV1::Manual,
            Some(EvidenceSource::Manual { .. })
        )
    );
    if !source_kind_matches {
        return CheckAssessment::not_passed(
            declaration,
            MissionCheckStatusV1::DeclarationMismatch,
            "the evidence is of another kind than the declared check".into(),
        );
    }
    if evidence.check_id != declaration.check_id
        || evidence.declaration_digest != declaration.digest
    {
        return CheckAssessment::not_passed(
            declaration,
            MissionCheckStatusV1::DeclarationMismatch,
            "the evidence was recorded under a different declaration of this check".into(),
        );
    }
    if evidence_record_digest(evidence).as_deref() != Some(record_digest.as_str()) {
        return CheckAssessment::not_passed(
            declaration,
            MissionCheckStatusV1::DeclarationMismatch,
            "the evidence record no longer matches its own digest".into(),
        );
    }
    if evidence.identity_digest.as_deref() != Some(current_identity_digest) {
        return CheckAssessment::not_passed(
            declaration,
            MissionCheckStatusV1::IdentityMismatch,
            format!(
                "the evidence belongs to run {} or another repository, worktree or base revision, not to the current run",
                evidence.run_id
            ),
        );
    }
    match (&declaration.kind, &evidence.source) {
        (
            DeclarationKind::Command {
                required_artifacts,
                include_ignored,
                ..
            },
            Some(EvidenceSource::Command { exit_code, .. }),
        ) => assess_command(
            declaration,
            evidence,
            record_digest,
            required_artifacts,
            *include_ignored,
            *exit_code,
            workspace,
        ),
        (
            DeclarationKind::Manual {
                reviewers,
                allow_override,
            },
            Some(EvidenceSource::Manual {
                reviewer,
                is_override,
                ..
            }),
        ) => assess_manual(
            declaration,
            evidence,
            record_digest,
            reviewers,
            *allow_override,
            reviewer,
            *is_override,
            workspace,
        ),
        _ => unreachable!("source and declaration kinds were matched above"),
    }
}

fn assess_command(
    declaration: &Declaration,
    evidence: &Evidence,
    record_digest: &str,
    required_artifacts: &[String],
    include_ignored: bool,
    exit_code: i32,
    workspace: &ProofWorkspace,
) -> CheckAssessment {
    if include_ignored && !workspace.snapshot.include_ignored {
        return CheckAssessment::not_passed(
            declaration,
            MissionCheckStatusV1::Stale,
            "the check includes ignored files, but the current scan did not read them".into(),
        );
    }
    let rules = relevant_path_rules(&declaration.kind);
    let current = relevant_files_digest(&workspace.snapshot, &rules, include_ignored);
    if evidence.relevant_digest.as_deref() != Some(current.as_str()) {
        return CheckAssessment::not_passed(
            declaration,
            MissionCheckStatusV1::Stale,
            "files relevant to the check changed (content, mode, staging, added or deleted) since its evidence was recorded".into(),
        );
    }
    let mut artifact_problems = Vec::new();
    for path in required_artifacts {
        let recorded = evidence
            .artifacts
            .iter()
            .find(|artifact| &artifact.path == path);
        match (recorded, workspace.artifact_digest(path)) {
            (None, _) => artifact_problems.push(format!("`{path}` was not recorded")),
            (Some(_), None) => artifact_problems.push(format!("`{path}` is missing now")),
            (Some(artifact), Some(current)) if artifact.content_digest != current => {
                artifact_problems.push(format!("`{path}` changed since it was recorded"))
            }
            (Some(_), Some(_)) => {}
        }
    }
    if exit_code == 0 && artifact_problems.is_empty() {
        return passed(declaration, evidence, record_digest);
    }
    if !artifact_problems.is_empty() {
        return CheckAssessment::not_passed(
            declaration,
            MissionCheckStatusV1::ArtifactMissingOrChanged,
            format!("required artifact {}", artifact_problems.join(", ")),
        );
    }
    let why = evidence
        .detail
        .clone()
        .unwrap_or_else(|| format!("the command exited with code {exit_code}"));
    CheckAssessment::not_passed(declaration, MissionCheckStatusV1::Failed, why)
}

#[allow(clippy::too_many_arguments)]
fn assess_manual(
    declaration: &Declaration,
    evidence: &Evidence,
    record_digest: &str,
    reviewers: &[String],
    allow_override: bool,
    reviewer: &str,
    is_override: bool,
    workspace: &ProofWorkspace,
) -> CheckAssessment {
    if evidence.workspace_digest != workspace.snapshot.digest {
        return CheckAssessment::not_passed(
            declaration,
            MissionCheckStatusV1::Stale,
            format!("the workspace changed since {reviewer} reviewed it"),
        );
    }
    if !reviewers.iter().any(|listed| listed == reviewer) {
        return CheckAssessment::not_passed(
            declaration,
            MissionCheckStatusV1::ManualNotAuthorized,
            format!("{reviewer} is not a listed reviewer of this check"),
        );
    }
    if is_override && !allow_override {
        return CheckAssessment::not_passed(
            declaration,
            MissionCheckStatusV1::ManualNotAuthorized,
            "the evidence is an override, and this check does not allow overrides".into(),
        );
    }
    passed(declaration, evidence, record_digest)
}

fn passed(declaration: &Declaration, evidence: &Evidence, record_digest: &str) -> CheckAssessment {
    let source = evidence.source.as_ref().expect("a record has a source");
    let reason = match source {
        EvidenceSource::Manual {
            reviewer,
            is_override: true,
            ..
        } => format!("passed by an override of {reviewer}"),
        EvidenceSource::Manual { reviewer, .. } => format!("passed: reviewed by {reviewer}"),
        EvidenceSource::Command { .. } => "passed".to_string(),
    };
    CheckAssessment {
        check_id: declaration.check_id.clone(),
        required: declaration.required,
        status: MissionCheckStatusV1::Passed,
        reason,
        passed: Some(PassedEvidence {
            check_id: declaration.check_id.clone(),
            declaration_digest: declaration.digest.clone(),
            record_digest: record_digest.to_string(),
            required: declaration.required,
            covered_criterion_ids: declaration.covered_criterion_ids.clone(),
            source: source_to_wire(source),
            artifacts: artifacts_to_wire(evidence),
        }),
    }
}

/// The `ProofEvidenceV1` a stored record stands for, if it is a command or manual record of
/// this very declaration (used by `mission.proof.get` to check a sealed receipt, where the
/// workspace may have moved on and the check cannot be assessed again).
pub(super) fn recorded_evidence_to_wire(
    declaration: &Declaration,
    evidence: &Evidence,
) -> Option<ProofEvidenceV1> {
    let record_digest = evidence.record_digest.as_ref()?;
    let source = evidence.source.as_ref()?;
    let kinds_match = matches!(
        (&declaration.kind, evidence.kind, source),
        (
            DeclarationKind::Command { .. },
            MissionEvidenceKindV1::Command,
            EvidenceSource::Command { .. }
        ) | (
            DeclarationKind::Manual { .. },
            MissionEvidenceKindV1::Manual,
            EvidenceSource::Manual { .. }
        )
    );
    if !kinds_match || evidence_record_digest(evidence).as_ref() != Some(record_digest) {
        return None;
    }
    Some(ProofEvidenceV1 {
        check_id: declaration.check_id.clone(),
        declaration_digest: evidence.declaration_digest.clone(),
        evidence_digest: record_digest.clone(),
        required: declaration.required,
        covered_criterion_ids: declaration.covered_criterion_ids.clone(),
        source: source_to_wire(source),
        artifacts: artifacts_to_wire(evidence),
    })
}

fn source_to_wire(source: &EvidenceSource) -> ProofEvidenceSourceV1 {
    match source {
        EvidenceSource::Command {
            program,
            args,
            cwd,
            exit_code,
            started_at_millis,
            finished_at_millis,
        } => ProofEvidenceSourceV1::Command {
            program: program.clone(),
            args: args.clone(),
            cwd: cwd.clone(),
            exit_code: *exit_code,
            started_at_millis: *started_at_millis,
            finished_at_millis: *finished_at_millis,
        },
        EvidenceSource::Manual {
            reviewer,
            reason,
            is_override,
            recorded_at_millis,
        } => ProofEvidenceSourceV1::Manual {
            reviewer: reviewer.clone(),
            reason: reason.clone(),
            is_override: *is_override,
            recorded_at_millis: *recorded_at_millis,
        },
    }
}

fn artifacts_to_wire(evidence: &Evidence) -> Vec<ProofArtifactV1> {
    evidence
        .artifacts
        .iter()
        .map(|artifact| ProofArtifactV1 {
            path: artifact.path.clone(),
            content_digest: artifact.content_digest.clone(),
            media_type: artifact.media_type.clone(),
        })
        .collect()
}

#[cfg(test)]
#[path = "assess_tests.rs"]
mod tests;
