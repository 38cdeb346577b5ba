//! Workspace scan tests on real repositories in temporary directories.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;

pub(super) struct TestRepository {
    directory: tempfile::TempDir,
}

impl TestRepository {
    pub(super) fn new() -> TestRepository {
        let repository = TestRepository {
            directory: tempfile::tempdir().unwrap(),
        };
        repository.git(&["init", "-q", "-b", "main", "."]);
        repository.write(".gitignore", "*.log\ntarget/\n");
        repository.write("src/lib.rs", "pub fn lib() {}\n");
        repository.write("src2/lib.rs", "pub fn other() {}\n");
        repository.write("docs/guide.md", "# Guide\n");
        repository.write("run.sh", "#!/bin/sh\necho run\n");
        repository.git(&["add", "-A"]);
        repository.commit("initial");
        repository
    }

    pub(super) fn root(&self) -> PathBuf {
        self.directory.path().canonicalize().unwrap()
    }

    pub(super) fn git(&self, args: &[&str]) -> String {
        let output = Command::new("git")
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
            .args(["-c", "protocol.file.allow=always"])
            .args(args)
            .current_dir(self.directory.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    fn commit(&self, message: &str) -> String {
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.git(&["rev-parse", "HEAD"])
    }

    pub(super) fn write(&self, path: &str, content: &str) {
        let full = self.directory.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }

    pub(super) fn path(&self, path: &str) -> PathBuf {
        self.directory.path().join(path)
    }

    fn scan(&self) -> WorkspaceSnapshot {
        scan_workspace(self.directory.path(), &ScanConfig::default()).unwrap()
    }

    fn scan_with(&self, config: &ScanConfig) -> Result<WorkspaceSnapshot, WorkspaceError> {
        scan_workspace(self.directory.path(), config)
    }
}

/// A mission diff with its patch, up to 1 MiB.
fn full_patch() -> mission_diff::MissionDiffConfig {
    mission_diff::MissionDiffConfig {
        git: Default::default(),
        stat_only: false,
        max_patch_bytes: 1024 * 1024,
    }
}

fn with_ignored() -> ScanConfig {
    ScanConfig {
        include_ignored: true,
        ..ScanConfig::default()
    }
}

#[test]
fn unchanged_workspace_scans_are_stable_and_use_index_fingerprints() {
    let repository = TestRepository::new();
    let first = repository.scan();
    let second = repository.scan();
    assert_eq!(first.digest, second.digest);
    assert_eq!(first, second);
    assert_eq!(first.head_commit, repository.git(&["rev-parse", "HEAD"]));
    let entry = first.entry("src/lib.rs").unwrap();
    assert_eq!(entry.disposition, Disposition::Tracked);
    assert!(matches!(
        entry.fingerprint,
        Fingerprint::IndexBlob { mode: 0o100644, .. }
    ));
    assert_eq!(first.entries.len(), 5);
    // Touching a file without changing it is no change.
    let content = std::fs::read(repository.path("docs/guide.md")).unwrap();
    std::fs::write(repository.path("docs/guide.md"), content).unwrap();
    assert_eq!(repository.scan().digest, first.digest);
}

#[test]
fn every_kind_of_change_moves_the_digest() {
    let repository = TestRepository::new();
    let mut digests = vec![repository.scan().digest];
    let mut record = |repository: &TestRepository, expected: Option<(&str, Disposition)>| {
        let snapshot = repository.scan();
        assert!(
            !digests.contains(&snapshot.digest),
            "digest did not move: {expected:?}"
        );
        digests.push(snapshot.digest.clone());
        if let Some((path, disposition)) = expected {
            assert_eq!(
                snapshot.entry(path).map(|entry| entry.disposition),
                Some(disposition)
            );
        }
        snapshot
    };

    repository.write("src/lib.rs", "pub fn lib() { changed() }\n");
    let unstaged = record(&repository, Some(("src/lib.rs", Disposition::Unstaged)));
    assert!(matches!(
        unstaged.entry("src/lib.rs").unwrap().fingerprint,
        Fingerprint::File { .. }
    ));

    repository.git(&["add", "src/lib.rs"]);
    record(&repository, Some(("src/lib.rs", Disposition::Staged)));

    repository.commit("change lib");
    record(&repository, Some(("src/lib.rs", Disposition::Tracked)));

    repository.write("notes.txt", "untracked\n");
    record(&repository, Some(("notes.txt", Disposition::Untracked)));

    repository.write("notes.txt", "untracked, edited\n");
    record(&repository, Some(("notes.txt", Disposition::Untracked)));

    std::fs::remove_file(repository.path("docs/guide.md")).unwrap();
    let deleted = record(&repository, Some(("docs/guide.md", Disposition::Unstaged)));
    assert_eq!(
        deleted.entry("docs/guide.md").unwrap().fingerprint,
        Fingerprint::Missing
    );

    std::fs::set_permissions(
        repository.path("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let executable = record(&repository, Some(("run.sh", Disposition::Unstaged)));
    assert!(matches!(
        executable.entry("run.sh").unwrap().fingerprint,
        Fingerprint::File {
            executable: true,
            ..
        }
    ));

    std::os::unix::fs::symlink("src/lib.rs", repository.path("link")).unwrap();
    record(&repository, Some(("link", Disposition::Untracked)));
    std::fs::remove_file(repository.path("link")).unwrap();
    std::os::unix::fs::symlink("src2/lib.rs", repository.path("link")).unwrap();
    let retargeted = record(&repository, Some(("link", Disposition::Untracked)));
    assert!(matches!(
        retargeted.entry("link").unwrap().fingerprint,
        Fingerprint::Symlink { .. }
    ));

    repository.git(&["add", "-A"]);
    repository.commit("everything");
    record(&repository, Some(("link", Disposition::Tracked)));
    std::fs::remove_file(repository.path("link")).unwrap();
    std::os::unix::fs::symlink("docs", repository.path("link")).unwrap();
    record(&repository, Some(("link", Disposition::Unstaged)));
}

#[test]
fn staged_deletion_of_a_file_still_on_disk_is_untracked() {
    let repository = TestRepository::new();
    let before = repository.scan();
    repository.git(&["rm", "-q", "--cached", "docs/guide.md"]);
    let after = repository.scan();
    assert_ne!(before.digest, after.digest);
    assert_eq!(
        after.entry("docs/guide.md").unwrap().disposition,
        Disposition::Untracked
    );
    assert_eq!(
        after
            .entries
            .iter()
            .filter(|entry| entry.path == "docs/guide.md")
            .count(),
        1
    );
}

#[test]
fn ignored_files_count_only_when_requested() {
    let repository = TestRepository::new();
    repository.write("target/debug/out.bin", "build output\n");
    let plain = repository.scan();
    let with_ignored_before = repository.scan_with(&with_ignored()).unwrap();
    assert!(plain.entry("target/debug/out.bin").is_none());
    assert_eq!(
        with_ignored_before
            .entry("target/debug/out.bin")
            .unwrap()
            .disposition,
        Disposition::Ignored
    );
    repository.write("target/debug/out.bin", "other build output\n");
    assert_eq!(repository.scan().digest, plain.digest);
    assert_ne!(
        repository.scan_with(&with_ignored()).unwrap().digest,
        with_ignored_before.digest
    );
}

#[test]
fn freshness_ignores_irrelevant_changes_and_sees_relevant_ones() {
    let repository = TestRepository::new();
    let evidence = repository.scan();
    let src_rules = [PathRule::Prefix {
        prefix: "src".into(),
    }];

    repository.write("src2/lib.rs", "pub fn other() { changed() }\n");
    repository.write("docs/new.md", "new\n");
    let irrelevant = repository.scan();
    assert_ne!(evidence.digest, irrelevant.digest);
    assert!(relevant_files_equal(
        &evidence,
        &irrelevant,
        &src_rules,
        false
    ));
    assert_eq!(
        relevant_files_digest(&evidence, &src_rules, false),
        relevant_files_digest(&irrelevant, &src_rules, false)
    );
    assert!(!relevant_files_equal(&evidence, &irrelevant, &[], false));

    // Same content, but staged: the disposition differs, so it is stale.
    repository.write("src/lib.rs", "pub fn lib() { changed() }\n");
    let unstaged = repository.scan();
    assert!(!relevant_files_equal(
        &evidence, &unstaged, &src_rules, false
    ));
    repository.git(&["add", "src/lib.rs"]);
    let staged = repository.scan();
    assert!(!relevant_files_equal(&unstaged, &staged, &src_rules, false));
    assert_ne!(
        relevant_files_digest(&unstaged, &src_rules, false),
        relevant_files_digest(&staged, &src_rules, false)
    );

    let exact = [PathRule::Exact {
        path: "docs/guide.md".into(),
    }];
    assert!(relevant_files_equal(&evidence, &staged, &exact, false));
    // Ignored files are only compared when the check asks, and only if both
    // snapshots scanned them.
    assert!(!relevant_files_equal(&evidence, &evidence, &exact, true));
}

#[test]
fn fail_closed_conditions_are_typed_errors() {
    let repository = TestRepository::new();
    let head = repository.git(&["rev-parse", "HEAD"]);
    repository.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{head},vendored"),
    ]);
    assert!(matches!(
        repository.scan_with(&ScanConfig::default()),
        Err(WorkspaceError::Submodule { .. })
    ));
    repository.git(&["rm", "-q", "--cached", "vendored"]);

    repository.write("later.txt", "x\n");
    repository.git(&["add", "-N", "later.txt"]);
    assert!(matches!(
        repository.scan_with(&ScanConfig::default()),
        Err(WorkspaceError::IntentToAdd { .. })
    ));
    repository.git(&["rm", "-q", "--cached", "later.txt"]);

    repository.git(&["update-index", "--skip-worktree", "docs/guide.md"]);
    assert!(matches!(
        repository.scan_with(&ScanConfig::default()),
        Err(WorkspaceError::SkipWorktree { .. })
    ));
    repository.git(&["update-index", "--no-skip-worktree", "docs/guide.md"]);

    repository.git(&["update-index", "--assume-unchanged", "docs/guide.md"]);
    assert!(matches!(
        repository.scan_with(&ScanConfig::default()),
        Err(WorkspaceError::AssumeUnchanged { .. })
    ));
    repository.git(&["update-index", "--no-assume-unchanged", "docs/guide.md"]);

    let small_limits = ScanConfig {
        max_paths: 3,
        ..ScanConfig::default()
    };
    assert!(matches!(
        repository.scan_with(&small_limits),
        Err(WorkspaceError::TooManyPaths { count: 5, limit: 3 })
    ));
    // Five tracked paths fit; the untracked `later.txt` is one too many.
    let index_sized_limits = ScanConfig {
        max_paths: 5,
        ..ScanConfig::default()
    };
    assert!(matches!(
        repository.scan_with(&index_sized_limits),
        Err(WorkspaceError::TooManyPaths { count: 6, limit: 5 })
    ));

    repository.write("big.txt", &"x".repeat(100));
    let small_files = ScanConfig {
        max_file_bytes: 10,
        ..ScanConfig::default()
    };
    assert!(matches!(
        repository.scan_with(&small_files),
        Err(WorkspaceError::FileTooLarge { size: 100, .. })
    ));
    std::fs::remove_file(repository.path("big.txt")).unwrap();

    std::fs::remove_file(repository.path("docs/guide.md")).unwrap();
    let fifo = std::ffi::CString::new(
        repository
            .path("docs/guide.md")
            .into_os_string()
            .into_encoded_bytes(),
    )
    .unwrap();
    // SAFETY: plain syscall with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    assert!(matches!(
        repository.scan_with(&ScanConfig::default()),
        Err(WorkspaceError::SpecialFile { kind: "FIFO", .. })
    ));
    std::fs::remove_file(repository.path("docs/guide.md")).unwrap();
    repository.git(&["checkout", "--", "docs/guide.md"]);

    use std::os::unix::ffi::OsStrExt;
    let non_utf8 = repository
        .path("")
        .join(std::ffi::OsStr::from_bytes(b"bad\xffname"));
    std::fs::write(&non_utf8, "x").unwrap();
    assert!(matches!(
        repository.scan_with(&ScanConfig::default()),
        Err(WorkspaceError::NonUtf8Path { .. })
    ));
    std::fs::remove_file(&non_utf8).unwrap();

    assert!(matches!(
        scan_workspace(&repository.path("src"), &ScanConfig::default()),
        Err(WorkspaceError::NotACheckoutRoot { .. })
    ));
    repository.scan();
}

#[test]
fn unmerged_entries_and_unborn_heads_are_refused() {
    let repository = TestRepository::new();
    repository.git(&["checkout", "-q", "-b", "side"]);
    repository.write("docs/guide.md", "# Side\n");
    repository.git(&["commit", "-q", "-am", "side"]);
    repository.git(&["checkout", "-q", "main"]);
    repository.write("docs/guide.md", "# Main\n");
    repository.git(&["commit", "-q", "-am", "main"]);
    let merge = Command::new("git")
        .args([
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@e",
            "merge",
            "-q",
            "side",
        ])
        .current_dir(repository.path(""))
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(!merge.status.success());
    assert!(matches!(
        repository.scan_with(&ScanConfig::default()),
        Err(WorkspaceError::UnmergedEntry { .. })
    ));

    let not_a_repository = tempfile::tempdir().unwrap();
    assert!(matches!(
        scan_workspace(not_a_repository.path(), &ScanConfig::default()),
        Err(WorkspaceError::NotARepository { .. })
    ));

    let empty = tempfile::tempdir().unwrap();
    Command::new("git")
        .args(["init", "-q"])
        .current_dir(empty.path())
        .output()
        .unwrap();
    assert!(matches!(
        scan_workspace(empty.path(), &ScanConfig::default()),
        Err(WorkspaceError::NoHeadCommit { .. })
    ));
}

#[test]
fn handoff_diff_lists_committed_staged_unstaged_and_untracked_changes() {
    let repository = TestRepository::new();
    let base = repository.git(&["rev-parse", "HEAD"]);
    let (_, clean) = handoff_diff(&repository.root(), &base, &ScanConfig::default()).unwrap();
    assert!(!clean.dirty);
    assert!(clean.changed_paths.is_empty());
    assert_eq!(clean.stat, "");
    assert_eq!(clean.head_revision, base);

    repository.write("src/lib.rs", "pub fn lib() { committed() }\n");
    repository.commit_all("commit since base");
    repository.write("docs/guide.md", "# Guide\nstaged\n");
    repository.git(&["add", "docs/guide.md"]);
    repository.write("run.sh", "#!/bin/sh\necho unstaged\n");
    repository.write("new/file.txt", "untracked\n");
    repository.write("debug.log", "ignored\n");
    let (snapshot, diff) = handoff_diff(&repository.root(), &base, &ScanConfig::default()).unwrap();
    assert!(diff.dirty);
    assert_eq!(
        diff.changed_paths,
        vec!["docs/guide.md", "new/file.txt", "run.sh", "src/lib.rs"]
    );
    assert_eq!(diff.workspace_digest, snapshot.digest);
    assert!(!snapshot.include_ignored);
    let expected_stat = format!(
        "{}\n1 untracked path(s)",
        repository
            .git(&["diff", "--stat", "--no-renames", &base, "--"])
            .trim_end()
    );
    // The test helper's trim also took the leading space; compare by lines.
    assert_eq!(
        diff.stat.lines().map(str::trim).collect::<Vec<_>>(),
        expected_stat.lines().map(str::trim).collect::<Vec<_>>()
    );
    assert!(diff.stat.starts_with(' '));
    assert!(diff.stat.contains("3 files changed"));

    // A committed change reverted in the working tree no longer differs.
    repository.write("src/lib.rs", "pub fn lib() {}\n");
    let (_, reverted) = handoff_diff(&repository.root(), &base, &ScanConfig::default()).unwrap();
    assert!(!reverted.changed_paths.contains(&"src/lib.rs".to_owned()));
    assert_ne!(reverted.workspace_digest, diff.workspace_digest);

    // Only commits since the base: still dirty.
    repository.git(&["checkout", "-q", "--", "."]);
    repository.git(&["reset", "-q", "--hard"]);
    std::fs::remove_dir_all(repository.path("new")).unwrap();
    let (_, committed_only) =
        handoff_diff(&repository.root(), &base, &ScanConfig::default()).unwrap();
    assert!(committed_only.dirty);
    assert_eq!(committed_only.changed_paths, vec!["src/lib.rs"]);
    assert!(matches!(
        handoff_diff(&repository.root(), &"0".repeat(40), &ScanConfig::default()),
        Err(WorkspaceError::UnknownRevision { .. })
    ));
    assert!(matches!(
        handoff_diff(&repository.root(), "HEAD", &ScanConfig::default()),
        Err(WorkspaceError::InvalidRevision { .. })
    ));
}

impl TestRepository {
    fn commit_all(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.commit(message)
    }
}

#[test]
fn repository_helpers_locate_roots_common_dirs_and_linked_worktrees() {
    let repository = TestRepository::new();
    let git = GitRunner::new(&GitConfig::default()).unwrap();
    let root = repository.root();
    assert_eq!(checkout_root(&root.join("src")).unwrap(), root);
    assert_eq!(git_common_dir(&root).unwrap(), root.join(".git"));
    assert_eq!(
        head_commit(&git, &root).unwrap(),
        repository.git(&["rev-parse", "HEAD"])
    );

    let linked_parent = tempfile::tempdir().unwrap();
    let linked = linked_parent.path().join("linked");
    repository.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "linked",
        linked.to_str().unwrap(),
    ]);
    let linked_location = checkout_of_same_repository(&root, &linked)
        .unwrap()
        .unwrap();
    assert_eq!(
        linked_location.checkout_root,
        linked.canonicalize().unwrap()
    );
    assert_eq!(linked_location.git_common_dir, root.join(".git"));
    assert!(
        checkout_of_same_repository(&root, &root.join("src"))
            .unwrap()
            .is_none()
    );

    let other = TestRepository::new();
    assert!(
        checkout_of_same_repository(&root, &other.root())
            .unwrap()
            .is_none()
    );
    let linked_scan = scan_workspace(&linked, &ScanConfig::default()).unwrap();
    assert_eq!(
        linked_scan.head_commit,
        repository.git(&["rev-parse", "HEAD"])
    );
    assert!(Path::new(&linked).join(".git").is_file());
}

#[test]
fn scans_and_handoff_diffs_never_write_the_index() {
    let repository = TestRepository::new();
    let base = repository.git(&["rev-parse", "HEAD"]);
    repository.write("src/lib.rs", "pub fn lib() { committed() }\n");
    repository.commit_all("since base");
    // Stat-dirty but unchanged files make porcelain `git diff` want to
    // refresh (rewrite) the index; modified ones make it a candidate.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    for path in ["docs/guide.md", "src2/lib.rs"] {
        let content = std::fs::read(repository.path(path)).unwrap();
        std::fs::write(repository.path(path), content).unwrap();
    }
    repository.write("run.sh", "#!/bin/sh\necho changed\n");
    // Reverted to the base content: a candidate whose diff git drops after
    // comparing content, which is what triggers its index refresh.
    repository.write("src/lib.rs", "pub fn lib() {}\n");
    let index_path = repository.path(".git/index");
    let before = (
        std::fs::read(&index_path).unwrap(),
        std::fs::metadata(&index_path).unwrap().modified().unwrap(),
    );
    repository.scan();
    let (_, diff) = handoff_diff(&repository.root(), &base, &ScanConfig::default()).unwrap();
    assert_eq!(diff.changed_paths, vec!["run.sh"]);
    let after = (
        std::fs::read(&index_path).unwrap(),
        std::fs::metadata(&index_path).unwrap().modified().unwrap(),
    );
    assert!(before == after, "the index was rewritten");
    assert!(!repository.path(".git/index.lock").exists());
}

#[test]
fn a_hostile_repository_config_runs_nothing_during_scans_and_handoff_diffs() {
    // A repository can name programs in its own `.git/config` that git runs on status and
    // diff (fsmonitor, a diff driver, textconv, an external diff) and hooks; none may run.
    let repository = TestRepository::new();
    let base = repository.git(&["rev-parse", "HEAD"]);
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("ran");
    let script = marker_dir.path().join("hostile.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$0 $*\" >> {}\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let script_text = script.display().to_string();
    repository.git(&["config", "core.fsmonitor", &script_text]);
    repository.git(&["config", "diff.external", &script_text]);
    repository.git(&["config", "diff.hostile.textconv", &script_text]);
    repository.git(&["config", "diff.hostile.command", &script_text]);
    repository.git(&["config", "core.pager", &script_text]);
    repository.write(".gitattributes", "* diff=hostile\n");
    for hook in [
        "pre-commit",
        "post-checkout",
        "post-index-change",
        "reference-transaction",
    ] {
        std::fs::create_dir_all(repository.path(".git/hooks")).unwrap();
        std::fs::copy(&script, repository.path(&format!(".git/hooks/{hook}"))).unwrap();
    }
    repository.write("src/lib.rs", "pub fn lib() { changed() }\n");
    repository.write("new.txt", "untracked\n");

    repository.scan();
    repository.scan_with(&with_ignored()).unwrap();
    let (_, diff) = handoff_diff(&repository.root(), &base, &ScanConfig::default()).unwrap();
    assert!(
        diff.changed_paths.contains(&"src/lib.rs".to_string()),
        "{:?}",
        diff.changed_paths
    );

    assert!(
        !marker.exists(),
        "a program named by the repository ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}

/// Tracked and untracked changes come out as one diff in path order, as `git add -A` then
/// `git diff --cached <base>` would show them: a staged new file, a change, a deletion, an
/// untracked file in a folder, an untracked binary; ignored files are left out, and the
/// worktree's index is not written.
#[test]
fn a_mission_diff_merges_tracked_and_untracked_files_in_path_order() {
    let repository = TestRepository::new();
    let base = repository.git(&["rev-parse", "HEAD"]);
    repository.write("src/lib.rs", "pub fn lib() { changed() }\n");
    std::fs::remove_file(repository.root().join("docs/guide.md")).unwrap();
    repository.write("staged.txt", "staged\n");
    repository.git(&["add", "staged.txt"]);
    repository.write("a/new.txt", "new\n");
    std::fs::write(repository.root().join("c.bin"), [0u8, 1, 2, 3]).unwrap();
    repository.write("debug.log", "ignored\n");
    let index_before = std::fs::read(repository.root().join(".git/index")).unwrap();
    let diff = mission_diff::mission_diff(&repository.root(), &base, &full_patch()).unwrap();
    let listed: Vec<(&str, mission_diff::FileStatus, bool, Option<u64>)> = diff
        .files
        .iter()
        .map(|file| {
            (
                file.path.as_str(),
                file.status,
                file.untracked,
                file.additions,
            )
        })
        .collect();
    use mission_diff::FileStatus::*;
    assert_eq!(
        listed,
        vec![
            ("a/new.txt", Added, true, Some(1)),
            ("c.bin", Added, true, None),
            ("docs/guide.md", Deleted, false, Some(0)),
            ("src/lib.rs", Modified, false, Some(1)),
            ("staged.txt", Added, false, Some(1)),
        ]
    );
    let headers: Vec<&str> = diff
        .patch
        .lines()
        .filter(|line| line.starts_with("diff --git"))
        .collect();
    assert_eq!(
        headers,
        vec![
            "diff --git a/a/new.txt b/a/new.txt",
            "diff --git a/c.bin b/c.bin",
            "diff --git a/docs/guide.md b/docs/guide.md",
            "diff --git a/src/lib.rs b/src/lib.rs",
            "diff --git a/staged.txt b/staged.txt",
        ]
    );
    assert!(
        diff.patch
            .contains("Binary files /dev/null and b/c.bin differ"),
        "{}",
        diff.patch
    );
    assert!(diff.patch.contains("+new\n") && diff.patch.contains("+pub fn lib() { changed() }"));
    assert!(!diff.patch.contains("debug.log"));
    assert_eq!(
        std::fs::read(repository.root().join(".git/index")).unwrap(),
        index_before,
        "the worktree's index is not written"
    );
}

/// A file rewritten at the same size within the clock tick in which the index was written
/// matches its index entry's stats; only git's racy-entry check (an entry not older than the
/// index file) makes git read its content. The private index copies that the landing's
/// staging and the mission diff work on keep the index's time, so both see the new content.
#[test]
fn a_same_size_rewrite_in_the_clock_tick_of_the_index_is_staged_and_diffed() {
    let repository = TestRepository::new();
    let base = repository.git(&["rev-parse", "HEAD"]);
    // git compares ctime too unless told not to. A rewrite in the same tick of the kernel's
    // coarse clock keeps the ctime as well, which a test cannot set.
    repository.git(&["config", "core.trustctime", "false"]);
    let tick = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    let set_time = |path: &Path| {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(tick)
            .unwrap();
    };
    let file = repository.path("src/lib.rs");
    let index = repository.path(".git/index");
    // The index entry takes the file's time, and the index is written in the same tick.
    set_time(&file);
    repository.git(&["update-index", "--refresh"]);
    set_time(&index);
    // Rewritten at the same size, still in that tick (same inode, size and time).
    std::fs::write(&file, "pub fn LIB() {}\n").unwrap();
    set_time(&file);
    let new_blob = repository.git(&["hash-object", "src/lib.rs"]);

    let tree = staging::staged_tree(&repository.root(), &GitConfig::default()).unwrap();
    assert_eq!(
        repository.git(&["rev-parse", &format!("{tree}:src/lib.rs")]),
        new_blob,
        "the landing stages the rewritten content"
    );
    let diff = mission_diff::mission_diff(&repository.root(), &base, &full_patch()).unwrap();
    assert!(
        diff.patch.contains("+pub fn LIB() {}"),
        "the mission diff shows the rewrite: {:?}",
        diff.files
    );
}
