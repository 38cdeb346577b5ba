//! What steering asked of a live run, shared by the socket handlers (`runs/steer.rs`) and
//! the run's supervisor. The durable record is the mission's `RunSteered` events; this is
//! the part only the live process needs: the follow-ups waiting for the running turn, and
//! who asked for an interrupt or a stop, so the turn's end can say so.

use std::collections::VecDeque;

use tokio::sync::Mutex;

#[derive(Default)]
pub struct RunSteering {
    state: Mutex<SteeringState>,
}

#[derive(Default)]
pub struct SteeringState {
    follow_ups: VecDeque<String>,
    /// The supervisor ended the provider's part of the run: no follow-up is taken any more
    /// (a later one starts the provider again on its session).
    closing: bool,
    interrupted_by: Option<String>,
    stopped_by: Option<String>,
}

impl SteeringState {
    /// Whether a follow-up can still be queued behind the running turn.
    pub fn accepts_follow_ups(&self) -> bool {
        !self.closing && self.stopped_by.is_none()
    }

    pub fn queue(&mut self, text: String) {
        self.follow_ups.push_back(text);
    }

    pub fn interrupt_by(&mut self, actor: String) {
        self.interrupted_by = Some(actor);
    }

    /// A stop ends the run: nothing queued is sent any more.
    pub fn stop_by(&mut self, actor: String) {
        self.stopped_by = Some(actor);
        self.closing = true;
        self.follow_ups.clear();
    }
}

impl RunSteering {
    pub async fn lock(&self) -> tokio::sync::MutexGuard<'_, SteeringState> {
        self.state.lock().await
    }

    /// A turn completed: the next queued follow-up, or `None`, after which the run takes
    /// no more (decided under one lock, so a follow-up is either sent or refused, never
    /// lost in between).
    pub async fn next_follow_up(&self) -> Option<String> {
        let mut state = self.state.lock().await;
        let next = if state.stopped_by.is_none() {
            state.follow_ups.pop_front()
        } else {
            None
        };
        if next.is_none() {
            state.closing = true;
        }
        next
    }

    /// A turn ended other than completed: the queue is dropped; returns how many
    /// follow-ups were waiting.
    pub async fn close(&self) -> usize {
        let mut state = self.state.lock().await;
        state.closing = true;
        let dropped = state.follow_ups.len();
        state.follow_ups.clear();
        dropped
    }

    pub async fn interrupted_by(&self) -> Option<String> {
        self.state.lock().await.interrupted_by.clone()
    }

    pub async fn stopped_by(&self) -> Option<String> {
        self.state.lock().await.stopped_by.clone()
    }
}
