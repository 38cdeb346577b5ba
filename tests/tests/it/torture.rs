//! Crash torture (issue: proof/recovery and reliability): a mixed workload against the real
//! server, SIGKILL at a random moment, restart, and check the invariants:
//!
//! 1. every acknowledged mutation is present;
//! 2. the projection equals a rebuild from the event log;
//! 3. no claim is leaked: claims belong exactly to runs that are still working;
//! 4. no orphan process survives: every process carrying a run marker belongs to a run that
//!    is still working;
//! 5. every mission is in a legal state, with a reason when blocked or failed.
//!
//! Iterations rotate through kills during a provider turn, during a check run and during a
//! handoff. `NAGI_TORTURE_ITERATIONS` (default 20 of each kind) and `NAGI_TORTURE_SEED`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nagi_mission::{Mission, StoredEvent, apply::fold};
use nagi_tests::*;
use serde_json::{Value, json};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }
}

fn configure_fakes(env: &TestEnv) {
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let script = json!([{"text": "working"}, {"tool": "cat README.md", "output": "# demo"}, {"text": "done"}]).to_string();
    let mut config = String::new();
    for (section, binary) in [("codex", "fake_codex"), ("claude_code", "fake_claude")] {
        config.push_str(&format!(
            "[providers.{section}]\ncommand = [{}]\nenv = {{ NAGI_FAKE_SCRIPT = {} }}\n\n",
            toml_string(test_binary(binary).to_str().unwrap()),
            toml_string(&script)
        ));
    }
    std::fs::write(env.config_dir.join("config.toml"), config).unwrap();
}

/// What the server acknowledged, per mission.
#[derive(Default, Clone)]
struct Acknowledged {
    created: BTreeMap<String, Value>,
    configured: Vec<String>,
    runs: Vec<(String, String)>,
    /// Drafts whose deletion was acknowledged.
    deleted: Vec<String>,
}

fn working(mission: &Value) -> bool {
    matches!(
        mission["status"].as_str(),
        Some("preparing") | Some("active")
    ) || mission["run"]["live"] == true
        || mission.get("checks_running").is_some()
}

fn settle(env: &TestEnv) -> Vec<Value> {
    // Wait until nothing is mid-flight (runs end, checks finish), within a deadline.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let missions: Vec<Value> = env.ok("mission.list", json!({}))["missions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|summary| {
                env.ok("mission.get", json!({"mission_id": summary["mission_id"]}))["mission"]
                    .clone()
            })
            .collect();
        let busy = missions.iter().any(|mission| {
            working(mission)
                || mission["status_reason"]
                    .as_str()
                    .unwrap_or("")
                    .contains("run again")
        });
        if !busy || Instant::now() > deadline {
            return missions;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn rebuild_check(env: &TestEnv) {
    let connection = rusqlite::Connection::open_with_flags(
        env.database_path(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    // One read transaction: the log and the projection from the same committed state.
    let connection = connection.unchecked_transaction().unwrap();
    let mut folded: BTreeMap<String, Mission> = BTreeMap::new();
    let mut previous_seq = 0;
    let mut statement = connection
        .prepare("SELECT seq, mission_id, payload FROM events ORDER BY seq")
        .unwrap();
    let rows = statement
        .query_map([], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (seq, mission_id, payload) = row.unwrap();
        assert_eq!(seq, previous_seq + 1, "the log has a gap before {seq}");
        previous_seq = seq;
        let stored: StoredEvent = serde_json::from_str(&payload).unwrap();
        let previous_status = folded.get(&mission_id).map(|mission| mission.status);
        match fold(folded.remove(&mission_id), &stored.event) {
            Some(next) => {
                assert_eq!(
                    next.status, stored.status_after,
                    "event {seq}: the stored status disagrees with the fold"
                );
                folded.insert(mission_id, next);
            }
            // A deletion records the status the mission had.
            None => assert_eq!(
                previous_status,
                Some(stored.status_after),
                "event {seq}: the deletion's status disagrees with the fold"
            ),
        }
    }
    let mut statement = connection
        .prepare("SELECT mission_id, doc FROM missions")
        .unwrap();
    let docs: Vec<(String, String)> = statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        docs.len(),
        folded.len(),
        "a mission row without events, or events without a row"
    );
    for (mission_id, doc) in docs {
        let stored: Value = serde_json::from_str(&doc).unwrap();
        let rebuilt = serde_json::to_value(folded.get(&mission_id).expect("folded")).unwrap();
        assert_eq!(
            stored, rebuilt,
            "mission {mission_id}: the projection differs from a rebuild of its log"
        );
    }
}

fn marked_runs(env: &TestEnv) -> Vec<String> {
    let session = session_marker_entry(&env.config_dir);
    let mut runs = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let vars: Vec<String> = environ
            .split(|byte| *byte == 0)
            .map(|entry| String::from_utf8_lossy(entry).into_owned())
            .collect();
        if vars.contains(&session)
            && let Some(run) = vars.iter().find_map(|var| var.strip_prefix("NAGI_RUN_ID="))
        {
            runs.push(run.to_string());
        }
    }
    runs
}

fn check_invariants(env: &TestEnv, acknowledged: &Acknowledged, iteration: u64) {
    let missions = settle(env);
    let by_id: BTreeMap<String, Value> = missions
        .iter()
        .map(|mission| {
            (
                mission["mission_id"].as_str().unwrap().to_string(),
                mission.clone(),
            )
        })
        .collect();
    for (mission_id, view) in &acknowledged.created {
        let now = by_id.get(mission_id).unwrap_or_else(|| {
            panic!("iteration {iteration}: acknowledged mission {mission_id} is gone")
        });
        assert_eq!(now["objective"], view["objective"]);
        let ids = |mission: &Value| -> Vec<Value> {
            mission["criteria"]
                .as_array()
                .unwrap()
                .iter()
                .map(|criterion| criterion["criterion_id"].clone())
                .collect()
        };
        assert_eq!(ids(now), ids(view));
    }
    for mission_id in &acknowledged.configured {
        assert_eq!(
            by_id[mission_id]["closure_configured"], true,
            "iteration {iteration}: {mission_id} lost its plan"
        );
    }
    for mission_id in &acknowledged.deleted {
        assert!(
            !by_id.contains_key(mission_id),
            "iteration {iteration}: the deleted draft {mission_id} is back"
        );
    }
    for (mission_id, run_id) in &acknowledged.runs {
        let mission = &by_id[mission_id];
        let known = mission["run"]["run_id"] == run_id.as_str()
            || mission["run_history"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|run| run["run_id"] == run_id.as_str());
        assert!(
            known,
            "iteration {iteration}: acknowledged run {run_id} of {mission_id} is gone"
        );
    }
    for mission in &missions {
        let status = mission["status"].as_str().unwrap();
        assert!(
            [
                "draft",
                "preparing",
                "active",
                "review_required",
                "ready_to_close",
                "blocked",
                "failed",
                "archived"
            ]
            .contains(&status),
            "{status}"
        );
        if status == "blocked" || status == "failed" {
            assert!(
                !mission["status_reason"].as_str().unwrap_or("").is_empty(),
                "iteration {iteration}: {} is {status} without a reason",
                mission["mission_id"]
            );
        }
    }
    rebuild_check(env);
    let live_runs: Vec<String> = missions
        .iter()
        .filter(|mission| working(mission))
        .filter_map(|mission| mission["run"]["run_id"].as_str().map(str::to_string))
        .collect();
    let connection = rusqlite::Connection::open_with_flags(
        env.database_path(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let claim_rows: Vec<(String, String, i64)> = connection
        .prepare("SELECT run_id, request_id, claimed_at_millis FROM claims")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let claims: Vec<String> = claim_rows.iter().map(|row| row.0.clone()).collect();
    // A run that just finished releases its claim a moment after its last event: allow that.
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut claims = claims;
    while claims.iter().any(|claim| !live_runs.contains(claim)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        claims = connection
            .prepare("SELECT run_id FROM claims")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
    }
    for claim in &claims {
        let holder = missions
            .iter()
            .find(|mission| mission["run"]["run_id"] == claim.as_str());
        assert!(
            live_runs.contains(claim),
            "iteration {iteration}: claim of run {claim} leaked (live runs {live_runs:?}); its mission: {holder:#?}; claims at first look: {claim_rows:?}\n{}",
            env.server_log()
        );
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let orphans: Vec<String> = marked_runs(env)
            .into_iter()
            .filter(|run| !live_runs.contains(run))
            .collect();
        if orphans.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "iteration {iteration}: processes of finished runs survive: {orphans:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn run_iteration(
    env: &mut TestEnv,
    repo: &TestRepo,
    rng: &mut Rng,
    iteration: u64,
    kind: u64,
    acknowledged: &Arc<Mutex<Acknowledged>>,
) {
    // A draft made and deleted: a deletion in the log, its projection row gone.
    let draft_id = format!("d{iteration}");
    env.ok(
        "mission.create",
        create_params(&draft_id, &repo.path_text()),
    );
    env.ok("mission.delete", json!({"mission_id": draft_id}));
    acknowledged.lock().unwrap().deleted.push(draft_id);
    let mission_id = format!("t{iteration}");
    let create = create_params(&mission_id, &repo.path_text());
    let created = env.ok("mission.create", create);
    acknowledged
        .lock()
        .unwrap()
        .created
        .insert(mission_id.clone(), created["mission"].clone());
    let slow = if kind == 1 { "sleep 1; true" } else { "true" };
    env.ok(
        "mission.configure",
        configure_params(&mission_id, "sh", &["-c", slow]),
    );
    acknowledged
        .lock()
        .unwrap()
        .configured
        .push(mission_id.clone());
    // The checkout can hold one run at a time: end earlier missions' runs first.
    settle(env);
    let started = env.call(
        "mission.start",
        json!({"mission_id": mission_id, "run_id": format!("r{iteration}"), "provider": "codex", "mode": "managed", "execute_declared_checks": true}),
    );
    if started.get("result").is_some() {
        acknowledged
            .lock()
            .unwrap()
            .runs
            .push((mission_id.clone(), format!("r{iteration}")));
    }
    match kind {
        // During a turn: kill almost at once.
        0 => std::thread::sleep(Duration::from_millis(rng.below(300))),
        // During the check run.
        1 => {
            wait_for_mission(env, &mission_id, "its checks", |mission| {
                mission["status"] != "preparing" && mission["status"] != "active"
            });
            std::thread::sleep(Duration::from_millis(rng.below(900)));
        }
        // During a handoff.
        _ => {
            let ready = wait_for_mission(env, &mission_id, "ready", |mission| {
                !working(mission) && mission["status"] != "preparing"
            });
            if matches!(
                ready["status"].as_str(),
                Some("review_required") | Some("ready_to_close")
            ) {
                let artifact = env.ok(
                    "mission.handoff.preview",
                    json!({"mission_id": mission_id, "to": "claude_code"}),
                )["artifact"]
                    .clone();
                let socket = env.socket.clone();
                let acknowledged = acknowledged.clone();
                let mission_for_thread = mission_id.clone();
                let handle = std::thread::spawn(move || {
                    let Ok(mut client) = nagi_schema::client::Client::connect(&socket) else {
                        return;
                    };
                    let params = json!({"mission_id": mission_for_thread, "to": "claude_code", "generated_at_millis": artifact["generated_at_millis"],
                                        "artifact_sha256": artifact["artifact_sha256"]});
                    if let Ok(result) = client.request("mission.handoff.start", params) {
                        let run = result["mission"]["run"]["run_id"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string();
                        acknowledged
                            .lock()
                            .unwrap()
                            .runs
                            .push((mission_for_thread, run));
                    }
                });
                std::thread::sleep(Duration::from_millis(rng.below(200)));
                env.kill_server();
                let _ = handle.join();
                return;
            }
        }
    }
    env.kill_server();
}

#[test]
fn sigkill_at_random_moments_keeps_every_invariant() {
    let per_kind: u64 = std::env::var("NAGI_TORTURE_ITERATIONS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(20);
    let seed: u64 = std::env::var("NAGI_TORTURE_SEED")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("torture: {per_kind} iterations of each kind, NAGI_TORTURE_SEED={seed}");
    let mut rng = Rng(seed);
    let mut env = TestEnv::new();
    configure_fakes(&env);
    env.start_server();
    let repo = TestRepo::new();
    let acknowledged: Arc<Mutex<Acknowledged>> = Arc::default();
    let mut violations = 0;
    for iteration in 0..per_kind * 3 {
        let kind = iteration % 3;
        run_iteration(&mut env, &repo, &mut rng, iteration, kind, &acknowledged);
        env.start_server();
        let snapshot = acknowledged.lock().unwrap().clone();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check_invariants(&env, &snapshot, iteration)
        }));
        if outcome.is_err() {
            violations += 1;
        }
    }
    eprintln!(
        "torture: {} iterations, {violations} invariant violations (seed {seed})",
        per_kind * 3
    );
    assert_eq!(
        violations, 0,
        "invariant violations; rerun with NAGI_TORTURE_SEED={seed}"
    );
}
