//! Landlock confinement of a real child process.

use std::collections::BTreeMap;
use std::path::PathBuf;

use nagi_providers::Confinement;
use nagi_providers::framing::EventSink;
use nagi_providers::process::{ProcessConfig, ProviderProcess, StdinMode};

#[tokio::test]
async fn a_confined_child_writes_only_beneath_its_write_paths() {
    let Some(abi) = nagi_providers::landlock_abi_version() else {
        no_landlock("a_confined_child_writes_only_beneath_its_write_paths");
        return;
    };
    let read_only = tempfile::tempdir().expect("read-only dir");
    let writable = tempfile::tempdir().expect("writable dir");
    let script = format!(
        "touch {ro}/blocked; touch {rw}/allowed; cat /etc/hostname > /dev/null; echo read-ok > {rw}/read-check",
        ro = read_only.path().display(),
        rw = writable.path().display()
    );
    let config = ProcessConfig {
        program: PathBuf::from("/bin/sh"),
        args: vec!["-c".to_string(), script],
        working_directory: Some(read_only.path().to_path_buf()),
        env: BTreeMap::new(),
        stdin: StdinMode::Null,
        confinement: Some(Confinement {
            read_paths: vec![PathBuf::from("/")],
            write_paths: vec![writable.path().to_path_buf(), PathBuf::from("/dev/null")],
        }),
    };
    let (sink, _events) = EventSink::channel();
    let (mut process, _pipes) =
        ProviderProcess::spawn(&config, sink).expect("spawn confined child");
    process.wait_for_exit().await;
    process.shutdown(None).await;
    assert!(
        !read_only.path().join("blocked").exists(),
        "Landlock ABI {abi} let the child write a read-only directory"
    );
    assert!(
        writable.path().join("allowed").exists(),
        "the child could not write its write path"
    );
    assert_eq!(
        std::fs::read_to_string(writable.path().join("read-check")).expect("read check"),
        "read-ok\n"
    );
    // The confinement went to the child only: the thread that spawned it (and so the
    // server) can still write where the child could not.
    std::fs::write(read_only.path().join("spawner-writes"), "ok")
        .expect("the spawning thread is not confined");
}

#[tokio::test]
async fn confinement_of_a_missing_path_is_refused_before_spawning() {
    if nagi_providers::landlock_abi_version().is_none() {
        no_landlock("confinement_of_a_missing_path_is_refused_before_spawning");
        return;
    }
    let config = ProcessConfig {
        program: PathBuf::from("/bin/true"),
        args: Vec::new(),
        working_directory: None,
        env: BTreeMap::new(),
        stdin: StdinMode::Null,
        confinement: Some(Confinement {
            read_paths: vec![PathBuf::from("/nonexistent/nagi")],
            write_paths: Vec::new(),
        }),
    };
    let (sink, _events) = EventSink::channel();
    match ProviderProcess::spawn(&config, sink) {
        Err(nagi_providers::LaunchError::Confinement(message)) => {
            assert!(message.contains("/nonexistent/nagi"), "{message}")
        }
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("a confinement that cannot be built must not start the provider"),
    }
}

/// Landlock is missing: under CI (`CI=true`) the test fails with the reason; elsewhere it
/// says so and returns.
fn no_landlock(test: &str) {
    let reason = "this kernel offers no Landlock, so confinement cannot be tested";
    if std::env::var("CI").is_ok_and(|value| value == "true" || value == "1") {
        panic!("{test} cannot run under CI: {reason}");
    }
    eprintln!("skipped: {test}: {reason}");
}
