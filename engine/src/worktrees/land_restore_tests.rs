//! `restore_from_tree`, the last resort of a landing's checkout move, on a real repository:
//! a file whose content is not the tree's (of the same size, so no stat tells it), a new
//! executable and a path the tree deleted.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::Command;

use super::{matches_tree, restore_from_tree};

fn git(directory: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(directory)
        .args(args)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn the_landed_tree_is_written_and_the_index_follows_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.email", "t@example.com"]);
    git(root, &["config", "user.name", "t"]);
    std::fs::write(root.join("change.txt"), "one\n").unwrap();
    std::fs::write(root.join("gone.txt"), "bye\n").unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "before"]);
    // The landed commit, made in the index only: the files keep the old content.
    let landed_tree = {
        let blob = |text: &str| {
            let mut child = Command::new("git")
                .arg("-C")
                .arg(root)
                .args(["hash-object", "-w", "--stdin"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write as _;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            String::from_utf8(child.wait_with_output().unwrap().stdout)
                .unwrap()
                .trim()
                .to_string()
        };
        let (two, run) = (blob("two\n"), blob("#!/bin/sh\n"));
        git(root, &["rm", "-q", "--cached", "gone.txt"]);
        git(
            root,
            &[
                "update-index",
                "--cacheinfo",
                &format!("100644,{two},change.txt"),
            ],
        );
        git(
            root,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("100755,{run},bin/run"),
            ],
        );
        git(root, &["write-tree"]).trim().to_string()
    };
    git(root, &["reset", "-q"]);
    let repository = git2::Repository::open(root).unwrap();
    let tree = repository
        .find_tree(git2::Oid::from_str(&landed_tree).unwrap())
        .unwrap();
    let paths: Vec<String> = ["change.txt", "gone.txt", "bin/run"]
        .map(String::from)
        .to_vec();
    assert!(
        paths.iter().all(|path| !matches_tree(root, &tree, path)),
        "every path starts out stale"
    );

    let stale: Vec<&String> = paths.iter().collect();
    restore_from_tree(&repository, root, &tree, &stale).unwrap();

    assert!(paths.iter().all(|path| matches_tree(root, &tree, path)));
    assert_eq!(
        std::fs::read_to_string(root.join("change.txt")).unwrap(),
        "two\n"
    );
    assert!(!root.join("gone.txt").exists());
    let mode = std::fs::metadata(root.join("bin/run"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755, "the executable keeps its mode");
    // The index is the landed tree, and it matches the files.
    assert_eq!(git(root, &["write-tree"]).trim(), landed_tree);
    assert_eq!(
        git(root, &["diff", "--name-only"]),
        "",
        "the files match the index"
    );
}
