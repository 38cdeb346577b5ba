//! Fleet mode: a mission's events are streamed by the host that holds it. Asking another
//! host to follow them is refused with the way to follow them there, and `nagi events
//! subscribe --host NAME` follows them through the socket `[fleet.hosts.NAME]` names.

#[cfg(feature = "fleet")]
mod with_fleet {
    use crate::fleet::with_fleet::{host, temporal, wait_listed};
    use nagi_tests::*;
    use serde_json::{Value, json};
    use std::io::BufRead;
    use std::sync::mpsc;
    use std::time::Duration;

    /// The lines a child prints on stdout, read by a thread so that a test can wait for
    /// them with a deadline.
    fn stdout_lines(child: &mut std::process::Child) -> mpsc::Receiver<String> {
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        lines
    }

    fn next_event(lines: &mpsc::Receiver<String>, what: &str) -> Value {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("no event line within 30 s: {what}"));
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("{what}: not JSON: {line}"))
    }

    #[test]
    fn the_events_of_another_hosts_mission_are_followed_on_that_host_not_silently_here() {
        let Some(temporal) = temporal("fleet_events::the_events_of_another_hosts_mission") else {
            return;
        };
        let a = host(&temporal, "a");
        let b = host(&temporal, "b");
        let repo = TestRepo::new();
        let mut params = create_params("m1", &repo.path_text());
        params["host"] = json!("b");
        a.ok("mission.create", params);
        wait_listed(&a, "m1", |entry| entry["host"] == "b");

        // Host a holds none of m1's events: following them there is refused, saying where.
        let subscribed = a.call(
            "events.subscribe",
            json!({"subscriptions": [{"type": "mission", "mission_id": "m1"}], "after_seq": 0}),
        );
        assert_eq!(
            subscribed["error"]["code"], "feature_unavailable",
            "{subscribed}"
        );
        let message = subscribed["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("host b") && message.contains("--host b --mission m1"),
            "{subscribed}"
        );
        let waited = a.call(
            "events.wait",
            json!({"match_event": {"event": "mission", "mission_id": "m1", "after_seq": 0},
                   "timeout_ms": 1000}),
        );
        assert_eq!(waited["error"]["code"], "feature_unavailable", "{waited}");
        // A mission no host knows yet may still be waited for (it may be created here).
        let later = a.call(
            "events.subscribe",
            json!({"subscriptions": [{"type": "mission", "mission_id": "later"}]}),
        );
        assert_eq!(later["result"]["type"], "subscription_started", "{later}");

        // From a, through the socket a's config names for b, the CLI follows b's events of
        // m1: the logged ones, then a new one as b records it.
        let config = a.config_dir.join("config.toml");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(&format!(
            "\n[fleet.hosts.b]\nsocket = {}\n",
            toml_string(b.socket.to_str().unwrap())
        ));
        std::fs::write(&config, text).unwrap();
        let mut child = a
            .command()
            .args(["--json", "events", "subscribe", "--host", "b"])
            .args(["--mission", "m1", "--after", "0"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let lines = stdout_lines(&mut child);
        let created = next_event(&lines, "m1's creation, replayed from b's log");
        assert_eq!(created["event"], "mission_created", "{created}");
        assert_eq!(created["data"]["mission_id"], "m1", "{created}");
        a.ok(
            "mission.configure",
            configure_params("m1", "test", &["-f", "README.md"]),
        );
        let configured = next_event(&lines, "m1's configuration, recorded by b");
        assert_eq!(configured["data"]["mission_id"], "m1", "{configured}");
        assert!(
            configured["data"]["seq"].as_u64() > created["data"]["seq"].as_u64(),
            "{configured}"
        );
        child.kill().unwrap();
        child.wait().unwrap();

        // A host the config does not name is a usage error that says how to forward it.
        let unknown = a.nagi(&["events", "subscribe", "--host", "c"]);
        assert_eq!(unknown.status, 2, "{}", unknown.describe());
        assert!(
            unknown.stderr.contains("[fleet.hosts.c]"),
            "{}",
            unknown.describe()
        );
    }
}
