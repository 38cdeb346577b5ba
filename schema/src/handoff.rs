//! The digest-bound handoff artifact (contract §3.10, §6). Field order is the digest's
//! canonical order: do not reorder fields.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::attention::AttentionDecisionV1;
use crate::mission::{MissionCheckSummaryV1, MissionProvider};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionHandoffDiffV1 {
    pub workspace_digest: String,
    pub dirty: bool,
    pub changed_paths: Vec<String>,
    pub stat: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MissionHandoffDecisionStateV1 {
    Requested,
    Acknowledged,
    Failed,
    ReconciliationRequired,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionHandoffDecisionV1 {
    pub attention_id: String,
    pub decision: AttentionDecisionV1,
    pub actor_id: String,
    pub state: MissionHandoffDecisionStateV1,
    pub updated_at_millis: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionHandoffArtifactV1 {
    pub schema_version: u32,
    pub artifact_sha256: String,
    pub generated_at_millis: u64,
    pub mission_id: String,
    pub source_run_id: String,
    pub suggested_run_id: String,
    pub source_provider: MissionProvider,
    pub target_provider: MissionProvider,
    pub repository_path: String,
    pub worktree_path: String,
    pub base_revision: String,
    pub head_revision: String,
    pub objective: String,
    pub acceptance_criteria: Vec<String>,
    pub diff: MissionHandoffDiffV1,
    pub decisions: Vec<MissionHandoffDecisionV1>,
    pub checks: Vec<MissionCheckSummaryV1>,
    pub selected_logs: Vec<String>,
    pub warnings: Vec<String>,
}
