//! Determinism of `MissionLifecycle` without a Temporal service: every history in
//! `tests/histories/` was recorded from a real fleet (the end-to-end tests, with
//! `NAGI_RECORD_FLEET_HISTORIES`; see `tests/histories/README.md`) and must replay against
//! this code. A change that would break the workflows already running in a user's fleet
//! (a command added or moved, an activity's answer that no longer decodes) fails here.

use std::path::{Path, PathBuf};

use nagi_fleet::MissionLifecycle;
use temporalio_client::WorkflowHistory;
use temporalio_sdk::workflow_replayer::{WorkflowReplayer, WorkflowReplayerOptions};

fn recorded_histories() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/histories");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
}

fn replayer() -> WorkflowReplayer {
    let options = WorkflowReplayerOptions::new()
        .register_workflow::<MissionLifecycle>()
        .expect("the workflow registers")
        .build();
    WorkflowReplayer::new(options).expect("a replayer")
}

fn history(path: &Path) -> WorkflowHistory {
    let bytes = std::fs::read(path).unwrap();
    WorkflowHistory::from_json(&bytes).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[tokio::test]
async fn every_recorded_lifecycle_history_replays_against_this_code() {
    let paths = recorded_histories();
    assert!(
        paths.len() >= 5,
        "the recorded histories are missing: {paths:?}"
    );
    let replayer = replayer();
    for path in &paths {
        if let Err(error) = replayer.replay_workflow(history(path)).await {
            panic!("{} no longer replays: {error}", path.display());
        }
    }
}
