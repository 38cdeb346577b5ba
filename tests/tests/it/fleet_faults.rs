//! Fleet mode under faults (issue 17, item 5): the Temporal service SIGKILLed and started
//! again on the same database loses nothing it acknowledged, and every host's worker and
//! client come back to it; a host SIGKILLed mid-turn resumes its run by local recovery when
//! it is back, and the mission's workflow goes on with it; a host whose workers fail (polls
//! refused for over a minute) builds them again and serves fleet work once it can. Every
//! host's log and the Temporal dev server's log are printed when a test fails.

#[cfg(feature = "fleet")]
mod with_fleet {
    use crate::fleet::with_fleet::{host, temporal, wait_listed};
    use crate::runs::{start_params, status_is, write_config};
    use nagi_tests::temporal::TemporalDev;
    use nagi_tests::*;
    use serde_json::{Value, json};
    use std::time::{Duration, Instant};

    /// How long the fleet may take to come back after a fault.
    const BACK_WITHIN: Duration = Duration::from_secs(90);
    /// How long the Temporal service stays away: longer than the client's retries of one
    /// call (10 s) and than the follow activity's heartbeat timeout (10 s).
    const OUTAGE: Duration = Duration::from_secs(15);

    /// Polls `mission.list` on `env` until every `(mission, host, status)` is listed so,
    /// tolerating errors meanwhile (the Temporal service may still be coming back); panics
    /// with the last answer and the server's log.
    fn wait_all_listed(env: &TestEnv, name: &str, wanted: &[(&str, &str, &str)]) -> Duration {
        let started = Instant::now();
        let mut last = Value::Null;
        while started.elapsed() < BACK_WITHIN {
            let answer = env.call("mission.list", json!({}));
            if let Some(missions) = answer["result"]["missions"].as_array() {
                let listed = |(mission, host, status): &(&str, &str, &str)| {
                    missions.iter().any(|entry| {
                        entry["mission_id"] == *mission
                            && entry["host"] == *host
                            && entry["status"] == *status
                    })
                };
                if wanted.iter().all(listed) {
                    return started.elapsed();
                }
            }
            last = answer;
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!(
            "host {name} never listed {wanted:?} within {} s; last answer: {last}\n{}",
            BACK_WITHIN.as_secs(),
            env.server_log()
        );
    }

    /// `mission.create` through `env`, retried while it answers `server_unavailable` or
    /// `timeout` (the fleet coming back), until [`BACK_WITHIN`]; each try is printed.
    fn create_when_back(env: &TestEnv, params: Value) -> Value {
        let started = Instant::now();
        loop {
            let answer = env.call("mission.create", params.clone());
            if let Some(result) = answer.get("result") {
                return result.clone();
            }
            let code = answer["error"]["code"].as_str().unwrap_or_default();
            assert!(
                ["server_unavailable", "timeout"].contains(&code)
                    && started.elapsed() < BACK_WITHIN,
                "mission.create {params} failed: {answer}\n{}",
                env.server_log()
            );
            eprintln!("mission.create not served yet: {answer}");
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// How many events of each kind mission `mission_id` has in `env`'s store.
    fn event_kinds(env: &TestEnv, mission_id: &str) -> std::collections::BTreeMap<String, i64> {
        let connection = rusqlite::Connection::open_with_flags(
            env.database_path(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        let mut statement = connection
            .prepare("SELECT kind, count(*) FROM events WHERE mission_id = ?1 GROUP BY kind")
            .unwrap();
        statement
            .query_map([mission_id], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    fn server_logs(hosts: &[(&str, &TestEnv)], temporal: &TemporalDev) -> String {
        let mut text = String::new();
        for (name, env) in hosts {
            text.push_str(&format!("===== host {name} =====\n{}\n", env.server_log()));
        }
        text.push_str(&format!("===== temporal =====\n{}", temporal.log()));
        text
    }

    #[test]
    fn a_sigkilled_temporal_server_restarted_on_its_database_loses_nothing_and_the_fleet_goes_on() {
        let Some(mut temporal) = temporal("fleet_faults::a_sigkilled_temporal_server") else {
            return;
        };
        let a = host(&temporal, "a");
        let b = host(&temporal, "b");
        let repo_one = TestRepo::new();
        let repo_two = TestRepo::new();

        // m1 lives on b (created through a) and reaches ready_to_close; m2 lives on a
        // (created through b) and is a draft until the service is gone.
        let mut m1 = create_params("m1", &repo_one.path_text());
        m1["host"] = json!("b");
        assert_eq!(a.ok("mission.create", m1)["mission"]["host"], "b");
        let mut m2 = create_params("m2", &repo_two.path_text());
        m2["host"] = json!("a");
        assert_eq!(b.ok("mission.create", m2)["mission"]["host"], "a");
        b.ok(
            "mission.configure",
            configure_params("m1", "test", &["-f", "README.md"]),
        );
        b.ok("mission.start", start_params("codex", "r1"));
        wait_for_mission(&b, "m1", "ready_to_close", status_is("ready_to_close"));
        let before = [("m1", "b", "ready_to_close"), ("m2", "a", "draft")];
        wait_all_listed(&a, "a", &before);
        wait_all_listed(&b, "b", &before);

        temporal.kill();
        // While the service is away (longer than the client's retries of one call and the
        // follow's heartbeat timeout), a host serves its own missions from its store, and
        // m2 runs on a to ready_to_close: a's follow cannot report it yet.
        let own = b.ok("mission.get", json!({"mission_id": "m1"}));
        assert_eq!(own["mission"]["status"], "ready_to_close", "{own}");
        a.ok(
            "mission.configure",
            configure_params("m2", "test", &["-f", "README.md"]),
        );
        a.ok(
            "mission.start",
            json!({"mission_id": "m2", "run_id": "r2", "provider": "codex", "mode": "managed",
                   "execute_declared_checks": true}),
        );
        wait_for_mission(&a, "m2", "ready_to_close", status_is("ready_to_close"));
        std::thread::sleep(OUTAGE);
        temporal.restart();
        let restarted = Instant::now();

        // Everything acknowledged before the kill is listed by every host again, and what
        // a's store reached meanwhile too.
        let back = [("m1", "b", "ready_to_close"), ("m2", "a", "ready_to_close")];
        for (name, env) in [("a", &a), ("b", &b)] {
            let took = wait_all_listed(env, name, &back);
            eprintln!("host {name} lists the fleet again {took:?} after the wait");
        }

        // A new create after the restart works: the workflow runs and b's activity worker
        // takes the create.
        let repo_three = TestRepo::new();
        let mut m3 = create_params("m3", &repo_three.path_text());
        m3["host"] = json!("b");
        let created = create_when_back(&a, m3);
        // (`created` is false when a retried create found the workflow an earlier try
        // started: b's store is what tells.)
        assert!(created["created"].is_boolean(), "{created}");
        assert_eq!(created["mission"]["host"], "b", "{created}");
        let on_b = b.ok("mission.get", json!({"mission_id": "m3"}));
        assert_eq!(on_b["mission"]["status"], "draft", "{on_b}");

        // A mission created before the kill changes status on its host after the restart:
        // m1 is closed (archived) on b, and a lists what b's store reached.
        let closed = b.ok("mission.close", json!({"mission_id": "m1"}));
        assert_eq!(closed["type"], "mission_close_accepted", "{closed}");
        wait_for_mission(&b, "m1", "archived", status_is("archived"));
        let after = [
            ("m1", "b", "archived"),
            ("m2", "a", "ready_to_close"),
            ("m3", "b", "draft"),
        ];
        wait_all_listed(&b, "b", &after);
        wait_all_listed(&a, "a", &after);
        eprintln!(
            "the fleet came back and went on within {:?} of the restart",
            restarted.elapsed()
        );
        // No host's worker gave up on the way.
        for (name, env) in [("a", &a), ("b", &b)] {
            let log = env.server_log();
            assert!(
                !log.contains("the fleet worker failed")
                    && !log.contains("the fleet worker stopped"),
                "host {name}'s fleet worker gave up:\n{}",
                server_logs(&[(name, env)], &temporal)
            );
        }
    }

    #[test]
    fn a_host_sigkilled_mid_turn_resumes_its_run_once_and_the_fleet_sees_it_finish() {
        let Some(temporal) = temporal("fleet_faults::a_host_sigkilled_mid_turn") else {
            return;
        };
        let a = host(&temporal, "a");
        let go_dir = tempfile::tempdir().unwrap();
        let go = go_dir.path().join("go");
        let go_text = go.to_str().unwrap().to_string();
        // b's provider waits mid-turn for the test's go-ahead (the resumed turn too).
        let mut b = TestEnv::new();
        let fake_log = write_config(
            &b,
            &json!([{"text": "working on it"}, {"wait_file": go_text}, {"text": "done"}]),
            &[],
        );
        let address = temporal.address();
        let b_args = ["--fleet", address.as_str(), "--host", "b"];
        b.start_server_with(&b_args);

        let repo = TestRepo::new();
        let mut params = create_params("m1", &repo.path_text());
        params["host"] = json!("b");
        assert_eq!(a.ok("mission.create", params)["mission"]["host"], "b");
        b.ok(
            "mission.configure",
            configure_params("m1", "test", &["-f", "README.md"]),
        );
        b.ok("mission.start", start_params("codex", "r1"));
        let waiting = |count: usize| {
            let deadline = Instant::now() + Duration::from_secs(60);
            while log_entries(&fake_log)
                .iter()
                .filter(|entry| entry["event"] == "waiting")
                .count()
                < count
            {
                assert!(
                    Instant::now() < deadline,
                    "the fake provider never waited mid-turn ({count}): {:#?}",
                    log_entries(&fake_log)
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        waiting(1);
        wait_for_mission(&b, "m1", "active", status_is("active"));
        // The fleet sees it active on b before the kill.
        let entry = wait_listed(&a, "m1", |entry| entry["status"] == "active");
        assert_eq!(entry["host"], "b", "{entry}");

        // SIGKILL b mid-turn, then start it again as it was.
        b.kill_server();
        let killed = Instant::now();
        b.start_server_with(&b_args);
        eprintln!("host b is back {:?} after the kill", killed.elapsed());
        // Local recovery resumes the run's session: the resumed turn waits for the go-ahead.
        waiting(2);
        std::fs::write(&go, "go").unwrap();
        let mission = wait_for_mission(&b, "m1", "ready_to_close", status_is("ready_to_close"));
        assert_eq!(mission["run"]["run_id"], "r1", "{mission}");

        // The run was resumed, not started twice: one start, one resume of the same session,
        // and the mission prompt sent once.
        let entries = log_entries(&fake_log);
        let resumes: Vec<&Value> = entries
            .iter()
            .filter(|entry| entry["event"] == "resume")
            .collect();
        assert_eq!(resumes.len(), 1, "{entries:#?}");
        assert_eq!(resumes[0]["session_id"], "fake-session-1", "{entries:#?}");
        let prompts = entries
            .iter()
            .filter(|entry| {
                entry["event"] == "prompt"
                    && entry["text"]
                        .as_str()
                        .unwrap_or_default()
                        .contains("Objective")
            })
            .count();
        assert_eq!(prompts, 1, "the mission prompt is sent once: {entries:#?}");
        let kinds = event_kinds(&b, "m1");
        assert_eq!(
            kinds.get("run_started"),
            Some(&1),
            "one run started in b's store: {kinds:?}"
        );
        assert_eq!(
            kinds.get("mission_created"),
            Some(&1),
            "created once in b's store: {kinds:?}"
        );

        // The mission's workflow goes on: host a lists it ready_to_close on host b.
        let started = Instant::now();
        let entry = wait_listed(&a, "m1", |entry| entry["status"] == "ready_to_close");
        assert_eq!(entry["host"], "b", "{entry}");
        eprintln!(
            "host a lists m1 ready_to_close {:?} after b finished it ({:?} after the kill)",
            started.elapsed(),
            killed.elapsed()
        );
        let from_a = a.ok("mission.get", json!({"mission_id": "m1"}));
        assert_eq!(from_a["mission"]["status"], "ready_to_close", "{from_a}");
        assert_eq!(from_a["mission"]["host"], "b", "{from_a}");
        // A request routed through the workflow reaches the restarted host.
        let proof_on_b = b.ok("mission.proof.get", json!({"mission_id": "m1"}));
        assert_eq!(
            a.ok("mission.proof.get", json!({"mission_id": "m1"})),
            proof_on_b,
            "{}",
            server_logs(&[("a", &a), ("b", &b)], &temporal)
        );
    }

    /// A host of the fleet whose `[fleet]` names `namespace`.
    /// A host restarted after a SIGKILL asks the fleet where its missions are before its
    /// recovery. Their workflows were bound to its previous worker (the only one up when
    /// they ran); the question is answered by the other host at once, not after the 5 s
    /// that a dead worker's queue holds it.
    #[test]
    fn a_restarted_host_hears_where_its_missions_are_without_waiting_for_its_dead_worker() {
        let Some(temporal) = temporal("fleet_faults::a_restarted_host_hears") else {
            return;
        };
        let mut b = host(&temporal, "b");
        let repo = TestRepo::new();
        b.ok("mission.create", create_params("m1", &repo.path_text()));
        b.ok(
            "mission.configure",
            configure_params("m1", "test", &["-f", "README.md"]),
        );
        let a = host(&temporal, "a");
        wait_listed(&a, "m1", |entry| entry["host"] == "b");

        b.kill_server();
        let address = temporal.address();
        b.start_server_with(&["--fleet", address.as_str(), "--host", "b"]);
        let log = b.server_log();
        assert!(
            log.contains("the fleet said where this host's missions are before recovery")
                && !log.contains("the fleet did not say where this host's missions are"),
            "{}",
            server_logs(&[("a", &a), ("b", &b)], &temporal)
        );
        // The mission is b's as before, and still served from every host.
        let from_a = a.ok("mission.get", json!({"mission_id": "m1"}));
        assert_eq!(from_a["mission"]["host"], "b", "{from_a}");
        assert_eq!(from_a["mission"]["status"], "draft", "{from_a}");
    }

    fn host_in(temporal: &TemporalDev, name: &str, namespace: &str) -> TestEnv {
        let mut env = TestEnv::new();
        write_config(&env, &json!([{"text": "done"}]), &[]);
        let mut config = std::fs::read_to_string(env.config_dir.join("config.toml")).unwrap();
        config.push_str(&format!(
            "\n[fleet]\naddress = {}\nnamespace = {}\nhost = {}\n",
            toml_string(&temporal.address()),
            toml_string(namespace),
            toml_string(name)
        ));
        std::fs::write(env.config_dir.join("config.toml"), config).unwrap();
        env.start_server();
        env
    }

    /// Waits until `env`'s server log holds `needle` `count` times.
    fn wait_logged(env: &TestEnv, needle: &str, count: usize, within: Duration) {
        let started = Instant::now();
        while env.server_log().matches(needle).count() < count {
            assert!(
                started.elapsed() < within,
                "{needle:?} was not logged {count} time(s) within {} s:\n{}",
                within.as_secs(),
                env.server_log()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// The SDK retries a worker's polls while the service is unreachable, but a poll refused
    /// for over a minute (here: the namespace is gone) fails the worker for good. The host
    /// builds its workers again on a new connection until the server stops, and serves
    /// fleet work again once the service does.
    #[test]
    fn a_fleet_worker_that_fails_is_built_again_and_serves_fleet_work_once_the_service_is_back() {
        let Some(temporal) = temporal("fleet_faults::a_fleet_worker_that_fails_is_built_again")
        else {
            return;
        };
        temporal.operator(&["namespace", "create", "--namespace", "faults"]);
        let a = host_in(&temporal, "a", "faults");
        let b = host_in(&temporal, "b", "faults");
        let repo_one = TestRepo::new();
        let mut m1 = create_params("m1", &repo_one.path_text());
        m1["host"] = json!("b");
        assert_eq!(a.ok("mission.create", m1)["created"], true);

        temporal.operator(&["namespace", "delete", "--namespace", "faults", "--yes"]);
        // A long poll in flight ends (about a minute), then the polls are refused for the
        // SDK's grace of a minute, and the workers fail.
        for env in [&a, &b] {
            wait_logged(env, "the fleet worker failed", 1, Duration::from_secs(240));
        }
        temporal.operator(&["namespace", "create", "--namespace", "faults"]);

        // A create through a, pinned to b, is served: a's client and b's new activity worker
        // reach the service again.
        let repo_two = TestRepo::new();
        let mut m2 = create_params("m2", &repo_two.path_text());
        m2["host"] = json!("b");
        let created = create_when_back(&a, m2);
        // (`created` is false when a retried create found the workflow an earlier try
        // started: b's store is what tells.)
        assert!(created["created"].is_boolean(), "{created}");
        assert_eq!(created["mission"]["host"], "b", "{created}");
        let on_b = b.ok("mission.get", json!({"mission_id": "m2"}));
        assert_eq!(on_b["mission"]["status"], "draft", "{on_b}");
        // b's new follow reports the mission's next status to a.
        b.ok(
            "mission.configure",
            configure_params("m2", "test", &["-f", "README.md"]),
        );
        b.ok(
            "mission.start",
            json!({"mission_id": "m2", "run_id": "r2", "provider": "codex", "mode": "managed",
                   "execute_declared_checks": true}),
        );
        wait_for_mission(&b, "m2", "ready_to_close", status_is("ready_to_close"));
        wait_all_listed(&a, "a", &[("m2", "b", "ready_to_close")]);
        for env in [&a, &b] {
            assert!(
                env.server_log()
                    .contains("it starts again on a new connection"),
                "{}",
                env.server_log()
            );
            // The server still stops cleanly with its rebuilt worker.
            let started = Instant::now();
            env.nagi_ok(&["server", "stop"]);
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{}",
                env.server_log()
            );
        }
    }
}
