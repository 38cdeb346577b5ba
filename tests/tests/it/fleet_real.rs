//! Fleet mode with a real provider CLI (issue 17, item 7): the real Codex CLI, against the
//! mock model, runs a mission on host b that host a created, configured, started and proved
//! through the mission's workflow. Host b's run is the same read-only run a lone server
//! makes (`real_providers::assert_completed_read_only_mission`), and host a reads the same
//! status, evidence and proof.

#[cfg(feature = "fleet")]
mod with_fleet {
    use crate::fleet::with_fleet::{host, temporal, wait_listed};
    use crate::real_providers::*;
    use nagi_tests::real_cli::{RealProvider, installed_cli};
    use nagi_tests::*;
    use serde_json::json;

    #[test]
    fn a_real_codex_run_on_host_b_is_created_started_and_proved_from_host_a() {
        let Some(temporal) = temporal("fleet_real::a_real_codex_run_on_host_b") else {
            return;
        };
        let provider = RealProvider::Codex;
        let Some(cli) = installed_cli(provider.cli_name()) else {
            return;
        };
        let final_text = "Codex fleet mission: the README was read.";
        let write_call = json!({"shell": {"command": format!("printf 'no\\n' > {WRITTEN_FILE}")}});
        // Host b holds the repository, the Codex CLI and its configuration.
        let mut b = RealSession::new(provider, &cli, |workspace| {
            read_write_scenario(workspace, write_call, final_text, 0)
        });
        b.env
            .start_server_with(&["--fleet", &temporal.address(), "--host", "b"]);
        let a = host(&temporal, "a");

        let mut params = create_params("m1", &b.repo.path_text());
        params["host"] = json!("b");
        a.ok("mission.create", params);
        a.ok(
            "mission.configure",
            configure_params("m1", "test", &["-f", "README.md"]),
        );
        let before = snapshot(&b.repo.path);
        let started = a.ok("mission.start", b.start_params("m1", "r1"));
        assert_eq!(started["type"], "mission_run_started", "{started}");

        assert_completed_read_only_mission(&b, "m1", final_text, &before);
        assert_usage_is_what_the_mock_reported(&b, "m1", false);

        // Host a lists and reads what b's store holds, and reads b's proof.
        let on_b = b.mission("m1");
        let status = on_b["status"].clone();
        let entry = wait_listed(&a, "m1", |entry| entry["status"] == status);
        assert_eq!(entry["host"], "b", "{entry}");
        let on_a = a.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
        assert_eq!(on_a["evidence"], on_b["evidence"], "{on_a}");
        assert_eq!(on_a["run"]["provider"], "codex", "{on_a}");
        assert_eq!(
            a.ok("mission.proof.get", json!({"mission_id": "m1"})),
            b.env.ok("mission.proof.get", json!({"mission_id": "m1"}))
        );
        // The run's usage, as the mock model reported it to b, is answered to a too.
        assert_eq!(
            a.ok("mission.usage", json!({"mission_id": "m1"})),
            b.env.ok("mission.usage", json!({"mission_id": "m1"}))
        );
    }
}
