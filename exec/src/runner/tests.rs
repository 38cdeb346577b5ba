//! Runner tests with real processes.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use super::*;

fn request(worktree: &Path, cwd: &str, program: &str, args: &[&str]) -> CommandCheckRequest {
    CommandCheckRequest {
        worktree: worktree.to_path_buf(),
        cwd: cwd.to_owned(),
        program: program.to_owned(),
        args: args.iter().map(|argument| (*argument).to_owned()).collect(),
    }
}

fn base_environment(extra: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
    let mut environment = vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())];
    environment.extend(
        extra
            .iter()
            .map(|(name, value)| (name.into(), value.into())),
    );
    environment
}

fn config() -> RunnerConfig {
    RunnerConfig {
        base_environment: Some(base_environment(&[])),
        ..RunnerConfig::default()
    }
}

fn run(
    request: &CommandCheckRequest,
    config: &RunnerConfig,
) -> Result<CommandOutcome, RunnerError> {
    run_command_check(request, config, &mut DiscardOutput)
}

fn write_script(path: &Path, body: &str, executable: bool) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    let mode = if executable { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn successful_command_reports_exit_code_digests_and_tail() {
    let worktree = tempfile::tempdir().unwrap();
    let outcome = run(
        &request(worktree.path(), ".", "echo", &["hello", "world"]),
        &config(),
    )
    .unwrap();
    assert!(outcome.succeeded());
    assert_eq!(outcome.exit_code, 0);
    assert_eq!(outcome.stdout.tail, "hello world\n");
    assert_eq!(
        outcome.stdout.sha256,
        nagi_mission::digest::sha256_hex(b"hello world\n")
    );
    assert_eq!(outcome.stderr.sha256, nagi_mission::digest::sha256_hex(b""));
    assert!(outcome.finished_at_millis >= outcome.started_at_millis);
    assert_eq!(
        outcome.resolved_cwd,
        worktree.path().canonicalize().unwrap()
    );
}

#[test]
fn non_zero_exit_and_signal_are_reported() {
    let worktree = tempfile::tempdir().unwrap();
    let exited = run(
        &request(worktree.path(), ".", "sh", &["-c", "echo oops >&2; exit 3"]),
        &config(),
    )
    .unwrap();
    assert_eq!(exited.exit_code, 3);
    assert!(!exited.succeeded());
    assert_eq!(exited.stderr.tail, "oops\n");
    let killed = run(
        &request(worktree.path(), ".", "sh", &["-c", "kill -9 $$"]),
        &config(),
    )
    .unwrap();
    assert_eq!(killed.exit_code, -1);
    assert_eq!(killed.signal, Some(9));
}

#[test]
fn environment_is_cleared_to_the_allowlist_with_pwd_and_locale() {
    let worktree = tempfile::tempdir().unwrap();
    std::fs::create_dir(worktree.path().join("sub")).unwrap();
    let config = RunnerConfig {
        base_environment: Some(base_environment(&[
            ("OPENAI_API_KEY", "sk-x"),
            ("HOME", "/home/x"),
        ])),
        ..RunnerConfig::default()
    };
    let outcome = run(&request(worktree.path(), "sub", "env", &[]), &config).unwrap();
    let canonical_sub = worktree.path().canonicalize().unwrap().join("sub");
    let lines: Vec<&str> = outcome.stdout.tail.lines().collect();
    assert!(!outcome.stdout.tail.contains("OPENAI_API_KEY"));
    assert!(lines.contains(&"HOME=/home/x"));
    assert!(lines.contains(&"LC_ALL=C"));
    assert!(lines.contains(&format!("PWD={}", canonical_sub.display()).as_str()));

    let with_lang = RunnerConfig {
        base_environment: Some(base_environment(&[("LANG", "en_US.UTF-8")])),
        ..RunnerConfig::default()
    };
    let outcome = run(&request(worktree.path(), ".", "env", &[]), &with_lang).unwrap();
    assert!(
        outcome
            .stdout
            .tail
            .lines()
            .any(|line| line == "LANG=en_US.UTF-8")
    );
    assert!(
        !outcome
            .stdout
            .tail
            .lines()
            .any(|line| line.starts_with("LC_ALL="))
    );
}

#[test]
fn stdin_is_null() {
    let worktree = tempfile::tempdir().unwrap();
    let config = RunnerConfig {
        timeout: Duration::from_secs(5),
        ..config()
    };
    let outcome = run(&request(worktree.path(), ".", "cat", &[]), &config).unwrap();
    assert!(outcome.succeeded());
    assert_eq!(outcome.stdout.total_bytes, 0);
}

#[test]
fn working_directory_must_stay_inside_the_worktree() {
    let worktree = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(worktree.path().join("real")).unwrap();
    std::os::unix::fs::symlink(
        worktree.path().join("real"),
        worktree.path().join("inside-link"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), worktree.path().join("outside-link")).unwrap();
    std::fs::write(worktree.path().join("file"), "x").unwrap();

    let inside = run(
        &request(worktree.path(), "inside-link", "pwd", &[]),
        &config(),
    )
    .unwrap();
    assert!(inside.succeeded());
    assert!(matches!(
        run(
            &request(worktree.path(), "outside-link", "pwd", &[]),
            &config()
        ),
        Err(RunnerError::WorkingDirectoryEscapesWorktree { .. })
    ));
    for invalid in ["../", "/tmp", ""] {
        assert!(
            matches!(
                run(&request(worktree.path(), invalid, "pwd", &[]), &config()),
                Err(RunnerError::InvalidWorkingDirectory { .. })
            ),
            "{invalid}"
        );
    }
    assert!(matches!(
        run(&request(worktree.path(), "missing", "pwd", &[]), &config()),
        Err(RunnerError::WorkingDirectoryUnavailable { .. })
    ));
    assert!(matches!(
        run(&request(worktree.path(), "file", "pwd", &[]), &config()),
        Err(RunnerError::WorkingDirectoryNotADirectory { .. })
    ));
}

#[test]
fn program_resolution_follows_the_contract() {
    let worktree = tempfile::tempdir().unwrap();
    let root = worktree.path();
    std::fs::create_dir_all(root.join("crates/core/bin")).unwrap();
    write_script(
        &root.join("crates/core/check.sh"),
        "echo relative-to-cwd",
        true,
    );
    write_script(
        &root.join("crates/core/bin/tool"),
        "echo from-relative-path-entry",
        true,
    );
    write_script(&root.join("crates/core/plain.sh"), "echo never", false);
    std::fs::create_dir(root.join("crates/core/adir")).unwrap();

    let by_path = run(&request(root, "crates/core", "./check.sh", &[]), &config()).unwrap();
    assert_eq!(by_path.stdout.tail, "relative-to-cwd\n");

    let relative_entry = RunnerConfig {
        base_environment: Some(vec![("PATH".into(), "bin:/usr/bin:/bin".into())]),
        ..RunnerConfig::default()
    };
    let searched = run(&request(root, "crates/core", "tool", &[]), &relative_entry).unwrap();
    assert_eq!(searched.stdout.tail, "from-relative-path-entry\n");

    let error = run(&request(root, "crates/core", "./plain.sh", &[]), &config()).unwrap_err();
    assert!(
        matches!(error, RunnerError::ProgramNotExecutable { .. }),
        "{error}"
    );
    let error = run(&request(root, "crates/core", "./adir", &[]), &config()).unwrap_err();
    assert!(
        matches!(error, RunnerError::ProgramNotRegularFile { .. }),
        "{error}"
    );
    let error = run(&request(root, ".", "no-such-program-xyz", &[]), &config()).unwrap_err();
    assert!(
        matches!(error, RunnerError::ProgramNotFound { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("no-such-program-xyz"));
    let error = run(&request(root, ".", "  ", &[]), &config()).unwrap_err();
    assert!(matches!(error, RunnerError::InvalidProgram { .. }));
}

#[test]
fn arguments_are_passed_literally_without_a_shell() {
    let worktree = tempfile::tempdir().unwrap();
    let outcome = run(
        &request(
            worktree.path(),
            ".",
            "printf",
            &["%s|", "$HOME", "a b", "*"],
        ),
        &config(),
    )
    .unwrap();
    assert_eq!(outcome.stdout.tail, "$HOME|a b|*|");
}

#[test]
fn timeout_kills_the_command() {
    let worktree = tempfile::tempdir().unwrap();
    let config = RunnerConfig {
        timeout: Duration::from_millis(300),
        ..config()
    };
    let started = Instant::now();
    let outcome = run(&request(worktree.path(), ".", "sleep", &["30"]), &config).unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        outcome.failure,
        Some(CommandFailure::TimedOut {
            timeout_millis: 300
        })
    );
    assert_eq!(outcome.exit_code, -1);
    assert!(!outcome.succeeded());
}

#[test]
fn output_limits_fail_the_command() {
    let worktree = tempfile::tempdir().unwrap();
    let config = RunnerConfig {
        stdout_limit_bytes: 1000,
        stderr_limit_bytes: 10,
        ..config()
    };
    let outcome = run(
        &request(
            worktree.path(),
            ".",
            "head",
            &["-c", "1000000", "/dev/zero"],
        ),
        &config,
    )
    .unwrap();
    assert_eq!(
        outcome.failure,
        Some(CommandFailure::StdoutLimitExceeded { limit_bytes: 1000 })
    );
    assert_eq!(outcome.stdout.total_bytes, 1000);
    let outcome = run(
        &request(
            worktree.path(),
            ".",
            "sh",
            &["-c", "echo 'more than ten bytes' >&2"],
        ),
        &config,
    )
    .unwrap();
    assert_eq!(
        outcome.failure,
        Some(CommandFailure::StderrLimitExceeded { limit_bytes: 10 })
    );
    let exactly_at_limit = run(
        &request(worktree.path(), ".", "head", &["-c", "1000", "/dev/zero"]),
        &config,
    )
    .unwrap();
    assert!(exactly_at_limit.succeeded());
}

#[test]
fn tail_is_bounded_and_sink_sees_everything() {
    let worktree = tempfile::tempdir().unwrap();
    let config = RunnerConfig {
        tail_bytes: 16,
        ..config()
    };
    let mut streamed = Vec::new();
    let mut sink = |stream: OutputStream, bytes: &[u8]| {
        if stream == OutputStream::Stdout {
            streamed.extend_from_slice(bytes);
        }
    };
    let outcome = run_command_check(
        &request(worktree.path(), ".", "seq", &["1", "20000"]),
        &config,
        &mut sink,
    )
    .unwrap();
    let expected: String = (1..=20000).map(|number| format!("{number}\n")).collect();
    assert_eq!(streamed, expected.as_bytes());
    assert_eq!(outcome.stdout.total_bytes, expected.len() as u64);
    assert_eq!(
        outcome.stdout.sha256,
        nagi_mission::digest::sha256_hex(expected.as_bytes())
    );
    assert_eq!(outcome.stdout.tail, &expected[expected.len() - 16..]);
}

fn process_is_gone(process_id: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{process_id}/stat")) {
        Err(_) => true,
        // A zombie is dead; in containers without a reaping init it may linger.
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn background_descendants_do_not_survive_the_command() {
    let worktree = tempfile::tempdir().unwrap();
    let pid_file = worktree.path().join("background.pid");
    let script = format!("sleep 60 & echo $! > {}; echo started", pid_file.display());
    let started = Instant::now();
    let outcome = run(
        &request(worktree.path(), ".", "sh", &["-c", &script]),
        &config(),
    )
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "runner waited for the background child"
    );
    assert!(outcome.succeeded(), "{outcome:?}");
    assert_eq!(outcome.stdout.tail, "started\n");
    let background: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !process_is_gone(background) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        process_is_gone(background),
        "background child {background} survived"
    );
}

#[test]
fn cancellation_stops_the_command() {
    let worktree = tempfile::tempdir().unwrap();
    let cancellation = CancellationFlag::new();
    let config = RunnerConfig {
        cancellation: Some(cancellation.clone()),
        ..config()
    };
    let canceller = {
        let cancellation = cancellation.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            cancellation.cancel();
        })
    };
    let outcome = run(&request(worktree.path(), ".", "sleep", &["30"]), &config).unwrap();
    canceller.join().unwrap();
    assert_eq!(outcome.failure, Some(CommandFailure::Cancelled));
}
