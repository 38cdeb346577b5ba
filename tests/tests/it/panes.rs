//! Managed panes over the real socket with the real binary: workspaces, tabs and panes
//! running real programs on real PTYs, reads that match what a terminal shows, process
//! control, events, bad input, and the `nagi workspace|pane|wait` commands. Every response
//! is validated against our own schema and the reference `nagi-api.schema.json`.

use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use nagi_tests::*;
use serde_json::{Value, json};

use crate::schema::{assert_event_valid, assert_pane_response_valid};

/// Generous: the machine is shared and slow at times. Tests poll; they never assert on
/// elapsed time.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Calls a method and validates the response line against both schemas.
pub fn call_valid(env: &TestEnv, method: &str, params: Value) -> Value {
    let response = env.call(method, params);
    assert_pane_response_valid(&response);
    response
}

/// Calls, requires success, validates, and returns the `result`.
pub fn ok_valid(env: &TestEnv, method: &str, params: Value) -> Value {
    let response = call_valid(env, method, params.clone());
    match response.get("result") {
        Some(result) => result.clone(),
        None => panic!("{method} {params} failed: {response}"),
    }
}

/// Calls, requires an error, validates, and returns its code.
pub fn error_valid(env: &TestEnv, method: &str, params: Value) -> String {
    let response = call_valid(env, method, params.clone());
    match response.pointer("/error/code").and_then(Value::as_str) {
        Some(code) => code.to_string(),
        None => panic!("{method} {params} was expected to fail but answered {response}"),
    }
}

/// A new workspace whose root pane runs `argv`; returns the root pane.
pub fn start_pane(env: &TestEnv, argv: &[&str]) -> Value {
    let result = ok_valid(env, "workspace.create", json!({"command": argv}));
    result["root_pane"].clone()
}

/// The prompt of test shells ends the line, so that a command's output always starts a
/// line of its own, even when the command was typed (and echoed) before the prompt.
pub const SHELL_PROMPT: &str = "sh$ \n";

/// A new workspace whose root pane runs `sh`, once the shell has printed its prompt.
pub fn start_shell(env: &TestEnv) -> Value {
    let result = ok_valid(
        env,
        "workspace.create",
        json!({"command": ["sh"], "env": {"PS1": SHELL_PROMPT}}),
    );
    let pane = result["root_pane"].clone();
    wait_for_read(env, &pane_id(&pane), "visible", None, |text| {
        text.contains("sh$")
    });
    pane
}

pub fn pane_id(pane: &Value) -> String {
    pane["pane_id"].as_str().expect("pane_id").to_string()
}

pub fn read(env: &TestEnv, pane_id: &str, source: &str, lines: Option<u32>) -> String {
    let result = ok_valid(
        env,
        "pane.read",
        json!({"pane_id": pane_id, "source": source, "lines": lines}),
    );
    result["read"]["text"].as_str().unwrap().to_string()
}

/// Polls a read until `accept` holds.
pub fn wait_for_read(
    env: &TestEnv,
    pane_id: &str,
    source: &str,
    lines: Option<u32>,
    accept: impl Fn(&str) -> bool,
) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let text = read(env, pane_id, source, lines);
        if accept(&text) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "pane {pane_id} never showed the expected text; last {source} read:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(30));
    }
}

pub fn has_line(text: &str, wanted: &str) -> bool {
    text.lines().any(|line| line == wanted)
}

/// Polls `condition` until it holds.
pub fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "{what} did not happen in time");
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// Opens a subscription; returns the stream after checking the acknowledgement.
pub fn subscribe(env: &TestEnv, subscriptions: Value) -> BufReader<UnixStream> {
    let mut stream = UnixStream::connect(&env.socket).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let line = json!({"id": "sub", "method": "events.subscribe", "params": {"subscriptions": subscriptions}});
    stream.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let ack = TestEnv::read_line_from(&mut reader).expect("a subscription acknowledgement");
    assert_eq!(ack["result"]["type"], "subscription_started", "{ack}");
    assert_pane_response_valid(&ack);
    reader
}

/// Reads pushed events (validating each) until one satisfies `accept`.
pub fn next_event(reader: &mut BufReader<UnixStream>, accept: impl Fn(&Value) -> bool) -> Value {
    loop {
        let event = TestEnv::read_line_from(reader).expect("an event before the read timeout");
        assert_event_valid(&event);
        if accept(&event) {
            return event;
        }
    }
}

fn is_event(event: &Value, kind: &str) -> bool {
    event["event"] == kind
}

#[test]
fn workspaces_tabs_and_panes_answer_over_the_socket_and_validate_against_both_schemas() {
    let mut env = TestEnv::new();
    env.start_server();
    let root = env.root();
    let created = ok_valid(
        &env,
        "workspace.create",
        json!({"label": "api", "cwd": root, "command": ["sh"], "focus": true, "env": {"PS1": SHELL_PROMPT}}),
    );
    assert_eq!(created["type"], "workspace_created");
    let workspace_id = created["workspace"]["workspace_id"]
        .as_str()
        .unwrap()
        .to_string();
    let root_pane = pane_id(&created["root_pane"]);
    wait_for_read(&env, &root_pane, "visible", None, |text| {
        text.contains("sh$")
    });
    assert_eq!(workspace_id, "w1");
    assert_eq!(root_pane, "w1:p1");
    assert_eq!(created["tab"]["tab_id"], "w1:t1");
    assert_eq!(created["root_pane"]["cwd"], root.to_str().unwrap());

    let listed = ok_valid(&env, "workspace.list", json!({}));
    assert_eq!(listed["workspaces"].as_array().unwrap().len(), 1);
    let renamed = ok_valid(
        &env,
        "workspace.rename",
        json!({"workspace_id": workspace_id, "label": "backend"}),
    );
    assert_eq!(renamed["workspace"]["label"], "backend");
    assert_eq!(
        ok_valid(&env, "workspace.get", json!({"workspace_id": workspace_id}))["workspace"]["label"],
        "backend"
    );

    let tab = ok_valid(
        &env,
        "tab.create",
        json!({"workspace_id": workspace_id, "label": "logs", "command": ["sh"], "env": {"PS1": SHELL_PROMPT}}),
    );
    assert_eq!(tab["type"], "tab_created");
    let tab_id = tab["tab"]["tab_id"].as_str().unwrap().to_string();
    let tab_pane = pane_id(&tab["root_pane"]);
    assert_eq!(
        ok_valid(&env, "tab.list", json!({"workspace_id": workspace_id}))["tabs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        ok_valid(
            &env,
            "tab.rename",
            json!({"tab_id": tab_id, "label": "tail"})
        )["tab"]["label"],
        "tail"
    );
    assert_eq!(
        ok_valid(&env, "tab.get", json!({"tab_id": tab_id}))["tab"]["label"],
        "tail"
    );

    let panes = ok_valid(&env, "pane.list", json!({}));
    assert_eq!(panes["panes"].as_array().unwrap().len(), 2);
    let pane = ok_valid(
        &env,
        "pane.get",
        json!({"pane_id": root_pane, "unknown_field": "ignored like the reference"}),
    );
    assert_eq!(pane["pane"]["tab_id"], "w1:t1");
    assert!(
        pane["pane"]["terminal_id"]
            .as_str()
            .unwrap()
            .starts_with("term_")
    );
    assert_eq!(
        ok_valid(&env, "pane.current", json!({"caller_pane_id": tab_pane}))["pane"]["pane_id"],
        tab_pane.as_str()
    );
    assert_eq!(
        ok_valid(
            &env,
            "pane.rename",
            json!({"pane_id": root_pane, "label": "main"})
        )["pane"]["label"],
        "main"
    );
    let process = ok_valid(&env, "pane.process_info", json!({"pane_id": root_pane}));
    assert_eq!(process["process_info"]["shell_pid"], pane["pane"]["pid"]);

    ok_valid(
        &env,
        "pane.send_text",
        json!({"pane_id": root_pane, "text": "echo sum-$((20+22))"}),
    );
    ok_valid(
        &env,
        "pane.send_keys",
        json!({"pane_id": root_pane, "keys": ["enter"]}),
    );
    let matched = ok_valid(
        &env,
        "pane.wait_for_output",
        json!({"pane_id": root_pane, "source": "recent", "match": {"type": "regex", "value": "(?m)^sum-42$"}, "timeout_ms": 60_000}),
    );
    assert_eq!(matched["type"], "output_matched");
    assert_eq!(matched["matched_line"], "sum-42");
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": root_pane, "text": "echo in$((1+1))put", "keys": ["enter"]}),
    );
    wait_for_read(&env, &root_pane, "visible", None, |text| {
        has_line(text, "in2put")
    });

    ok_valid(
        &env,
        "pane.report_agent",
        json!({"pane_id": root_pane, "source": "test-hook", "agent": "codex", "state": "working"}),
    );
    ok_valid(
        &env,
        "pane.report_agent_session",
        json!({"pane_id": root_pane, "source": "test-hook", "agent": "codex", "agent_session_id": "sess-1"}),
    );
    ok_valid(
        &env,
        "pane.report_metadata",
        json!({"pane_id": root_pane, "source": "test-hook", "title": "Fixing login"}),
    );
    let pane = ok_valid(&env, "pane.get", json!({"pane_id": root_pane}));
    assert_eq!(pane["pane"]["agent_status"], "working");
    assert_eq!(pane["pane"]["title"], "Fixing login");
    assert_eq!(pane["pane"]["agent_session"]["value"], "sess-1");

    let snapshot = ok_valid(&env, "session.snapshot", json!({}));
    assert_eq!(snapshot["type"], "session_snapshot");
    assert_eq!(snapshot["snapshot"]["panes"].as_array().unwrap().len(), 2);
    assert_eq!(snapshot["snapshot"]["focused_workspace_id"], "w1");

    assert_eq!(
        ok_valid(&env, "tab.close", json!({"tab_id": tab_id}))["type"],
        "ok"
    );
    assert_eq!(
        error_valid(&env, "pane.get", json!({"pane_id": tab_pane})),
        "pane_not_found"
    );
    assert_eq!(
        ok_valid(
            &env,
            "workspace.close",
            json!({"workspace_id": workspace_id})
        )["type"],
        "ok"
    );
    assert_eq!(
        error_valid(&env, "workspace.get", json!({"workspace_id": workspace_id})),
        "workspace_not_found"
    );
    assert!(
        ok_valid(&env, "pane.list", json!({}))["panes"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

fn write_script(dir: &Path, name: &str, script: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    path.to_str().unwrap().to_string()
}

/// A tmux server of the test's own, on a private socket; killed when dropped.
pub struct Tmux {
    socket: std::path::PathBuf,
}

impl Tmux {
    /// `None` (with the reason printed) when tmux is not installed.
    pub fn start(dir: &Path) -> Option<Tmux> {
        if std::process::Command::new("tmux")
            .arg("-V")
            .output()
            .is_err()
        {
            missing_prerequisite(
                "a tmux test",
                "tmux is not installed (apt-get install -y tmux)",
            );
            return None;
        }
        Some(Tmux {
            socket: dir.join("tmux.sock"),
        })
    }

    pub fn run(&self, args: &[&str]) -> String {
        let output = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["-f", "/dev/null"])
            .args(args)
            .output()
            .expect("tmux runs");
        assert!(
            output.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// A 100×30 session `t` running `sh` with the prompt `tmux$ `, whose `nagi` commands reach
    /// the test's server through `config_dir` (the test's own socket variables removed);
    /// returns once the prompt shows.
    pub fn open_shell(&self, config_dir: &Path) {
        let shell = format!(
            "env -u NAGI_SOCKET_PATH -u NAGI_SESSION NAGI_CONFIG_DIR={} PS1='tmux$ ' sh",
            config_dir.display()
        );
        self.new_session(100, 30, &shell);
        self.wait_for("t", "the tmux shell's prompt", |screen| {
            screen.contains("tmux$")
        });
    }

    /// A `cols`×`rows` session `t` running the real `nagi pane attach PANE` against the
    /// test's server (its own socket variables removed, its config folder and HOME given).
    pub fn attach_pane(&self, env: &TestEnv, pane_id: &str, cols: u16, rows: u16) {
        let attach = format!(
            "env -u NAGI_SOCKET_PATH -u NAGI_SESSION NAGI_CONFIG_DIR={} HOME={} {} pane attach {pane_id}",
            env.config_dir.display(),
            env.home().display(),
            nagi_binary().display()
        );
        self.new_session(cols, rows, &attach);
    }

    /// A detached `cols`×`rows` session `t` running `command`.
    fn new_session(&self, cols: u16, rows: u16, command: &str) {
        let (cols, rows) = (cols.to_string(), rows.to_string());
        self.run(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &cols,
            "-y",
            &rows,
            command,
        ]);
    }

    pub fn capture(&self, target: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", target])
    }

    /// Polls the captured screen until `accept` holds.
    pub fn wait_for(&self, target: &str, what: &str, accept: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = self.capture(target);
            if accept(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "tmux never showed {what}; last screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// Lines with their trailing blanks removed, and the blank lines at the end dropped.
fn normalized_screen(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .map(|line| line.trim_end().to_string())
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

#[test]
fn escapes_and_cursor_movement_render_as_a_terminal_shows_them() {
    let mut env = TestEnv::new();
    env.start_server();
    let script = write_script(
        &env.root(),
        "screen.sh",
        concat!(
            "printf 'line one\\n\\033[31mred\\033[0m text\\n'\n",
            "printf '\\033[5;10Hplaced'\n",
            "printf '\\033[1;20Hover'\n",
            "printf '\\033[3;1Habcdef\\033[3;3H\\033[K'\n",
            "printf '\\033[8;1Hwide: \\344\\270\\255\\346\\226\\207 end'\n",
            "printf '\\033[10;1Htab\\there'\n",
            "printf '\\033[12;1Hcarriage\\rCAR'\n",
            "printf '\\033[14;1Hdel\\b\\bX'\n",
            "printf '\\033[16;1Hdone-marker'\n",
            "sleep 600\n",
        ),
    );
    let pane = start_pane(&env, &["sh", &script]);
    let id = pane_id(&pane);
    let screen = wait_for_read(&env, &id, "visible", None, |text| {
        text.contains("done-marker")
    });
    let expected = [
        "line one           over",
        "red text",
        "ab",
        "",
        "         placed",
        "",
        "",
        "wide: 中文 end",
        "",
        "tab     here",
        "",
        "CARriage",
        "",
        "dXl",
        "",
        "done-marker",
    ];
    assert_eq!(
        normalized_screen(&screen),
        expected,
        "visible screen:\n{screen}"
    );
    let colored = ok_valid(
        &env,
        "pane.read",
        json!({"pane_id": id, "source": "visible", "format": "ansi"}),
    );
    assert!(
        colored["read"]["text"]
            .as_str()
            .unwrap()
            .contains("\u{1b}[31m"),
        "the ansi read keeps the colour: {colored}"
    );

    // The same program in tmux, at the same size, shows the same screen.
    let Some(tmux) = Tmux::start(&env.root()) else {
        return;
    };
    let size =
        ok_valid(&env, "pane.get", json!({"pane_id": id}))["pane"]["scroll"]["viewport_rows"]
            .as_u64()
            .unwrap();
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "ref",
        "-x",
        "120",
        "-y",
        &size.to_string(),
        &format!("sh {script}"),
    ]);
    let reference = tmux.wait_for("ref", "the reference screen", |text| {
        text.contains("done-marker")
    });
    assert_eq!(
        normalized_screen(&screen),
        normalized_screen(&reference),
        "nagi:\n{screen}\ntmux:\n{reference}"
    );
}

#[test]
fn scrollback_recent_and_recent_unwrapped_read_as_the_seed_says() {
    let mut env = TestEnv::new();
    env.start_server();
    let long_line = "x".repeat(250);
    let script = format!(
        "i=1; while [ $i -le 300 ]; do echo \"row $i\"; i=$((i+1)); done; echo {long_line}; echo end-marker; sleep 600"
    );
    let pane = start_pane(&env, &["sh", "-c", &script]);
    let id = pane_id(&pane);
    wait_for_read(&env, &id, "visible", None, |text| {
        has_line(text, "end-marker")
    });
    let visible = read(&env, &id, "visible", None);
    let rows = ok_valid(&env, "pane.get", json!({"pane_id": id}))["pane"]["scroll"]["viewport_rows"]
        .as_u64()
        .unwrap() as usize;
    assert_eq!(
        visible.split('\n').count(),
        rows,
        "one line per screen row:\n{visible}"
    );
    assert!(
        !has_line(&visible, "row 1") && !has_line(&visible, "row 200"),
        "old rows scrolled off the screen:\n{visible}"
    );

    // recent: the last displayed rows, the long line as the three rows it wraps into.
    let recent = read(&env, &id, "recent", Some(10_000));
    let recent_lines: Vec<&str> = recent.lines().collect();
    assert_eq!(
        recent_lines.first(),
        Some(&"row 1"),
        "the scrollback keeps the first row"
    );
    let long_at = recent_lines
        .iter()
        .position(|line| line.starts_with('x'))
        .unwrap();
    assert_eq!(recent_lines[long_at - 1], "row 300");
    assert_eq!(
        recent_lines[long_at..long_at + 3],
        ["x".repeat(120), "x".repeat(120), "x".repeat(10)]
    );
    assert_eq!(recent_lines[long_at + 3], "end-marker");
    let last_three = read(&env, &id, "recent", Some(3));
    assert!(
        last_three.lines().count() <= 3,
        "lines limits the read:\n{last_three}"
    );
    let truncated = ok_valid(
        &env,
        "pane.read",
        json!({"pane_id": id, "source": "recent", "lines": 3}),
    );
    assert_eq!(truncated["read"]["truncated"], true);

    // recent_unwrapped: soft-wrapped rows joined back into the logical line.
    let unwrapped = read(&env, &id, "recent_unwrapped", Some(10_000));
    let unwrapped_lines: Vec<&str> = unwrapped.lines().collect();
    let long_at = unwrapped_lines
        .iter()
        .position(|line| line.starts_with('x'))
        .unwrap();
    assert_eq!(unwrapped_lines[long_at], long_line);
    assert_eq!(unwrapped_lines[long_at - 1], "row 300");
    assert_eq!(unwrapped_lines[long_at + 1], "end-marker");
    assert_eq!(unwrapped_lines.first(), Some(&"row 1"));

    // Out-of-range counts are refused and the pane is as it was.
    for lines in [0, 10_001] {
        assert_eq!(
            error_valid(
                &env,
                "pane.read",
                json!({"pane_id": id, "source": "recent", "lines": lines})
            ),
            "invalid_params"
        );
    }
    assert_eq!(read(&env, &id, "visible", None), visible);
}

#[test]
fn a_full_screen_program_draws_on_the_alternate_screen_and_the_shell_screen_returns() {
    let mut env = TestEnv::new();
    env.start_server();
    if std::process::Command::new("less")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: less is not installed");
        return;
    }
    let file = env.root().join("items.txt");
    std::fs::write(
        &file,
        (1..=200)
            .map(|index| format!("item {index}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": id, "text": "echo before-$((6*7))", "keys": ["enter"]}),
    );
    wait_for_read(&env, &id, "visible", None, |text| {
        has_line(text, "before-42")
    });
    let command = format!("LESS= less {}", file.display());
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": id, "text": command, "keys": ["enter"]}),
    );
    let rows = ok_valid(&env, "pane.get", json!({"pane_id": id}))["pane"]["scroll"]["viewport_rows"]
        .as_u64()
        .unwrap() as usize;
    let screen = wait_for_read(&env, &id, "visible", None, |text| {
        text.starts_with("item 1\n")
    });
    let lines: Vec<&str> = screen.lines().collect();
    assert_eq!(lines.len(), rows);
    for (index, line) in lines[..rows - 1].iter().enumerate() {
        assert_eq!(
            *line,
            format!("item {}", index + 1),
            "less fills the screen but its prompt line:\n{screen}"
        );
    }
    assert!(
        !screen.contains("before-42"),
        "the program draws on the alternate screen:\n{screen}"
    );
    // Paging moves the whole screen, as a terminal shows it.
    ok_valid(
        &env,
        "pane.send_keys",
        json!({"pane_id": id, "keys": ["space"]}),
    );
    let paged = wait_for_read(&env, &id, "visible", None, |text| {
        text.starts_with(&format!("item {rows}\n"))
    });
    assert!(
        has_line(&paged, &format!("item {}", 2 * rows - 2)),
        "{paged}"
    );
    ok_valid(&env, "pane.send_text", json!({"pane_id": id, "text": "q"}));
    let back = wait_for_read(&env, &id, "visible", None, |text| {
        has_line(text, "before-42")
    });
    assert!(
        !back.contains("item 1"),
        "quitting restores the shell's screen:\n{back}"
    );
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": id, "text": "echo after-$((6*7))", "keys": ["enter"]}),
    );
    wait_for_read(&env, &id, "visible", None, |text| {
        has_line(text, "after-42")
    });
}

#[test]
fn closing_a_pane_ends_a_process_that_double_forked_away_from_it() {
    let mut env = TestEnv::new();
    env.start_server();
    let pid_file = env.root().join("escaped.pid");
    let script = format!(
        "(setsid sleep 1000 & echo $! > {}); echo forked; sleep 1000",
        pid_file.display()
    );
    let pane = start_pane(&env, &["sh", "-c", &script]);
    let id = pane_id(&pane);
    wait_for_read(&env, &id, "visible", None, |text| has_line(text, "forked"));
    eventually("the pid file is written", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|text| text.ends_with('\n'))
    });
    let escaped: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let shell = pane["pid"].as_i64().unwrap() as i32;
    assert!(
        !process_is_gone(escaped) && !process_is_gone(shell),
        "both processes run before the close"
    );
    let stat = std::fs::read_to_string(format!("/proc/{escaped}/stat")).unwrap();
    let parent: i32 = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert_ne!(
        parent, shell,
        "the sleep left the pane's process tree (its parent is now {parent})"
    );

    assert_eq!(
        ok_valid(&env, "pane.close", json!({"pane_id": id}))["type"],
        "ok"
    );
    eventually("the double-forked sleep ends", || process_is_gone(escaped));
    eventually("the pane's shell ends", || process_is_gone(shell));
    assert_eq!(
        error_valid(&env, "pane.get", json!({"pane_id": id})),
        "pane_not_found"
    );
}

#[test]
fn exit_events_carry_the_status_and_waits_see_them() {
    let mut env = TestEnv::new();
    env.start_server();
    let mut events = subscribe(
        &env,
        json!([{"type": "pane.exited"}, {"type": "pane.created"}]),
    );
    let exits = start_pane(&env, &["sh", "-c", "read line; exit 7"]);
    let killed = start_pane(&env, &["sh", "-c", "read line; kill -TERM $$"]);
    let created = next_event(&mut events, |event| is_event(event, "pane_created"));
    assert_eq!(created["data"]["pane"]["pane_id"], exits["pane_id"]);

    // A one-shot wait on another connection: whether the server reads it before or after
    // the exit, it answers with the exit.
    let exits_id = pane_id(&exits);
    let waiter_env_socket = env.socket.clone();
    let (sent, request_sent) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let mut stream = UnixStream::connect(&waiter_env_socket).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        let line = json!({"id": "w", "method": "events.wait", "params": {"match_event": {"event": "pane_exited", "pane_id": exits_id}, "timeout_ms": 60_000}});
        stream.write_all(format!("{line}\n").as_bytes()).unwrap();
        sent.send(()).unwrap();
        let mut reader = BufReader::new(stream);
        TestEnv::read_line_from(&mut reader).expect("the wait answers")
    });
    request_sent.recv().unwrap();
    ok_valid(
        &env,
        "pane.send_text",
        json!({"pane_id": exits["pane_id"], "text": "\n"}),
    );
    let exited = next_event(&mut events, |event| {
        is_event(event, "pane_exited") && event["data"]["pane_id"] == exits["pane_id"]
    });
    assert_eq!(exited["data"]["exit_code"], 7);
    assert!(exited["data"].get("signal").is_none());
    let waited = waiter.join().unwrap();
    assert_pane_response_valid(&waited);
    assert_eq!(waited["result"]["type"], "wait_matched", "{waited}");
    // A wait for the end of a pane that has ended answers at once, with its exit.
    let late = ok_valid(
        &env,
        "events.wait",
        json!({"match_event": {"event": "pane_exited", "pane_id": exits["pane_id"]}, "timeout_ms": 60_000}),
    );
    assert_eq!(late["event"]["data"]["exit_code"], 7, "{late}");
    assert_eq!(waited["result"]["event"]["data"]["exit_code"], 7);

    ok_valid(
        &env,
        "pane.send_text",
        json!({"pane_id": killed["pane_id"], "text": "\n"}),
    );
    let exited = next_event(&mut events, |event| {
        is_event(event, "pane_exited") && event["data"]["pane_id"] == killed["pane_id"]
    });
    assert_eq!(exited["data"]["signal"], 15);

    let info = ok_valid(&env, "pane.get", json!({"pane_id": exits["pane_id"]}));
    assert_eq!(
        info["pane"]["exit_status"]["exit_code"], 7,
        "the ended pane stays readable: {info}"
    );
    assert_eq!(
        error_valid(
            &env,
            "pane.send_text",
            json!({"pane_id": exits["pane_id"], "text": "x"})
        ),
        "pane_exited"
    );
    let timeout = error_valid(
        &env,
        "events.wait",
        json!({"match_event": {"event": "pane_exited", "pane_id": "w9:p9"}, "timeout_ms": 200}),
    );
    assert_eq!(timeout, "timeout");
}

#[test]
fn pane_processes_get_the_nagi_environment_and_server_values_win() {
    let mut env = TestEnv::new();
    env.start_server();
    let script = r#"echo "S=$NAGI_SOCKET_PATH|E=$NAGI_ENV|W=$NAGI_WORKSPACE_ID|T=$NAGI_TAB_ID|P=$NAGI_PANE_ID|M=$MY_VAR"; sleep 600"#;
    let created = ok_valid(
        &env,
        "workspace.create",
        json!({"command": ["sh", "-c", script], "env": {"MY_VAR": "mine", "NAGI_PANE_ID": "forged", "NAGI_ENV": "0"}}),
    );
    let id = pane_id(&created["root_pane"]);
    let text = wait_for_read(&env, &id, "visible", None, |text| text.contains("|M="));
    let expected = format!("S={}|E=1|W=w1|T=w1:t1|P=w1:p1|M=mine", env.socket.display());
    assert!(
        has_line(&text, &expected),
        "expected {expected:?} in:\n{text}"
    );
}

#[test]
fn lifecycle_output_and_agent_events_reach_subscribers() {
    let mut env = TestEnv::new();
    env.start_server();
    let watched = start_shell(&env);
    let watched_id = pane_id(&watched);
    let mut events = subscribe(
        &env,
        json!([
            {"type": "workspace.created"}, {"type": "workspace.renamed"}, {"type": "workspace.closed"},
            {"type": "tab.created"}, {"type": "tab.closed"}, {"type": "pane.created"}, {"type": "pane.closed"},
            {"type": "pane.output_matched", "pane_id": watched_id, "source": "recent", "match": {"type": "regex", "value": "(?m)^done-\\d+$"}},
            {"type": "pane.agent_status_changed", "pane_id": watched_id},
        ]),
    );
    // The typed line reads done-$((40+2)); only the program's output matches the pattern.
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": watched_id, "text": "echo done-$((40+2))", "keys": ["enter"]}),
    );
    let matched = next_event(&mut events, |event| is_event(event, "pane.output_matched"));
    assert_eq!(matched["data"]["pane_id"], watched_id.as_str());
    assert_eq!(matched["data"]["matched_line"], "done-42");
    ok_valid(
        &env,
        "pane.report_agent",
        json!({"pane_id": watched_id, "source": "test-hook", "agent": "claude", "state": "blocked"}),
    );
    let status = next_event(&mut events, |event| {
        is_event(event, "pane.agent_status_changed")
    });
    assert_eq!(status["data"]["agent_status"], "blocked");

    let created = ok_valid(&env, "workspace.create", json!({"command": ["sh"]}));
    let workspace_id = created["workspace"]["workspace_id"]
        .as_str()
        .unwrap()
        .to_string();
    next_event(&mut events, |event| {
        is_event(event, "workspace_created")
            && event["data"]["workspace"]["workspace_id"] == workspace_id
    });
    next_event(&mut events, |event| {
        is_event(event, "pane_created") && event["data"]["pane"]["workspace_id"] == workspace_id
    });
    ok_valid(
        &env,
        "workspace.rename",
        json!({"workspace_id": workspace_id, "label": "renamed"}),
    );
    let renamed = next_event(&mut events, |event| is_event(event, "workspace_renamed"));
    assert_eq!(renamed["data"]["label"], "renamed");
    let tab = ok_valid(
        &env,
        "tab.create",
        json!({"workspace_id": workspace_id, "command": ["sh"]}),
    );
    let tab_id = tab["tab"]["tab_id"].as_str().unwrap().to_string();
    next_event(&mut events, |event| {
        is_event(event, "tab_created") && event["data"]["tab"]["tab_id"] == tab_id
    });
    ok_valid(&env, "tab.close", json!({"tab_id": tab_id}));
    next_event(&mut events, |event| {
        is_event(event, "pane_closed") && event["data"]["pane_id"] == tab["root_pane"]["pane_id"]
    });
    next_event(&mut events, |event| {
        is_event(event, "tab_closed") && event["data"]["tab_id"] == tab_id
    });
    ok_valid(
        &env,
        "workspace.close",
        json!({"workspace_id": workspace_id}),
    );
    let closed = next_event(&mut events, |event| is_event(event, "workspace_closed"));
    assert_eq!(closed["data"]["workspace_id"], workspace_id.as_str());

    // A subscription that cannot start is refused and starts nothing; the connection stays.
    let mut stream = UnixStream::connect(&env.socket).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let bad = json!({"id": "bad", "method": "events.subscribe", "params": {"subscriptions": [
        {"type": "pane.output_matched", "pane_id": watched_id, "source": "recent", "match": {"type": "regex", "value": "(unclosed"}}]}});
    stream
        .write_all(
            format!(
                "{bad}\n{}\n",
                json!({"id": "after", "method": "ping", "params": {}})
            )
            .as_bytes(),
        )
        .unwrap();
    let mut reader = BufReader::new(stream);
    let refused = TestEnv::read_line_from(&mut reader).unwrap();
    assert_pane_response_valid(&refused);
    assert_eq!(refused["error"]["code"], "invalid_regex");
    assert_eq!(
        TestEnv::read_line_from(&mut reader).unwrap()["result"]["type"],
        "pong"
    );
}

#[test]
fn a_subscriber_that_falls_behind_is_told_and_keeps_its_stream() {
    let mut env = TestEnv::new();
    env.start_server();
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    // Subscribe and then read nothing while far more events than the bus holds happen.
    let mut events = subscribe(
        &env,
        json!([{"type": "pane.updated"}, {"type": "workspace.created"}]),
    );
    let mut client = env.client();
    for index in 0..10_000 {
        client
            .request(
                "pane.rename",
                json!({"pane_id": id, "label": format!("label-{index}")}),
            )
            .unwrap();
    }
    ok_valid(&env, "workspace.create", json!({"command": ["sh"]}));
    let mut lag = None;
    let last = loop {
        let event = TestEnv::read_line_from(&mut events).expect("the stream stays open");
        assert_event_valid(&event);
        if is_event(&event, "events.lagged") && lag.is_none() {
            lag = Some(event.clone());
        }
        if is_event(&event, "workspace_created") {
            break event;
        }
    };
    let lag = lag.expect("the subscriber is told that it fell behind");
    assert!(lag["data"]["missed"].as_u64().unwrap() > 0, "{lag}");
    assert_eq!(
        last["data"]["workspace"]["workspace_id"], "w2",
        "the stream goes on after the lag"
    );
    assert_eq!(
        ok_valid(&env, "pane.get", json!({"pane_id": id}))["pane"]["label"],
        "label-9999",
        "the server kept serving"
    );
}

#[test]
fn bad_input_gets_a_clear_code_and_changes_nothing() {
    let mut env = TestEnv::new();
    env.start_server();
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": id, "text": "echo ready-$((1+1))", "keys": ["enter"]}),
    );
    // The shell is idle once its prompt follows the output; then take the state every
    // refusal below must leave alone.
    wait_for_read(&env, &id, "visible", None, |text| {
        text.split_once("ready-2")
            .is_some_and(|(_, after)| has_line(after, SHELL_PROMPT.trim()))
    });
    let screen_before = read(&env, &id, "recent", Some(10_000));
    let snapshot_before = ok_valid(&env, "session.snapshot", json!({}));

    for (method, params) in [
        ("pane.get", json!({"pane_id": "w9:p9"})),
        (
            "pane.read",
            json!({"pane_id": "w9:p9", "source": "visible"}),
        ),
        ("pane.send_text", json!({"pane_id": "w9:p9", "text": "x"})),
        (
            "pane.send_keys",
            json!({"pane_id": "w9:p9", "keys": ["enter"]}),
        ),
        ("pane.close", json!({"pane_id": "w9:p9"})),
        ("pane.rename", json!({"pane_id": "w9:p9", "label": "x"})),
        ("pane.process_info", json!({"pane_id": "w9:p9"})),
        (
            "pane.wait_for_output",
            json!({"pane_id": "w9:p9", "source": "recent", "match": {"type": "substring", "value": "x"}}),
        ),
    ] {
        assert_eq!(
            error_valid(&env, method, params),
            "pane_not_found",
            "{method}"
        );
    }
    assert_eq!(
        error_valid(&env, "workspace.get", json!({"workspace_id": "w9"})),
        "workspace_not_found"
    );
    assert_eq!(
        error_valid(&env, "workspace.close", json!({"workspace_id": "w9"})),
        "workspace_not_found"
    );
    assert_eq!(
        error_valid(&env, "tab.get", json!({"tab_id": "w9:t9"})),
        "tab_not_found"
    );
    assert_eq!(
        error_valid(&env, "tab.create", json!({"workspace_id": "w9"})),
        "workspace_not_found"
    );
    // A bad combo anywhere in the list means nothing is written, not even the good keys.
    for keys in [
        json!(["e", "enter", "ctrl+"]),
        json!(["hyper+q"]),
        json!(["notakey"]),
        json!(["ctrl+alt+"]),
    ] {
        let response = call_valid(&env, "pane.send_keys", json!({"pane_id": id, "keys": keys}));
        assert_eq!(
            response["error"]["code"], "invalid_key",
            "{keys}: {response}"
        );
    }
    let response = call_valid(
        &env,
        "pane.wait_for_output",
        json!({"pane_id": id, "source": "recent", "match": {"type": "regex", "value": "(unclosed"}}),
    );
    assert_eq!(response["error"]["code"], "invalid_regex");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("(unclosed")
    );
    for lines in [0, 10_001] {
        assert_eq!(
            error_valid(
                &env,
                "pane.read",
                json!({"pane_id": id, "source": "visible", "lines": lines})
            ),
            "invalid_params"
        );
    }
    assert_eq!(
        error_valid(&env, "pane.read", json!({"pane_id": id})),
        "invalid_params",
        "source is required"
    );
    assert_eq!(
        error_valid(
            &env,
            "pane.read",
            json!({"pane_id": id, "source": "detection"})
        ),
        "feature_unavailable"
    );
    assert_eq!(
        error_valid(&env, "workspace.create", json!({"cwd": "relative/dir"})),
        "invalid_params"
    );
    assert_eq!(
        error_valid(
            &env,
            "workspace.create",
            json!({"command": ["/nonexistent/program"]})
        ),
        "pane_spawn_failed"
    );
    for method in [
        "pane.split",
        "pane.zoom",
        "pane.layout",
        "layout.export",
        "plugin.list",
        "pane.graphics.set",
    ] {
        let response = call_valid(&env, method, json!({}));
        assert_eq!(response["error"]["code"], "feature_unavailable", "{method}");
        assert!(
            response["error"]["message"]
                .as_str()
                .unwrap()
                .contains(method),
            "{response}"
        );
    }

    let screen_after = read(&env, &id, "recent", Some(10_000));
    assert_eq!(screen_after, screen_before, "nothing reached the pane");
    let snapshot_after = ok_valid(&env, "session.snapshot", json!({}));
    assert_eq!(
        snapshot_after["snapshot"]["workspaces"], snapshot_before["snapshot"]["workspaces"],
        "no workspace appeared"
    );
    assert_eq!(
        snapshot_after["snapshot"]["panes"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn the_cli_lists_reads_types_waits_and_closes() {
    let mut env = TestEnv::new();
    env.start_server();
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    let workspaces = env.nagi_ok(&["workspace", "list"]);
    assert!(
        workspaces
            .stdout
            .lines()
            .any(|line| line.starts_with("w1 ")),
        "{}",
        workspaces.describe()
    );
    let listed = env.nagi_ok(&["--json", "pane", "list"]).json();
    assert_eq!(listed["panes"][0]["pane_id"], id.as_str());
    let human = env.nagi_ok(&["pane", "list"]);
    assert!(
        human.stdout.contains(&id) && human.stdout.contains("running (pid"),
        "{}",
        human.describe()
    );

    env.nagi_ok(&["pane", "send", &id, "echo cli-$((3*4))", "--enter"]);
    let waited = env.nagi_ok(&[
        "wait",
        "output",
        &id,
        "--match",
        "^cli-\\d+$",
        "--timeout",
        "60",
    ]);
    assert_eq!(waited.stdout.trim(), "cli-12", "{}", waited.describe());
    let read = env.nagi_ok(&["pane", "read", &id, "--source", "recent", "--lines", "50"]);
    assert!(has_line(&read.stdout, "cli-12"), "{}", read.describe());
    let unwrapped = env.nagi_ok(&["pane", "read", &id, "--source", "recent-unwrapped"]);
    assert!(
        has_line(&unwrapped.stdout, "cli-12"),
        "{}",
        unwrapped.describe()
    );

    env.nagi_ok(&["pane", "send", &id, "echo typed-by-keys"]);
    env.nagi_ok(&["pane", "keys", &id, "enter"]);
    env.nagi_ok(&[
        "wait",
        "output",
        &id,
        "--match",
        "^typed-by-keys$",
        "--timeout",
        "60",
    ]);

    let timed_out = env.nagi(&[
        "wait",
        "output",
        &id,
        "--match",
        "never-printed",
        "--timeout",
        "0.3",
    ]);
    assert_eq!(
        timed_out.status,
        4,
        "a timeout exits 4:\n{}",
        timed_out.describe()
    );
    let bad_regex = env.nagi(&["wait", "output", &id, "--match", "(", "--timeout", "1"]);
    assert_eq!(bad_regex.status, 1, "{}", bad_regex.describe());
    assert!(
        bad_regex.stderr.contains("invalid_regex"),
        "{}",
        bad_regex.describe()
    );
    let bad_key = env.nagi(&["pane", "keys", &id, "ctrl+"]);
    assert_eq!(bad_key.status, 1);
    assert!(
        bad_key.stderr.contains("invalid_key"),
        "{}",
        bad_key.describe()
    );
    let missing = env.nagi(&["--json", "pane", "read", "w9:p9"]);
    assert_eq!(missing.status, 1);
    assert_eq!(missing.json()["error"]["code"], "pane_not_found");
    let no_terminal = env.nagi(&["pane", "attach", &id]);
    assert_eq!(
        no_terminal.status,
        2,
        "attach without a terminal is a usage error:\n{}",
        no_terminal.describe()
    );

    let closed = env.nagi_ok(&["pane", "close", &id]);
    assert!(
        closed.stdout.contains("closed pane"),
        "{}",
        closed.describe()
    );
    assert!(
        env.nagi_ok(&["--json", "pane", "list"]).json()["panes"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let help = env.nagi_ok(&["pane", "attach", "--help"]);
    assert!(
        help.stdout.contains("Ctrl-\\"),
        "the detach key is documented:\n{}",
        help.stdout
    );
}

#[test]
fn the_schema_document_lists_the_pane_methods_and_events() {
    let env = TestEnv::new();
    let schema = env.nagi_ok(&["api", "schema", "--json"]).json();
    let methods: Vec<&str> = schema["methods"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|method| method["name"].as_str())
        .collect();
    for method in [
        "workspace.create",
        "workspace.list",
        "workspace.get",
        "workspace.rename",
        "workspace.close",
        "tab.create",
        "tab.list",
        "tab.get",
        "tab.rename",
        "tab.close",
        "session.snapshot",
        "pane.list",
        "pane.get",
        "pane.current",
        "pane.read",
        "pane.send_text",
        "pane.send_keys",
        "pane.send_input",
        "pane.wait_for_output",
        "pane.process_info",
        "pane.rename",
        "pane.close",
        "pane.report_agent",
        "pane.report_agent_session",
        "pane.report_metadata",
    ] {
        assert!(
            methods.contains(&method),
            "{method} is missing from the schema"
        );
    }
    let request = json!({"id": "1", "method": "events.subscribe", "params": {"subscriptions": [{"type": "pane.exited"}]}});
    crate::schema::validate(&schema, "request", &request).unwrap();
    for code in [
        "pane_exited",
        "pane_io_failed",
        "invalid_key",
        "not_controller",
        "resize_too_small",
    ] {
        assert!(
            schema["error_codes"].get(code).is_some(),
            "{code} is missing"
        );
    }
}

/// A pane id names one pane in a session's lifetime, restarts included: after the server
/// is killed and started again, new workspaces do not reuse the ids of the old ones (a
/// mission that recorded `w1:p1` must never find another mission's run there).
#[test]
fn pane_ids_are_not_reused_after_a_restart() {
    let mut env = TestEnv::new();
    env.start_server();
    let first = start_pane(&env, &["sleep", "30"]);
    let second = start_pane(&env, &["sleep", "30"]);
    assert_eq!(first["pane_id"], "w1:p1", "{first}");
    assert_eq!(second["pane_id"], "w2:p1", "{second}");
    env.kill_server();
    env.start_server();
    let after = start_pane(&env, &["sleep", "30"]);
    let after_id = after["pane_id"].as_str().unwrap_or_default().to_string();
    assert!(
        after_id != "w1:p1" && after_id != "w2:p1",
        "a pane id of before the restart names a new pane: {after}"
    );
    assert_eq!(
        after_id, "w3:p1",
        "numbering goes on from the highest one handed out"
    );
}
