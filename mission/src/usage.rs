//! Token usage as the mission records it: per turn in `TurnEnded`, summed per run and per
//! mission. The cost is kept in micro-dollars so that the projection stays exact (and
//! `Eq`); the wire shows dollars.

use nagi_schema::usage::UsageV1;
use serde::{Deserialize, Serialize};

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
            (sum.input_tokens, sum.cached_input_tokens, sum.output_tokens, sum.reasoning_output_tokens),
            (110, 40, 22, 5)
        );
        assert_eq!(sum.cost_micro_usd, Some(12_300));
        assert_eq!(sum.to_wire().cost_usd, Some(0.0123));
        assert_eq!(second.plus(second).to_wire().cost_usd, None);
        assert_eq!(total([&first, &second]), Some(sum));
        assert_eq!(total(std::iter::empty()), None);
    }
}
