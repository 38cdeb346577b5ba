//! The mission-event follower: an `events.subscribe` connection on a thread of its own
//! that feeds durable mission events to the state (which refreshes on each, and tracks
//! check runs in flight from `mission_checks_started` / `mission_checks_finished`).
//!
//! It first replays the log from the start, so that checks already running when the
//! cockpit opened show as running, and resumes after the last sequence it saw when the
//! connection is lost (a server restart), so no event is missed.

use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::time::Duration;

use nagi_schema::client::Client;
use nagi_schema::events::MissionEventV1;
use serde_json::{Value, json};

use crate::request::ServerUpdate;

const RETRY_AFTER: Duration = Duration::from_millis(500);

/// Starts the follower thread. It ends when the state's channel is gone.
pub fn spawn(socket_path: PathBuf, updates: Sender<ServerUpdate>) {
    std::thread::Builder::new()
        .name("cockpit-events".into())
        .spawn(move || {
            let mut last_seq = 0;
            loop {
                if !follow(&socket_path, &mut last_seq, &updates) {
                    return;
                }
                std::thread::sleep(RETRY_AFTER);
            }
        })
        .expect("the cockpit can start a thread");
}

/// Follows one connection until it fails; `false` when the state has gone.
fn follow(socket_path: &Path, last_seq: &mut u64, updates: &Sender<ServerUpdate>) -> bool {
    let Ok(mut client) = Client::connect(socket_path) else {
        return true;
    };
    let params = json!({"subscriptions": [{"type": "mission"}], "after_seq": *last_seq});
    if client.request("events.subscribe", params).is_err() {
        return true;
    }
    loop {
        let Ok(line) = client.read_value() else {
            return true;
        };
        let Some(data) = line.get("data") else {
            continue;
        };
        let Some(seq) = data.get("seq").and_then(Value::as_u64) else {
            continue;
        };
        if seq <= *last_seq {
            continue;
        }
        *last_seq = seq;
        // Kinds this build does not know are skipped; the next refresh shows their effect.
        let Ok(event) = serde_json::from_value::<MissionEventV1>(data.clone()) else {
            continue;
        };
        if updates.send(ServerUpdate::MissionEvent(event)).is_err() {
            return false;
        }
    }
}
