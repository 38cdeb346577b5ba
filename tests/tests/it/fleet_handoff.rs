//! Fleet mode: a mission whose host is gone for good is handed to another host
//! (`mission.handoff.preview`/`start` with `host`). The artifact travels in the mission's
//! workflow, built of what the gone host last reported; the new host clones the
//! repository's remote at the source run's base and the mission goes on there. The gone
//! host, when it comes back, archives its own copy instead of resuming it.

#[cfg(feature = "fleet")]
mod with_fleet {
    use crate::fleet::with_fleet::{host, host_with_gone_limit, temporal, wait_listed};
    use nagi_tests::*;
    use serde_json::{Value, json};

    /// `repo` with a bare `origin` in a temp dir that `main` is pushed to.
    fn with_origin(repo: &TestRepo) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let origin = std::fs::canonicalize(dir.path())
            .unwrap()
            .join("origin.git");
        git(
            dir.path(),
            &["init", "-q", "--bare", origin.to_str().unwrap()],
        );
        git(
            &repo.path,
            &["remote", "add", "origin", origin.to_str().unwrap()],
        );
        git(&repo.path, &["push", "-q", "origin", "main"]);
        (dir, origin.display().to_string())
    }

    fn stored_status(env: &TestEnv, mission_id: &str) -> Option<(String, Option<String>)> {
        let connection = rusqlite::Connection::open_with_flags(
            env.database_path(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        connection
            .query_row(
                "SELECT status, doc FROM missions WHERE mission_id = ?1",
                [mission_id],
                |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)),
            )
            .ok()
            .map(|(status, projection)| {
                let projection: Value = serde_json::from_str(&projection).unwrap_or_default();
                let reason = projection["abandoned_reason"].as_str().map(str::to_string);
                (status, reason)
            })
    }

    fn preview(from: &TestEnv, to_host: &str) -> Value {
        from.ok(
            "mission.handoff.preview",
            json!({"mission_id": "m1", "to": "claude_code", "host": to_host}),
        )["artifact"]
            .clone()
    }

    #[test]
    fn a_mission_of_a_host_gone_for_good_is_handed_to_another_host_from_its_remote() {
        let Some(temporal) = temporal("fleet_handoff::a_mission_of_a_host_gone_for_good") else {
            return;
        };
        // Host a creates the mission and gives it a short limit for its host's silence.
        let a = host_with_gone_limit(&temporal, "a", 2);
        let mut b = host(&temporal, "b");
        let c = host(&temporal, "c");
        let repo = TestRepo::new();
        let (_origin_dir, origin) = with_origin(&repo);
        let base = repo.head();
        // A commit that never reached the remote: the new host cannot have it.
        repo.write("NOTES.md", "local only\n");
        git(&repo.path, &["add", "NOTES.md"]);
        git(&repo.path, &["commit", "-q", "-m", "local only"]);

        let mut params = create_params("m1", &repo.path_text());
        params["host"] = json!("b");
        a.ok("mission.create", params);
        a.ok(
            "mission.configure",
            configure_params("m1", "test", &["-f", "README.md"]),
        );
        a.ok(
            "mission.start",
            json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed",
                   "execute_declared_checks": true, "worktree": true, "base": base}),
        );
        wait_listed(&a, "m1", |entry| entry["status"] == "ready_to_close");

        // While b is in the fleet, the mission is handed off on b, not taken over.
        let refused = a.call(
            "mission.handoff.preview",
            json!({"mission_id": "m1", "to": "claude_code", "host": "c"}),
        );
        assert_eq!(
            refused["error"]["code"], "invalid_handoff_state",
            "{refused}"
        );
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("is in the fleet"),
            "{refused}"
        );

        b.kill_server();
        let entry = wait_listed(&a, "m1", |entry| entry["status"] == "blocked");
        assert_eq!(entry["host"], "b", "{entry}");

        // The artifact is c's, built of what b last reported; the preview writes nothing.
        let artifact = preview(&a, "c");
        let checkout = artifact["repository_path"].as_str().unwrap().to_string();
        assert!(checkout.ends_with("/relocated/m1"), "{artifact}");
        assert_eq!(artifact["worktree_path"], checkout.as_str());
        assert_eq!(artifact["source_run_id"], "r1");
        assert_eq!(artifact["source_provider"], "codex");
        assert_eq!(artifact["target_provider"], "claude_code");
        assert_eq!(artifact["base_revision"], base.as_str());
        assert_eq!(artifact["checks"][0]["check_id"], "unit", "{artifact}");
        let warning = artifact["warnings"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .to_string();
        assert!(
            warning.contains("Host b is gone") && warning.contains(&origin),
            "{warning}"
        );
        assert!(
            !std::path::Path::new(&checkout).exists(),
            "a preview clones nothing"
        );

        // A digest that is not the one c builds starts nothing.
        let mut start = json!({"mission_id": "m1", "to": "claude_code", "host": "c",
                               "generated_at_millis": artifact["generated_at_millis"],
                               "artifact_sha256": "0".repeat(64)});
        let stale = a.call("mission.handoff.start", start.clone());
        assert_eq!(
            stale["error"]["code"], "handoff_artifact_changed",
            "{stale}"
        );
        assert!(
            stale["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("host c: "),
            "{stale}"
        );
        assert!(stored_status(&c, "m1").is_none(), "c made nothing");
        assert!(!std::path::Path::new(&checkout).exists());

        // With the inspected digest, c clones the remote and the mission goes on there.
        start["artifact_sha256"] = artifact["artifact_sha256"].clone();
        let started = a.ok("mission.handoff.start", start.clone());
        assert_eq!(
            started["mission"]["run"]["run_id"], artifact["suggested_run_id"],
            "{started}"
        );
        for env in [&a, &c] {
            let entry = wait_listed(env, "m1", |entry| {
                entry["host"] == "c" && entry["status"] == "ready_to_close"
            });
            assert_eq!(entry["repository_path"], checkout.as_str(), "{entry}");
        }
        let on_c = c.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
        assert_eq!(on_c["host"], "c");
        assert_eq!(on_c["run"]["provider"], "claude_code");
        assert_eq!(on_c["closure_configured"], true);
        assert_eq!(on_c["checks"][0]["status"], "passed", "{on_c}");
        let clone = std::path::Path::new(&checkout);
        assert_eq!(
            git(clone, &["rev-parse", "HEAD"]),
            base,
            "started from the base"
        );
        assert_eq!(git(clone, &["branch", "--show-current"]), "mission/m1");
        assert_eq!(git(clone, &["remote", "get-url", "origin"]), origin);
        assert!(
            !clone.join("NOTES.md").exists(),
            "the unpushed commit stayed with b"
        );
        let kept = c.ok(
            "mission.handoff.get",
            json!({"artifact_sha256": artifact["artifact_sha256"]}),
        );
        assert_eq!(
            kept["artifact"], artifact,
            "c keeps the artifact it started from"
        );
        // The same start again takes nothing over: the mission is c's now, whose run
        // already uses claude_code.
        let again = a.call("mission.handoff.start", start);
        assert_eq!(
            again["error"]["code"], "invalid_handoff_provider",
            "{again}"
        );

        // Back, b archives its own copy (it goes on at c) instead of resuming it, and
        // answers for the mission where it is.
        b.start_server_with(&["--fleet", &temporal.address(), "--host", "b"]);
        let (status, reason) = stored_status(&b, "m1").unwrap();
        assert_eq!(status, "archived");
        assert!(
            reason
                .as_deref()
                .unwrap_or_default()
                .starts_with("handed to host c"),
            "{reason:?}"
        );
        let from_b = b.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
        assert_eq!(from_b["host"], "c", "{from_b}");
        assert_eq!(from_b["status"], "ready_to_close");
        let entry = wait_listed(&b, "m1", |entry| entry["host"] == "c");
        assert_eq!(entry["status"], "ready_to_close", "{entry}");
        let proof = b.ok("mission.proof.get", json!({"mission_id": "m1"}));
        assert_eq!(
            proof["mission"]["host"].as_str().unwrap_or("c"),
            "c",
            "{proof}"
        );
        temporal.record_histories("relocated");
    }
}
