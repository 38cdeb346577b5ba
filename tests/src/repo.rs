//! Real Git repositories in temp dirs.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct TestRepo {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "nagi test")
        .env("GIT_AUTHOR_EMAIL", "test@nagi.invalid")
        .env("GIT_COMMITTER_NAME", "nagi test")
        .env("GIT_COMMITTER_EMAIL", "test@nagi.invalid")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

impl TestRepo {
    /// A repository with one commit holding `README.md` and `src/lib.rs`.
    pub fn new() -> TestRepo {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = std::fs::canonicalize(dir.path()).unwrap().join("repo");
        std::fs::create_dir_all(path.join("src")).unwrap();
        git(&path, &["init", "-q", "-b", "main"]);
        std::fs::write(path.join("README.md"), "# demo\n").unwrap();
        std::fs::write(path.join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n").unwrap();
        git(&path, &["add", "-A"]);
        git(&path, &["commit", "-q", "-m", "initial"]);
        TestRepo { _dir: dir, path }
    }

    pub fn path_text(&self) -> String {
        self.path.display().to_string()
    }

    pub fn head(&self) -> String {
        git(&self.path, &["rev-parse", "HEAD"])
    }

    pub fn write(&self, relative: &str, contents: &str) {
        let target = self.path.join(relative);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(target, contents).unwrap();
    }

    /// Adds a linked worktree on a new branch and returns its root.
    pub fn add_worktree(&self, name: &str) -> PathBuf {
        let target = self.path.parent().unwrap().join(name);
        git(
            &self.path,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                name,
                target.to_str().unwrap(),
            ],
        );
        std::fs::canonicalize(target).unwrap()
    }
}

impl Default for TestRepo {
    fn default() -> Self {
        TestRepo::new()
    }
}
