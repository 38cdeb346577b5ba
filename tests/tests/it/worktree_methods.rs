//! The `worktree.*` methods (issue 15, item 2) over the real socket and the real CLI: Git
//! checkouts of real repositories made, listed, opened and removed as workspaces, their
//! events, and their refusals. Every response and event is validated against our own
//! schema and the reference `nagi-api.schema.json`.

use std::path::{Path, PathBuf};

use nagi_tests::*;
use serde_json::{Value, json};

use crate::panes::{next_event, ok_valid, subscribe};

fn branches(repo: &Path) -> Vec<String> {
    git(repo, &["branch", "--format=%(refname:short)"])
        .lines()
        .map(str::to_string)
        .collect()
}

fn worktree_paths(repo: &Path) -> Vec<PathBuf> {
    git(repo, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|line| line.strip_prefix("worktree "))
        .map(PathBuf::from)
        .collect()
}

fn path_of(result: &Value) -> PathBuf {
    PathBuf::from(result["worktree"]["path"].as_str().unwrap())
}

fn error_message(env: &TestEnv, method: &str, params: Value) -> (String, String) {
    let response = env.call(method, params.clone());
    crate::schema::assert_pane_response_valid(&response);
    match (
        response.pointer("/error/code").and_then(Value::as_str),
        response.pointer("/error/message").and_then(Value::as_str),
    ) {
        (Some(code), Some(message)) => (code.to_string(), message.to_string()),
        _ => panic!("{method} {params} was expected to fail but answered {response}"),
    }
}

#[test]
fn worktree_methods_make_open_list_and_remove_checkouts_with_their_events() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let mut events = subscribe(
        &env,
        json!([{"type": "worktree.created"}, {"type": "worktree.opened"},
               {"type": "worktree.removed"}, {"type": "workspace.updated"},
               {"type": "workspace.closed"}]),
    );
    let source = ok_valid(
        &env,
        "workspace.create",
        json!({"cwd": repo.path_text(), "command": ["sh"]}),
    )["workspace"]["workspace_id"]
        .as_str()
        .unwrap()
        .to_string();

    // Create: a new branch from HEAD, in nagi's worktrees folder, with a workspace.
    let created = ok_valid(
        &env,
        "worktree.create",
        json!({"workspace_id": source, "branch": "feature/api", "focus": false}),
    );
    assert_eq!(created["type"], "worktree_created");
    let feature = path_of(&created);
    assert!(
        !feature.starts_with(&repo.path) && feature.is_dir(),
        "outside the repository: {}",
        feature.display()
    );
    assert_eq!(
        git(&feature, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "feature/api"
    );
    assert_eq!(git(&feature, &["rev-parse", "HEAD"]), repo.head());
    assert_eq!(created["worktree"]["is_linked_worktree"], true);
    let feature_workspace = created["workspace"]["workspace_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        created["worktree"]["open_workspace_id"],
        feature_workspace.as_str()
    );
    let provenance = &created["workspace"]["worktree"];
    assert_eq!(provenance["checkout_path"], feature.display().to_string());
    assert_eq!(provenance["repo_root"], repo.path_text());
    assert_eq!(provenance["is_linked_worktree"], true);
    assert_eq!(
        created["root_pane"]["workspace_id"],
        feature_workspace.as_str()
    );

    // The source workspace joins the group (workspace.updated), then worktree.created.
    let updated = next_event(&mut events, |event| event["event"] == "workspace_updated");
    assert_eq!(
        updated["data"]["workspace"]["workspace_id"],
        source.as_str()
    );
    assert_eq!(
        updated["data"]["workspace"]["worktree"]["is_linked_worktree"],
        false
    );
    let made = next_event(&mut events, |event| event["event"] == "worktree_created");
    assert_eq!(
        made["data"]["workspace"]["workspace_id"],
        feature_workspace.as_str()
    );
    assert_eq!(made["data"]["worktree"]["branch"], "feature/api");

    // List from a directory inside the main checkout.
    let listed = ok_valid(
        &env,
        "worktree.list",
        json!({"cwd": repo.path.join("src").display().to_string()}),
    );
    assert_eq!(listed["source"]["repo_root"], repo.path_text());
    assert_eq!(listed["source"]["source_checkout_path"], repo.path_text());
    assert!(
        listed["source"]["repo_key"]
            .as_str()
            .unwrap()
            .starts_with("repo-")
    );
    let worktrees = listed["worktrees"].as_array().unwrap();
    assert_eq!(worktrees.len(), 2, "{listed}");
    assert_eq!(worktrees[0]["path"], repo.path_text());
    assert_eq!(worktrees[0]["branch"], "main");
    assert_eq!(worktrees[0]["is_linked_worktree"], false);
    assert_eq!(worktrees[0]["open_workspace_id"], source.as_str());
    assert_eq!(worktrees[1]["branch"], "feature/api");
    assert_eq!(
        worktrees[1]["open_workspace_id"],
        feature_workspace.as_str()
    );

    // Open by branch: the workspace already open there comes back.
    let opened = ok_valid(
        &env,
        "worktree.open",
        json!({"workspace_id": source, "branch": "feature/api", "focus": true}),
    );
    assert_eq!(opened["already_open"], true);
    assert_eq!(
        opened["workspace"]["workspace_id"],
        feature_workspace.as_str()
    );
    assert_eq!(opened["workspace"]["focused"], true);
    let open_event = next_event(&mut events, |event| event["event"] == "worktree_opened");
    assert_eq!(open_event["data"]["already_open"], true);

    // An existing branch is checked out as it is, at the path asked for.
    git(&repo.path, &["branch", "existing"]);
    let custom = repo.path.parent().unwrap().join("custom checkout");
    let existing = ok_valid(
        &env,
        "worktree.create",
        json!({"cwd": repo.path_text(), "branch": "existing", "path": custom.display().to_string(),
               "label": "mine"}),
    );
    assert_eq!(path_of(&existing), custom);
    assert_eq!(existing["workspace"]["label"], "mine");
    assert_eq!(
        git(&custom, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "existing"
    );
    let existing_workspace = existing["workspace"]["workspace_id"]
        .as_str()
        .unwrap()
        .to_string();

    // Remove refuses uncommitted and untracked files, naming them; nothing changes.
    std::fs::write(feature.join("notes.txt"), "mine\n").unwrap();
    let (code, message) = error_message(
        &env,
        "worktree.remove",
        json!({"workspace_id": feature_workspace}),
    );
    assert_eq!(code, "checkout_dirty");
    assert!(message.contains("notes.txt"), "{message}");
    assert!(feature.join("notes.txt").is_file());
    assert!(
        env.ok("workspace.get", json!({"workspace_id": feature_workspace}))["workspace"]
            .is_object()
    );

    // Clean, it goes: folder and workspace, never the branch.
    std::fs::remove_file(feature.join("notes.txt")).unwrap();
    let removed = ok_valid(
        &env,
        "worktree.remove",
        json!({"workspace_id": feature_workspace}),
    );
    assert_eq!(removed["type"], "worktree_removed");
    assert_eq!(removed["path"], feature.display().to_string());
    assert_eq!(removed["forced"], false);
    assert!(!feature.exists());
    assert!(branches(&repo.path).contains(&"feature/api".to_string()));
    assert!(!worktree_paths(&repo.path).contains(&feature));
    let closed = next_event(&mut events, |event| event["event"] == "workspace_closed");
    assert_eq!(closed["data"]["workspace_id"], feature_workspace.as_str());
    let gone = next_event(&mut events, |event| event["event"] == "worktree_removed");
    assert_eq!(gone["data"]["workspace_id"], feature_workspace.as_str());
    assert_eq!(gone["data"]["worktree"]["branch"], "feature/api");
    assert_eq!(
        env.error_code("workspace.get", json!({"workspace_id": feature_workspace})),
        "workspace_not_found"
    );

    // With force, changed files go too.
    std::fs::write(custom.join("README.md"), "changed\n").unwrap();
    let forced = ok_valid(
        &env,
        "worktree.remove",
        json!({"workspace_id": existing_workspace, "force": true}),
    );
    assert_eq!(forced["forced"], true);
    assert!(!custom.exists());
    assert!(branches(&repo.path).contains(&"existing".to_string()));
    assert_eq!(worktree_paths(&repo.path), vec![repo.path.clone()]);
}

#[test]
fn worktree_methods_refuse_bad_input_and_change_nothing() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let root = repo.path_text();
    let main_workspace = ok_valid(
        &env,
        "workspace.create",
        json!({"cwd": root, "command": ["sh"]}),
    )["workspace"]["workspace_id"]
        .as_str()
        .unwrap()
        .to_string();
    let sub_workspace = ok_valid(
        &env,
        "workspace.create",
        json!({"cwd": repo.path.join("src").display().to_string(), "command": ["sh"]}),
    )["workspace"]["workspace_id"]
        .as_str()
        .unwrap()
        .to_string();
    let not_git = tempfile::tempdir().unwrap();
    let full = repo.path.parent().unwrap().join("full");
    std::fs::create_dir_all(&full).unwrap();
    std::fs::write(full.join("keep.txt"), "x").unwrap();
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            "worktree.list",
            json!({"workspace_id": main_workspace, "cwd": root}),
            "invalid_params",
            "at most one",
        ),
        (
            "worktree.list",
            json!({"cwd": "relative/dir"}),
            "invalid_params",
            "absolute",
        ),
        (
            "worktree.list",
            json!({"cwd": not_git.path().display().to_string()}),
            "invalid_repository",
            "not inside a Git checkout",
        ),
        (
            "worktree.list",
            json!({"workspace_id": "w999"}),
            "workspace_not_found",
            "w999",
        ),
        (
            "worktree.create",
            json!({"cwd": root, "branch": "bad..name"}),
            "invalid_params",
            "bad..name",
        ),
        (
            "worktree.create",
            json!({"cwd": root, "branch": "main"}),
            "worktree_failed",
            "is checked out at",
        ),
        (
            "worktree.create",
            json!({"cwd": root, "branch": "new", "base": "no-such-ref"}),
            "worktree_failed",
            "names no commit",
        ),
        (
            "worktree.create",
            json!({"cwd": root, "branch": "new", "path": "rel/path"}),
            "invalid_params",
            "absolute",
        ),
        (
            "worktree.create",
            json!({"cwd": root, "branch": "new", "path": full.display().to_string()}),
            "worktree_failed",
            "not empty",
        ),
        (
            "worktree.create",
            json!({"cwd": root, "branch": "new", "path": env.config_dir.join("wt").display().to_string()}),
            "worktree_failed",
            "inside nagi's folder",
        ),
        (
            "worktree.create",
            json!({"cwd": root, "branch": 7}),
            "invalid_params",
            "worktree.create",
        ),
        (
            "worktree.open",
            json!({"cwd": root, "branch": "main", "path": root}),
            "invalid_params",
            "exactly one",
        ),
        (
            "worktree.open",
            json!({"cwd": root}),
            "invalid_params",
            "exactly one",
        ),
        (
            "worktree.open",
            json!({"cwd": root, "branch": "nope"}),
            "worktree_not_found",
            "nope",
        ),
        (
            "worktree.open",
            json!({"cwd": root, "path": not_git.path().display().to_string()}),
            "worktree_not_found",
            "is not a checkout",
        ),
        (
            "worktree.remove",
            json!({}),
            "invalid_params",
            "workspace_id",
        ),
        (
            "worktree.remove",
            json!({"workspace_id": "w999"}),
            "workspace_not_found",
            "w999",
        ),
        (
            "worktree.remove",
            json!({"workspace_id": main_workspace, "force": true}),
            "worktree_failed",
            "main checkout",
        ),
        (
            "worktree.remove",
            json!({"workspace_id": sub_workspace}),
            "worktree_failed",
            "not open at the root of a checkout",
        ),
    ];
    for (method, params, want_code, want_text) in cases {
        let (code, message) = error_message(&env, method, params.clone());
        assert_eq!(code, want_code, "{method} {params}: {message}");
        assert!(
            message.contains(want_text),
            "{method} {params}: the message should say {want_text:?}: {message}"
        );
    }
    assert_eq!(branches(&repo.path), vec!["main".to_string()]);
    assert_eq!(worktree_paths(&repo.path), vec![repo.path.clone()]);
    assert!(full.join("keep.txt").is_file());
    for workspace_id in [&main_workspace, &sub_workspace] {
        ok_valid(&env, "workspace.get", json!({"workspace_id": workspace_id}));
    }
}

#[test]
fn the_cli_makes_lists_opens_and_removes_worktrees_from_the_current_directory() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let in_repo = |args: &[&str]| -> CliRun {
        env.command()
            .current_dir(repo.path.join("src"))
            .args(args)
            .output()
            .expect("nagi runs")
            .into()
    };
    let created = in_repo(&["worktree", "create", "--branch", "cli/one"]);
    assert_eq!(created.status, 0, "{}", created.describe());
    assert!(
        created.stdout.contains("on cli/one in workspace"),
        "{}",
        created.stdout
    );
    let listed = in_repo(&["worktree", "list"]);
    assert_eq!(listed.status, 0, "{}", listed.describe());
    assert!(
        listed
            .stdout
            .contains(&format!("repository {}", repo.path_text())),
        "{}",
        listed.stdout
    );
    assert!(
        listed.stdout.contains("cli/one") && listed.stdout.contains("(main)"),
        "{}",
        listed.stdout
    );
    let json_list = in_repo(&["--json", "worktree", "list"]).json();
    let workspace_id = json_list["worktrees"][1]["open_workspace_id"]
        .as_str()
        .unwrap()
        .to_string();
    let checkout = PathBuf::from(json_list["worktrees"][1]["path"].as_str().unwrap());
    let again = in_repo(&["worktree", "open", "--branch", "cli/one"]);
    assert!(
        again.stdout.contains("already open"),
        "{}",
        again.describe()
    );
    let usage = in_repo(&["worktree", "open", "--branch", "cli/one", "--path", "x"]);
    assert_eq!(usage.status, 2, "{}", usage.describe());
    std::fs::write(checkout.join("wip.txt"), "wip\n").unwrap();
    let refused = in_repo(&["worktree", "remove", &workspace_id]);
    assert_eq!(refused.status, 1, "{}", refused.describe());
    assert!(
        refused.stderr.contains("checkout_dirty") && refused.stderr.contains("wip.txt"),
        "{}",
        refused.describe()
    );
    let removed = in_repo(&["worktree", "remove", &workspace_id, "--force"]);
    assert_eq!(removed.status, 0, "{}", removed.describe());
    assert!(
        removed.stdout.contains("its branch is kept"),
        "{}",
        removed.stdout
    );
    assert!(!checkout.exists());
    assert!(branches(&repo.path).contains(&"cli/one".to_string()));
}
