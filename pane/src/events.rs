//! The live event bus of the pane host. Events are not durable: a subscriber sees the
//! events sent while it is subscribed, and `broadcast` reports when it lagged.

use nagi_schema::pane_events::{PaneEventData, PaneEventEnvelope, PaneSubscriptionEnvelope};
use tokio::sync::broadcast;

/// Events a subscriber may fall behind by before it sees `RecvError::Lagged`.
const EVENT_CAPACITY: usize = 4096;

pub struct EventBus {
    sender: broadcast::Sender<PaneEventEnvelope>,
}

impl Default for EventBus {
    fn default() -> Self {
        EventBus::new()
    }
}

impl EventBus {
    pub fn new() -> EventBus {
        let (sender, _) = broadcast::channel(EVENT_CAPACITY);
        EventBus { sender }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<PaneEventEnvelope> {
        self.sender.subscribe()
    }

    pub fn emit(&self, data: PaneEventData) {
        let _ = self.sender.send(PaneEventEnvelope::lifecycle(data));
    }

    pub fn emit_subscription_event(&self, envelope: PaneSubscriptionEnvelope) {
        let _ = self.sender.send(PaneEventEnvelope::Subscription(envelope));
    }
}
