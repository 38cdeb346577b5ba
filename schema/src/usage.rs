//! Token usage and cost as the providers report them (nagi extension): per run and per
//! mission in the mission view, and summed over missions by `mission.usage`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::ID_PATTERN;

/// Tokens of a turn, a run or a mission, and the cost when the provider reports one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UsageV1 {
    /// Input tokens, cached ones included.
    pub input_tokens: u64,
    /// The part of the input read from the provider's prompt cache.
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    /// Reasoning tokens, where the provider counts them apart from the output.
    pub reasoning_output_tokens: u64,
    /// US dollars, summed over the turns whose provider reported a cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// `mission.usage`: usage summed over every mission's turns. Unknown fields are rejected.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionUsageParams {
    /// Only turns that ended at or after this time (milliseconds since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_millis: Option<u64>,
    /// Only this mission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: Option<String>,
}

/// One mission's share of a `mission.usage` sum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MissionUsageEntryV1 {
    pub mission_id: String,
    /// Turns that ended in the window, with or without reported usage.
    pub turns: u64,
    pub usage: UsageV1,
}
