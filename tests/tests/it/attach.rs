//! Attach: the session protocol of seed 004 on the real socket (late observers, one
//! controller, refused input and resizes, a stalled observer), and `nagi pane attach`
//! driven in tmux (type, see the echo, detach, and find the terminal as it was).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;

use base64::Engine as _;
use nagi_tests::*;
use serde_json::{Value, json};

use crate::panes::{
    PATIENCE, eventually, has_line, normalized_screen, ok_valid, pane_id, start_pane, start_shell,
    wait_for_read,
};
use crate::schema::{assert_pane_response_valid, assert_session_message_valid};
use crate::tmux::Tmux;

/// One attach connection speaking the session protocol.
struct SessionClient {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl SessionClient {
    fn connect(env: &TestEnv) -> SessionClient {
        let stream = UnixStream::connect(&env.socket).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        SessionClient {
            writer: stream.try_clone().unwrap(),
            reader: BufReader::new(stream),
        }
    }

    fn send(&mut self, message: Value) {
        self.writer
            .write_all(format!("{message}\n").as_bytes())
            .unwrap();
    }

    /// The next line, validated against our schema.
    fn next(&mut self) -> Value {
        let mut line = String::new();
        let read = self
            .reader
            .read_line(&mut line)
            .expect("a line before the read timeout");
        assert!(read > 0, "the server closed the attach connection");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message.get("type").is_some() {
            assert_session_message_valid(&message);
        } else {
            assert_pane_response_valid(&message);
        }
        message
    }

    /// The next line that is not a frame.
    fn next_reply(&mut self) -> Value {
        loop {
            let message = self.next();
            if message["type"] != "session_frame" {
                return message;
            }
        }
    }

    fn join(&mut self, session_id: &str, role: &str, replay_from: Option<u64>) -> Value {
        let mut message = json!({"type": "join_session", "session_id": session_id, "role": role});
        if let Some(from) = replay_from {
            message["replay_from"] = json!(from);
        }
        self.send(message);
        let reply = self.next_reply();
        assert_eq!(reply["type"], "session_joined", "{reply}");
        reply
    }
}

fn decode(data: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(data.as_str().unwrap())
        .unwrap()
}

/// A terminal that renders the frames an attach client receives.
struct Mirror {
    parser: vt100::Parser,
}

impl Mirror {
    fn new(rows: u16, cols: u16) -> Mirror {
        Mirror {
            parser: vt100::Parser::new(rows.try_into().unwrap(), cols.try_into().unwrap(), 0),
        }
    }

    fn apply(&mut self, frame: &Value) {
        match frame["kind"].as_str().unwrap() {
            "keyframe" | "output" => self.parser.process(&decode(&frame["data"])),
            "resize" => {
                let rows = frame["rows"].as_u64().unwrap() as u16;
                let cols = frame["cols"].as_u64().unwrap() as u16;
                self.parser
                    .screen_mut()
                    .set_size(rows.try_into().unwrap(), cols.try_into().unwrap());
            }
            _ => {}
        }
    }

    /// The screen as `pane.read` shows it: one line per row, trailing blanks removed.
    fn screen(&self) -> String {
        let (_, cols) = self.parser.screen().size();
        self.parser
            .screen()
            .rows(0, cols.get())
            .map(|row| row.trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Applies frames until the mirrored screen satisfies `accept`.
fn mirror_until(
    client: &mut SessionClient,
    mirror: &mut Mirror,
    accept: impl Fn(&str) -> bool,
) -> String {
    loop {
        let message = client.next();
        if message["type"] == "session_frame" {
            mirror.apply(&message);
            let screen = mirror.screen();
            if accept(&screen) {
                return screen;
            }
        }
    }
}

/// Whether `text` shows the line `marker` and, after it, the shell's prompt as its last line.
fn prompt_after(text: &str, marker: &str) -> bool {
    let lines = normalized_screen(text);
    let Some(at) = lines.iter().position(|line| line == marker) else {
        return false;
    };
    lines.len() > at + 1 && lines.last().is_some_and(|line| line == "sh$")
}

fn terminal_id(pane: &Value) -> String {
    pane["terminal_id"].as_str().unwrap().to_string()
}

#[test]
fn a_late_observer_sees_the_current_screen_then_live_output() {
    let mut env = TestEnv::new();
    env.start_server();
    let script = r"printf '\033[2J\033[3;5Hplaced\033[1;1Htop'; read word; printf '\033[6;1Hgot-%s' $word; sleep 600";
    let pane = start_pane(&env, &["sh", "-c", script]);
    let id = pane_id(&pane);
    let screen = wait_for_read(&env, &id, "visible", None, |text| text.contains("placed"));

    let mut observer = SessionClient::connect(&env);
    let joined = observer.join(&terminal_id(&pane), "observer", None);
    assert_eq!(joined["role"], "observer");
    assert_eq!(joined["session_id"], pane["terminal_id"]);
    let first = observer.next();
    assert_eq!(
        first["kind"], "keyframe",
        "a fresh join starts from a keyframe: {first}"
    );
    let mut mirror = Mirror::new(
        first["rows"].as_u64().unwrap() as u16,
        first["cols"].as_u64().unwrap() as u16,
    );
    mirror.apply(&first);
    assert_eq!(
        normalized_screen(&mirror.screen()),
        normalized_screen(&screen),
        "the keyframe is the current screen"
    );
    assert_eq!(
        normalized_screen(&mirror.screen())[..3],
        ["top", "", "    placed"]
    );

    ok_valid(
        &env,
        "pane.send_text",
        json!({"pane_id": id, "text": "hello\n"}),
    );
    let live = mirror_until(&mut observer, &mut mirror, |screen| {
        screen.contains("got-hello")
    });
    let now = read_visible(&env, &id);
    assert_eq!(
        normalized_screen(&live),
        normalized_screen(&now),
        "the mirror follows the pane"
    );
}

fn read_visible(env: &TestEnv, pane_id: &str) -> String {
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

#[test]
fn one_controller_at_a_time_and_observers_can_neither_type_nor_resize() {
    let mut env = TestEnv::new();
    env.start_server();
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    let session = terminal_id(&pane);
    let rows_before = viewport(&env, &id);

    let mut alice = SessionClient::connect(&env);
    assert_eq!(
        alice.join(&session, "controller", None)["role"],
        "controller"
    );
    let mut bob = SessionClient::connect(&env);
    assert_eq!(
        bob.join(&session, "controller", None)["role"],
        "observer",
        "a second controller is downgraded"
    );
    let downgrade = loop {
        let frame = bob.next();
        if frame["kind"] == "role_assigned" {
            break frame;
        }
    };
    assert_eq!(downgrade["role"], "observer");
    let membership = loop {
        let frame = alice.next();
        if frame["kind"] == "membership_changed"
            && !frame["observers"].as_array().unwrap().is_empty()
        {
            break frame;
        }
    };
    assert_eq!(membership["controllers"].as_array().unwrap().len(), 1);
    assert_eq!(membership["observers"].as_array().unwrap().len(), 1);

    bob.send(
        json!({"type": "session_input", "session_id": session, "data": "echo observer-typed\n"}),
    );
    let refused = bob.next_reply();
    assert_eq!(
        (refused["type"].as_str(), refused["code"].as_str()),
        (Some("error"), Some("not_controller")),
        "{refused}"
    );
    bob.send(json!({"type": "session_resize", "session_id": session, "cols": 100, "rows": 30}));
    assert_eq!(bob.next_reply()["code"], "not_controller");
    for (cols, rows) in [(19, 30), (100, 4), (0, 0)] {
        alice.send(
            json!({"type": "session_resize", "session_id": session, "cols": cols, "rows": rows}),
        );
        let refused = alice.next_reply();
        assert_eq!(
            refused["code"], "resize_too_small",
            "{cols}x{rows}: {refused}"
        );
    }
    alice.send(json!({"type": "session_resize", "session_id": session, "cols": -1, "rows": 30}));
    assert_eq!(alice.next_reply()["code"], "invalid_request");
    assert_eq!(
        viewport(&env, &id),
        rows_before,
        "no refused resize changed the pane"
    );

    alice.send(json!({"type": "session_resize", "session_id": session, "cols": 100, "rows": 30}));
    // The resize is followed by a keyframe at the new size, so a mirror can repaint exactly.
    let keyframe = loop {
        let frame = alice.next();
        if frame["kind"] == "keyframe" && frame["cols"] == 100 && frame["rows"] == 30 {
            break frame;
        }
    };
    let mut mirror = Mirror::new(30, 100);
    mirror.apply(&keyframe);
    alice.send(json!({"type": "session_input", "session_id": session, "data": "stty size; echo controller-$((1+1))\n"}));
    // Both sides wait for the shell's next prompt after the output, so that neither is
    // compared in the middle of the shell's reply.
    let mirrored = mirror_until(&mut alice, &mut mirror, |screen| {
        prompt_after(screen, "controller-2")
    });
    let screen = wait_for_read(&env, &id, "visible", None, |text| {
        prompt_after(text, "controller-2")
    });
    assert_eq!(
        normalized_screen(&mirrored),
        normalized_screen(&screen),
        "the controller's mirror shows the pane's screen"
    );
    assert!(
        has_line(&screen, "30 100"),
        "the program sees the controller's size:\n{screen}"
    );
    assert!(
        !screen.contains("observer-typed"),
        "the observer's input never reached the pane:\n{screen}"
    );

    // A request on an attached connection is refused; the attach goes on.
    alice.send(json!({"id": "r1", "method": "ping", "params": {}}));
    let refused = alice.next_reply();
    assert_eq!(
        (refused["id"].as_str(), refused["error"]["code"].as_str()),
        (Some("r1"), Some("invalid_request")),
        "{refused}"
    );
    let mut stranger = SessionClient::connect(&env);
    stranger.send(json!({"type": "join_session", "session_id": "term_nope", "role": "observer"}));
    assert_eq!(stranger.next_reply()["code"], "session_not_found");
    stranger.send(json!({"type": "warp_session", "session_id": session}));
    assert_eq!(stranger.next_reply()["code"], "invalid_request");

    // The controller leaves; the next controller request gets the slot.
    alice.send(json!({"type": "leave_session", "session_id": session}));
    assert_eq!(alice.next_reply()["type"], "session_left");
    let mut carol = SessionClient::connect(&env);
    assert_eq!(
        carol.join(&session, "controller", None)["role"],
        "controller"
    );
    // Closing a connection leaves its sessions: bob's slot frees up for nobody in particular,
    // and carol can still type.
    drop(bob);
    carol.send(
        json!({"type": "session_input", "session_id": session, "data": "echo carol-$((2+2))\n"}),
    );
    wait_for_read(&env, &id, "visible", None, |text| has_line(text, "carol-4"));
}

#[test]
fn a_stalled_observer_does_not_slow_the_pane_and_is_evicted_with_an_error_frame() {
    let mut env = TestEnv::new();
    env.start_server();
    // 600 separate 8 KiB bursts: far more frames than an observer's queue (256) plus what
    // the socket buffers hold.
    let script = r#"read go; burst=$(printf '%8000s' '' | tr ' ' '.'); i=0; while [ $i -lt 600 ]; do printf '%s\n' "$burst"; sleep 0.01; i=$((i+1)); done; echo final-marker; read again; echo resumed-$again; sleep 600"#;
    let pane = start_pane(&env, &["sh", "-c", script]);
    let id = pane_id(&pane);
    let session = terminal_id(&pane);

    let mut stalled = SessionClient::connect(&env);
    stalled.send(json!({"type": "join_session", "session_id": session, "role": "observer"}));
    // A second observer that keeps reading, on its own thread.
    let mut reader = SessionClient::connect(&env);
    reader.join(&session, "observer", None);
    let reading = std::thread::spawn(move || {
        let mut frames = 0u64;
        let mut errors = 0u64;
        let mut mirror_text = Vec::new();
        while !String::from_utf8_lossy(&mirror_text).contains("final-marker") {
            let message = reader.next();
            if message["type"] == "session_frame" {
                frames += 1;
                errors += u64::from(message["kind"] == "error");
                if message["kind"] == "output" {
                    mirror_text.extend(decode(&message["data"]));
                    // Only the tail can hold a marker that is still being written.
                    let keep = mirror_text.len().saturating_sub(64);
                    mirror_text.drain(..keep);
                }
            }
        }
        (frames, errors)
    });

    ok_valid(
        &env,
        "pane.send_text",
        json!({"pane_id": id, "text": "go\n"}),
    );
    // The pane finishes its output although the stalled observer reads nothing.
    wait_for_read(&env, &id, "recent", Some(5), |text| {
        has_line(text, "final-marker")
    });
    let (frames, errors) = reading.join().unwrap();
    assert!(frames > 0, "the reading observer followed the output");
    assert_eq!(errors, 0, "the reading observer was never evicted");

    // Now the stalled observer reads: its replies, frames, then one error frame.
    assert_eq!(stalled.next_reply()["type"], "session_joined");
    let mut last_seq = 0;
    let error = loop {
        let message = stalled.next();
        if message["type"] == "session_frame" {
            if message["kind"] == "error" {
                break message;
            }
            last_seq = message["seq"].as_u64().unwrap();
        }
    };
    assert!(
        error["message"].as_str().unwrap().contains("replay_from"),
        "{error}"
    );

    // It joins again where it stopped and follows the pane from there.
    let rejoined = stalled.join(&session, "observer", Some(last_seq + 1));
    assert!(rejoined["current_seq"].as_u64().unwrap() > last_seq);
    ok_valid(
        &env,
        "pane.send_text",
        json!({"pane_id": id, "text": "yes\n"}),
    );
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("resumed-yes") {
        let message = stalled.next();
        if message["type"] == "session_frame"
            && ["output", "keyframe"].contains(&message["kind"].as_str().unwrap())
        {
            seen.extend(decode(&message["data"]));
            let keep = seen.len().saturating_sub(256);
            seen.drain(..keep);
        }
    }
}

/// Runs a shell command line in the tmux pane and waits for its output `marker`. The
/// output may follow a prompt printed after the command was typed, so it ends a line
/// rather than filling one; the typed line itself never ends with the marker (markers are
/// computed by the shell).
fn tmux_run(tmux: &Tmux, command: &str, marker: &str) -> String {
    tmux.run(&["send-keys", "-t", "t", command, "Enter"]);
    tmux.wait_for("t", marker, |screen| {
        screen.lines().any(|line| line.trim_end().ends_with(marker))
    })
}

/// The terminal's settings as `stty -g` saved them (every termios flag and control
/// character; not the window size, which an attach may legitimately change).
fn stty_state(path: &std::path::Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn nagi_pane_attach_in_tmux_types_detaches_and_restores_the_terminal() {
    let mut env = TestEnv::new();
    env.start_server();
    let Some(tmux) = Tmux::start(&env.root()) else {
        return;
    };
    let nagi = nagi_binary();
    let root = env.root();
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": id, "text": "echo pane-marker-$((2+3))", "keys": ["enter"]}),
    );
    wait_for_read(&env, &id, "visible", None, |text| {
        has_line(text, "pane-marker-5")
    });

    tmux.open_shell(&env.config_dir);
    let before = root.join("stty-before.txt");
    tmux_run(
        &tmux,
        &format!("stty -g > {}; echo saved-$((1+1))", before.display()),
        "saved-2",
    );

    // Attach: the pane's screen replaces the shell's, and typing reaches the pane.
    tmux.run(&[
        "send-keys",
        "-t",
        "t",
        &format!("{} pane attach {id}", nagi.display()),
        "Enter",
    ]);
    tmux.wait_for("t", "the attached pane", |screen| {
        screen.contains("pane-marker-5") && !screen.contains("saved-2")
    });
    eventually("the pane takes the tmux window's size", || {
        viewport(&env, &id) == 30
    });
    tmux.run(&["send-keys", "-t", "t", "echo typed-$((3*3))", "Enter"]);
    let attached = tmux.wait_for("t", "the echo of typed input", |screen| {
        screen.lines().any(|line| line.trim_end() == "typed-9")
    });
    assert!(
        attached.contains("echo typed-$((3*3))"),
        "the pane echoes what was typed:\n{attached}"
    );
    wait_for_read(&env, &id, "visible", None, |text| has_line(text, "typed-9"));
    // Resizing the terminal (SIGWINCH) resizes the pane.
    tmux.run(&["resize-window", "-t", "t", "-x", "90", "-y", "25"]);
    eventually("the pane follows the terminal's new size", || {
        viewport(&env, &id) == 25
    });

    // Detach with Ctrl-\: the shell's screen and terminal settings come back.
    tmux.run(&["send-keys", "-t", "t", "-H", "1c"]);
    let detached = tmux.wait_for("t", "the detach message", |screen| {
        screen.contains(&format!("nagi: detached from {id}"))
    });
    assert!(
        detached.contains("saved-2"),
        "the shell's screen is back:\n{detached}"
    );
    let after = root.join("stty-after.txt");
    tmux_run(
        &tmux,
        &format!("stty -g > {}; echo back-$((40+2))", after.display()),
        "back-42",
    );
    assert_eq!(
        stty_state(&after),
        stty_state(&before),
        "the terminal settings are restored"
    );
    assert!(!stty_state(&before).is_empty());

    // Attach again and end the pane's process: the attach ends and restores the terminal.
    tmux.run(&[
        "send-keys",
        "-t",
        "t",
        &format!("clear; {} pane attach {id}", nagi.display()),
        "Enter",
    ]);
    tmux.wait_for("t", "the attached pane", |screen| {
        screen.contains("typed-9")
    });
    tmux.run(&["send-keys", "-t", "t", "exit 3", "Enter"]);
    tmux.wait_for("t", "the exit message", |screen| {
        screen.contains(&format!("nagi: the process of {id} exited with code 3"))
    });
    let after_exit = root.join("stty-after-exit.txt");
    tmux_run(
        &tmux,
        &format!(
            "stty -g > {}; echo exit-seen-$((1+6))",
            after_exit.display()
        ),
        "exit-seen-7",
    );
    assert_eq!(stty_state(&after_exit), stty_state(&before));

    // A signal ends the attach too, and the terminal is restored.
    let other = start_shell(&env);
    let other_id = pane_id(&other);
    let pid_file = root.join("attach.pid");
    let command = format!(
        "clear; sh -c 'echo $$ > {}; exec {} pane attach {other_id}'",
        pid_file.display(),
        nagi.display()
    );
    tmux.run(&["send-keys", "-t", "t", &command, "Enter"]);
    eventually("the attach is running", || viewport(&env, &other_id) == 25);
    let attach_pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: signalling the attach process this test started (through tmux).
    unsafe {
        libc::kill(attach_pid, libc::SIGTERM);
    }
    tmux.wait_for("t", "the signal message", |screen| {
        screen.contains("ended by signal 15")
    });
    let after_signal = root.join("stty-after-signal.txt");
    tmux_run(
        &tmux,
        &format!(
            "stty -g > {}; echo signal-seen-$((2+6))",
            after_signal.display()
        ),
        "signal-seen-8",
    );
    assert_eq!(stty_state(&after_signal), stty_state(&before));

    // The server going away ends the attach and restores the terminal.
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": other_id, "text": "echo other-$((5+5))", "keys": ["enter"]}),
    );
    tmux.run(&[
        "send-keys",
        "-t",
        "t",
        &format!("clear; {} pane attach {other_id}", nagi.display()),
        "Enter",
    ]);
    tmux.wait_for("t", "the attached pane", |screen| {
        screen.contains("other-10") && !screen.contains("signal-seen-8")
    });
    env.signal_server(libc::SIGTERM);
    tmux.wait_for("t", "the server-gone message", |screen| {
        screen.contains("the nagi server closed the attach connection")
    });
    let after_server = root.join("stty-after-server.txt");
    tmux_run(
        &tmux,
        &format!(
            "stty -g > {}; echo server-seen-$((3+6))",
            after_server.display()
        ),
        "server-seen-9",
    );
    assert_eq!(stty_state(&after_server), stty_state(&before));
}

/// A person watching a pane (`--observe`) is told how to leave, on the terminal before
/// the pane's screen covers it and in the window title while attached, and `q` leaves
/// (an observer cannot type, so the keys a person tries first are not lost on the pane).
#[test]
fn an_observer_is_told_how_to_leave_and_leaves_with_q() {
    let mut env = TestEnv::new();
    env.start_server();
    let Some(tmux) = Tmux::start(&env.root()) else {
        return;
    };
    let nagi = nagi_binary();
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": id, "text": "echo observed-$((2+5))", "keys": ["enter"]}),
    );
    wait_for_read(&env, &id, "visible", None, |text| {
        has_line(text, "observed-7")
    });
    tmux.open_shell(&env.config_dir);
    tmux.run(&[
        "send-keys",
        "-t",
        "t",
        &format!("{} pane attach --observe {id}", nagi.display()),
        "Enter",
    ]);
    tmux.wait_for("t", "the watched pane", |screen| {
        screen.lines().any(|line| line.trim_end() == "observed-7")
    });
    let title = tmux.run(&["display-message", "-p", "-t", "t", "#{pane_title}"]);
    assert!(
        title.contains("watching") && title.contains("q, Ctrl-C or Ctrl-\\ detaches"),
        "the title says how to leave: {title:?}"
    );
    tmux.run(&["send-keys", "-t", "t", "q"]);
    let detached = tmux.wait_for("t", "the detach message", |screen| {
        screen.contains(&format!("nagi: detached from {id}"))
    });
    assert!(
        detached.contains(&format!(
            "nagi: watching {id}; q, Ctrl-C or Ctrl-\\ detaches"
        )),
        "the way out was said before the pane's screen covered the terminal:\n{detached}"
    );
    let screen = read_visible(&env, &id);
    assert!(
        !screen.lines().any(|line| line.trim_end() == "q"),
        "the q never reached the pane:\n{screen}"
    );
}
