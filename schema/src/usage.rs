//! Token usage and cost as the providers report them (nagi extension): per run and per
//! mission in the mission view, and summed over missions by `mission.usage`.
//!
//! [`TokenUsage`] is the one exact form everything below the wire uses — what an adapter
//! reports for a turn, what a `TurnEnded` event records, the sums of runs and missions: its
//! cost is kept in micro-dollars, so sums stay exact (and `Eq`); [`UsageV1`] shows dollars.

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

/// A turn's, a run's or a mission's tokens, and the cost where a provider priced it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_output_tokens: u64,
    /// Millionths of a US dollar; `None` when no turn reported a cost.
    #[serde(default)]
    pub cost_micro_usd: Option<u64>,
}

impl TokenUsage {
    /// The sum; a cost is known when either side knows one.
    pub fn plus(self, other: TokenUsage) -> TokenUsage {
        TokenUsage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            cached_input_tokens: self
                .cached_input_tokens
                .saturating_add(other.cached_input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            reasoning_output_tokens: self
                .reasoning_output_tokens
                .saturating_add(other.reasoning_output_tokens),
            cost_micro_usd: match (self.cost_micro_usd, other.cost_micro_usd) {
                (None, None) => None,
                (left, right) => Some(left.unwrap_or(0).saturating_add(right.unwrap_or(0))),
            },
        }
    }

    pub fn to_wire(self) -> UsageV1 {
        UsageV1 {
            input_tokens: self.input_tokens,
            cached_input_tokens: self.cached_input_tokens,
            output_tokens: self.output_tokens,
            reasoning_output_tokens: self.reasoning_output_tokens,
            cost_usd: self.cost_micro_usd.map(|micro| micro as f64 / 1_000_000.0),
        }
    }
}

/// A reported cost in US dollars as millionths; `None` for one that is negative or not a
/// number.
pub fn micro_usd(cost_usd: f64) -> Option<u64> {
    (cost_usd.is_finite() && cost_usd >= 0.0).then(|| (cost_usd * 1_000_000.0).round() as u64)
}

/// The sum of `usages`, or `None` when there is none.
pub fn total<'a>(usages: impl IntoIterator<Item = &'a TokenUsage>) -> Option<TokenUsage> {
    usages
        .into_iter()
        .fold(None, |sum: Option<TokenUsage>, usage| {
            Some(sum.unwrap_or_default().plus(*usage))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_keep_the_cost_exact_and_known_when_any_turn_knew_it() {
        let first = TokenUsage {
            input_tokens: 100,
            cached_input_tokens: 40,
            output_tokens: 20,
            reasoning_output_tokens: 5,
            cost_micro_usd: Some(12_300),
        };
        let second = TokenUsage {
            input_tokens: 10,
            output_tokens: 2,
            ..TokenUsage::default()
        };
        let sum = first.plus(second);
        assert_eq!(
            (
                sum.input_tokens,
                sum.cached_input_tokens,
                sum.output_tokens,
                sum.reasoning_output_tokens
            ),
            (110, 40, 22, 5)
        );
        assert_eq!(sum.cost_micro_usd, Some(12_300));
        assert_eq!(sum.to_wire().cost_usd, Some(0.0123));
        assert_eq!(second.plus(second).to_wire().cost_usd, None);
        assert_eq!(total([&first, &second]), Some(sum));
        assert_eq!(total(std::iter::empty()), None);
        assert_eq!(micro_usd(0.0123), Some(12_300));
        assert_eq!(micro_usd(f64::NAN), None);
        assert_eq!(micro_usd(-1.0), None);
    }
}
