//! Landing benchmark: the git work of `mission.land` (`worktrees::land`'s `prepare`,
//! `apply` and `finish_mission_branch`: commit the worktree's change on its branch, squash
//! it onto `main`, move the person's checkout that has `main` checked out) against what a person types for the same result — in the
//! worktree `git add -A` and `git commit`, then in the checkout `git merge --squash` and
//! `git commit`. Target ≤ 1.5.
//!
//! The repository has `NAGI_BENCH_FILES` files (default 100,000) and each change edits
//! `NAGI_BENCH_CHANGED` of them (default 1,000) and adds one. With
//! `NAGI_BENCH_TARGET_MOVED=1`, `main` gets a commit of its own after each worktree is
//! made, so both sides merge for real (a landing after another mission landed) instead of
//! finding `main` where the mission branched. `NAGI_BENCH_ROUNDS` sets the
//! timed rounds of each side (default 3); the sides alternate, each on a fresh worktree
//! made outside the timing. Prints the medians and the ratio; a ratio above the target is
//! printed as NOT MET (the run does not fail: the figures go to the README). The proof's
//! re-verification that precedes a landing runs the mission's own checks and is not part
//! of this measure.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use nagi_engine::worktrees::land::{LandRequest, apply, message_with_trailers, prepare};
use nagi_schema::land::LandStrategy;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const LAND_TARGET: f64 = 1.5;

fn environment_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn git(root: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
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
    git(root, &["init", "-q", "-b", "main", "."]);
    for (key, value) in [
        ("gc.auto", "0"),
        ("maintenance.auto", "false"),
        ("user.name", "Bench"),
        ("user.email", "bench@example.com"),
    ] {
        git(root, &["config", key, value]);
    }
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

/// The change an agent leaves: `changed` files edited (a different slice each round, so
/// the two sides never touch the same file) and one new file.
fn write_change(worktree: &Path, round: usize, changed: usize, file_count: usize) {
    for offset in 0..changed {
        let index = (round * changed + offset) % file_count;
        std::fs::write(
            worktree.join(format!("pkg{:04}/m{:03}.rs", index / 100, index % 100)),
            format!(
                "// file {index}, changed in round {round}\npub fn f{index}() -> usize {{ {} }}\n",
                index + round + 1
            ),
        )
        .unwrap();
    }
    std::fs::write(worktree.join(format!("new{round}.txt")), "new\n").unwrap();
}

/// A commit of its own on `main` (another mission landed meanwhile): one new file that no
/// change touches.
fn move_target(root: &Path, round: usize) {
    std::fs::write(root.join(format!("moved{round}.txt")), "moved\n").unwrap();
    git(root, &["add", &format!("moved{round}.txt")]);
    git(root, &["commit", "-q", "-m", "main moved"]);
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

fn main() {
    let file_count = environment_number("NAGI_BENCH_FILES", 100_000);
    let changed = environment_number("NAGI_BENCH_CHANGED", 1_000).min(file_count / 8);
    let rounds = environment_number("NAGI_BENCH_ROUNDS", 3).max(1);
    let target_moves = environment_number("NAGI_BENCH_TARGET_MOVED", 0) == 1;
    let directory = tempfile::tempdir().unwrap();
    let base = directory.path().canonicalize().unwrap();
    let root = base.join("repo");
    std::fs::create_dir_all(&root).unwrap();
    let started = Instant::now();
    build_repository(&root, file_count);
    println!(
        "built a {file_count}-file repository in {:.1?}",
        started.elapsed()
    );
    // A person's checkout has had `git status` run in it: its index is fresh.
    git(&root, &["status", "--porcelain"]);

    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for round in 0..rounds {
        let mission_id = format!("m{round}");
        let worktree = base.join(format!("trees/{mission_id}"));
        nagi_engine::worktrees::git::make_worktree(&root, &mission_id, &worktree, "main").unwrap();
        write_change(&worktree, 2 * round, changed, file_count);
        git(&worktree, &["status", "--porcelain"]);
        if target_moves {
            move_target(&root, 2 * round);
        }
        let request = LandRequest {
            repository_root: root.clone(),
            worktree_path: worktree.clone(),
            mission_branch: format!("mission/{mission_id}"),
            mission_id: mission_id.clone(),
            target_branch: "main".into(),
            strategy: LandStrategy::Squash,
            message: format!("Land {mission_id}"),
            push_remote: None,
            pull_request: false,
        };
        let message = message_with_trailers(&request.message, &mission_id, &"0".repeat(64));
        ours.push(timed(|| {
            let prepared = prepare(&request, &message).unwrap();
            assert_eq!(prepared.checkout.as_deref(), Some(root.as_path()));
            apply(&request, &prepared).unwrap();
            // The mission branch follows once the landing is sealed.
            nagi_engine::worktrees::land::finish_mission_branch(
                &worktree,
                &prepared.mission_revision,
            )
            .unwrap();
        }));
        assert!(root.join(format!("new{}.txt", 2 * round)).exists());

        let branch = format!("g{round}");
        let worktree = base.join(format!("trees/{branch}"));
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &branch,
                worktree.to_str().unwrap(),
                "main",
            ],
        );
        write_change(&worktree, 2 * round + 1, changed, file_count);
        git(&worktree, &["status", "--porcelain"]);
        if target_moves {
            move_target(&root, 2 * round + 1);
        }
        theirs.push(timed(|| {
            git(&worktree, &["add", "-A"]);
            git(&worktree, &["commit", "-q", "-m", "Land by hand"]);
            git(&root, &["merge", "-q", "--squash", &branch]);
            git(&root, &["commit", "-q", "-m", "Land by hand"]);
        }));
        assert!(root.join(format!("new{}.txt", 2 * round + 1)).exists());
        assert_eq!(git(&root, &["status", "--porcelain"]), "");
    }
    let (ours, theirs) = (median(ours), median(theirs));
    let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
    println!(
        "landing vs git merge --squash plus commits, {changed} changed files{}: nagi {ours:.1?}, git {theirs:.1?}, ratio {ratio:.2} (target ≤ {LAND_TARGET}) {}",
        if target_moves {
            ", main moved meanwhile"
        } else {
            ""
        },
        if ratio <= LAND_TARGET {
            "met"
        } else {
            "NOT MET"
        }
    );
}
