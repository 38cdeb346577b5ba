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

/// A run of one mission. `mission.start` refuses a run id that another mission used, but a
/// store from before that rule may hold two missions with runs of one id, so every lookup
/// names both.
type RunKey = (String, String);

fn key(mission_id: &str, run_id: &str) -> RunKey {
    (mission_id.to_string(), run_id.to_string())
}

#[derive(Default)]
pub struct RunRegistry {
    inner: Mutex<RegistryState>,
}

#[derive(Default)]
struct RegistryState {
    live_runs: BTreeMap<RunKey, LiveRun>,
    /// attention id -> (run key, provider request key)
    respondable: BTreeMap<String, (RunKey, String)>,
    /// Runs whose checks are running in this process.
    checking: std::collections::BTreeSet<RunKey>,
}

impl RunRegistry {
    pub fn insert(&self, run_id: &str, run: LiveRun) {
        if let Ok(mut state) = self.inner.lock() {
            state.live_runs.insert(key(&run.mission_id, run_id), run);
        }
    }

    pub fn remove(&self, mission_id: &str, run_id: &str) -> Option<LiveRun> {
        let mut state = self.inner.lock().ok()?;
        let run = key(mission_id, run_id);
        state.respondable.retain(|_, (of, _)| *of != run);
        state.live_runs.remove(&run)
    }

    /// The live provider of `mission_id`'s run `run_id`.
    pub fn get(&self, mission_id: &str, run_id: &str) -> Option<LiveRun> {
        self.inner
            .lock()
            .ok()?
            .live_runs
            .get(&key(mission_id, run_id))
            .cloned()
    }

    /// A live run of id `run_id` in any mission (`mission.start`'s conflict check).
    pub fn get_in_any_mission(&self, run_id: &str) -> Option<LiveRun> {
        let state = self.inner.lock().ok()?;
        state
            .live_runs
            .iter()
            .find(|((_, id), _)| id == run_id)
            .map(|(_, run)| run.clone())
    }

    pub fn live_run_count(&self) -> usize {
        self.inner
            .lock()
            .map(|state| state.live_runs.len())
            .unwrap_or(0)
    }

    /// Every live run.
    pub fn live_runs(&self) -> Vec<LiveRun> {
        self.inner
            .lock()
            .map(|state| state.live_runs.values().cloned().collect())
            .unwrap_or_default()
    }

    pub fn set_respondable(
        &self,
        attention_id: &str,
        mission_id: &str,
        run_id: &str,
        request_key: &str,
    ) {
        if let Ok(mut state) = self.inner.lock() {
            state.respondable.insert(
                attention_id.to_string(),
                (key(mission_id, run_id), request_key.to_string()),
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
            .map(|((_, run_id), request_key)| (run_id.clone(), request_key.clone()))
    }

    /// Marks a check run as in flight for `mission_id`'s run `run_id`; false if one
    /// already is.
    pub fn begin_checks(&self, mission_id: &str, run_id: &str) -> bool {
        let Ok(mut state) = self.inner.lock() else {
            return false;
        };
        state.checking.insert(key(mission_id, run_id))
    }

    pub fn end_checks(&self, mission_id: &str, run_id: &str) {
        if let Ok(mut state) = self.inner.lock() {
            state.checking.remove(&key(mission_id, run_id));
        }
    }

    /// Whether the checks of `mission_id`'s run `run_id` are running.
    pub fn checks_running(&self, mission_id: &str, run_id: &str) -> bool {
        self.inner
            .lock()
            .map(|state| state.checking.contains(&key(mission_id, run_id)))
            .unwrap_or(false)
    }
}

impl LiveRuns for RunRegistry {
    fn is_live(&self, mission_id: &str, run_id: &str) -> bool {
        self.inner
            .lock()
            .map(|state| state.live_runs.contains_key(&key(mission_id, run_id)))
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
