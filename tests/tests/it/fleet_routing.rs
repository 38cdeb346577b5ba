//! Fleet mode: a mission pinned to one host is driven from every host of the fleet
//! (`mission.configure`, `mission.start`, `mission.proof.get`, `mission.close` … go
//! through the mission's workflow to its host), refusals keep the host's stable code, and
//! a consent given in host a's cockpit reaches host b only with the digest b would show.

#[cfg(feature = "fleet")]
mod with_fleet {
    use crate::cockpit::{Cockpit, consent_decisions};
    use crate::consent::forge_from_pane;
    use crate::fleet::with_fleet::{host, temporal, wait_listed};
    use crate::runs::status_is;
    use nagi_tests::*;
    use serde_json::{Value, json};

    fn start(run_id: &str) -> Value {
        json!({"mission_id": "m1", "run_id": run_id, "provider": "codex", "mode": "managed",
               "execute_declared_checks": true})
    }

    /// `method` answered with an error by both hosts: the same code, and the routed one
    /// names the host that refused.
    fn refused_alike(from: &TestEnv, pinned: &TestEnv, method: &str, params: Value) -> Value {
        let routed = from.call(method, params.clone());
        let local = pinned.call(method, params);
        assert!(local["error"]["code"].is_string(), "{local}");
        assert_eq!(routed["error"]["code"], local["error"]["code"], "{routed}");
        let message = routed["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("host b: "), "{routed}");
        routed
    }

    fn missions_in_store(env: &TestEnv) -> i64 {
        let connection = rusqlite::Connection::open_with_flags(
            env.database_path(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        connection
            .query_row("SELECT count(*) FROM missions", [], |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn a_mission_on_one_host_is_driven_from_the_others_through_its_workflow() {
        let Some(temporal) = temporal("fleet_routing::a_mission_on_one_host_is_driven") else {
            return;
        };
        let a = host(&temporal, "a");
        let b = host(&temporal, "b");
        let c = host(&temporal, "c");
        let repo = TestRepo::new();
        let mut params = create_params("m1", &repo.path_text());
        params["host"] = json!("b");
        a.ok("mission.create", params);

        // Configured from c, refused from a with b's own code, started from a.
        c.ok(
            "mission.configure",
            configure_params("m1", "test", &["-f", "README.md"]),
        );
        let checks = b.ok("mission.get", json!({"mission_id": "m1"}))["mission"]["checks"].clone();
        assert_eq!(checks.as_array().map(Vec::len), Some(1), "{checks}");
        refused_alike(&a, &b, "mission.close", json!({"mission_id": "m1"}));
        a.ok("mission.start", start("r1"));
        wait_for_mission(&b, "m1", "ready_to_close", status_is("ready_to_close"));
        // Starting it again from c is refused as b refuses it, and no second run starts.
        refused_alike(&c, &b, "mission.start", start("r2"));

        // What b's store proves, every host reads the same.
        let proof_on_b = b.ok("mission.proof.get", json!({"mission_id": "m1"}));
        assert_eq!(
            c.ok("mission.proof.get", json!({"mission_id": "m1"})),
            proof_on_b
        );
        let diff_on_b = b.ok("mission.diff", json!({"mission_id": "m1"}));
        assert_eq!(a.ok("mission.diff", json!({"mission_id": "m1"})), diff_on_b);

        // Closed from c; every host then lists it as b's store has it.
        let closed = c.ok("mission.close", json!({"mission_id": "m1"}));
        assert_eq!(closed["type"], "mission_close_accepted", "{closed}");
        wait_for_mission(&b, "m1", "archived", status_is("archived"));
        for env in [&a, &b, &c] {
            let entry = wait_listed(env, "m1", |entry| entry["status"] == "archived");
            assert_eq!(entry["host"], "b", "{entry}");
        }
        let runs =
            b.ok("mission.get", json!({"mission_id": "m1"}))["mission"]["run"]["run_id"].clone();
        assert_eq!(runs, "r1", "one run, started once");
        // Nothing of m1 was written to a's or c's store.
        for env in [&a, &c] {
            assert_eq!(missions_in_store(env), 0, "{}", env.server_log());
            assert!(consent_decisions(env).is_empty());
        }
        // A mission no host knows is not found, from any host.
        assert_eq!(
            a.error_code("mission.diff", json!({"mission_id": "nowhere"})),
            "mission_not_found"
        );

        // A draft of b deleted from a goes from b's store, and then no host lists or finds
        // it (an archived one stays listed).
        let other = TestRepo::new();
        let mut params = create_params("m2", &other.path_text());
        params["host"] = json!("b");
        a.ok("mission.create", params);
        wait_listed(&c, "m2", |entry| entry["status"] == "draft");
        a.ok("mission.delete", json!({"mission_id": "m2"}));
        assert_eq!(missions_in_store(&b), 1, "only m1 is left in b's store");
        for env in [&a, &b, &c] {
            wait_unlisted(env, "m2");
            assert_eq!(
                env.error_code("mission.get", json!({"mission_id": "m2"})),
                "mission_not_found"
            );
            wait_listed(env, "m1", |entry| entry["status"] == "archived");
        }
        temporal.record_histories("routed");
    }

    /// Polls `mission.list` on `env` until `mission_id` is no longer listed (60 s).
    fn wait_unlisted(env: &TestEnv, mission_id: &str) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let list = env.ok("mission.list", json!({}));
            let listed = list["missions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|entry| entry["mission_id"] == mission_id);
            if !listed {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{mission_id} is still listed: {list}\n{}",
                env.server_log()
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    #[test]
    fn a_consent_in_host_a_cockpit_reaches_host_b_only_with_the_digest_b_shows() {
        let Some(temporal) = temporal("fleet_routing::a_consent_in_host_a_cockpit") else {
            return;
        };
        let a = host(&temporal, "a");
        let b = host(&temporal, "b");
        let repo = TestRepo::new();
        let mut params = create_params("m1", &repo.path_text());
        params["host"] = json!("b");
        a.ok("mission.create", params);
        a.ok(
            "mission.configure",
            configure_params("m1", "test", &["-f", "README.md"]),
        );
        // A routed change is in the fleet's view when its answer arrives: a reads its own
        // write (the cockpit below starts from it).
        assert_eq!(
            a.ok("mission.get", json!({"mission_id": "m1"}))["mission"]["closure_configured"],
            true
        );
        let action = json!({"kind": "start_run", "mission_id": "m1", "run_id": "r1",
                            "provider": "acp", "write_scope": true, "execute_declared_checks": true});

        // The preview a shows is the one b builds.
        let shown_on_a = a.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
        let shown_on_b = b.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
        assert_eq!(shown_on_a["digest"], shown_on_b["digest"], "{shown_on_a}");

        // A digest b would not show is refused by b, and b starts nothing.
        let stale = a.call(
            "cockpit.decide",
            json!({"action": action, "shown_digest": "0".repeat(64), "decision": "approve"}),
        );
        assert_eq!(stale["error"]["code"], "consent_stale", "{stale}");
        assert!(
            stale["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("host b: "),
            "{stale}"
        );
        // A process in a managed pane of a is refused by a's own rule before anything
        // travels.
        let forged = forge_from_pane(
            &a,
            &format!(
                "action = json.loads(r'''{action}''')\nout = open(sys.argv[1], 'w'); \
                 out.write(call('cockpit.decide', {{'action': action, 'shown_digest': '{}', 'decision': 'approve'}})); \
                 out.write('DONE'); out.close()",
                shown_on_b["digest"].as_str().unwrap()
            ),
        );
        assert!(forged.contains("consent_forbidden"), "{forged}");
        assert!(forged.contains("before it was sent to host b"), "{forged}");
        assert!(consent_decisions(&b).is_empty(), "b recorded no consent");
        assert_eq!(
            b.ok("mission.get", json!({"mission_id": "m1"}))["mission"]["run"],
            Value::Null,
            "nothing started"
        );

        // The person approves in a's cockpit, in tmux: the start form for the mission
        // pinned to b, its preview (built by b), then `y`.
        let Some(cockpit) = Cockpit::open(&a) else {
            return;
        };
        cockpit.wait_shows(&["m1"]);
        cockpit.keys(&["s"]);
        cockpit.wait_shows(&["Start a run", "‹ codex ›"]);
        cockpit.keys(&["Right", "Right", "Right"]);
        cockpit.wait_shows(&["‹ acp ›"]);
        cockpit.keys(&["Enter"]);
        cockpit.wait_shows(&["[high] Start r1", "MAY CHANGE FILES", "digest "]);
        cockpit.keys(&["y"]);
        let mission = wait_for_mission(&b, "m1", "the end of the ACP run", |mission| {
            mission["run"]["live"] == false
                && mission["status"] != "preparing"
                && mission["status"] != "active"
                && mission["run"] != Value::Null
        });
        assert_eq!(mission["run"]["provider"], "acp", "{mission}");
        assert_eq!(
            mission["run"]["enforcement"], "workspace_write",
            "{mission}"
        );
        assert_eq!(
            consent_decisions(&b),
            vec![("start_run".to_string(), "approve".to_string())],
            "b recorded the one consent it applied"
        );
        assert!(
            consent_decisions(&a).is_empty(),
            "the consent lives where it was applied"
        );
        wait_for_mission(&b, "m1", "ready_to_close", status_is("ready_to_close"));
        wait_listed(&a, "m1", |entry| entry["status"] == "ready_to_close");
        temporal.record_histories("consent");
    }
}

#[cfg(feature = "fleet")]
mod attention {
    use crate::cockpit::consent_decisions;
    use crate::fleet::with_fleet::{temporal, wait_listed};
    use crate::runs::{status_is, write_config};
    use nagi_tests::*;
    use serde_json::{Value, json};
    use std::time::{Duration, Instant};

    /// `attention.list` on `env` once it holds `count` items (60 s).
    fn wait_items(env: &TestEnv, params: Value, count: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let answer = env.ok("attention.list", params.clone());
            let items = answer["items"].as_array().unwrap().clone();
            if items.len() == count {
                return items;
            }
            assert!(
                Instant::now() < deadline,
                "attention.list never held {count} items: {answer}\n{}",
                env.server_log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    #[test]
    fn an_approval_raised_on_host_b_is_listed_and_answered_from_host_a() {
        let Some(temporal) = temporal("fleet_routing::an_approval_raised_on_host_b") else {
            return;
        };
        let mut b = TestEnv::new();
        write_config(
            &b,
            &json!([{"approve_command": "rm -rf build"}, {"text": "done"}]),
            &[],
        );
        b.start_server_with(&["--fleet", &temporal.address(), "--host", "b"]);
        // Host a has an ask of its own, of a mission that sorts after b's.
        let mut a = TestEnv::new();
        write_config(
            &a,
            &json!([{"approve_command": "rm -rf dist"}, {"text": "done"}]),
            &[],
        );
        a.start_server_with(&["--fleet", &temporal.address(), "--host", "a"]);
        let own_repo = TestRepo::new();
        a.ok("mission.create", create_params("m2", &own_repo.path_text()));
        a.ok(
            "mission.configure",
            configure_params("m2", "test", &["-f", "README.md"]),
        );
        a.ok(
            "mission.start",
            json!({"mission_id": "m2", "run_id": "r2", "provider": "codex",
                   "mode": "managed", "execute_declared_checks": true}),
        );
        wait_items(&a, json!({}), 1);
        let repo = TestRepo::new();
        let mut params = create_params("m1", &repo.path_text());
        params["host"] = json!("b");
        a.ok("mission.create", params);
        a.ok(
            "mission.configure",
            configure_params("m1", "test", &["-f", "README.md"]),
        );
        a.ok(
            "mission.start",
            json!({"mission_id": "m1", "run_id": "r1", "provider": "codex",
                   "mode": "managed", "execute_declared_checks": true}),
        );

        // The provider's ask on b is in a's attention list, sorted before a's own by
        // mission id; b lists both the same, in the same order.
        let items = wait_items(&a, json!({}), 2);
        let on_b = b.ok("attention.list", json!({}))["items"].clone();
        assert_eq!(Value::Array(items.clone()), on_b);
        assert_eq!(items[1]["mission_id"], "m2", "{}", items[1]);
        // Each names the host whose store and panes its ids belong to.
        assert_eq!(items[0]["host"], "b", "{}", items[0]);
        assert_eq!(items[1]["host"], "a", "{}", items[1]);
        let item = &items[0];
        assert_eq!(item["mission_id"], "m1", "{item}");
        assert_eq!(item["kind"], "permission_request", "{item}");
        assert!(
            item["requested_action"]
                .as_str()
                .unwrap()
                .contains("rm -rf build"),
            "{item}"
        );
        assert_eq!(
            a.ok("attention.list", json!({"mission_id": "m1"})),
            b.ok("attention.list", json!({"mission_id": "m1"}))
        );

        // attention.get that names the item's mission asks b; without it, a looks among its
        // own items. The CLI names the mission with --mission.
        let get = json!({"attention_id": item["attention_id"], "mission_id": "m1"});
        let got = a.ok("attention.get", get);
        assert_eq!(got["item"]["attention_id"], item["attention_id"], "{got}");
        assert_eq!(got["item"]["host"], "b", "{got}");
        let unnamed = a.call(
            "attention.get",
            json!({"attention_id": item["attention_id"]}),
        );
        assert_eq!(unnamed["error"]["code"], "attention_not_found", "{unnamed}");
        assert!(
            unnamed["error"]["message"]
                .as_str()
                .unwrap()
                .contains("--mission MISSION"),
            "the error says how to ask another host: {unnamed}"
        );
        let attention_id = item["attention_id"].as_str().unwrap();
        let shown = a.nagi_ok(&["attention", "get", attention_id, "--mission", "m1"]);
        assert!(
            shown.stdout.contains("mission m1 run r1 on host b"),
            "{}",
            shown.describe()
        );

        // A dismissal is a fact of the item's host: without its mission, a looks among its
        // own items and finds none; named with m1, it goes to b, which knows the item and
        // refuses to dismiss a live request.
        let dismiss = json!({"kind": "dismiss_attention", "attention_id": item["attention_id"],
                             "reason": "not needed"});
        assert_eq!(
            a.error_code("cockpit.preview", json!({"action": dismiss})),
            "attention_not_found"
        );
        let mut dismiss_on_b = dismiss.clone();
        dismiss_on_b["mission_id"] = json!("m1");
        let refused = a.call("cockpit.preview", json!({"action": dismiss_on_b}));
        assert_eq!(refused["error"]["code"], "invalid_response", "{refused}");
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("live provider request"),
            "{refused}"
        );

        // Approved from a's consent channel: b applies it, records it, and the run goes on.
        let action = json!({"kind": "respond", "mission_id": "m1", "run_id": "r1",
                            "attention_id": item["attention_id"], "decision": "approve_once"});
        let shown = a.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
        a.ok(
            "cockpit.decide",
            json!({"action": action, "shown_digest": shown["digest"], "decision": "approve"}),
        );
        wait_for_mission(&b, "m1", "ready_to_close", status_is("ready_to_close"));
        wait_listed(&a, "m1", |entry| {
            entry["status"] == "ready_to_close" && entry["unresolved_attention_count"] == 0
        });
        assert_eq!(
            consent_decisions(&b).len(),
            1,
            "b recorded the consent it applied"
        );
        assert!(consent_decisions(&a).is_empty());
        // Only a's own is open now; with include_closed, a shows b's resolved.
        assert_eq!(wait_items(&a, json!({}), 1)[0]["mission_id"], "m2");
        let closed = wait_items(&a, json!({"include_closed": true}), 2);
        assert_eq!(closed[0]["state"]["state"], "resolved", "{}", closed[0]);
        assert_eq!(closed[1]["mission_id"], "m2", "{}", closed[1]);
        temporal.record_histories("attention");
    }
}

#[cfg(feature = "fleet")]
mod host_gone {
    use crate::fleet::with_fleet::{host, host_with_gone_limit, temporal, wait_listed};
    use nagi_tests::*;
    use serde_json::json;
    use std::time::{Duration, Instant};

    #[test]
    fn a_host_gone_shows_its_missions_blocked_until_it_is_back() {
        let Some(temporal) = temporal("fleet_routing::a_host_gone_shows_its_missions_blocked")
        else {
            return;
        };
        // Host a creates the mission, and gives it a short limit for its host's silence.
        let a = host_with_gone_limit(&temporal, "a", 2);
        let mut b = host(&temporal, "b");
        let repo = TestRepo::new();
        let mut params = create_params("m1", &repo.path_text());
        params["host"] = json!("b");
        a.ok("mission.create", params);
        wait_listed(&a, "m1", |entry| entry["status"] == "draft");

        b.kill_server();
        let entry = wait_listed(&a, "m1", |entry| entry["status"] == "blocked");
        assert_eq!(entry["host"], "b", "{entry}");
        let view = a.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
        assert_eq!(view["status"], "blocked", "{view}");
        let reason = view["status_reason"].as_str().unwrap_or_default();
        assert!(
            reason.contains("host b has taken no work of mission m1"),
            "{view}"
        );
        // A request for it says the host did not take it, and that nothing was done.
        let started = Instant::now();
        let refused = a.call(
            "mission.configure",
            configure_params("m1", "test", &["-f", "README.md"]),
        );
        assert_eq!(refused["error"]["code"], "server_unavailable", "{refused}");
        assert!(started.elapsed() < Duration::from_secs(60), "{refused}");

        // Back in the fleet, b reports again and the mission is what b's store holds.
        b.start_server_with(&["--fleet", &temporal.address(), "--host", "b"]);
        let entry = wait_listed(&a, "m1", |entry| entry["status"] == "draft");
        assert_eq!(entry["host"], "b", "{entry}");
        let view = a.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
        assert_eq!(view.get("status_reason"), None, "{view}");
        assert_eq!(
            view["closure_configured"], false,
            "the refused configure did nothing"
        );

        // `[fleet]` is fixed at the server's start: a reload names what changed and applies
        // it at the next start; `[fleet.hosts]`, read at each `pane attach --host`, is not
        // named.
        let file = a.config_dir.join("config.toml");
        let config = std::fs::read_to_string(&file).unwrap().replace(
            "host_gone_after_seconds = 2",
            "host_gone_after_seconds = 5\n\n[fleet.hosts.b]\nsocket = \"/tmp/b.sock\"",
        );
        std::fs::write(&file, config).unwrap();
        let reloaded = a.ok("server.reload_config", json!({}));
        assert_eq!(reloaded["status"], "partial", "{reloaded}");
        let diagnostics = reloaded["diagnostics"].to_string();
        assert!(
            diagnostics.contains(
                "fleet.host_gone_after_seconds changed: it takes effect at the next server start"
            ),
            "{diagnostics}"
        );
        assert!(!diagnostics.contains("fleet.hosts"), "{diagnostics}");
        temporal.record_histories("host-gone");
    }
}
