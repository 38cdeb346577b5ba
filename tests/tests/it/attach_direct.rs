//! Direct attach: the real `nagi pane attach` in tmux, whose terminal the server reads and
//! writes itself (the server holds the terminal open while attached, and lets go of it
//! before the client restores it), the stream mode kept with `NAGI_ATTACH_STREAM=1`, and
//! the server's fallback to a stream for a client without a terminal.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nagi_tests::*;
use serde_json::{Value, json};

use crate::panes::{eventually, has_line, ok_valid, pane_id, start_shell, wait_for_read};
use crate::tmux::Tmux;

/// The terminal of a tmux session's pane (`/dev/pts/N`).
fn pane_tty(tmux: &Tmux, target: &str) -> PathBuf {
    PathBuf::from(
        tmux.run(&["display-message", "-p", "-t", target, "#{pane_tty}"])
            .trim(),
    )
}

/// Whether the server process has `tty` open.
fn server_holds(env: &TestEnv, tty: &Path) -> bool {
    let pid = env.server_pid().expect("the server runs");
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    entries
        .flatten()
        .any(|entry| std::fs::read_link(entry.path()).is_ok_and(|target| target == tty))
}

/// The scheduler slice of the server's key thread of a direct attach (`nagi-direct-keys`,
/// which the kernel cuts to 15 bytes); `None` while the server has no such thread (it holds
/// the client's terminal a moment before it starts the thread).
fn key_thread_slice(env: &TestEnv) -> Option<std::time::Duration> {
    let pid = env.server_pid().expect("the server runs");
    let thread_id = std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the server's threads")
        .flatten()
        .find(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.trim_end() == "nagi-direct-key")
        })
        .and_then(|task| task.file_name().to_str()?.parse::<i32>().ok())?;
    // The thread may end between the two reads; that reads as no thread.
    nagi_os::sched_slice::slice_of(thread_id).ok()
}

fn visible(env: &TestEnv, pane_id: &str) -> String {
    ok_valid(
        env,
        "pane.read",
        json!({"pane_id": pane_id, "source": "visible"}),
    )["read"]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

fn viewport(env: &TestEnv, pane_id: &str) -> u64 {
    ok_valid(env, "pane.get", json!({"pane_id": pane_id}))["pane"]["scroll"]["viewport_rows"]
        .as_u64()
        .unwrap()
}

/// The attach command line for a tmux shell (whose `nagi` reaches the test's server).
fn attach_command(pane_id: &str, extra: &str) -> String {
    format!("{extra}{} pane attach {pane_id}", nagi_binary().display())
}

/// Opens the tmux shell and attaches it directly to `pane_id`; answers the tmux terminal,
/// once the server holds it (and not before the attach).
fn attach_directly(env: &TestEnv, tmux: &Tmux, pane_id: &str) -> PathBuf {
    tmux.open_shell(&env.config_dir);
    let tty = pane_tty(tmux, "t");
    assert!(!server_holds(env, &tty));
    type_line(tmux, "t", &attach_command(pane_id, "clear; "));
    eventually("the server holds the client's terminal", || {
        server_holds(env, &tty)
    });
    tty
}

/// Types a command line in the tmux session `target`.
fn type_line(tmux: &Tmux, target: &str, line: &str) {
    tmux.run(&["send-keys", "-t", target, line, "Enter"]);
}

/// Types a command line in the tmux session `target` and waits for a line ending with
/// `marker` (computed by the shell, so the typed line never shows it).
fn run_in(tmux: &Tmux, target: &str, command: &str, marker: &str) -> String {
    tmux.run(&["send-keys", "-t", target, command, "Enter"]);
    tmux.wait_for(target, marker, |screen| {
        screen.lines().any(|line| line.trim_end().ends_with(marker))
    })
}

fn alternate_screen_on(tmux: &Tmux, target: &str) -> bool {
    tmux.run(&["display-message", "-p", "-t", target, "#{alternate_on}"])
        .trim()
        == "1"
}

#[test]
fn a_direct_attach_types_echoes_resizes_and_lets_go_of_the_terminal_on_detach() {
    let mut env = TestEnv::new();
    env.start_server();
    let Some(tmux) = Tmux::start(&env.root()) else {
        return;
    };
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    let tty = attach_directly(&env, &tmux, &id);
    assert!(alternate_screen_on(&tmux, "t"));
    // The key thread asked for a short slice, so that its wake-ups preempt a busy CPU's
    // long task (kernels before 6.12 keep no slice of a thread's own).
    if nagi_os::sched_slice::kernel_keeps_own_slices() {
        eventually("the key thread runs with a 0.1 ms slice", || {
            key_thread_slice(&env) == Some(std::time::Duration::from_micros(100))
        });
    } else {
        missing_prerequisite(
            "the direct attach's key thread slice",
            "this kernel is older than 6.12 and keeps no slice of a thread's own",
        );
    }
    eventually("the pane takes the tmux window's size", || {
        viewport(&env, &id) == 30
    });
    // Typing reaches the pane, and its echo reaches the terminal.
    tmux.run(&["send-keys", "-t", "t", "echo direct-$((6*7))", "Enter"]);
    let attached = tmux.wait_for("t", "the echo of typed input", |screen| {
        screen.lines().any(|line| line.trim_end() == "direct-42")
    });
    assert!(attached.contains("echo direct-$((6*7))"), "{attached}");
    wait_for_read(&env, &id, "visible", None, |text| {
        has_line(text, "direct-42")
    });
    // A resize of the terminal still resizes the pane.
    tmux.run(&["resize-window", "-t", "t", "-x", "90", "-y", "25"]);
    eventually("the pane follows the terminal's new size", || {
        viewport(&env, &id) == 25
    });

    // An observer on another terminal sees the pane but cannot type; q leaves.
    let observe = format!(
        "env -u NAGI_SOCKET_PATH -u NAGI_SESSION NAGI_CONFIG_DIR={} PS1='obs$ ' sh",
        env.config_dir.display()
    );
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "o",
        "-x",
        "90",
        "-y",
        "25",
        &observe,
    ]);
    tmux.wait_for("o", "the observer's prompt", |screen| {
        screen.contains("obs$")
    });
    let observer_tty = pane_tty(&tmux, "o");
    tmux.run(&[
        "send-keys",
        "-t",
        "o",
        &format!("{} pane attach --observe {id}", nagi_binary().display()),
        "Enter",
    ]);
    tmux.wait_for("o", "the watched pane", |screen| {
        screen.lines().any(|line| line.trim_end() == "direct-42")
    });
    eventually("the server holds the observer's terminal", || {
        server_holds(&env, &observer_tty)
    });
    tmux.run(&["send-keys", "-t", "o", "zzz"]);
    tmux.run(&["send-keys", "-t", "t", "echo after-$((1+1))", "Enter"]);
    tmux.wait_for(
        "o",
        "the controller's typing, seen by the observer",
        |screen| screen.lines().any(|line| line.trim_end() == "after-2"),
    );
    let screen = visible(&env, &id);
    assert!(
        !screen.contains("zzz"),
        "the observer's keys never reached the pane:\n{screen}"
    );
    tmux.run(&["send-keys", "-t", "o", "q"]);
    tmux.wait_for("o", "the observer's detach message", |screen| {
        screen.contains(&format!("nagi: detached from {id}"))
    });
    eventually("the server lets go of the observer's terminal", || {
        !server_holds(&env, &observer_tty)
    });
    run_in(&tmux, "o", "echo observer-back-$((2+2))", "observer-back-4");

    // Ctrl-\ detaches: the server lets go of the terminal, the alternate screen is left
    // and the shell behind works.
    tmux.run(&["send-keys", "-t", "t", "-H", "1c"]);
    tmux.wait_for("t", "the detach message", |screen| {
        screen.contains(&format!("nagi: detached from {id}"))
    });
    assert!(
        !server_holds(&env, &tty),
        "the server let go before the client restored the terminal"
    );
    assert!(!alternate_screen_on(&tmux, "t"));
    run_in(&tmux, "t", "echo shell-back-$((4+5))", "shell-back-9");

    // Attach again and end the pane's process: the attach ends with the exit message.
    type_line(&tmux, "t", &attach_command(&id, "clear; "));
    eventually("the server holds the client's terminal again", || {
        server_holds(&env, &tty)
    });
    tmux.run(&["send-keys", "-t", "t", "exit 4", "Enter"]);
    tmux.wait_for("t", "the exit message", |screen| {
        screen.contains(&format!("nagi: the process of {id} exited with code 4"))
    });
    assert!(!server_holds(&env, &tty));
    assert!(!alternate_screen_on(&tmux, "t"));
    run_in(&tmux, "t", "echo exit-back-$((5+5))", "exit-back-10");
}

/// A paste longer than one read of the client's terminal (the server reads it 4 KiB at a
/// time, and is told of new keys only when more arrive) reaches the pane whole.
#[test]
fn a_paste_longer_than_one_read_reaches_the_pane_whole() {
    let mut env = TestEnv::new();
    env.start_server();
    let Some(tmux) = Tmux::start(&env.root()) else {
        return;
    };
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    attach_directly(&env, &tmux, &id);
    let pasted_to = env.root().join("pasted.txt");
    type_line(
        &tmux,
        "t",
        &format!("stty -echo; cat > {}", pasted_to.display()),
    );
    eventually("cat is waiting for the paste", || pasted_to.exists());
    // 20,000 bytes in lines of 100, so that the pane's line discipline takes each line.
    let line = format!("{}\n", "p".repeat(99));
    let paste: String = line.repeat(200);
    let paste_file = env.root().join("paste.txt");
    std::fs::write(&paste_file, &paste).unwrap();
    tmux.run(&["load-buffer", paste_file.to_str().unwrap()]);
    tmux.run(&["paste-buffer", "-t", "t"]);
    tmux.run(&["send-keys", "-t", "t", "C-d"]);
    eventually("the whole paste is in the file", || {
        std::fs::read_to_string(&pasted_to).is_ok_and(|text| text.len() >= paste.len())
    });
    assert_eq!(std::fs::read_to_string(&pasted_to).unwrap(), paste);
}

#[test]
fn with_nagi_attach_stream_the_client_carries_the_keys_and_the_output() {
    let mut env = TestEnv::new();
    env.start_server();
    let Some(tmux) = Tmux::start(&env.root()) else {
        return;
    };
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    tmux.open_shell(&env.config_dir);
    let tty = pane_tty(&tmux, "t");
    type_line(
        &tmux,
        "t",
        &attach_command(&id, "clear; NAGI_ATTACH_STREAM=1 "),
    );
    tmux.wait_for("t", "the attached pane", |screen| !screen.contains("tmux$"));
    tmux.run(&["send-keys", "-t", "t", "echo stream-$((6*6))", "Enter"]);
    tmux.wait_for("t", "the echo of typed input", |screen| {
        screen.lines().any(|line| line.trim_end() == "stream-36")
    });
    assert!(
        !server_holds(&env, &tty),
        "in stream mode the server never opens the terminal"
    );
    tmux.run(&["send-keys", "-t", "t", "-H", "1c"]);
    tmux.wait_for("t", "the detach message", |screen| {
        screen.contains(&format!("nagi: detached from {id}"))
    });
    run_in(&tmux, "t", "echo back-$((7+7))", "back-14");
}

/// A client whose stdin is not a terminal asks for direct mode: the join succeeds as a
/// stream (`session_joined` says so), and the frames come over the socket.
#[test]
fn the_server_serves_a_client_without_a_terminal_as_a_stream() {
    let mut env = TestEnv::new();
    env.start_server();
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    let session_id = pane["terminal_id"].as_str().unwrap().to_string();
    wait_for_read(&env, &id, "visible", None, |text| !text.trim().is_empty());
    // A client process of its own (stdin /dev/null), so that its stdin is known.
    let script = r#"
import socket, sys
client = socket.socket(socket.AF_UNIX)
client.settimeout(60)
client.connect(sys.argv[1])
client.sendall(('{"type":"join_session","session_id":"%s","role":"controller","terminal":"direct"}\n' % sys.argv[2]).encode())
lines = client.makefile()
for _ in range(3):
    print(lines.readline().strip(), flush=True)
"#;
    let child = Command::new("python3")
        .args(["-c", script])
        .arg(&env.socket)
        .arg(&session_id)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn();
    let Ok(mut child) = child else {
        missing_prerequisite("the stream fallback test", "python3 is not installed");
        return;
    };
    let reader = BufReader::new(child.stdout.take().unwrap());
    let lines: Vec<Value> = reader
        .lines()
        .map_while(Result::ok)
        .map(|line| serde_json::from_str(&line).expect("a JSON line"))
        .collect();
    assert!(child.wait().unwrap().success());
    assert_eq!(lines[0]["type"], "session_joined", "{lines:?}");
    assert_eq!(lines[0]["role"], "controller");
    assert_eq!(
        lines[0]["terminal"], "stream",
        "no terminal on stdin: a stream"
    );
    assert!(
        lines[1..]
            .iter()
            .any(|line| line["type"] == "session_frame" && line["kind"] == "keyframe"),
        "the screen comes over the socket: {lines:?}"
    );
}
