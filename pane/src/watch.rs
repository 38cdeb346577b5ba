//! Output matching: `pane.wait_for_output` and the watches behind `pane.output_matched`
//! subscriptions.
//!
//! A match is searched in the text of a read (`source`, `lines`, `strip_ansi`); the
//! matched line is the line holding the start of the last match. Each line of a read has
//! an id (its absolute row number), so a watch fires once per new occurrence: when the
//! matched line's id or text differs from the last one it reported. The occurrence
//! present when the watch starts is its baseline and does not fire; `wait_for_output`,
//! in contrast, returns at once when the output already matches.
//!
//! Identical subscriptions share one watch (reference-counted by [`OutputWatchGuard`]),
//! and each event carries its subscription, so `subscription_matches` delivers it only
//! to subscribers of that exact pattern.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use nagi_schema::pane::{
    OutputMatch, PaneMethodResult, PaneWaitForOutputParams, ReadFormat, ReadSource,
};
use nagi_schema::pane_events::{
    OutputMatchedSubscription, PaneOutputMatchedEvent, PaneSubscriptionEnvelope,
};
use tokio::sync::watch;

use super::core::{PaneCore, validate_lines, wants_ansi};
use super::error::PaneError;
use super::events::EventBus;
use super::host::PaneHost;
use super::screen::ReadLines;

/// Output changes closer together than this are evaluated once.
const COALESCE: Duration = Duration::from_millis(15);

pub enum OutputMatcher {
    Substring(String),
    Regex(regex::Regex),
}

impl OutputMatcher {
    pub fn new(output_match: &OutputMatch) -> Result<OutputMatcher, PaneError> {
        match output_match {
            OutputMatch::Substring { value } if value.is_empty() => Err(PaneError::invalid(
                "the substring to match must not be empty",
            )),
            OutputMatch::Substring { value } => Ok(OutputMatcher::Substring(value.clone())),
            OutputMatch::Regex { value } => regex::Regex::new(value)
                .map(OutputMatcher::Regex)
                .map_err(|error| PaneError::InvalidRegex {
                    pattern: value.clone(),
                    message: error.to_string(),
                }),
        }
    }

    /// Index of the line holding the start of the last match in `text`.
    pub fn last_match_line(&self, text: &str) -> Option<usize> {
        let offset = match self {
            OutputMatcher::Substring(value) => text.rfind(value.as_str())?,
            OutputMatcher::Regex(regex) => regex.find_iter(text).last()?.start(),
        };
        Some(text[..offset].bytes().filter(|byte| *byte == b'\n').count())
    }
}

/// The matched line of a read: (line id, line text).
fn find_match(matcher: &OutputMatcher, read: &ReadLines, ansi: bool) -> Option<(u64, String)> {
    let text = read.text(ansi);
    let index = matcher.last_match_line(&text)?;
    let line = read.lines.get(index).or(read.lines.last())?;
    Some((line.id, line.text.clone()))
}

fn check_source(source: ReadSource) -> Result<(), PaneError> {
    if source == ReadSource::Detection {
        return Err(PaneError::FeatureUnavailable {
            feature: "read source `detection` (screen-based agent detection)".into(),
        });
    }
    Ok(())
}

/// Waits until the pane's output matches; returns the `output_matched` result.
pub async fn wait_for_output(
    core: Arc<PaneCore>,
    params: &PaneWaitForOutputParams,
) -> Result<PaneMethodResult, PaneError> {
    validate_lines(params.lines)?;
    check_source(params.source)?;
    let matcher = OutputMatcher::new(&params.output_match)?;
    let ansi = wants_ansi(ReadFormat::Text, params.strip_ansi);
    let deadline = params
        .timeout_ms
        .map(|timeout| tokio::time::Instant::now() + Duration::from_millis(timeout));
    let mut changes = core.changes.subscribe();
    loop {
        changes.borrow_and_update();
        let finished = core.is_finished();
        let (read, revision) = core.read_lines(params.source, params.lines, ansi)?;
        if let Some((_, matched_line)) = find_match(&matcher, &read, ansi) {
            return Ok(PaneMethodResult::OutputMatched {
                pane_id: core.identity.pane_id.clone(),
                revision,
                matched_line: Some(matched_line),
                read: core.read_result(params.source, ansi, &read, revision),
            });
        }
        if finished {
            return Err(PaneError::PaneExited {
                pane_id: core.identity.pane_id.clone(),
            });
        }
        let changed = match deadline {
            Some(deadline) => tokio::select! {
                changed = changes.changed() => changed,
                () = tokio::time::sleep_until(deadline) => {
                    return Err(PaneError::Timeout { pane_id: core.identity.pane_id.clone(), timeout_ms: params.timeout_ms.unwrap_or(0) });
                }
            },
            None => changes.changed().await,
        };
        if changed.is_err() {
            return Err(PaneError::PaneExited {
                pane_id: core.identity.pane_id.clone(),
            });
        }
        tokio::time::sleep(COALESCE).await;
    }
}

struct WatchEntry {
    references: usize,
    task: tokio::task::JoinHandle<()>,
}

/// The running output watches of a host.
#[derive(Default)]
pub struct OutputWatches {
    entries: HashMap<OutputMatchedSubscription, WatchEntry>,
}

/// Keeps an output watch alive; dropping the last guard of a subscription stops it.
pub struct OutputWatchGuard {
    host: Weak<PaneHost>,
    subscription: OutputMatchedSubscription,
}

impl Drop for OutputWatchGuard {
    fn drop(&mut self) {
        let Some(host) = self.host.upgrade() else {
            return;
        };
        let mut watches = host
            .watches
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(entry) = watches.entries.get_mut(&self.subscription) {
            entry.references -= 1;
            if entry.references == 0 {
                entry.task.abort();
                watches.entries.remove(&self.subscription);
            }
        }
    }
}

/// The last occurrence of the subscription's pattern in the pane's output now, with the
/// read it was found in.
fn evaluate_watch(
    core: &PaneCore,
    matcher: &OutputMatcher,
    subscription: &OutputMatchedSubscription,
) -> Option<((u64, String), ReadLines, u64)> {
    let ansi = wants_ansi(ReadFormat::Text, subscription.strip_ansi);
    let (read, revision) = core
        .read_lines(subscription.source, subscription.lines, ansi)
        .ok()?;
    let found = find_match(matcher, &read, ansi)?;
    Some((found, read, revision))
}

/// Reports each new occurrence after `baseline`, which the caller took when the
/// subscription started (after subscribing to `changes`), so that output arriving before
/// this task first runs still counts as new.
async fn run_watch(
    core: Weak<PaneCore>,
    mut changes: watch::Receiver<u64>,
    matcher: OutputMatcher,
    subscription: OutputMatchedSubscription,
    events: Arc<EventBus>,
    baseline: Option<(u64, String)>,
) {
    let ansi = wants_ansi(ReadFormat::Text, subscription.strip_ansi);
    let evaluate = |core: &PaneCore| evaluate_watch(core, &matcher, &subscription);
    let mut last = baseline;
    loop {
        if changes.changed().await.is_err() {
            return;
        }
        tokio::time::sleep(COALESCE).await;
        let Some(core) = core.upgrade() else {
            return;
        };
        changes.borrow_and_update();
        let Some((found, read, revision)) = evaluate(&core) else {
            continue;
        };
        if last.as_ref() == Some(&found) {
            continue;
        }
        events.emit_subscription_event(PaneSubscriptionEnvelope::OutputMatched(
            PaneOutputMatchedEvent {
                pane_id: core.identity.pane_id.clone(),
                matched_line: found.1.clone(),
                read: core.read_result(subscription.source, ansi, &read, revision),
                subscription: Some(subscription.clone()),
            },
        ));
        last = Some(found);
    }
}

impl PaneHost {
    /// `pane.wait_for_output`: returns `output_matched` when the output matches (at once if
    /// it already does); `timeout` when `timeout_ms` passes first; `pane_exited` when the
    /// process ended and the output can no longer change.
    pub async fn wait_for_output(
        &self,
        params: &PaneWaitForOutputParams,
    ) -> Result<PaneMethodResult, PaneError> {
        let core = self.pane_core(&params.pane_id)?;
        wait_for_output(core, params).await
    }

    /// Starts (or shares) the watch that produces `pane.output_matched` events for this
    /// subscription. Keep the guard for as long as the subscription lasts.
    pub fn watch_output(
        self: &Arc<Self>,
        subscription: &OutputMatchedSubscription,
    ) -> Result<OutputWatchGuard, PaneError> {
        validate_lines(subscription.lines)?;
        check_source(subscription.source)?;
        let matcher = OutputMatcher::new(&subscription.output_match)?;
        let core = self.pane_core(&subscription.pane_id)?;
        let mut watches = self
            .watches
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match watches.entries.get_mut(subscription) {
            Some(entry) => entry.references += 1,
            None => {
                // Subscribed before the baseline is read: a change after the read is seen.
                let changes = core.changes.subscribe();
                let baseline =
                    evaluate_watch(&core, &matcher, subscription).map(|(found, _, _)| found);
                let task = self.runtime.spawn(run_watch(
                    Arc::downgrade(&core),
                    changes,
                    matcher,
                    subscription.clone(),
                    self.events.clone(),
                    baseline,
                ));
                watches.entries.insert(
                    subscription.clone(),
                    WatchEntry {
                        references: 1,
                        task,
                    },
                );
            }
        }
        Ok(OutputWatchGuard {
            host: Arc::downgrade(self),
            subscription: subscription.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_report_the_line_of_the_last_match() {
        let matcher = OutputMatcher::new(&OutputMatch::Substring { value: "ok".into() }).unwrap();
        assert_eq!(matcher.last_match_line("ok\nno\nok then\nnothing"), Some(2));
        assert_eq!(matcher.last_match_line("nothing"), None);
        let matcher = OutputMatcher::new(&OutputMatch::Regex {
            value: r"done \d+".into(),
        })
        .unwrap();
        assert_eq!(matcher.last_match_line("done 1\nx\ndone 22\ny"), Some(2));
    }

    #[test]
    fn bad_patterns_are_rejected() {
        match OutputMatcher::new(&OutputMatch::Regex {
            value: "(unclosed".into(),
        }) {
            Err(PaneError::InvalidRegex { pattern, message }) => {
                assert_eq!(pattern, "(unclosed");
                assert!(message.contains("unclosed"), "{message}");
            }
            _ => panic!("expected invalid_regex"),
        }
        assert!(
            OutputMatcher::new(&OutputMatch::Substring {
                value: String::new()
            })
            .is_err()
        );
    }
}
