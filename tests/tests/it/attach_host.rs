//! `nagi pane attach --host NAME PANE`: a pane of another host, through the socket that
//! `[fleet.hosts.NAME]` names (in use, a socket forwarded over SSH; here, that host's own
//! local socket, as the issue asks of the tests). Needs no fleet: the attach talks to the
//! other host's server only.

use nagi_tests::*;
use serde_json::json;

use crate::panes::{has_line, ok_valid, pane_id, start_shell, wait_for_read};
use crate::tmux::Tmux;

/// A config folder of "this machine" that reaches host b through `socket`.
fn machine_with_host_b(socket: &std::path::Path) -> TestEnv {
    let env = TestEnv::new();
    std::fs::create_dir_all(&env.config_dir).unwrap();
    std::fs::write(
        env.config_dir.join("config.toml"),
        format!(
            "[fleet.hosts.b]\nsocket = {}\n",
            toml_string(socket.to_str().unwrap())
        ),
    )
    .unwrap();
    env
}

#[test]
fn attach_with_host_reaches_the_pane_of_that_host_and_types_into_it() {
    let mut b = TestEnv::new();
    b.start_server();
    let Some(tmux) = Tmux::start(&b.root()) else {
        return;
    };
    let pane = start_shell(&b);
    let id = pane_id(&pane);
    ok_valid(
        &b,
        "pane.send_input",
        json!({"pane_id": id, "text": "echo on-host-b-$((2+3))", "keys": ["enter"]}),
    );
    wait_for_read(&b, &id, "visible", None, |text| {
        has_line(text, "on-host-b-5")
    });

    let here = machine_with_host_b(&b.socket);
    tmux.open_shell(&here.config_dir);
    tmux.run(&[
        "send-keys",
        "-t",
        "t",
        &format!("{} pane attach --host b {id}", nagi_binary().display()),
        "Enter",
    ]);
    tmux.wait_for("t", "host b's pane", |screen| {
        screen.contains("on-host-b-5")
    });
    tmux.run(&["send-keys", "-t", "t", "echo typed-$((3*3))", "Enter"]);
    wait_for_read(&b, &id, "visible", None, |text| has_line(text, "typed-9"));
    tmux.run(&["send-keys", "-t", "t", "-H", "1c"]);
    tmux.wait_for("t", "the detach message", |screen| {
        screen.contains(&format!("nagi: detached from {id}"))
    });
    // This machine started no server of its own.
    assert!(!here.socket.exists());
    assert!(!here.database_path().exists());
}

#[test]
fn attach_with_an_unknown_host_says_how_to_forward_its_socket() {
    let b = TestEnv::new();
    let here = machine_with_host_b(&b.socket);
    let Some(tmux) = Tmux::start(&here.root()) else {
        return;
    };
    tmux.open_shell(&here.config_dir);
    // Host c is not configured; host b's socket leads nowhere (no forwarding running).
    tmux.run(&[
        "send-keys",
        "-t",
        "t",
        &format!(
            "{nagi} pane attach --host c w1:p1; echo exit-$?; {nagi} pane attach --host b w1:p1; echo exit-$?",
            nagi = nagi_binary().display()
        ),
        "Enter",
    ]);
    // Both exit codes, on lines of their own (the typed command line holds `exit-` too).
    let screen = tmux.wait_for("t", "both refusals", |screen| {
        screen
            .lines()
            .filter(|line| line.trim_end().starts_with("exit-"))
            .count()
            >= 2
    });
    assert!(screen.contains("[fleet.hosts.c]"), "{screen}");
    assert!(screen.contains("ssh -N"), "{screen}");
    assert!(screen.contains("exit-2"), "a usage error: {screen}");
    assert!(
        screen.contains("cannot reach host b's nagi server"),
        "{screen}"
    );
    assert!(screen.contains("exit-3"), "unreachable: {screen}");
    assert!(!here.database_path().exists(), "nothing was started here");
}
