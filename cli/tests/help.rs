//! The binary itself: its help documents the exit codes. (This file also makes
//! `cargo test` build the real `nagi` binary that the integration tests in `tests/` run.)

#[test]
fn help_documents_the_exit_codes() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_nagi"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    for line in [
        "Exit codes:",
        "0  success",
        "2  usage error",
        "3  no nagi server could be reached",
    ] {
        assert!(help.contains(line), "missing {line:?} in:\n{help}");
    }
}
