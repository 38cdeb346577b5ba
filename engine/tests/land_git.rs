//! The git work of landing and syncing, on real repositories made in temp dirs: what the
//! person's checkout holds after a landing that adds, changes and deletes files, a target
//! that moved between preparing and applying, recovery of an interrupted landing, and a
//! sync that carries uncommitted deletions over. The server-level behaviour (consent,
//! re-verification, archive) is in `tests/tests/it/land.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;

use nagi_engine::worktrees::git::make_worktree;
use nagi_engine::worktrees::land::{
    LandRequest, Recovered, apply, finish_mission_branch, message_with_trailers, prepare, recover,
};
use nagi_engine::worktrees::sync::{SyncRequest, sync};
use nagi_schema::land::LandStrategy;

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

struct Repository {
    _dir: tempfile::TempDir,
    root: PathBuf,
    worktree: PathBuf,
}

/// A repository on `main` with `keep.txt`, `change.txt` and `gone.txt`, and the worktree of
/// mission `m1` where the agent changed one, deleted one and added one.
fn repository_with_a_change() -> Repository {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let root = base.join("repo");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["config", "user.name", "Pat Person"]);
    git(&root, &["config", "user.email", "pat@example.invalid"]);
    for (file, text) in [
        ("keep.txt", "keep\n"),
        ("change.txt", "one\n"),
        ("gone.txt", "bye\n"),
    ] {
        std::fs::write(root.join(file), text).unwrap();
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "base"]);
    let worktree = make_worktree(&root, "m1", &base.join("trees/m1"), "HEAD")
        .unwrap()
        .path;
    std::fs::write(worktree.join("change.txt"), "two\n").unwrap();
    std::fs::remove_file(worktree.join("gone.txt")).unwrap();
    std::fs::create_dir_all(worktree.join("src")).unwrap();
    std::fs::write(worktree.join("src/new.rs"), "fn new() {}\n").unwrap();
    Repository {
        _dir: dir,
        root,
        worktree,
    }
}

fn request(repository: &Repository, strategy: LandStrategy) -> LandRequest {
    LandRequest {
        repository_root: repository.root.clone(),
        worktree_path: repository.worktree.clone(),
        mission_branch: "mission/m1".into(),
        mission_id: "m1".into(),
        target_branch: "main".into(),
        strategy,
        message: "Land m1".into(),
        push_remote: None,
        pull_request: false,
    }
}

fn message() -> String {
    message_with_trailers("Land m1", "m1", &"a".repeat(64))
}

#[test]
fn a_landing_adds_changes_and_deletes_in_the_checkout_and_leaves_it_clean() {
    for strategy in [
        LandStrategy::Squash,
        LandStrategy::Merge,
        LandStrategy::Rebase,
    ] {
        let repository = repository_with_a_change();
        let before = git(&repository.root, &["rev-parse", "main"]);
        let request = request(&repository, strategy);
        let prepared = prepare(&request, &message()).unwrap();
        assert_eq!(
            git(&repository.root, &["rev-parse", "main"]),
            before,
            "{strategy:?}: preparing moves nothing"
        );
        assert_eq!(
            git(&repository.worktree, &["rev-parse", "HEAD"]),
            before,
            "{strategy:?}: nor the mission branch"
        );
        assert_eq!(
            prepared.checkout.as_deref(),
            Some(repository.root.as_path())
        );
        let applied = apply(&request, &prepared).unwrap();
        assert_eq!(applied.problem, None);
        assert_eq!(
            git(&repository.root, &["rev-parse", "main"]),
            prepared.landed_revision
        );
        assert_eq!(
            git(&repository.root, &["status", "--porcelain"]),
            "",
            "{strategy:?}: the checkout is clean"
        );
        assert!(!repository.root.join("gone.txt").exists(), "{strategy:?}");
        assert_eq!(
            std::fs::read_to_string(repository.root.join("change.txt")).unwrap(),
            "two\n"
        );
        assert_eq!(
            std::fs::read_to_string(repository.root.join("src/new.rs")).unwrap(),
            "fn new() {}\n"
        );
        let message = git(&repository.root, &["log", "-1", "--format=%B", "main"]);
        assert!(
            message.contains("Nagi-Mission: m1"),
            "{strategy:?}: {message}"
        );
        // After the seal, the mission branch takes its landed commit and the worktree is
        // clean on it.
        finish_mission_branch(&repository.worktree, &prepared.mission_revision).unwrap();
        assert_eq!(
            git(&repository.worktree, &["rev-parse", "HEAD"]),
            prepared.mission_revision
        );
        assert_eq!(git(&repository.worktree, &["status", "--porcelain"]), "");
        // The index the landing staged became the worktree's index (one rename): none is
        // left beside it.
        let git_folder = std::path::PathBuf::from(git(
            &repository.worktree,
            &["rev-parse", "--absolute-git-dir"],
        ));
        let left: Vec<String> = std::fs::read_dir(&git_folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("nagi-staged-index"))
            .collect();
        assert!(left.is_empty(), "{strategy:?}: {left:?}");
    }
}

#[test]
fn a_target_that_moved_after_preparing_is_not_overwritten() {
    let repository = repository_with_a_change();
    let request = request(&repository, LandStrategy::Squash);
    let prepared = prepare(&request, &message()).unwrap();
    std::fs::write(repository.root.join("keep.txt"), "kept, and edited\n").unwrap();
    git(&repository.root, &["commit", "-q", "-am", "meanwhile"]);
    let moved = git(&repository.root, &["rev-parse", "main"]);
    let refused = apply(&request, &prepared).unwrap_err().to_string();
    assert!(refused.contains("could not be moved"), "{refused}");
    assert_eq!(git(&repository.root, &["rev-parse", "main"]), moved);
    assert_eq!(git(&repository.root, &["status", "--porcelain"]), "");
}

#[test]
fn recovery_moves_the_checkout_of_a_branch_that_moved_and_rolls_back_one_that_did_not() {
    let repository = repository_with_a_change();
    let request = request(&repository, LandStrategy::Squash);
    let prepared = prepare(&request, &message()).unwrap();
    let recover_now = || {
        recover(
            &repository.root,
            "main",
            &prepared.previous_target_revision,
            &prepared.landed_revision,
            Some(&repository.root),
        )
        .unwrap()
    };
    assert_eq!(recover_now(), Recovered::RolledBack, "nothing moved yet");
    // A crash after the branch moved and before the checkout did: the branch is at the
    // landed commit and the checkout's files and index are the old ones.
    git(
        &repository.root,
        &["update-ref", "refs/heads/main", &prepared.landed_revision],
    );
    assert_ne!(git(&repository.root, &["status", "--porcelain"]), "");
    assert_eq!(recover_now(), Recovered::Finished);
    assert_eq!(git(&repository.root, &["status", "--porcelain"]), "");
    assert!(!repository.root.join("gone.txt").exists());
    assert!(repository.root.join("src/new.rs").exists());
}

#[test]
fn a_sync_replays_commits_and_carries_uncommitted_deletions_over() {
    let repository = repository_with_a_change();
    // One commit of the agent's on the mission branch, then more uncommitted work.
    git(&repository.worktree, &["add", "src/new.rs"]);
    git(
        &repository.worktree,
        &[
            "-c",
            "user.name=Agent",
            "-c",
            "user.email=agent@example.invalid",
            "commit",
            "-q",
            "-m",
            "add new.rs",
        ],
    );
    std::fs::write(repository.root.join("other.txt"), "main moved\n").unwrap();
    git(&repository.root, &["add", "other.txt"]);
    git(&repository.root, &["commit", "-q", "-m", "main moves on"]);
    let main = git(&repository.root, &["rev-parse", "main"]);
    let outcome = sync(&SyncRequest {
        repository_root: repository.root.clone(),
        worktree_path: repository.worktree.clone(),
        mission_branch: "mission/m1".into(),
        onto: "main".into(),
    })
    .unwrap();
    assert_eq!(outcome.commits, 1);
    assert_eq!(
        git(&repository.worktree, &["rev-parse", "HEAD^"]),
        main,
        "the agent's commit sits on main's tip"
    );
    assert_eq!(
        git(&repository.worktree, &["log", "-1", "--format=%an", "HEAD"]),
        "Agent",
        "its author is kept"
    );
    assert_eq!(
        git(&repository.worktree, &["status", "--porcelain"]),
        "M change.txt\n D gone.txt",
        "the uncommitted change and deletion are still uncommitted"
    );
    assert!(repository.worktree.join("other.txt").exists());
    assert!(!repository.worktree.join("gone.txt").exists());
}
