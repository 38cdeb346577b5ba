//! The portable proof receipt (contract §3.8).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProofClosureDecisionV1 {
    ReadyToClose,
    Archived,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProofIdentityV1 {
    pub mission_id: String,
    pub run_id: String,
    pub repository_identity: String,
    pub worktree_identity: String,
    pub base_revision: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ProofEvidenceSourceV1 {
    Command {
        program: String,
        args: Vec<String>,
        cwd: String,
        exit_code: i32,
        started_at_millis: u64,
        finished_at_millis: u64,
    },
    Manual {
        reviewer: String,
        reason: String,
        is_override: bool,
        recorded_at_millis: u64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProofArtifactV1 {
    pub path: String,
    pub content_digest: String,
    pub media_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProofEvidenceV1 {
    pub check_id: String,
    pub declaration_digest: String,
    pub evidence_digest: String,
    pub required: bool,
    pub covered_criterion_ids: Vec<String>,
    pub source: ProofEvidenceSourceV1,
    pub artifacts: Vec<ProofArtifactV1>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProofReceiptV1 {
    pub schema_version: u32,
    pub identity: ProofIdentityV1,
    pub head_revision: String,
    pub workspace_digest: String,
    pub criteria_digest: String,
    pub checkset_digest: String,
    pub attention_digest: String,
    pub evidence_digest: String,
    pub subject_digest: String,
    pub seal_digest: String,
    pub authority_head_digest: String,
    pub lease_digest: String,
    pub authority_sequence: u64,
    pub verified_at_millis: u64,
    pub decision: ProofClosureDecisionV1,
    pub fresh_evidence: Vec<ProofEvidenceV1>,
    /// nagi extension: what the landing that archived the mission did (`mission.land`).
    /// Recorded with the archive seal, after the sealed digests; not part of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landing: Option<Box<crate::land::MissionLandingV1>>,
}
