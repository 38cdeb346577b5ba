//! Handoff scan benchmark: the handoff diff data plus the workspace digest on
//! a 100,000-file repository must cost at most 1.5× `git status --porcelain`
//! on the same repository, measured in the same run.
//!
//! `NAGI_BENCH_FILES` shrinks the repository for a quick run (default
//! 100000); `NAGI_BENCH_ROUNDS` sets the number of timed rounds (default 7).
//! Prints both medians and the ratio; at 100,000 files or more, exits
//! non-zero if the ratio is above the target. `NAGI_BENCH_BREAKDOWN=1` also
//! times the scan's git commands and index parse on their own.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use nagi_exec::workspace::{ScanConfig, handoff_diff};

/// The allocator of the `nagi` binary, so that this process's scan is the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TARGET_RATIO: f64 = 1.5;

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
    // The 100,000 loose objects of the first commit would make every later `git commit`
    // start `git gc --auto` in the background, which then competes with the timed rounds.
    git(root, &["config", "gc.auto", "0"]);
    git(root, &["config", "maintenance.auto", "false"]);
    std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
    let files_per_directory = 100;
    for index in 0..file_count {
        let directory = root.join(format!("pkg{:04}", index / files_per_directory));
        if index % files_per_directory == 0 {
            std::fs::create_dir_all(&directory).unwrap();
        }
        let content = format!("// file {index}\npub fn f{index}() -> usize {{ {index} }}\n");
        std::fs::write(
            directory.join(format!("m{:03}.rs", index % files_per_directory)),
            content,
        )
        .unwrap();
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
}

fn make_a_few_changes(root: &Path) {
    // One commit since the base, one staged, two unstaged, two untracked,
    // one ignored.
    std::fs::write(root.join("pkg0000/m000.rs"), "// committed change\n").unwrap();
    git(root, &["commit", "-q", "-am", "change since base"]);
    std::fs::write(root.join("pkg0000/m001.rs"), "// staged change\n").unwrap();
    git(root, &["add", "pkg0000/m001.rs"]);
    std::fs::write(root.join("pkg0000/m002.rs"), "// unstaged change\n").unwrap();
    std::fs::remove_file(root.join("pkg0000/m003.rs")).unwrap();
    std::fs::write(root.join("notes.md"), "untracked\n").unwrap();
    std::fs::create_dir_all(root.join("new")).unwrap();
    std::fs::write(root.join("new/module.rs"), "// untracked\n").unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(root.join("target/output.bin"), "ignored\n").unwrap();
}

fn time_reference(root: &Path) -> Duration {
    let started = Instant::now();
    let output = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(root)
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    assert!(output.status.success());
    elapsed
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Where the time goes: the scan's own git commands alone, and the scan
/// without the handoff diff.
fn print_breakdown(root: &Path, rounds: usize) {
    let time_command = |args: &[&str]| {
        let samples = (0..rounds)
            .map(|_| {
                let started = Instant::now();
                let output = Command::new("git")
                    .args(args)
                    .current_dir(root)
                    .env("GIT_OPTIONAL_LOCKS", "0")
                    .output()
                    .unwrap();
                assert!(output.status.success());
                started.elapsed()
            })
            .collect();
        println!("  {:>8.1?}  git {}", median(samples), args.join(" "));
    };
    println!("breakdown (medians):");
    time_command(&[
        "status",
        "--porcelain=v2",
        "-z",
        "--branch",
        "--no-renames",
        "--untracked-files=all",
    ]);
    time_command(&["ls-files", "-s", "-v", "-z"]);
    time_command(&["rev-parse", "--verify", "HEAD^{commit}"]);
    let index_output = Command::new("git")
        .args(["ls-files", "-s", "-v", "-z"])
        .current_dir(root)
        .output()
        .unwrap();
    let samples = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            let entries =
                nagi_exec::workspace::porcelain::parse_index(&index_output.stdout).unwrap();
            assert!(!entries.is_empty());
            started.elapsed()
        })
        .collect();
    println!(
        "  {:>8.1?}  parse_index of {} bytes",
        median(samples),
        index_output.stdout.len()
    );
    let samples = (0..rounds)
        .map(|_| {
            let started = Instant::now();
            nagi_exec::workspace::scan_workspace(root, &ScanConfig::default()).unwrap();
            started.elapsed()
        })
        .collect();
    println!("  {:>8.1?}  scan_workspace alone", median(samples));
}

fn main() {
    let file_count = environment_number("NAGI_BENCH_FILES", 100_000);
    let rounds = environment_number("NAGI_BENCH_ROUNDS", 7).max(1);
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path().canonicalize().unwrap();

    let build_started = Instant::now();
    build_repository(&root, file_count);
    let base = git(&root, &["rev-parse", "HEAD"]);
    make_a_few_changes(&root);
    println!(
        "built a {file_count}-file repository in {:.1?}",
        build_started.elapsed()
    );

    // Warm-up: the first plain `git status` refreshes the index, as a
    // person's own `git status` would have; both sides then see the same
    // cached state.
    time_reference(&root);
    let config = ScanConfig::default();
    let (_, diff) = handoff_diff(&root, &base, &config).expect("handoff scan");
    println!(
        "changed paths: {:?}\ndirty: {}\nstat:\n{}\nworkspace digest: {}",
        diff.changed_paths, diff.dirty, diff.stat, diff.workspace_digest
    );

    let mut reference_samples = Vec::new();
    let mut scan_samples = Vec::new();
    for _ in 0..rounds {
        reference_samples.push(time_reference(&root));
        let started = Instant::now();
        let (_, again) = handoff_diff(&root, &base, &config).expect("handoff scan");
        scan_samples.push(started.elapsed());
        assert_eq!(
            again.workspace_digest, diff.workspace_digest,
            "scan is not stable"
        );
    }
    if std::env::var_os("NAGI_BENCH_BREAKDOWN").is_some() {
        print_breakdown(&root, rounds);
    }
    let reference = median(reference_samples);
    let scan = median(scan_samples);
    let ratio = scan.as_secs_f64() / reference.as_secs_f64();
    println!("git status --porcelain median: {reference:.1?}");
    println!("handoff diff + digest median:  {scan:.1?}");
    println!("ratio: {ratio:.2} (target <= {TARGET_RATIO})");
    if file_count < 100_000 {
        println!("(the target applies to 100,000 files; not enforced for {file_count})");
        return;
    }
    if ratio > TARGET_RATIO {
        println!("FAIL: handoff scan is slower than {TARGET_RATIO}x git status");
        std::process::exit(1);
    }
    println!("PASS");
}
