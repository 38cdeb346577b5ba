//! Fleet mode, first slice (README "Fleet mode"): `nagi server --fleet ADDRESS
//! --host NAME` or `[fleet]` in config.toml; a mission created on one host and pinned to
//! another is created and run on that host, and every host lists it with its `host`.
//!
//! With the `fleet` feature (which `.ci/test` turns on, with `nagi`'s own) these tests start
//! a real Temporal dev server and real `nagi` servers; without it, the binary must refuse
//! fleet mode with `feature_unavailable` before writing anything.

use nagi_tests::*;
use serde_json::json;

fn private_config_dir(env: &TestEnv) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(&env.config_dir).unwrap();
    std::fs::set_permissions(&env.config_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
}

#[test]
fn a_fleet_host_name_must_follow_the_id_rule() {
    let env = TestEnv::new();
    private_config_dir(&env);
    std::fs::write(
        env.config_dir.join("config.toml"),
        "[fleet]\naddress = \"127.0.0.1:1\"\nhost = \"../b\"\n",
    )
    .unwrap();
    let run = env.nagi(&["server"]);
    assert_eq!(run.status, 2, "{}", run.describe());
    assert!(run.stderr.contains("fleet.host"), "{}", run.describe());
    assert!(!env.database_path().exists(), "nothing is written");
}

#[test]
fn a_host_param_on_a_lone_host_is_refused_with_feature_unavailable() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let mut params = create_params("m1", &repo.path_text());
    params["host"] = json!("b");
    assert_eq!(
        env.error_code("mission.create", params),
        "feature_unavailable"
    );
    let list = env.ok("mission.list", json!({}));
    assert_eq!(list["missions"], json!([]), "nothing was created");
}

#[cfg(not(feature = "fleet"))]
#[test]
fn a_binary_built_without_fleet_support_refuses_fleet_mode_before_writing_anything() {
    let env = TestEnv::new();
    private_config_dir(&env);
    let run = env.nagi(&["server", "--fleet", "127.0.0.1:1", "--host", "a"]);
    assert_eq!(run.status, 1, "{}", run.describe());
    assert!(
        run.stderr.contains("error feature_unavailable:")
            && run.stderr.contains("built without fleet support"),
        "{}",
        run.describe()
    );
    std::fs::write(
        env.config_dir.join("config.toml"),
        "[fleet]\naddress = \"127.0.0.1:1\"\nhost = \"a\"\n",
    )
    .unwrap();
    let run = env.nagi(&["--json", "server"]);
    assert_eq!(run.status, 1, "{}", run.describe());
    assert!(
        run.stdout.contains("\"feature_unavailable\""),
        "{}",
        run.describe()
    );
    assert!(!env.database_path().exists(), "nothing is written");
}

#[cfg(feature = "fleet")]
pub(crate) mod with_fleet {
    use super::*;
    use crate::runs::{start_params, status_is, write_config};
    use nagi_tests::temporal::{TemporalDev, temporal_binary};
    use std::time::{Duration, Instant};

    pub(crate) fn temporal(test: &str) -> Option<TemporalDev> {
        match temporal_binary() {
            Some(binary) => Some(TemporalDev::start(&binary)),
            None => {
                missing_prerequisite(
                    test,
                    "the Temporal CLI is not installed (.ci/install-temporal puts it in \
                     .tools/temporal; or set NAGI_TEMPORAL_BIN)",
                );
                None
            }
        }
    }

    /// A host of the fleet: its own config dir, fake providers, `nagi server --fleet`.
    pub(crate) fn host(temporal: &TemporalDev, name: &str) -> TestEnv {
        let mut env = TestEnv::new();
        write_config(&env, &json!([{"text": "done"}]), &[]);
        env.start_server_with(&["--fleet", &temporal.address(), "--host", name]);
        env
    }

    /// A host whose missions are shown gone once their host has been silent for
    /// `gone_after_seconds` (`[fleet] host_gone_after_seconds`, given by the host that
    /// creates a mission).
    pub(crate) fn host_with_gone_limit(
        temporal: &TemporalDev,
        name: &str,
        gone_after_seconds: u64,
    ) -> TestEnv {
        let mut env = TestEnv::new();
        write_config(&env, &json!([{"text": "done"}]), &[]);
        let file = env.config_dir.join("config.toml");
        let mut config = std::fs::read_to_string(&file).unwrap();
        config.push_str(&format!(
            "\n[fleet]\nhost_gone_after_seconds = {gone_after_seconds}\n"
        ));
        std::fs::write(&file, config).unwrap();
        env.start_server_with(&["--fleet", &temporal.address(), "--host", name]);
        env
    }

    /// Polls `mission.list` on `env` until `mission_id` is listed as `predicate` wants.
    pub(crate) fn wait_listed(
        env: &TestEnv,
        mission_id: &str,
        predicate: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last = json!(null);
        while Instant::now() < deadline {
            let list = env.ok("mission.list", json!({}));
            if let Some(entry) = list["missions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|entry| entry["mission_id"] == mission_id)
            {
                if predicate(entry) {
                    return entry.clone();
                }
                last = entry.clone();
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "{mission_id} was never listed as wanted; last entry: {last}\n{}",
            env.server_log()
        );
    }

    #[test]
    fn a_mission_created_on_one_host_runs_on_its_pinned_host_and_every_host_lists_it() {
        let Some(temporal) =
            temporal("fleet::a_mission_created_on_one_host_runs_on_its_pinned_host")
        else {
            return;
        };
        let a = host(&temporal, "a");
        let b = host(&temporal, "b");
        // The third host joins through [fleet] in its config.toml instead of the flags.
        let mut c = TestEnv::new();
        write_config(&c, &json!([{"text": "done"}]), &[]);
        let mut config = std::fs::read_to_string(c.config_dir.join("config.toml")).unwrap();
        config.push_str(&format!(
            "\n[fleet]\naddress = {}\nhost = \"c\"\n",
            toml_string(&temporal.address())
        ));
        std::fs::write(c.config_dir.join("config.toml"), config).unwrap();
        c.start_server();

        let repo = TestRepo::new();
        let mut params = create_params("m1", &repo.path_text());
        params["host"] = json!("b");
        let created = a.ok("mission.create", params.clone());
        assert_eq!(created["created"], true, "{created}");
        assert_eq!(created["mission"]["host"], "b");
        assert_eq!(created["mission"]["status"], "draft");
        // The same create again is answered, not repeated.
        let again = a.ok("mission.create", params.clone());
        assert_eq!(again["created"], false, "{again}");
        // Pinned elsewhere, the same id conflicts.
        params["host"] = json!("c");
        assert_eq!(a.error_code("mission.create", params), "mission_conflict");

        // The mission lives in b's store, not in a's.
        let on_b = b.ok("mission.get", json!({"mission_id": "m1"}));
        assert_eq!(on_b["mission"]["host"], "b");
        // b runs it with the fake provider to ready_to_close.
        b.ok(
            "mission.configure",
            configure_params("m1", "test", &["-f", "README.md"]),
        );
        b.ok("mission.start", start_params("codex", "r1"));
        wait_for_mission(&b, "m1", "ready_to_close", status_is("ready_to_close"));

        // Every host lists it with its host, and the status b's store reached.
        for env in [&a, &b, &c] {
            let entry = wait_listed(env, "m1", |entry| entry["status"] == "ready_to_close");
            assert_eq!(entry["host"], "b", "{entry}");
        }
        let from_a = a.ok("mission.get", json!({"mission_id": "m1"}));
        assert_eq!(from_a["mission"]["host"], "b");
        assert_eq!(from_a["mission"]["status"], "ready_to_close");

        // A mission without `host` is pinned to the host that received it.
        let repo_two = TestRepo::new();
        let own = c.ok("mission.create", create_params("m2", &repo_two.path_text()));
        assert_eq!(own["mission"]["host"], "c", "{own}");
        let entry = wait_listed(&a, "m2", |entry| entry["host"] == "c");
        assert_eq!(entry["status"], "draft");

        // Each server stops cleanly with its worker.
        for env in [&a, &b, &c] {
            let started = Instant::now();
            env.nagi_ok(&["server", "stop"]);
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{}",
                env.server_log()
            );
        }
    }

    #[test]
    fn an_unreachable_temporal_service_fails_the_start_before_writing_anything() {
        let env = TestEnv::new();
        private_config_dir(&env);
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let address = format!("127.0.0.1:{port}");
        let run = env.nagi(&["server", "--fleet", &address, "--host", "a"]);
        assert_eq!(run.status, 3, "{}", run.describe());
        assert!(
            run.stderr.contains("cannot reach the Temporal service"),
            "{}",
            run.describe()
        );
        assert!(!env.database_path().exists(), "nothing is written");
    }
}
