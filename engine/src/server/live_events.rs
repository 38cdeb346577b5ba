//! Live workspace, tab and pane events for `events.subscribe` and `events.wait`.
//!
//! These events come from the pane host's broadcast bus and are not durable: a subscriber
//! sees what happens while it is subscribed. A subscriber that falls behind the bus by more
//! than its capacity loses the oldest events; it is told so with an `events.lagged` notice
//! line and the stream goes on (durable mission events on the same stream are unaffected).

use std::sync::Arc;

use nagi_schema::pane_events::{
    EventsLagged, PaneEventData, PaneEventEnvelope, PaneEventMatch, PaneSubscription,
    SubscriptionNotice,
};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use crate::errors::EngineError;
use nagi_pane::{OutputWatchGuard, PaneHost, event_match_matches, subscription_matches};

/// The pane part of one `events.subscribe` stream.
pub struct LiveEvents {
    receiver: broadcast::Receiver<PaneEventEnvelope>,
    subscriptions: Vec<PaneSubscription>,
    /// `pane.output_matched` needs the host to watch the pane's screen; the watches stop
    /// when the stream ends and these guards drop.
    _watches: Vec<OutputWatchGuard>,
}

impl LiveEvents {
    /// Subscribes to the bus, then starts the output watches. Any invalid subscription
    /// (unknown pane, bad regex, `lines` out of range) fails the whole request, and no
    /// watch is left running.
    pub fn start(
        panes: &Arc<PaneHost>,
        subscriptions: Vec<PaneSubscription>,
    ) -> Result<LiveEvents, EngineError> {
        // Subscribe first, so that nothing a watch reports right after it starts is lost.
        let receiver = panes.subscribe_events();
        let mut watches = Vec::new();
        for subscription in &subscriptions {
            if let PaneSubscription::PaneOutputMatched(output) = subscription {
                watches.push(panes.watch_output(output)?);
            }
        }
        Ok(LiveEvents {
            receiver,
            subscriptions,
            _watches: watches,
        })
    }

    /// The next line to push: a matching event, or a lag notice. `None` once the bus is
    /// gone (the server is stopping).
    pub async fn next_line(&mut self) -> Option<String> {
        loop {
            match self.receiver.recv().await {
                Ok(event) => {
                    if self
                        .subscriptions
                        .iter()
                        .any(|subscription| subscription_matches(subscription, &event))
                    {
                        return Some(
                            serde_json::to_string(&event).expect("pane events always serialize"),
                        );
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(
                        missed,
                        "an event subscriber fell behind the live pane events"
                    );
                    return Some(lagged_line(missed));
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}

/// The notice for a subscriber that lost `missed` live events.
pub fn lagged_line(missed: u64) -> String {
    let notice = SubscriptionNotice::Lagged(EventsLagged {
        missed,
        message: format!(
            "this subscriber fell behind and {missed} live pane events were dropped for it; call session.snapshot to \
             resynchronise (durable mission events are not affected)"
        ),
    });
    serde_json::to_string(&notice).expect("notices always serialize")
}

/// Waits for the first live event that satisfies an `events.wait` match. Only events that
/// happen after the wait began count, but for the end of a pane that has already ended:
/// a wait for `pane_exited` of such a pane answers at once with its exit (a wait that
/// reached the server a moment after the exit would otherwise wait for nothing).
pub async fn wait_for_pane_event(
    panes: &PaneHost,
    matcher: &PaneEventMatch,
) -> Result<PaneEventEnvelope, EngineError> {
    // Subscribed first, so that an exit after the check below still arrives.
    let mut receiver = panes.subscribe_events();
    if let PaneEventMatch::PaneExited { pane_id } = matcher
        && let Ok(pane) = panes.pane_info(pane_id)
        && let Some(exit) = pane.exit_status
    {
        return Ok(PaneEventEnvelope::lifecycle(PaneEventData::PaneExited {
            pane_id: pane.pane_id,
            workspace_id: pane.workspace_id,
            exit_code: exit.exit_code,
            signal: exit.signal,
        }));
    }
    loop {
        match receiver.recv().await {
            Ok(event) if event_match_matches(matcher, &event) => return Ok(event),
            Ok(_) => {}
            Err(RecvError::Lagged(missed)) => {
                // The match may have been among the dropped events; the wait goes on, and
                // its timeout bounds it.
                tracing::warn!(missed, "an events.wait fell behind the live pane events");
            }
            Err(RecvError::Closed) => {
                return Err(EngineError::ServerUnavailable(
                    "the server is shutting down".into(),
                ));
            }
        }
    }
}
