//! Acknowledged means durable: SIGKILL during concurrent writes loses nothing that was
//! answered and leaves no partial mission; concurrent identical creates make one mission.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use nagi_tests::*;
use serde_json::{Value, json};

#[test]
fn every_answered_create_survives_a_sigkill_and_no_partial_mission_exists() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let acknowledged: Arc<Mutex<Vec<Value>>> = Arc::default();
    let socket = env.socket.clone();
    let mut clients = Vec::new();
    for client_index in 0..8 {
        let acknowledged = acknowledged.clone();
        let socket = socket.clone();
        let repository = repo.path_text();
        clients.push(std::thread::spawn(move || {
            let Ok(mut client) = nagi_schema::client::Client::connect(&socket) else {
                return;
            };
            for index in 0..10_000 {
                let params = create_params(&format!("c{client_index}-{index}"), &repository);
                match client.request("mission.create", params) {
                    Ok(result) => acknowledged.lock().unwrap().push(result["mission"].clone()),
                    Err(_) => return,
                }
            }
        }));
    }
    std::thread::sleep(Duration::from_millis(700));
    env.kill_server();
    for client in clients {
        client.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        acknowledged.len() > 8,
        "the clients made progress before the kill ({})",
        acknowledged.len()
    );

    env.start_server();
    let listed = env.ok("mission.list", json!({}));
    let stored = listed["missions"].as_array().unwrap();
    for view in &acknowledged {
        let id = view["mission_id"].as_str().unwrap();
        let now = env.ok("mission.get", json!({"mission_id": id}));
        assert_eq!(
            &now["mission"], view,
            "acknowledged mission {id} changed or vanished"
        );
    }
    // Anything stored beyond the acknowledged ones is whole (committed but unanswered).
    for summary in stored {
        let id = summary["mission_id"].as_str().unwrap();
        let mission = env.ok("mission.get", json!({"mission_id": id}))["mission"].clone();
        assert_eq!(
            mission["criteria"].as_array().unwrap().len(),
            2,
            "{id} is partial"
        );
        assert_eq!(mission["title"], "Fix login");
    }
    assert!(stored.len() >= acknowledged.len());
    // The log has exactly one creation event per stored mission.
    let (events, _) = env.store_fingerprint();
    assert_eq!(events as usize, stored.len());
}

#[test]
fn sixteen_identical_concurrent_creates_make_exactly_one() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let barrier = Arc::new(std::sync::Barrier::new(16));
    let outcomes: Vec<Value> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..16)
            .map(|_| {
                let barrier = barrier.clone();
                let env = &env;
                let repository = repo.path_text();
                scope.spawn(move || {
                    let mut client = env.client();
                    barrier.wait();
                    client
                        .request("mission.create", create_params("same", &repository))
                        .unwrap()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });
    let created = outcomes
        .iter()
        .filter(|outcome| outcome["created"] == true)
        .count();
    assert_eq!(created, 1, "{outcomes:#?}");
    let first = &outcomes[0]["mission"];
    assert!(
        outcomes.iter().all(|outcome| &outcome["mission"] == first),
        "every answer shows the same mission"
    );
}
