//! Mission worktree benchmarks, each against git's own command in the same run:
//!
//! - making a mission's worktree (`worktrees::git::make_worktree`: branch plus linked
//!   worktree) vs `git worktree add -b`, on a repository of `NAGI_BENCH_FILES` files
//!   (default 100,000); target ≤ 1.2;
//! - `mission.diff`'s computation (`mission_diff`: files, counts and hunks, untracked files
//!   included) vs `git diff <base>`, on a change of `NAGI_BENCH_CHANGED` files (default
//!   1,000) in that repository; target ≤ 1.5.
//!
//! `NAGI_BENCH_ROUNDS` sets the timed rounds (default 5). Prints the medians and ratios;
//! a ratio above its target is printed as NOT MET (the run does not fail: the figures go
//! to the README).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use nagi_exec::workspace::mission_diff::{MissionDiffConfig, mission_diff};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const WORKTREE_TARGET: f64 = 1.2;
const DIFF_TARGET: f64 = 1.5;

fn environment_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn git(root: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=Bench",
            "-c",
            "user.email=bench@example.com",
        ])
        .args(args)
        .current_dir(root)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

fn build_repository(root: &Path, file_count: usize) {
    git(root, &["init", "-q", "."]);
    git(root, &["config", "gc.auto", "0"]);
    git(root, &["config", "maintenance.auto", "false"]);
    let files_per_directory = 100;
    for index in 0..file_count {
        let directory = root.join(format!("pkg{:04}", index / files_per_directory));
        if index % files_per_directory == 0 {
            std::fs::create_dir_all(&directory).unwrap();
        }
        std::fs::write(
            directory.join(format!("m{:03}.rs", index % files_per_directory)),
            format!("// file {index}\npub fn f{index}() -> usize {{ {index} }}\n"),
        )
        .unwrap();
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn timed(run: impl FnOnce()) -> Duration {
    let started = Instant::now();
    run();
    started.elapsed()
}

fn report(what: &str, ours: Duration, theirs: Duration, target: f64) {
    let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
    println!(
        "{what}: nagi {ours:.1?}, git {theirs:.1?}, ratio {ratio:.2} (target ≤ {target}) {}",
        if ratio <= target { "met" } else { "NOT MET" }
    );
}

fn main() {
    let file_count = environment_number("NAGI_BENCH_FILES", 100_000);
    let changed = environment_number("NAGI_BENCH_CHANGED", 1_000).min(file_count);
    let rounds = environment_number("NAGI_BENCH_ROUNDS", 5).max(1);
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir_all(&root).unwrap();
    let trees = directory.path().canonicalize().unwrap().join("trees");
    let started = Instant::now();
    build_repository(&root, file_count);
    println!(
        "built a {file_count}-file repository in {:.1?}",
        started.elapsed()
    );

    // Worktrees: alternate ours and git's, each on a fresh branch and folder; the removal
    // after each is not timed.
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for round in 0..rounds {
        let id = format!("m{round}");
        let target = trees.join(&id);
        ours.push(timed(|| {
            nagi_engine::worktrees::git::make_worktree(&root, &id, &target, "HEAD").unwrap();
        }));
        nagi_engine::worktrees::git::remove_worktree(
            &root,
            &id,
            &target,
            Some(&format!("mission/{id}")),
        )
        .unwrap();
        let target = trees.join(format!("g{round}"));
        let branch = format!("g{round}");
        theirs.push(timed(|| {
            git(
                &root,
                &[
                    "worktree",
                    "add",
                    "-q",
                    "-b",
                    &branch,
                    target.to_str().unwrap(),
                ],
            );
        }));
        git(
            &root,
            &["worktree", "remove", "--force", target.to_str().unwrap()],
        );
    }
    report(
        "mission worktree vs git worktree add",
        median(ours),
        median(theirs),
        WORKTREE_TARGET,
    );

    // The diff: `changed` tracked files edited in the checkout.
    let base = git(&root, &["rev-parse", "HEAD"]);
    for index in 0..changed {
        let path = root.join(format!("pkg{:04}/m{:03}.rs", index / 100, index % 100));
        std::fs::write(
            &path,
            format!(
                "// file {index}, changed\npub fn f{index}() -> usize {{ {} }}\n",
                index + 1
            ),
        )
        .unwrap();
    }
    // A person's `git status` refreshes the index first; both sides see that state.
    git(&root, &["status", "--porcelain"]);
    let config = MissionDiffConfig {
        git: Default::default(),
        stat_only: false,
        max_patch_bytes: 16 * 1024 * 1024,
    };
    let first = mission_diff(&root, &base, &config).unwrap();
    assert_eq!(first.files.len(), changed);
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..rounds {
        theirs.push(timed(|| {
            let output = Command::new("git")
                .args(["diff", &base])
                .current_dir(&root)
                .output()
                .unwrap();
            assert!(output.status.success());
        }));
        ours.push(timed(|| {
            let diff = mission_diff(&root, &base, &config).unwrap();
            assert_eq!(diff.files.len(), changed);
        }));
    }
    report(
        &format!("mission.diff vs git diff, {changed} changed files"),
        median(ours),
        median(theirs),
        DIFF_TARGET,
    );
}
