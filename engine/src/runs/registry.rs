//! Which runs have a live provider in this process, and which attention items have a live
//! response channel. Durable state lives in the store; this is only what a restart loses.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use crate::mission::view::{LiveAttention, LiveRuns};

#[derive(Default)]
pub struct RunRegistry {
    inner: Mutex<RegistryState>,
}

#[derive(Default)]
struct RegistryState {
    /// run id -> mission id
    live_runs: BTreeMap<String, String>,
    respondable_attention: BTreeSet<String>,
}

impl RunRegistry {
    pub fn mark_live(&self, run_id: &str, mission_id: &str) {
        if let Ok(mut state) = self.inner.lock() {
            state.live_runs.insert(run_id.to_string(), mission_id.to_string());
        }
    }

    pub fn mark_ended(&self, run_id: &str) {
        if let Ok(mut state) = self.inner.lock() {
            state.live_runs.remove(run_id);
        }
    }

    /// The mission a live run belongs to.
    pub fn live_mission_of(&self, run_id: &str) -> Option<String> {
        self.inner.lock().ok()?.live_runs.get(run_id).cloned()
    }

    pub fn live_run_count(&self) -> usize {
        self.inner.lock().map(|state| state.live_runs.len()).unwrap_or(0)
    }

    pub fn set_respondable(&self, attention_id: &str, respondable: bool) {
        if let Ok(mut state) = self.inner.lock() {
            if respondable {
                state.respondable_attention.insert(attention_id.to_string());
            } else {
                state.respondable_attention.remove(attention_id);
            }
        }
    }
}

impl LiveRuns for RunRegistry {
    fn is_live(&self, run_id: &str) -> bool {
        self.inner.lock().map(|state| state.live_runs.contains_key(run_id)).unwrap_or(false)
    }
}

impl LiveAttention for RunRegistry {
    fn is_respondable(&self, attention_id: &str) -> bool {
        self.inner.lock().map(|state| state.respondable_attention.contains(attention_id)).unwrap_or(false)
    }
}
