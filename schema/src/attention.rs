//! Attention items: a provider's request for a decision, or a warning a person must see
//! (contract §3.9).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mission::MissionProvider;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttentionKindV1 {
    PermissionRequest,
    ProviderQuestion,
    CommandFailed,
    WorktreeConflict,
    TurnComplete,
    Disconnected,
    SecurityWarning,
    ManualVerification,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AttentionRiskV1 {
    Low,
    Medium,
    High,
    Critical,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttentionSourceV1 {
    StructuredHook,
    ProviderApi,
    Process,
    TerminalHeuristic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttentionResponseCapabilityV1 {
    Reliable,
    OpenPaneOnly,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttentionDecisionV1 {
    ApproveOnce,
    ApproveForSession,
    AllowForMission,
    Deny,
    Answer,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttentionFailureCodeV1 {
    Rejected,
    DisconnectedBeforeWrite,
    Timeout,
    TransportClosed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AttentionPaneTargetV1 {
    pub workspace_id: String,
    pub pane_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AttentionQuestionOptionV1 {
    pub label: String,
    #[serde(default)]
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AttentionQuestionV1 {
    /// The exact key to use in `answers`.
    pub id: String,
    pub header: String,
    pub prompt: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<AttentionQuestionOptionV1>,
    pub multiple: bool,
    pub custom_allowed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AttentionStateV1 {
    Open,
    PendingResponse {
        decision: AttentionDecisionV1,
        actor: String,
        requested_at_millis: u64,
    },
    Resolved {
        decision: AttentionDecisionV1,
        actor: String,
        at_millis: u64,
    },
    ReconciliationRequired {
        decision: AttentionDecisionV1,
        actor: String,
        code: AttentionFailureCodeV1,
        at_millis: u64,
    },
    Dismissed {
        actor: String,
        reason: String,
        at_millis: u64,
    },
    Expired {
        at_millis: u64,
    },
}

impl AttentionStateV1 {
    /// Open, pending or awaiting reconciliation: it still needs a person.
    pub fn is_unresolved(&self) -> bool {
        matches!(
            self,
            AttentionStateV1::Open
                | AttentionStateV1::PendingResponse { .. }
                | AttentionStateV1::ReconciliationRequired { .. }
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AttentionDeliveryStateV1 {
    NotRequested,
    Pending {
        attempt: u32,
        requested_at_millis: u64,
    },
    Acknowledged {
        attempt: u32,
        at_millis: u64,
    },
    DefinitelyNotApplied {
        attempt: u32,
        code: AttentionFailureCodeV1,
        at_millis: u64,
    },
    DeliveryUnknown {
        attempt: u32,
        code: AttentionFailureCodeV1,
        at_millis: u64,
    },
    NotApplicable,
}

/// Provider-neutral attention projection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AttentionItemV1 {
    pub schema_version: u32,
    pub attention_id: String,
    pub mission_id: String,
    pub run_id: String,
    pub session_id: String,
    pub pane: AttentionPaneTargetV1,
    pub kind: AttentionKindV1,
    pub requested_action: String,
    pub scope: String,
    pub risk: AttentionRiskV1,
    pub provider: MissionProvider,
    pub source: AttentionSourceV1,
    pub response_capability: AttentionResponseCapabilityV1,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<AttentionQuestionV1>,
    pub created_at_millis: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at_millis: Option<u64>,
    pub occurrence_count: u32,
    pub unread: bool,
    pub state: AttentionStateV1,
    pub delivery: AttentionDeliveryStateV1,
    /// nagi extension, fleet mode only: the host that raised the item, whose store and
    /// panes its ids belong to (two hosts' items may share an attention or pane id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}
