//! Landing a mission's change (issue 15, item 4): squash, merge and rebase into the branch
//! the checkout had, the person's checkout moved with it, a conflict and a dirty checkout
//! refused with nothing changed, a push to a local bare remote, a pull request through a
//! fake `gh`, and the consent rule (the public socket cannot land). Real git repositories,
//! the real server, the fake ACP agent writing under granted write scope.

use std::path::{Path, PathBuf};

use nagi_tests::*;
use serde_json::{Value, json};

/// The agent changes README.md and adds new.txt, then ends its turn.
fn agent_script() -> Value {
    json!([
        {"write_file": {"path": "README.md", "content": "# demo\nchanged by the agent\n"}},
        {"write_file": {"path": "new.txt", "content": "hello\n"}},
        {"text": "done"}
    ])
}

fn configure(env: &TestEnv) {
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let fake_env = format!(
        "NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {}",
        toml_string(&agent_script().to_string()),
        toml_string(fake_log_path(env).to_str().unwrap())
    );
    std::fs::write(
        env.config_dir.join("config.toml"),
        format!(
            "[providers.acp]\ncommand = [{}]\nenv = {{ {fake_env} }}\n\n{}",
            toml_string(test_binary("fake_acp").to_str().unwrap()),
            fake_sandbox_section(env)
        ),
    )
    .unwrap();
}

struct Landing {
    env: TestEnv,
    repo: TestRepo,
    worktree: PathBuf,
}

/// A session whose mission `m1` ran in its own worktree and is `ready_to_close`.
fn ready_mission(extra_env: &[(&str, String)]) -> Landing {
    let mut env = TestEnv::new();
    for (key, value) in extra_env {
        env.env.insert(key.to_string(), value.clone());
    }
    configure(&env);
    env.start_server();
    let repo = TestRepo::new();
    git(&repo.path, &["config", "user.name", "Pat Person"]);
    git(&repo.path, &["config", "user.email", "pat@example.invalid"]);
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok(
        "mission.configure",
        json!({"mission_id": "m1", "checks": [{"kind": "command", "id": "unit", "program": "test",
               "args": ["-f", "README.md"], "cwd": ".", "relevant_paths": [], "required_artifacts": [],
               "required": true, "covers": [0, 1]}]}),
    );
    env.nagi_ok(&[
        "mission",
        "start",
        "m1",
        "--provider",
        "acp",
        "--run-id",
        "r1",
        "--execute-checks",
        "--yes",
    ]);
    let mission = wait_for_mission(&env, "m1", "ready to close", |mission| {
        mission["status"] == "ready_to_close"
    });
    let worktree = PathBuf::from(mission["worktree"]["path"].as_str().unwrap());
    assert_eq!(mission["worktree"]["target_branch"], "main", "{mission}");
    Landing {
        env,
        repo,
        worktree,
    }
}

fn head_of(path: &Path, reference: &str) -> String {
    git(path, &["rev-parse", reference])
}

fn mission(env: &TestEnv) -> Value {
    env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone()
}

#[test]
fn a_squash_landing_makes_one_commit_on_the_starting_branch_moves_the_checkout_and_archives() {
    let s = ready_mission(&[]);
    let before = head_of(&s.repo.path, "main");

    // The public socket checks the request, then refuses: landing needs a person.
    let fingerprint = s.env.store_fingerprint();
    let refused = s.env.call("mission.land", json!({"mission_id": "m1"}));
    assert_eq!(
        refused["error"]["code"], "interactive_consent_required",
        "{refused}"
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nagi mission land m1"),
        "{refused}"
    );
    assert_eq!(
        s.env.store_fingerprint(),
        fingerprint,
        "nothing was written"
    );
    assert_eq!(head_of(&s.repo.path, "main"), before);

    let landed = s.env.nagi_ok(&["mission", "land", "m1", "--yes"]);
    // The preview named the branch, the strategy, the files and the message.
    for shown in [
        "branch: main",
        "by squash",
        "README.md, new.txt",
        "message: ",
        "checkout: ",
    ] {
        assert!(
            landed.stderr.contains(shown),
            "{shown}: {}",
            landed.describe()
        );
    }
    assert!(
        landed.stdout.contains("mission m1 landed in main as"),
        "{}",
        landed.describe()
    );

    let after = head_of(&s.repo.path, "main");
    assert_eq!(
        head_of(&s.repo.path, "main^"),
        before,
        "one commit on top of main"
    );
    let message = git(&s.repo.path, &["log", "-1", "--format=%B", "main"]);
    assert!(
        message.starts_with("Fix login\n\nMake the login redirect work"),
        "{message}"
    );
    assert!(message.contains("Nagi-Mission: m1"), "{message}");
    let author = git(&s.repo.path, &["log", "-1", "--format=%an <%ae>", "main"]);
    assert_eq!(author, "Pat Person <pat@example.invalid>");
    // The person's checkout had main checked out and was clean: it moved with it.
    assert_eq!(
        std::fs::read_to_string(s.repo.path.join("new.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(
        std::fs::read_to_string(s.repo.path.join("README.md")).unwrap(),
        "# demo\nchanged by the agent\n"
    );
    assert_eq!(git(&s.repo.path, &["status", "--porcelain"]), "");

    let view = mission(&s.env);
    assert_eq!(view["status"], "archived", "{view}");
    assert_eq!(view["landing"]["landed_revision"], after);
    assert_eq!(view["landing"]["previous_target_revision"], before);
    assert_eq!(view["landing"]["strategy"], "squash");
    assert_eq!(view["landing"]["updated_checkout"], s.repo.path_text());
    let receipt = s.env.ok("mission.proof.get", json!({"mission_id": "m1"}))["receipt"].clone();
    assert_eq!(receipt["decision"], "archived");
    assert_eq!(receipt["landing"]["landed_revision"], after, "{receipt}");
    let subject = receipt["subject_digest"].as_str().unwrap();
    assert!(
        message.contains(&format!("Nagi-Proof: {subject}")),
        "the trailer names what the archive receipt proves ({subject}): {message}"
    );
    // The worktree is gone (its work landed); the branch stays.
    let view = wait_for_mission(&s.env, "m1", "the worktree removed", |mission| {
        mission["worktree"]["state"] == "removed"
    });
    assert!(!s.worktree.exists(), "{view}");
    let branch_tip = head_of(&s.repo.path, "refs/heads/mission/m1");
    assert_eq!(view["landing"]["mission_revision"], branch_tip);
    // A landed mission cannot land again.
    let again = s.env.call("mission.land", json!({"mission_id": "m1"}));
    assert_eq!(again["error"]["code"], "mission_not_ready", "{again}");
}

#[test]
fn merge_and_rebase_integrate_onto_a_branch_that_moved_on() {
    for strategy in ["merge", "rebase"] {
        let s = ready_mission(&[]);
        // The person commits something else on main meanwhile.
        s.repo.write("other.txt", "the person's\n");
        git(&s.repo.path, &["add", "other.txt"]);
        git(&s.repo.path, &["commit", "-q", "-m", "the person's commit"]);
        let moved = head_of(&s.repo.path, "main");

        let flag = format!("--{strategy}");
        s.env.nagi_ok(&[
            "mission",
            "land",
            "m1",
            &flag,
            "--message",
            "Land it",
            "--yes",
        ]);
        let tip = head_of(&s.repo.path, "main");
        let parents = git(&s.repo.path, &["log", "-1", "--format=%P", "main"]);
        let parents: Vec<&str> = parents.split_whitespace().collect();
        let view = mission(&s.env);
        match strategy {
            "merge" => assert_eq!(
                parents,
                [
                    moved.as_str(),
                    view["landing"]["mission_revision"].as_str().unwrap()
                ],
                "a merge commit of main and the mission branch"
            ),
            _ => assert_eq!(parents, [moved.as_str()], "replayed onto the moved main"),
        }
        let message = git(&s.repo.path, &["log", "-1", "--format=%B", "main"]);
        assert!(
            message.starts_with("Land it") && message.contains("Nagi-Mission: m1"),
            "{strategy}: {message}"
        );
        for (file, text) in [("other.txt", "the person's\n"), ("new.txt", "hello\n")] {
            assert_eq!(
                git(&s.repo.path, &["show", &format!("main:{file}")]),
                text.trim_end(),
                "{strategy}"
            );
            assert_eq!(
                std::fs::read_to_string(s.repo.path.join(file)).unwrap(),
                text
            );
        }
        assert_eq!(view["landing"]["landed_revision"], tip);
        assert_eq!(view["landing"]["strategy"], strategy);
        assert_eq!(view["status"], "archived");
    }
}

#[test]
fn a_conflict_and_a_dirty_checkout_refuse_with_the_paths_and_change_nothing() {
    let s = ready_mission(&[]);
    // The person's main changes README.md the other way.
    s.repo.write("README.md", "# demo\nthe person's line\n");
    git(&s.repo.path, &["commit", "-q", "-am", "conflicting"]);
    let main_before = head_of(&s.repo.path, "main");
    let branch_before = head_of(&s.repo.path, "refs/heads/mission/m1");
    let conflict = s.env.nagi(&["mission", "land", "m1", "--yes"]);
    assert_eq!(conflict.status, 1, "{}", conflict.describe());
    assert!(
        conflict.stderr.contains("land_conflict") && conflict.stderr.contains("README.md"),
        "{}",
        conflict.describe()
    );
    assert_eq!(head_of(&s.repo.path, "main"), main_before);
    assert_eq!(
        head_of(&s.repo.path, "refs/heads/mission/m1"),
        branch_before
    );
    assert_eq!(git(&s.repo.path, &["status", "--porcelain"]), "");
    assert_eq!(mission(&s.env)["status"], "ready_to_close");

    // Undo the person's change; now their checkout has an edit of its own.
    git(&s.repo.path, &["reset", "-q", "--hard", "HEAD^"]);
    s.repo
        .write("src/lib.rs", "pub fn answer() -> u32 { 41 }\n");
    let dirty = s.env.nagi(&["mission", "land", "m1", "--yes"]);
    assert_eq!(dirty.status, 1, "{}", dirty.describe());
    assert!(
        dirty.stderr.contains("checkout_dirty") && dirty.stderr.contains("src/lib.rs"),
        "{}",
        dirty.describe()
    );
    assert_eq!(
        std::fs::read_to_string(s.repo.path.join("src/lib.rs")).unwrap(),
        "pub fn answer() -> u32 { 41 }\n",
        "the person's edit is untouched"
    );
    let still = mission(&s.env);
    assert_eq!(still["status"], "ready_to_close", "{still}");
    assert_eq!(still["worktree"]["state"], "present");

    // Into a branch no checkout has, the dirty checkout does not matter.
    git(&s.repo.path, &["branch", "release"]);
    let release_before = head_of(&s.repo.path, "release");
    s.env
        .nagi_ok(&["mission", "land", "m1", "--into", "release", "--yes"]);
    assert_eq!(head_of(&s.repo.path, "release^"), release_before);
    assert_eq!(
        git(&s.repo.path, &["show", "release:new.txt"]),
        "hello",
        "landed in release"
    );
    assert_eq!(
        std::fs::read_to_string(s.repo.path.join("src/lib.rs")).unwrap(),
        "pub fn answer() -> u32 { 41 }\n"
    );
    assert!(
        !s.repo.path.join("new.txt").exists(),
        "main's checkout did not move"
    );
    assert_eq!(mission(&s.env)["landing"]["target_branch"], "release");
}

#[test]
fn a_landing_pushes_to_a_remote_and_opens_a_pull_request_through_gh() {
    let tools = tempfile::tempdir().unwrap();
    let gh_log = tools.path().join("gh.log");
    let gh = tools.path().join("gh");
    std::fs::write(
        &gh,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\necho https://example.invalid/pr/7\n",
            gh_log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        tools.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );

    // A push of the landed branch to a bare remote.
    let s = ready_mission(&[]);
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare"]);
    git(
        &s.repo.path,
        &["remote", "add", "origin", remote.path().to_str().unwrap()],
    );
    s.env
        .nagi_ok(&["mission", "land", "m1", "--push", "origin", "--yes"]);
    assert_eq!(
        head_of(remote.path(), "refs/heads/main"),
        head_of(&s.repo.path, "main"),
        "the remote has the landed main"
    );
    assert_eq!(mission(&s.env)["landing"]["pushed_to"], "origin");

    // A pull request: the mission branch is pushed and gh asked; main stays.
    let s = ready_mission(&[("PATH", path)]);
    let remote = tempfile::tempdir().unwrap();
    git(remote.path(), &["init", "-q", "--bare"]);
    git(
        &s.repo.path,
        &["remote", "add", "origin", remote.path().to_str().unwrap()],
    );
    let main_before = head_of(&s.repo.path, "main");
    let opened = s
        .env
        .nagi_ok(&["mission", "land", "m1", "--push", "origin", "--pr", "--yes"]);
    assert!(
        opened.stdout.contains("https://example.invalid/pr/7"),
        "{}",
        opened.describe()
    );
    assert_eq!(
        head_of(&s.repo.path, "main"),
        main_before,
        "no local landing"
    );
    let view = mission(&s.env);
    assert_eq!(
        head_of(remote.path(), "refs/heads/mission/m1"),
        view["landing"]["mission_revision"].as_str().unwrap()
    );
    assert_eq!(
        view["landing"]["pull_request"],
        "https://example.invalid/pr/7"
    );
    let asked = std::fs::read_to_string(&gh_log).unwrap();
    assert!(
        asked.starts_with("pr\ncreate\n--base\nmain\n--head\nmission/m1\n"),
        "{asked}"
    );

    // --pr without --push is a usage error.
    let usage = s.env.nagi(&["mission", "land", "m1", "--pr"]);
    assert_eq!(usage.status, 2, "{}", usage.describe());
}

#[test]
fn a_landing_without_a_git_identity_says_how_to_set_one_and_lands_nothing() {
    let s = ready_mission(&[]);
    git(&s.repo.path, &["config", "--unset", "user.name"]);
    git(&s.repo.path, &["config", "--unset", "user.email"]);
    let main_before = head_of(&s.repo.path, "main");
    let refused = s.env.nagi(&["mission", "land", "m1", "--yes"]);
    assert_eq!(refused.status, 1, "{}", refused.describe());
    assert!(
        refused.stderr.contains("land_failed") && refused.stderr.contains("git config user.name"),
        "{}",
        refused.describe()
    );
    assert_eq!(head_of(&s.repo.path, "main"), main_before);
    let view = mission(&s.env);
    assert_eq!(view["status"], "ready_to_close", "{view}");
    assert_eq!(
        git(&s.worktree, &["status", "--porcelain"]),
        " M README.md\n?? new.txt".trim(),
        "the worktree is as the agent left it"
    );
}

#[test]
fn sync_rebases_the_mission_branch_onto_the_moved_branch_and_keeps_the_agents_changes() {
    let s = ready_mission(&[]);
    s.repo.write("other.txt", "the person's\n");
    git(&s.repo.path, &["add", "other.txt"]);
    git(&s.repo.path, &["commit", "-q", "-m", "the person's commit"]);
    let moved = head_of(&s.repo.path, "main");

    // The public socket cannot sync either.
    let refused = s.env.call("mission.sync", json!({"mission_id": "m1"}));
    assert_eq!(
        refused["error"]["code"], "interactive_consent_required",
        "{refused}"
    );

    let synced = s.env.nagi_ok(&["mission", "sync", "m1", "--yes"]);
    assert!(
        synced.stderr.contains("is rebased onto main"),
        "{}",
        synced.describe()
    );
    assert!(
        synced.stdout.contains("mission/m1 rebased onto main"),
        "{}",
        synced.describe()
    );
    assert_eq!(
        head_of(&s.worktree, "HEAD"),
        moved,
        "the branch (no commits of its own) is now at main's tip"
    );
    assert_eq!(
        std::fs::read_to_string(s.worktree.join("other.txt")).unwrap(),
        "the person's\n",
        "main's change reached the worktree"
    );
    assert_eq!(
        std::fs::read_to_string(s.worktree.join("new.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(
        git(&s.worktree, &["status", "--porcelain"]),
        "M README.md\n?? new.txt",
        "the agent's changes are still uncommitted"
    );
    let view = mission(&s.env);
    assert_eq!(view["worktree"]["base_revision"], moved);
    assert_eq!(view["status"], "blocked", "{view}");
    assert!(
        view["status_reason"]
            .as_str()
            .unwrap()
            .contains("verify it again"),
        "{view}"
    );
    // The diff is against the new base: main's commit is not part of the mission's change.
    let diff = s.env.ok("mission.diff", json!({"mission_id": "m1"}))["diff"].clone();
    let files: Vec<&str> = diff["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["README.md", "new.txt"], "{diff}");

    // A sync with nothing new says so.
    let again = s.env.nagi_ok(&["mission", "sync", "m1", "--yes"]);
    assert!(
        again.stdout.contains("nothing to sync"),
        "{}",
        again.describe()
    );

    // Verified again, it lands on top of the person's commit.
    s.env
        .nagi_ok(&["mission", "verify", "m1", "--execute-checks"]);
    wait_for_mission(&s.env, "m1", "ready again", |mission| {
        mission["status"] == "ready_to_close"
    });
    s.env.nagi_ok(&["mission", "land", "m1", "--yes"]);
    assert_eq!(head_of(&s.repo.path, "main^"), moved);

    // A conflicting sync changes nothing.
    let s = ready_mission(&[]);
    s.repo.write("README.md", "# demo\nthe person's line\n");
    git(&s.repo.path, &["commit", "-q", "-am", "conflicting"]);
    let head_before = head_of(&s.worktree, "HEAD");
    let conflict = s.env.nagi(&["mission", "sync", "m1", "--yes"]);
    assert_eq!(conflict.status, 1, "{}", conflict.describe());
    assert!(
        conflict.stderr.contains("land_conflict") && conflict.stderr.contains("README.md"),
        "{}",
        conflict.describe()
    );
    assert_eq!(head_of(&s.worktree, "HEAD"), head_before);
    assert_eq!(
        std::fs::read_to_string(s.worktree.join("README.md")).unwrap(),
        "# demo\nchanged by the agent\n"
    );
    assert_eq!(mission(&s.env)["status"], "ready_to_close");
}

/// Crash torture of landing (a kind of its own, beside `torture.rs`'s): SIGKILL the server
/// at a spread of moments while `nagi mission land` runs, restart it, and check that the
/// target branch is either where it was or at the landed commit, that no git lock is left,
/// that the person's checkout is clean and matches the branch, and that recovery finished
/// the landing (archived, with the landing recorded) or rolled it back (still ready).
/// `NAGI_TORTURE_ITERATIONS` sets the number of kills (default 6).
#[test]
fn a_sigkill_at_any_moment_of_a_landing_leaves_the_old_branch_or_the_landed_one() {
    let iterations: u64 = std::env::var("NAGI_TORTURE_ITERATIONS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(6);
    let mut outcomes = Vec::new();
    // Each fault point first (a pause there, so the kill lands exactly in the window),
    // then kills at a spread of moments without a pause.
    let points = ["land_prepared", "land_branch_moved", "land_applied"];
    for iteration in 0..iterations + points.len() as u64 {
        let point = points.get(iteration as usize).copied();
        let extra: Vec<(&str, String)> = point
            .map(|point| vec![("NAGI_FAULT_PAUSE", format!("{point}:60000"))])
            .unwrap_or_default();
        let mut s = ready_mission(&extra);
        let before = head_of(&s.repo.path, "main");
        // Spread over the landing's span: the consent, the checks, the commits, the branch
        // and checkout moves, the seal.
        let delay = std::time::Duration::from_millis(10 + iteration * 300 / iterations.max(1));
        let mut land = s
            .env
            .command()
            .args(["mission", "land", "m1", "--yes"])
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(s.env.root().join("land.stderr")).unwrap())
            .spawn()
            .unwrap();
        match point {
            Some(point) => {
                wait_for_log(&s.env, &format!("{point}:60000"));
                // The restarted server must not pause again.
                s.env.env.remove("NAGI_FAULT_PAUSE");
            }
            None => std::thread::sleep(delay),
        }
        s.env.kill_server();
        let _ = land.wait();
        s.env.start_server();
        // Recovery re-runs an interrupted check run in the background: wait until none
        // runs, twice, with time in between for a re-run to begin.
        let settled = |mission: &Value| {
            mission.get("checks_running").is_none()
                && matches!(
                    mission["status"].as_str(),
                    Some("archived" | "ready_to_close" | "blocked")
                )
        };
        wait_for_mission(&s.env, "m1", "settled after the restart", settled);
        std::thread::sleep(std::time::Duration::from_millis(700));
        let view = wait_for_mission(&s.env, "m1", "settled after the restart", settled);
        let git_dir = s.repo.path.join(".git");
        for lock in ["index.lock", "refs/heads/main.lock", "HEAD.lock"] {
            assert!(
                !git_dir.join(lock).exists(),
                "iteration {iteration} ({delay:?}): a stale {lock} was left"
            );
        }
        let after = head_of(&s.repo.path, "main");
        assert_eq!(
            git(&s.repo.path, &["status", "--porcelain"]),
            "",
            "iteration {iteration} ({delay:?}): the checkout is clean\n{view}"
        );
        if after == before {
            assert!(view.get("landing").is_none(), "{view}");
            assert_eq!(view["status"], "ready_to_close", "rolled back: {view}");
            assert!(!s.repo.path.join("new.txt").exists());
            outcomes.push(
                if s.env
                    .server_log()
                    .contains("recovery rolled back an interrupted landing")
                {
                    "rolled back by recovery"
                } else {
                    "killed before the landing moved anything"
                },
            );
        } else {
            assert_eq!(head_of(&s.repo.path, "main^"), before, "{view}");
            let message = git(&s.repo.path, &["log", "-1", "--format=%B", "main"]);
            assert!(message.contains("Nagi-Mission: m1"), "{message}");
            assert_eq!(
                std::fs::read_to_string(s.repo.path.join("new.txt")).unwrap(),
                "hello\n",
                "iteration {iteration}: the checkout moved with the branch"
            );
            assert_eq!(view["status"], "archived", "finished: {view}");
            assert_eq!(view["landing"]["landed_revision"], after, "{view}");
            let by_recovery = view["landing"]["problem"]
                .as_str()
                .is_some_and(|problem| problem.contains("recovery finished it"));
            outcomes.push(if by_recovery {
                "finished by recovery"
            } else {
                "landed before the kill"
            });
        }
    }
    eprintln!("landing torture: {outcomes:?}");
    for (point, expected) in points.iter().zip([
        "rolled back by recovery",
        "finished by recovery",
        "finished by recovery",
    ]) {
        let index = points.iter().position(|each| each == point).unwrap();
        assert_eq!(outcomes[index], expected, "a kill at {point}: {outcomes:?}");
    }
}

fn wait_for_log(env: &TestEnv, text: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        if env.server_log().contains(text) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!(
        "the server never logged {text:?}:\n{}\nnagi mission land said: {}",
        env.server_log(),
        std::fs::read_to_string(env.root().join("land.stderr")).unwrap_or_default()
    );
}
