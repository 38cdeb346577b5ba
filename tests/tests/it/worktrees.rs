//! A mission's own worktree (issue 15): made at the first start on branch `mission/<id>`
//! outside the repository, two missions of one repository side by side, the exact diff,
//! a worktree deleted under its mission, and what archive does with it. Real git
//! repositories, the real server, fake providers that write under granted write scope.

use std::path::{Path, PathBuf};

use nagi_tests::*;
use serde_json::{Value, json};

/// The fake Codex (read-only runs) only looks; the fake ACP agent (write scope) follows
/// `script`.
fn configure_fakes(env: &TestEnv, script: &Value) {
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let log = fake_log_path(env);
    let mut config = String::new();
    let looks = json!([{"text": "looked"}]);
    for (section, binary, script) in [("codex", "fake_codex", &looks), ("acp", "fake_acp", script)]
    {
        let fake_env = format!(
            "NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {}",
            toml_string(&script.to_string()),
            toml_string(log.to_str().unwrap())
        );
        config.push_str(&format!(
            "[providers.{section}]\ncommand = [{}]\nenv = {{ {fake_env} }}\n\n",
            toml_string(test_binary(binary).to_str().unwrap())
        ));
    }
    std::fs::write(
        env.config_dir.join("config.toml"),
        format!("{config}{}", fake_sandbox_section(env)),
    )
    .unwrap();
}

fn command_check() -> Value {
    json!([{"kind": "command", "id": "unit", "program": "test", "args": ["-f", "README.md"], "cwd": ".",
            "relevant_paths": [], "required_artifacts": [], "required": true, "covers": [0, 1]}])
}

struct Session {
    env: TestEnv,
    repo: TestRepo,
}

fn session(script: Value, missions: &[&str]) -> Session {
    let mut env = TestEnv::new();
    configure_fakes(&env, &script);
    env.start_server();
    let repo = TestRepo::new();
    for mission_id in missions {
        env.ok(
            "mission.create",
            create_params(mission_id, &repo.path_text()),
        );
        env.ok(
            "mission.configure",
            json!({"mission_id": mission_id, "checks": command_check()}),
        );
    }
    Session { env, repo }
}

/// Starts `mission_id` in its own worktree with write scope, approved as the cockpit does.
fn start_with_write_scope(env: &TestEnv, mission_id: &str) {
    // Run ids name one run in the whole session, so each mission's run has its own.
    let action = json!({"kind": "start_run", "mission_id": mission_id, "run_id": format!("r-{mission_id}"), "provider": "acp",
                        "worktree": true, "write_scope": true, "execute_declared_checks": true});
    let shown = env.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
    let lines = shown["lines"].to_string();
    assert!(
        lines.contains(&format!("on a new branch mission/{mission_id} from HEAD")),
        "the consent names the new worktree: {lines}"
    );
    let decided = env.call(
        "cockpit.decide",
        json!({"action": action, "shown_digest": shown["digest"], "decision": "approve"}),
    );
    assert_eq!(decided["result"]["type"], "cockpit_decided", "{decided}");
}

fn worktree_of(mission: &Value) -> PathBuf {
    PathBuf::from(
        mission["worktree"]["path"]
            .as_str()
            .unwrap_or_else(|| panic!("the mission names its worktree: {mission}")),
    )
}

fn branch_in(path: &Path) -> String {
    git(path, &["rev-parse", "--abbrev-ref", "HEAD"])
}

#[test]
fn two_missions_of_one_repository_work_side_by_side_each_in_its_own_worktree() {
    let s = session(
        json!([
            {"write_file": {"path": "README.md", "content": "# demo\nchanged by the agent\n"}},
            {"write_file": {"path": "new.txt", "content": "hello\n"}},
            {"approve_permission": "keep the run live"},
            {"text": "done"}
        ]),
        &["m1", "m2"],
    );
    start_with_write_scope(&s.env, "m1");
    let first = wait_for_mission(
        &s.env,
        "m1",
        "m1 waiting on its attention item",
        |mission| mission["unresolved_attention_count"] == 1,
    );
    // The second mission starts while the first run is live: each has its own checkout.
    start_with_write_scope(&s.env, "m2");
    let second = wait_for_mission(
        &s.env,
        "m2",
        "m2 waiting on its attention item",
        |mission| mission["unresolved_attention_count"] == 1,
    );
    let first_now = s.env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
    assert_eq!(
        first_now["run"]["live"], true,
        "both runs are live at once: {first_now}"
    );
    assert_eq!(second["run"]["live"], true, "{second}");

    let (one, two) = (worktree_of(&first), worktree_of(&second));
    assert_ne!(one, two);
    for (worktree, mission, id) in [(&one, &first, "m1"), (&two, &second, "m2")] {
        assert!(
            !worktree.starts_with(&s.repo.path),
            "the worktree is outside the repository: {}",
            worktree.display()
        );
        assert!(
            worktree.starts_with(s.env.home().join(".local/share/nagi/worktrees")),
            "in nagi's worktrees folder: {}",
            worktree.display()
        );
        assert!(!worktree.starts_with(&s.env.config_dir));
        assert_eq!(branch_in(worktree), format!("mission/{id}"));
        assert_eq!(mission["worktree"]["branch"], format!("mission/{id}"));
        assert_eq!(mission["worktree"]["base_revision"], s.repo.head());
        assert_eq!(mission["worktree"]["state"], "present");
        assert_eq!(
            mission["run"]["worktree_path"],
            worktree.display().to_string()
        );
        assert_eq!(
            std::fs::read_to_string(worktree.join("new.txt")).unwrap(),
            "hello\n",
            "the agent wrote in its mission's worktree"
        );
    }
    assert!(
        !s.repo.path.join("new.txt").exists(),
        "the person's checkout is untouched"
    );
    assert_eq!(
        std::fs::read_to_string(s.repo.path.join("README.md")).unwrap(),
        "# demo\n"
    );

    // The exact diff of m1 against its base: the changed tracked file and the new one.
    let diff = s.env.ok("mission.diff", json!({"mission_id": "m1"}))["diff"].clone();
    assert_eq!(
        diff["files"],
        json!([
            {"path": "README.md", "status": "modified", "additions": 1, "deletions": 0, "binary": false, "untracked": false},
            {"path": "new.txt", "status": "added", "additions": 1, "deletions": 0, "binary": false, "untracked": true}
        ]),
        "{diff}"
    );
    assert_eq!(
        (diff["additions"].as_u64(), diff["deletions"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(diff["branch"], "mission/m1");
    let patch: Vec<&str> = diff["patch"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|line| !line.starts_with("index "))
        .collect();
    assert_eq!(
        patch,
        [
            "diff --git a/README.md b/README.md",
            "--- a/README.md",
            "+++ b/README.md",
            "@@ -1 +1,2 @@",
            " # demo",
            "+changed by the agent",
            "diff --git a/new.txt b/new.txt",
            "new file mode 100644",
            "--- /dev/null",
            "+++ b/new.txt",
            "@@ -0,0 +1 @@",
            "+hello",
        ]
    );
    // The worktree's own index is untouched by the diff: new.txt is still untracked there.
    assert_eq!(
        git(&one, &["status", "--porcelain", "--", "new.txt"]),
        "?? new.txt"
    );

    // The CLI shows the same, and --stat leaves the hunks out.
    let shown = s
        .env
        .nagi_ok(&["mission", "diff", "m1", "--color", "never"]);
    assert!(shown.stdout.contains(" A +1 -0"), "{}", shown.describe());
    assert!(
        shown.stdout.contains("new.txt  (untracked)"),
        "{}",
        shown.describe()
    );
    assert!(
        shown.stdout.contains("+changed by the agent"),
        "{}",
        shown.describe()
    );
    assert!(
        !shown.stdout.contains('\x1b'),
        "--color never: {}",
        shown.describe()
    );
    let stat = s.env.nagi_ok(&["mission", "diff", "m1", "--stat"]);
    assert!(
        stat.stdout
            .contains("2 files changed, 2 insertions(+), 0 deletions(-)"),
        "{}",
        stat.describe()
    );
    assert!(!stat.stdout.contains("@@"), "{}", stat.describe());
    let coloured = s
        .env
        .nagi_ok(&["mission", "diff", "m1", "--color", "always"]);
    assert!(
        coloured.stdout.contains("\x1b[32m+hello"),
        "{}",
        coloured.describe()
    );
}

#[test]
fn the_cli_makes_the_mission_worktree_by_default_and_in_place_runs_in_the_checkout() {
    let s = session(json!([{"text": "looked"}]), &["m1", "m2"]);
    let started = s.env.nagi_ok(&[
        "mission",
        "start",
        "m1",
        "--provider",
        "codex",
        "--run-id",
        "r1",
    ]);
    assert!(
        started.stdout.contains("branch mission/m1"),
        "{}",
        started.describe()
    );
    let mission = wait_for_mission(&s.env, "m1", "the run's end", |mission| {
        // The turn's end and the claim's release are one commit; the live registry lets go
        // of the run a moment before it.
        mission["status"] == "review_required"
    });
    let worktree = worktree_of(&mission);
    assert_eq!(branch_in(&worktree), "mission/m1");
    assert_eq!(
        mission["run"]["worktree_path"],
        worktree.display().to_string()
    );

    s.env.nagi_ok(&[
        "mission",
        "start",
        "m2",
        "--provider",
        "codex",
        "--run-id",
        "r2",
        "--in-place",
    ]);
    let in_place = wait_for_mission(&s.env, "m2", "the run's end", |mission| {
        // The turn's end and the claim's release are one commit; the live registry lets go
        // of the run a moment before it.
        mission["status"] == "review_required"
    });
    assert!(in_place.get("worktree").is_none(), "{in_place}");
    assert_eq!(in_place["run"]["worktree_path"], s.repo.path_text());

    // Flags that contradict each other are a usage error; a base that names nothing is a
    // clear error, and nothing is written.
    let both = s.env.nagi(&[
        "mission",
        "start",
        "m1",
        "--provider",
        "codex",
        "--in-place",
        "--base",
        "main",
    ]);
    assert_eq!(both.status, 2, "{}", both.describe());
    s.env
        .ok("mission.create", create_params("m3", &s.repo.path_text()));
    s.env.ok(
        "mission.configure",
        json!({"mission_id": "m3", "checks": command_check()}),
    );
    let before = s.env.store_fingerprint();
    let refused = s.env.call(
        "mission.start",
        json!({"mission_id": "m3", "run_id": "r3", "provider": "codex", "mode": "managed",
               "worktree": true, "base": "no-such-branch"}),
    );
    assert_eq!(refused["error"]["code"], "worktree_failed", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no-such-branch"),
        "{refused}"
    );
    assert_eq!(
        s.env.store_fingerprint(),
        before,
        "a refused start writes nothing"
    );
    assert_eq!(
        git(&s.repo.path, &["branch", "--list", "mission/m3"]),
        "",
        "and leaves no branch"
    );
    let contradictory = s.env.call(
        "mission.start",
        json!({"mission_id": "m3", "run_id": "r1", "provider": "codex", "mode": "managed",
               "worktree": true, "worktree_path": s.repo.path_text()}),
    );
    assert_eq!(
        contradictory["error"]["code"], "invalid_params",
        "{contradictory}"
    );
}

#[test]
fn a_worktree_deleted_under_its_mission_blocks_it_with_the_reason() {
    let s = session(json!([{"text": "looked"}]), &["m1"]);
    s.env.ok(
        "mission.start",
        json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed", "worktree": true}),
    );
    let mission = wait_for_mission(&s.env, "m1", "the run's end", |mission| {
        mission["run"]["live"] == false && mission["status"] == "review_required"
    });
    let worktree = worktree_of(&mission);
    std::fs::remove_dir_all(&worktree).unwrap();
    let refused = s.env.call("mission.diff", json!({"mission_id": "m1"}));
    assert_eq!(refused["error"]["code"], "worktree_missing", "{refused}");
    let blocked = s.env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
    assert_eq!(blocked["status"], "blocked", "{blocked}");
    let reason = blocked["status_reason"].as_str().unwrap();
    assert!(
        reason.contains("was deleted") && reason.contains("mission/m1"),
        "{reason}"
    );
    assert_eq!(blocked["worktree"]["state"], "missing");
    // The branch is the mission's work: it is still there.
    git(
        &s.repo.path,
        &["rev-parse", "--verify", "--quiet", "refs/heads/mission/m1"],
    );
}

#[test]
fn archive_removes_a_clean_worktree_and_keeps_one_with_unlanded_changes() {
    let s = session(
        json!([{"write_file": {"path": "new.txt", "content": "hello\n"}}, {"text": "done"}]),
        &["m1", "m2"],
    );
    // m1: a read-only run that changes nothing; m2 writes a file.
    let codex = json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed",
                       "worktree": true, "execute_declared_checks": true});
    let action = json!({"kind": "start_run", "mission_id": "m1", "run_id": "r1", "provider": "codex",
                        "worktree": true, "execute_declared_checks": true});
    let shown = s.env.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
    let decided = s.env.call(
        "cockpit.decide",
        json!({"action": action, "shown_digest": shown["digest"], "decision": "approve"}),
    );
    assert_eq!(
        decided["result"]["type"], "cockpit_decided",
        "{decided} ({codex})"
    );
    start_with_write_scope(&s.env, "m2");
    for id in ["m1", "m2"] {
        wait_for_mission(&s.env, id, "ready to close", |mission| {
            mission["status"] == "ready_to_close"
        });
        s.env.ok("mission.close", json!({"mission_id": id}));
    }
    let clean = wait_for_mission(&s.env, "m1", "the worktree removed", |mission| {
        mission["worktree"]["state"] == "removed"
    });
    assert!(!worktree_of(&clean).exists(), "the clean worktree is gone");
    // Its branch is kept.
    git(
        &s.repo.path,
        &["rev-parse", "--verify", "--quiet", "refs/heads/mission/m1"],
    );
    let kept = wait_for_mission(&s.env, "m2", "the worktree kept", |mission| {
        mission["worktree"]["state"] == "kept"
    });
    assert!(
        worktree_of(&kept).join("new.txt").exists(),
        "unlanded work is never deleted"
    );
    let reason = kept["worktree"]["kept_reason"].as_str().unwrap();
    assert!(
        reason.contains("1 changed file") && reason.contains("not landed"),
        "{reason}"
    );
    let shown = s.env.nagi_ok(&["mission", "get", "m2"]);
    assert!(
        shown.stdout.contains("kept: 1 changed file"),
        "{}",
        shown.describe()
    );
}

#[test]
fn a_worktree_deleted_while_the_server_was_down_blocks_its_mission_at_recovery() {
    let mut s = session(
        json!([{"approve_permission": "keep the run live"}, {"text": "done"}]),
        &["m1"],
    );
    start_with_write_scope(&s.env, "m1");
    let live = wait_for_mission(
        &s.env,
        "m1",
        "the run waiting on its attention item",
        |mission| mission["unresolved_attention_count"] == 1,
    );
    let worktree = worktree_of(&live);
    s.env.kill_server();
    std::fs::remove_dir_all(&worktree).unwrap();
    let plan = s.env.nagi_ok(&["mission", "recover", "--dry-run"]);
    assert!(plan.stdout.contains("was deleted"), "{}", plan.describe());
    s.env.start_server();
    let blocked = wait_for_mission(&s.env, "m1", "blocked by recovery", |mission| {
        mission["status"] == "blocked"
    });
    assert_eq!(blocked["worktree"]["state"], "missing", "{blocked}");
    assert!(
        blocked["status_reason"]
            .as_str()
            .unwrap()
            .contains("was deleted"),
        "{blocked}"
    );
    assert_eq!(blocked["run"]["live"], false);
}

/// `worktree.remove` on a mission's worktree: refused while its mission is not archived
/// (unless forced), and always while a live run holds the checkout. Nothing is removed.
#[test]
fn worktree_remove_keeps_a_mission_worktree_and_a_checkout_a_live_run_holds() {
    let s = session(json!(["wait_interrupt"]), &["m1"]);
    start_with_write_scope(&s.env, "m1");
    let mission = wait_for_mission(&s.env, "m1", "running in its worktree", |mission| {
        mission["run"]["live"] == true && mission["worktree"]["path"].is_string()
    });
    let worktree = worktree_of(&mission);
    let opened = s.env.ok(
        "worktree.open",
        json!({"cwd": s.repo.path_text(), "branch": "mission/m1"}),
    );
    crate::schema::assert_pane_response_valid(&json!({"id": "1", "result": opened}));
    assert_eq!(opened["worktree"]["path"], worktree.display().to_string());
    let workspace_id = opened["workspace"]["workspace_id"].as_str().unwrap();
    let refused = s
        .env
        .call("worktree.remove", json!({"workspace_id": workspace_id}));
    assert_eq!(refused["error"]["code"], "worktree_failed", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the worktree of mission m1"),
        "{refused}"
    );
    let held = s.env.call(
        "worktree.remove",
        json!({"workspace_id": workspace_id, "force": true}),
    );
    assert_eq!(held["error"]["code"], "checkout_claimed", "{held}");
    assert!(worktree.join("README.md").is_file());
    let still = s.env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
    assert_eq!(still["run"]["live"], true, "the run goes on: {still}");
}
