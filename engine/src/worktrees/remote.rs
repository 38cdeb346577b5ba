//! A repository's remote, for fleet mode: the URL a host reports for each mission it
//! holds, and the clone another host makes of it when it takes a mission over from a host
//! that is gone. Blocking.
//!
//! The clone runs the user's `git` (their credentials, SSH agent and config reach the
//! remote as they would by hand), with no terminal prompt: a remote that needs a password
//! fails with git's message instead of waiting for one.

use std::path::Path;
use std::process::Command;

/// The fetch URL of the repository's `origin`, else of its only remote; `None` without
/// one (such a mission cannot be taken over by another host).
pub fn remote_url(repository_path: &Path) -> Option<String> {
    let repository = git2::Repository::open(repository_path).ok()?;
    let remote = match repository.find_remote("origin") {
        Ok(remote) => remote,
        Err(_) => {
            let names = repository.remotes().ok()?;
            if names.len() != 1 {
                return None;
            }
            repository.find_remote(names.get(0).ok().flatten()?).ok()?
        }
    };
    remote.url().ok().map(|url| url.to_string())
}

fn git(args: &[&str], directory: Option<&Path>) -> Result<(), String> {
    let mut command = Command::new("git");
    if let Some(directory) = directory {
        command.current_dir(directory);
    }
    let output = command
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|error| format!("cannot run git: {error}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
}

fn has_commit(target: &Path, revision: &str) -> bool {
    git(
        &["cat-file", "-e", &format!("{revision}^{{commit}}")],
        Some(target),
    )
    .is_ok()
}

/// Clones `remote_url` into `target` with branch `branch` checked out at `base_revision`.
/// A clone already there with that branch is kept (a retried take-over); anything else at
/// `target` (a clone an earlier attempt left half made) is replaced. `target` is nagi's
/// own directory.
pub fn clone_at_base(
    remote_url: &str,
    target: &Path,
    base_revision: &str,
    branch: &str,
) -> Result<(), String> {
    let branch_ref = format!("refs/heads/{branch}");
    if target.exists() {
        let ready = git2::Repository::open(target)
            .ok()
            .is_some_and(|repository| repository.find_reference(&branch_ref).is_ok());
        if ready {
            return Ok(());
        }
        std::fs::remove_dir_all(target)
            .map_err(|error| format!("cannot clear {}: {error}", target.display()))?;
    }
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|error| format!("cannot make {}: {error}", parent.display()))?;
    }
    let target_text = target
        .to_str()
        .ok_or_else(|| format!("{} is not UTF-8", target.display()))?;
    git(
        &[
            "clone",
            "--quiet",
            "--no-checkout",
            "--",
            remote_url,
            target_text,
        ],
        None,
    )
    .map_err(|error| format!("cannot clone {remote_url}: {error}"))?;
    let made = (|| {
        if !has_commit(target, base_revision) {
            // A commit no branch of the remote names; servers that allow it send it.
            let _ = git(&["fetch", "--quiet", "origin", base_revision], Some(target));
        }
        if !has_commit(target, base_revision) {
            return Err(format!(
                "the base revision {base_revision} is not in {remote_url}: push it (or the \
                 branch that holds it) from a checkout that has it, then try again"
            ));
        }
        git(
            &["checkout", "--quiet", "-b", branch, base_revision],
            Some(target),
        )
        .map_err(|error| format!("cannot check out {base_revision}: {error}"))
    })();
    if made.is_err() {
        let _ = std::fs::remove_dir_all(target);
    }
    made
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(directory: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(args)
            .current_dir(directory)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.org")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.org")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    fn head(directory: &Path) -> String {
        let output = Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(directory)
            .output()
            .unwrap();
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    }

    /// A bare `origin` with one pushed commit, and a checkout of it with one more commit
    /// that was never pushed.
    fn repositories(root: &Path) -> (String, std::path::PathBuf, String, String) {
        let origin = root.join("origin.git");
        let work = root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        run(
            root,
            &["init", "--quiet", "--bare", origin.to_str().unwrap()],
        );
        run(&work, &["init", "--quiet", "-b", "main"]);
        std::fs::write(work.join("README.md"), "hello\n").unwrap();
        run(&work, &["add", "README.md"]);
        run(&work, &["commit", "--quiet", "-m", "first"]);
        let pushed = head(&work);
        run(
            &work,
            &["remote", "add", "origin", origin.to_str().unwrap()],
        );
        run(&work, &["push", "--quiet", "origin", "main"]);
        std::fs::write(work.join("README.md"), "hello again\n").unwrap();
        run(&work, &["commit", "--quiet", "-am", "second"]);
        let local_only = head(&work);
        (
            origin.to_str().unwrap().to_string(),
            work,
            pushed,
            local_only,
        )
    }

    #[test]
    fn a_clone_of_the_remote_is_made_at_the_base_on_the_mission_branch_and_kept_when_asked_again() {
        let temp = tempfile::tempdir().unwrap();
        let (origin, work, pushed, _) = repositories(temp.path());
        assert_eq!(remote_url(&work).as_deref(), Some(origin.as_str()));
        let target = temp.path().join("relocated").join("m1");
        clone_at_base(&origin, &target, &pushed, "mission/m1").unwrap();
        assert_eq!(head(&target), pushed);
        assert_eq!(
            std::fs::read_to_string(target.join("README.md")).unwrap(),
            "hello\n"
        );
        std::fs::write(target.join("notes.txt"), "work in progress\n").unwrap();
        clone_at_base(&origin, &target, &pushed, "mission/m1").unwrap();
        assert!(target.join("notes.txt").exists(), "a retry keeps the clone");
    }

    #[test]
    fn a_base_the_remote_lacks_or_a_remote_that_is_not_there_fails_and_leaves_nothing() {
        let temp = tempfile::tempdir().unwrap();
        let (origin, _, _, local_only) = repositories(temp.path());
        let target = temp.path().join("relocated").join("m1");
        let error = clone_at_base(&origin, &target, &local_only, "mission/m1").unwrap_err();
        assert!(
            error.contains("is not in") && error.contains("push it"),
            "{error}"
        );
        assert!(!target.exists());
        let missing = temp.path().join("nowhere.git");
        let error = clone_at_base(
            missing.to_str().unwrap(),
            &target,
            &local_only,
            "mission/m1",
        )
        .unwrap_err();
        assert!(error.starts_with("cannot clone"), "{error}");
        assert!(!target.exists());
        let lone = temp.path().join("lone");
        std::fs::create_dir_all(&lone).unwrap();
        run(&lone, &["init", "--quiet"]);
        assert_eq!(remote_url(&lone), None);
    }
}
