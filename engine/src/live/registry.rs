//! Which runs have a live provider in this process, and which attention items have a live
//! response channel. Durable state lives in the store; this is only what a restart loses.

use std::collections::BTreeMap;
use std::sync::Mutex;

use nagi_providers::ProviderCommand;
use tokio::sync::mpsc;

use nagi_mission::view::{LiveAttention, LiveRuns};

/// A live provider run.
#[derive(Clone)]
pub struct LiveRun {
    pub mission_id: String,
    pub commands: mpsc::Sender<ProviderCommand>,
    /// Started by recovery after a restart: a transport failure blocks instead of failing.
    pub recovered: bool,
    /// The checkout claim key the run holds.
    pub claim_key: String,
    /// Follow-ups, interrupts and stops asked of this run.
    pub steering: std::sync::Arc<super::steering::RunSteering>,
    /// The run's transcript, which its pane shows.
    pub transcript: std::sync::Arc<crate::transcript::Transcript>,
}

#[derive(Default)]
pub struct RunRegistry {
    inner: Mutex<RegistryState>,
}

#[derive(Default)]
struct RegistryState {
    live_runs: BTreeMap<String, LiveRun>,
    /// attention id -> (run id, provider request key)
    respondable: BTreeMap<String, (String, String)>,
    /// run ids whose checks are running in this process.
    checking: BTreeMap<String, String>,
}

impl RunRegistry {
    pub fn insert(&self, run_id: &str, run: LiveRun) {
        if let Ok(mut state) = self.inner.lock() {
            state.live_runs.insert(run_id.to_string(), run);
        }
    }

    pub fn remove(&self, run_id: &str) -> Option<LiveRun> {
        let mut state = self.inner.lock().ok()?;
        state.respondable.retain(|_, (run, _)| run != run_id);
        state.live_runs.remove(run_id)
    }

    pub fn get(&self, run_id: &str) -> Option<LiveRun> {
        self.inner.lock().ok()?.live_runs.get(run_id).cloned()
    }

    pub fn live_run_count(&self) -> usize {
        self.inner
            .lock()
            .map(|state| state.live_runs.len())
            .unwrap_or(0)
    }

    pub fn live_run_ids(&self) -> Vec<String> {
        self.inner
            .lock()
            .map(|state| state.live_runs.keys().cloned().collect())
            .unwrap_or_default()
    }

    pub fn set_respondable(&self, attention_id: &str, run_id: &str, request_key: &str) {
        if let Ok(mut state) = self.inner.lock() {
            state.respondable.insert(
                attention_id.to_string(),
                (run_id.to_string(), request_key.to_string()),
            );
        }
    }

    pub fn clear_respondable(&self, attention_id: &str) {
        if let Ok(mut state) = self.inner.lock() {
            state.respondable.remove(attention_id);
        }
    }

    /// The live channel behind an attention item: (run id, provider request key).
    pub fn response_route(&self, attention_id: &str) -> Option<(String, String)> {
        self.inner
            .lock()
            .ok()?
            .respondable
            .get(attention_id)
            .cloned()
    }

    /// Marks a check run as in flight for `run_id`; false if one already is.
    pub fn begin_checks(&self, run_id: &str, mission_id: &str) -> bool {
        let Ok(mut state) = self.inner.lock() else {
            return false;
        };
        if state.checking.contains_key(run_id) {
            return false;
        }
        state
            .checking
            .insert(run_id.to_string(), mission_id.to_string());
        true
    }

    pub fn end_checks(&self, run_id: &str) {
        if let Ok(mut state) = self.inner.lock() {
            state.checking.remove(run_id);
        }
    }

    /// The mission whose checks run under `run_id`, if any.
    pub fn checks_in_flight(&self, run_id: &str) -> Option<String> {
        self.inner.lock().ok()?.checking.get(run_id).cloned()
    }
}

impl LiveRuns for RunRegistry {
    fn is_live(&self, run_id: &str) -> bool {
        self.inner
            .lock()
            .map(|state| state.live_runs.contains_key(run_id))
            .unwrap_or(false)
    }
}

impl LiveAttention for RunRegistry {
    fn is_respondable(&self, attention_id: &str) -> bool {
        self.inner
            .lock()
            .map(|state| state.respondable.contains_key(attention_id))
            .unwrap_or(false)
    }
}
