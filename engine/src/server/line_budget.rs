//! One budget for the unfinished request lines of every connection. A line is read into
//! memory until its newline arrives; without a shared bound, thousands of connections each
//! holding most of a 1 MiB line would pin gigabytes. Each line may use a small allowance
//! freely; growing past it takes from the budget, which the line gives back when it
//! completes, is dropped, or its connection closes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What a line may buffer without charging the budget.
pub const FREE_BYTES_PER_LINE: usize = 16 * 1024;

#[derive(Debug, Clone)]
pub struct PartialLineBudget {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    used_bytes: AtomicUsize,
    limit_bytes: usize,
}

impl PartialLineBudget {
    pub fn new(limit_bytes: usize) -> PartialLineBudget {
        PartialLineBudget {
            shared: Arc::new(Shared {
                used_bytes: AtomicUsize::new(0),
                limit_bytes,
            }),
        }
    }

    pub fn limit_bytes(&self) -> usize {
        self.shared.limit_bytes
    }

    /// Bytes charged now, across every line.
    pub fn used_bytes(&self) -> usize {
        self.shared.used_bytes.load(Ordering::Relaxed)
    }

    fn try_charge(&self, bytes: usize) -> bool {
        self.shared
            .used_bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                let total = used.checked_add(bytes)?;
                (total <= self.shared.limit_bytes).then_some(total)
            })
            .is_ok()
    }

    fn give_back(&self, bytes: usize) {
        self.shared.used_bytes.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// The start of a line whose newline has not arrived yet, and the part of its buffer's
/// memory charged to the budget (none when unbounded).
#[derive(Debug, Default)]
pub struct PendingLine {
    bytes: Vec<u8>,
    charged_bytes: usize,
    budget: Option<PartialLineBudget>,
}

/// The budget is spent: the line was dropped.
#[derive(Debug, PartialEq, Eq)]
pub struct BudgetSpent;

impl PendingLine {
    pub fn bounded(budget: Option<PartialLineBudget>) -> PendingLine {
        PendingLine {
            bytes: Vec::new(),
            charged_bytes: 0,
            budget,
        }
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Appends `more`, growing the buffer (at least doubling, so a long line is copied a
    /// few times, not once per read) under the budget. When the budget cannot cover the
    /// growth, the line is dropped and its memory freed.
    pub fn extend(&mut self, more: &[u8]) -> Result<(), BudgetSpent> {
        let needed = self.bytes.len() + more.len();
        if needed > self.bytes.capacity() {
            let capacity = needed.max(self.bytes.capacity() * 2).max(256);
            if let Some(budget) = &self.budget {
                let charge = capacity.saturating_sub(FREE_BYTES_PER_LINE);
                if charge > self.charged_bytes {
                    if !budget.try_charge(charge - self.charged_bytes) {
                        self.clear();
                        return Err(BudgetSpent);
                    }
                    self.charged_bytes = charge;
                }
            }
            self.bytes.reserve_exact(capacity - self.bytes.len());
        }
        self.bytes.extend_from_slice(more);
        Ok(())
    }

    /// The complete line; its charge is given back.
    pub fn take(&mut self) -> Vec<u8> {
        let line = std::mem::take(&mut self.bytes);
        self.give_back();
        line
    }

    /// Drops the line and frees its buffer.
    pub fn clear(&mut self) {
        self.bytes = Vec::new();
        self.give_back();
    }

    fn give_back(&mut self) {
        if let Some(budget) = &self.budget
            && self.charged_bytes > 0
        {
            budget.give_back(self.charged_bytes);
        }
        self.charged_bytes = 0;
    }
}

impl Drop for PendingLine {
    fn drop(&mut self) {
        self.give_back();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_within_its_allowance_charges_nothing() {
        let budget = PartialLineBudget::new(1024);
        let mut line = PendingLine::bounded(Some(budget.clone()));
        line.extend(&[b'x'; 10_000]).unwrap();
        assert_eq!(budget.used_bytes(), 0);
        assert_eq!(line.take().len(), 10_000);
    }

    #[test]
    fn growth_past_the_allowance_is_charged_and_given_back_when_the_line_completes() {
        let budget = PartialLineBudget::new(1 << 20);
        let mut line = PendingLine::bounded(Some(budget.clone()));
        for _ in 0..10 {
            line.extend(&[b'x'; 10_000]).unwrap();
        }
        assert!(budget.used_bytes() >= 100_000 - FREE_BYTES_PER_LINE);
        assert!(budget.used_bytes() <= 2 * 100_000);
        assert_eq!(line.take().len(), 100_000);
        assert_eq!(budget.used_bytes(), 0);
    }

    #[test]
    fn a_dropped_connection_gives_its_charge_back() {
        let budget = PartialLineBudget::new(1 << 20);
        let mut line = PendingLine::bounded(Some(budget.clone()));
        line.extend(&[b'x'; 200_000]).unwrap();
        assert!(budget.used_bytes() > 0);
        drop(line);
        assert_eq!(budget.used_bytes(), 0);
    }

    #[test]
    fn past_the_budget_the_line_is_refused_and_freed_while_others_keep_theirs() {
        let budget = PartialLineBudget::new(300_000);
        let mut first = PendingLine::bounded(Some(budget.clone()));
        first.extend(&[b'x'; 200_000]).unwrap();
        let held = budget.used_bytes();
        let mut second = PendingLine::bounded(Some(budget.clone()));
        second.extend(&[b'y'; 10_000]).unwrap();
        assert_eq!(second.extend(&[b'y'; 190_000]), Err(BudgetSpent));
        assert!(second.is_empty());
        assert_eq!(budget.used_bytes(), held, "the refused line holds nothing");
        first.clear();
        assert_eq!(budget.used_bytes(), 0);
    }
}
