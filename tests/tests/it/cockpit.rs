//! `nagi cockpit` driven in tmux like a person would: keys in with `send-keys`, the
//! screen read with `capture-pane`. The tmux server is started by the test process, a
//! sibling of the nagi server (not its descendant) on a terminal that is not a managed
//! pane, so the server accepts its consent. Every wait polls with a deadline.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nagi_tests::*;
use serde_json::{Value, json};

use crate::panes::PATIENCE;
use crate::tmux::Tmux;

/// Points every provider at its fake program with `script`; returns the fake's log path.
fn configure_fakes(env: &TestEnv, script: &Value) -> PathBuf {
    std::fs::create_dir_all(&env.config_dir).unwrap();
    let log = fake_log_path(env);
    let fake_env = format!(
        "NAGI_FAKE_SCRIPT = {}, NAGI_FAKE_LOG = {}",
        toml_string(&script.to_string()),
        toml_string(log.to_str().unwrap())
    );
    let mut config = String::new();
    for (section, binary) in [
        ("codex", "fake_codex"),
        ("claude_code", "fake_claude"),
        ("open_code", "fake_opencode"),
        ("acp", "fake_acp"),
    ] {
        config.push_str(&format!(
            "[providers.{section}]\ncommand = [{}]\nenv = {{ {fake_env} }}\n\n",
            toml_string(test_binary(binary).to_str().unwrap())
        ));
    }
    std::fs::write(
        env.config_dir.join("config.toml"),
        format!("{config}{}", fake_sandbox_section(env)),
    )
    .unwrap();
    log
}

fn command_check() -> Value {
    json!({"kind": "command", "id": "unit", "program": "test", "args": ["-f", "README.md"], "cwd": ".", "relevant_paths": [],
           "required_artifacts": [], "required": true, "covers": [0, 1]})
}

fn manual_check() -> Value {
    json!({"kind": "manual", "id": "review", "reviewers": ["local-user"], "required": true, "covers": [0, 1]})
}

struct Session {
    env: TestEnv,
    repo: TestRepo,
    log: PathBuf,
}

fn session(script: Value, checks: Value) -> Session {
    let mut env = TestEnv::new();
    let log = configure_fakes(&env, &script);
    env.start_server();
    let repo = TestRepo::new();
    env.ok("mission.create", create_params("m1", &repo.path_text()));
    env.ok(
        "mission.configure",
        json!({"mission_id": "m1", "checks": checks}),
    );
    Session { env, repo, log }
}

fn start_public(env: &TestEnv) {
    env.ok("mission.start", json!({"mission_id": "m1", "run_id": "r1", "provider": "codex", "mode": "managed", "execute_declared_checks": true}));
}

/// `nagi cockpit` for `env`'s session, as a shell command (temp paths have no blanks).
fn cockpit_invocation(env: &TestEnv) -> String {
    format!(
        "env -u TMUX -u NAGI_SOCKET_PATH -u NAGI_SESSION NAGI_CONFIG_DIR={} HOME={} {} cockpit",
        env.config_dir.display(),
        env.home().display(),
        nagi_binary().display()
    )
}

/// The tmux window's command: the cockpit, then how it ended.
fn cockpit_command(env: &TestEnv) -> String {
    format!(
        "{}; echo cockpit-exited-$?; sleep 600",
        cockpit_invocation(env)
    )
}

/// The cockpit running in a tmux window of 160 × 48.
pub(crate) struct Cockpit {
    tmux: Tmux,
}

impl Cockpit {
    /// `None` (with the reason printed) when tmux is missing.
    pub(crate) fn open(env: &TestEnv) -> Option<Cockpit> {
        Cockpit::open_with(env, &cockpit_command(env))
    }

    /// The cockpit started by `command` (which must run it) in the tmux window.
    fn open_with(env: &TestEnv, command: &str) -> Option<Cockpit> {
        let tmux = Tmux::start(&env.root())?;
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "160",
            "-y",
            "48",
            command,
        ]);
        let cockpit = Cockpit { tmux };
        cockpit.wait_for("the cockpit's first snapshot", |screen| {
            screen.contains("Missions (") && screen.contains("server connected")
        });
        Some(cockpit)
    }

    pub(crate) fn keys(&self, keys: &[&str]) {
        for key in keys {
            self.tmux.run(&["send-keys", "-t", "t", key]);
        }
    }

    fn type_text(&self, text: &str) {
        self.tmux.run(&["send-keys", "-t", "t", "-l", text]);
    }

    pub(crate) fn wait_for(&self, what: &str, accept: impl Fn(&str) -> bool) -> String {
        self.tmux.wait_for("t", what, accept)
    }

    pub(crate) fn wait_shows(&self, needles: &[&str]) -> String {
        self.wait_for(&format!("{needles:?}"), |screen| {
            needles.iter().all(|needle| screen.contains(needle))
        })
    }
}

/// Polls until `condition` holds, with a deadline.
fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "{what} did not happen in time");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn first_item(env: &TestEnv) -> Value {
    env.ok("attention.list", json!({"mission_id": "m1"}))["items"][0].clone()
}

/// The mission view without the time it last changed.
fn mission_without_time(env: &TestEnv) -> Value {
    let mut mission = env.ok("mission.get", json!({"mission_id": "m1"}))["mission"].clone();
    mission.as_object_mut().unwrap().remove("updated_at_millis");
    mission
}

/// Every durable event's kind, in order.
fn event_kinds(env: &TestEnv) -> Vec<String> {
    let connection = rusqlite::Connection::open_with_flags(
        env.database_path(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut statement = connection
        .prepare("SELECT kind FROM events ORDER BY seq")
        .unwrap();
    statement
        .query_map([], |row| row.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

pub(crate) fn consent_decisions(env: &TestEnv) -> Vec<(String, String)> {
    let connection = rusqlite::Connection::open_with_flags(
        env.database_path(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut statement = connection
        .prepare("SELECT subject, decision FROM consents ORDER BY at_millis")
        .unwrap();
    statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// From the main screen: open the first attention item, choose the second option, preview.
fn answer_second_option(cockpit: &Cockpit) {
    cockpit.keys(&["Tab", "Enter"]);
    cockpit.wait_shows(&["Answer the provider", "Which database?", "( ) postgres"]);
    cockpit.keys(&["Down", "Space"]);
    cockpit.wait_shows(&["(•) postgres"]);
    cockpit.keys(&["Enter"]);
    cockpit.wait_shows(&[
        "Consent — read what this authorises",
        "your answer: postgres",
        "digest ",
    ]);
}

#[test]
fn answering_a_question_in_the_cockpit_lets_the_provider_continue() {
    let script = json!([{"ask": {"question": "Which database?", "header": "DB", "options": ["sqlite", "postgres"], "multiple": false}}, {"text": "thanks"}]);
    let s = session(script, json!([command_check()]));
    start_public(&s.env);
    wait_for_mission(&s.env, "m1", "a question", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    let Some(cockpit) = Cockpit::open(&s.env) else {
        return;
    };
    let screen = cockpit.wait_shows(&[
        "Attention (1)",
        "[low]",
        "Which database?",
        "consent can be given here",
    ]);
    assert!(screen.contains("help"), "the keys are on screen:\n{screen}");
    answer_second_option(&cockpit);
    cockpit.keys(&["y"]);
    let mission = wait_for_mission(&s.env, "m1", "ready_to_close after the answer", |mission| {
        mission["status"] == "ready_to_close"
    });
    assert_eq!(mission["unresolved_attention_count"], 0);
    let answers: Vec<Value> = log_entries(&s.log)
        .into_iter()
        .filter(|entry| entry["event"] == "answers")
        .collect();
    assert_eq!(answers.len(), 1, "one answer reached the provider");
    assert!(answers[0].to_string().contains("postgres"), "{answers:?}");
    let screen = cockpit.wait_shows(&["ready_to_close", "Attention (0)"]);
    assert!(
        screen.contains("approved"),
        "the outcome is reported:\n{screen}"
    );
    assert_eq!(
        consent_decisions(&s.env),
        vec![("respond".to_string(), "approve".to_string())]
    );
}

#[test]
fn manual_evidence_recorded_in_the_cockpit_passes_the_check() {
    let s = session(json!([{"text": "done"}]), json!([manual_check()]));
    start_public(&s.env);
    wait_for_mission(&s.env, "m1", "review_required", |mission| {
        mission["status"] == "review_required" && mission["run"]["live"] == false
    });
    let Some(cockpit) = Cockpit::open(&s.env) else {
        return;
    };
    cockpit.wait_shows(&["review_required", "manual_missing"]);
    cockpit.keys(&["e"]);
    cockpit.wait_shows(&["Manual evidence", "‹ review ›", "local-user"]);
    cockpit.keys(&["Down", "Down"]);
    cockpit.type_text("I read the diff");
    cockpit.wait_shows(&["I read the diff"]);
    cockpit.keys(&["Enter"]);
    cockpit.wait_shows(&[
        "Record review",
        "reviewer: local-user",
        "reason: I read the diff",
        "it covers the workspace as it is now",
        "digest ",
    ]);
    cockpit.keys(&["y"]);
    let mission = wait_for_mission(&s.env, "m1", "ready_to_close", |mission| {
        mission["status"] == "ready_to_close"
    });
    assert_eq!(mission["checks"][0]["status"], "passed");
    assert_eq!(mission["evidence"][0]["kind"], "manual");
    assert_eq!(mission["evidence"][0]["reviewer"], "local-user");
    cockpit.wait_shows(&["ready_to_close", "reviewer local-user"]);
}

#[test]
fn an_acp_mission_started_with_write_scope_writes_in_the_worktree() {
    let script = json!([{"write_file": {"path": "written-by-acp.txt", "content": "hello from the agent\n"}}, {"text": "wrote it"}]);
    let s = session(script, json!([command_check()]));
    let Some(cockpit) = Cockpit::open(&s.env) else {
        return;
    };
    cockpit.keys(&["s"]);
    cockpit.wait_shows(&["Start a run", "‹ codex ›"]);
    cockpit.keys(&["Right", "Right", "Right"]);
    cockpit.wait_shows(&["‹ acp ›", "[x] always, for an ACP agent"]);
    cockpit.keys(&["Enter"]);
    cockpit.wait_shows(&[
        "[high] Start r1",
        "ACP agent (acp)",
        "MAY CHANGE FILES",
        "made now for this mission, on a new branch mission/m1 from HEAD",
        "digest ",
    ]);
    cockpit.keys(&["y"]);
    // The run works in the mission's own worktree, not in the person's checkout.
    let started = wait_for_mission(&s.env, "m1", "the mission worktree", |mission| {
        mission["worktree"]["state"] == "present"
    });
    let target = std::path::Path::new(started["worktree"]["path"].as_str().unwrap())
        .join("written-by-acp.txt");
    eventually("the agent's file in the worktree", || target.exists());
    assert!(!s.repo.path.join("written-by-acp.txt").exists());
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "hello from the agent\n"
    );
    let mission = wait_for_mission(&s.env, "m1", "the end of the ACP run", |mission| {
        mission["run"]["live"] == false
            && mission["status"] != "preparing"
            && mission["status"] != "active"
    });
    assert_eq!(mission["run"]["provider"], "acp");
    assert_eq!(mission["run"]["enforcement"], "workspace_write");
    cockpit.wait_shows(&["r1 · acp", "workspace_write"]);
    // The mission's diff: the new file, then its hunk; Esc goes back.
    cockpit.keys(&["d"]);
    cockpit.wait_shows(&[
        "Diff of m1",
        "branch mission/m1",
        "1 file changed, +1 -0",
        "A +1 -0",
        "written-by-acp.txt  (untracked)",
        "+hello from the agent",
    ]);
    cockpit.keys(&["Escape"]);
    cockpit.wait_for("the main screen again", |screen| {
        !screen.contains("Diff of m1")
    });
}

#[test]
fn denying_in_the_cockpit_changes_nothing_but_the_consent_record() {
    // A denied start: no run, no provider.
    let s = session(
        json!([{"approve_command": "rm -rf build"}]),
        json!([command_check()]),
    );
    let Some(cockpit) = Cockpit::open(&s.env) else {
        return;
    };
    let (events_before, _) = s.env.store_fingerprint();
    let mission_before = mission_without_time(&s.env);
    cockpit.keys(&["s"]);
    cockpit.wait_shows(&["Start a run"]);
    cockpit.keys(&["Enter"]);
    cockpit.wait_shows(&["Start r1", "the run is read-only", "digest "]);
    cockpit.keys(&["n"]);
    cockpit.wait_shows(&["denied", "nothing was done"]);
    assert_eq!(
        mission_without_time(&s.env),
        mission_before,
        "the mission did not change"
    );
    assert_eq!(
        event_kinds(&s.env)[events_before as usize..].to_vec(),
        vec!["consent_recorded".to_string()]
    );
    assert_eq!(
        consent_decisions(&s.env),
        vec![("start_run".to_string(), "deny".to_string())]
    );
    assert!(log_entries(&s.log).is_empty(), "no provider started");

    // A denied answer: the provider hears nothing and the item stays open.
    start_public(&s.env);
    wait_for_mission(&s.env, "m1", "an approval", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    cockpit.wait_shows(&["Attention (1)", "rm -rf build"]);
    let (events_before, _) = s.env.store_fingerprint();
    cockpit.keys(&["Tab", "Enter"]);
    cockpit.wait_shows(&["Answer the provider", "approve once"]);
    cockpit.keys(&["o"]);
    cockpit.wait_shows(&["decision: approve this once", "digest "]);
    cockpit.keys(&["n"]);
    cockpit.wait_shows(&["denied", "nothing was done"]);
    assert_eq!(
        event_kinds(&s.env)[events_before as usize..].to_vec(),
        vec!["consent_recorded".to_string()]
    );
    let item = first_item(&s.env);
    assert_eq!(item["state"]["state"], "open");
    assert_eq!(
        s.env.ok("mission.get", json!({"mission_id": "m1"}))["mission"]["status"],
        "active"
    );
    // Denying the request itself does reach the provider, and it is the only decision it
    // ever hears: the denied approval before it never went out.
    let deny_request = json!({"kind": "respond", "mission_id": "m1", "run_id": "r1",
                              "attention_id": item["attention_id"], "decision": "deny"});
    let shown = s.env.ok("cockpit.preview", json!({"action": deny_request}))["preview"].clone();
    s.env.ok(
        "cockpit.decide",
        json!({"action": deny_request, "shown_digest": shown["digest"], "decision": "approve"}),
    );
    wait_for_mission(
        &s.env,
        "m1",
        "the turn went on after the denial",
        |mission| mission["status"] == "review_required" || mission["status"] == "ready_to_close",
    );
    let decisions: Vec<Value> = log_entries(&s.log)
        .into_iter()
        .filter(|entry| entry["event"] == "decision")
        .collect();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert!(
        decisions[0].to_string().contains("decline") || decisions[0].to_string().contains("deny"),
        "{decisions:?}"
    );
}

const RECIPE: &str = r#"schema = 1
[worktree]
copy_ignored = [".env.example"]
[setup]
command = ["sh", "-c", "echo set-up > setup-ran.txt"]
[services.web]
command = ["sh", "-c", "exec python3 -m http.server --bind 127.0.0.1 $WEB_PORT"]
port_env = "WEB_PORT"
health = "http://127.0.0.1:{port}/"
[[cleanup]]
command = ["rm", "-f", "setup-ran.txt"]
"#;

/// From the main screen: start form, recipe on, preview; waits for the recipe's scope.
fn preview_recipe_start(cockpit: &Cockpit) -> String {
    cockpit.keys(&["s"]);
    cockpit.wait_shows(&["Start a run"]);
    cockpit.keys(&["Down", "Down", "Down", "Down", "Down", "Space"]);
    cockpit.wait_shows(&["[x] run .nagi/project.toml setup and services"]);
    cockpit.keys(&["Enter"]);
    cockpit.wait_shows(&[
        "Project recipe",
        "setup runs: sh -c \"echo set-up > setup-ran.txt\"",
        "service web starts: sh -c",
        "port in $WEB_PORT, healthy when http://127.0.0.1:{port}/ answers",
        "copies ignored file .env.example",
        "cleanup runs: rm -f setup-ran.txt",
        "scope digest ",
        "digest ",
    ])
}

#[test]
fn the_recipe_consent_shows_its_whole_scope_and_a_denial_runs_nothing() {
    let s = session(json!([{"text": "done"}]), json!([command_check()]));
    s.repo.write(".nagi/project.toml", RECIPE);
    let Some(cockpit) = Cockpit::open(&s.env) else {
        return;
    };
    let screen = preview_recipe_start(&cockpit);
    assert!(
        screen.contains("recipe service web"),
        "the server's own lines are shown too:\n{screen}"
    );
    cockpit.keys(&["n"]);
    cockpit.wait_shows(&["denied", "nothing was done"]);
    assert!(
        !s.repo.path.join("setup-ran.txt").exists(),
        "the setup did not run"
    );
    assert!(log_entries(&s.log).is_empty(), "no provider started");
    assert_eq!(
        s.env.ok("mission.get", json!({"mission_id": "m1"}))["mission"]["status"],
        "draft"
    );
}

#[test]
fn an_approved_recipe_runs_setup_and_its_services_turn_healthy() {
    let s = session(json!([{"text": "done"}]), json!([command_check()]));
    // A committed recipe: the mission worktree is made from HEAD and holds it too.
    s.repo.write(".nagi/project.toml", RECIPE);
    git(&s.repo.path, &["add", ".nagi"]);
    git(&s.repo.path, &["commit", "-q", "-m", "recipe"]);
    let _services = crate::recipe_runs::StopServicesOnDrop(&s.env);
    let Some(cockpit) = Cockpit::open(&s.env) else {
        return;
    };
    preview_recipe_start(&cockpit);
    cockpit.keys(&["y"]);
    let started = wait_for_mission(&s.env, "m1", "the mission worktree", |mission| {
        mission["worktree"]["state"] == "present"
    });
    let marker =
        std::path::Path::new(started["worktree"]["path"].as_str().unwrap()).join("setup-ran.txt");
    eventually("the recipe's setup ran in the mission worktree", || {
        marker.exists()
    });
    assert!(
        !s.repo.path.join("setup-ran.txt").exists(),
        "not in the person's checkout"
    );
    let mission = wait_for_mission(&s.env, "m1", "the run after the recipe", |mission| {
        mission["run"]["execute_project_recipe"] == true && mission["status"] != "preparing"
    });
    assert_ne!(mission["status"], "failed", "{mission}");
    cockpit.wait_shows(&["runs declared checks and project recipe"]);
}

#[test]
fn an_item_open_before_a_crash_is_settled_in_the_cockpit_after_the_restart() {
    let script = json!([{"ask": {"question": "Which database?", "header": "DB", "options": ["sqlite", "postgres"], "multiple": false}}, {"text": "thanks"}]);
    let mut s = session(script, json!([command_check()]));
    start_public(&s.env);
    wait_for_mission(&s.env, "m1", "a question", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    let Some(cockpit) = Cockpit::open(&s.env) else {
        return;
    };
    cockpit.wait_shows(&["Attention (1)", "Which database?"]);
    s.env.kill_server();
    cockpit.wait_shows(&["server unreachable"]);
    s.env.start_server();
    // The resumed provider asks again; the item can be answered once its route is live.
    eventually("the item answerable again", || {
        let item = first_item(&s.env);
        item["state"]["state"] == "open" && item["response_capability"] == "reliable"
    });
    cockpit.wait_shows(&["server connected", "Attention (1)", "Which database?"]);
    answer_second_option(&cockpit);
    cockpit.keys(&["y"]);
    wait_for_mission(&s.env, "m1", "ready_to_close after the answer", |mission| {
        mission["status"] == "ready_to_close"
    });
    let answers: Vec<Value> = log_entries(&s.log)
        .into_iter()
        .filter(|entry| entry["event"] == "answers")
        .collect();
    assert!(
        answers
            .iter()
            .any(|entry| entry.to_string().contains("postgres")),
        "{answers:?}"
    );
}

#[test]
fn watching_a_run_pane_shows_its_transcript_live() {
    let s = session(
        json!([{"text": "reading the readme"}, {"approve_command": "make deploy"}]),
        json!([command_check()]),
    );
    start_public(&s.env);
    wait_for_mission(&s.env, "m1", "an approval", |mission| {
        mission["unresolved_attention_count"] == 1
    });
    let Some(cockpit) = Cockpit::open(&s.env) else {
        return;
    };
    cockpit.keys(&["w"]);
    let screen = cockpit.wait_shows(&["Pane w", "live", "reading the readme"]);
    assert!(screen.contains("w or Esc stops watching"), "{screen}");
    cockpit.keys(&["Escape"]);
    cockpit.wait_for("the mission detail again", |screen| {
        screen.contains("Criteria") && !screen.contains("stops watching")
    });
}

/// `stty -g` of the tmux pane's terminal, written by the shell there.
fn stty_state(cockpit: &Cockpit, path: &Path, marker: &str) -> String {
    cockpit.type_text(&format!(
        "stty -g > {}; echo {marker}-$((1+1))",
        path.display()
    ));
    cockpit.keys(&["Enter"]);
    cockpit.wait_for(marker, |screen| {
        screen
            .lines()
            .any(|line| line.trim_end().ends_with(&format!("{marker}-2")))
    });
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn the_terminal_is_restored_after_quitting_and_after_a_signal() {
    let s = session(json!([{"text": "x"}]), json!([command_check()]));
    let Some(tmux) = Tmux::start(&s.env.root()) else {
        return;
    };
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "t",
        "-x",
        "160",
        "-y",
        "48",
        "env -u TMUX PS1='tmux$ ' sh",
    ]);
    let cockpit = Cockpit { tmux };
    cockpit.wait_shows(&["tmux$"]);
    let root = s.env.root();
    let before = stty_state(&cockpit, &root.join("stty-before"), "saved");
    let pid_file = root.join("cockpit.pid");
    let run = format!(
        "clear; sh -c 'echo $$ > {}; exec {}'; echo ended-$?",
        pid_file.display(),
        cockpit_invocation(&s.env)
    );
    cockpit.type_text(&run);
    cockpit.keys(&["Enter"]);
    cockpit.wait_shows(&["Missions (1)", "server connected"]);
    cockpit.keys(&["q"]);
    cockpit.wait_shows(&["ended-0"]);
    assert_eq!(
        stty_state(&cockpit, &root.join("stty-after-quit"), "quit"),
        before,
        "quitting restores the terminal"
    );

    cockpit.type_text(&run);
    cockpit.keys(&["Enter"]);
    cockpit.wait_shows(&["Missions (1)", "server connected"]);
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: signalling the cockpit this test started (through tmux).
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    cockpit.wait_shows(&["the cockpit ended by signal 15", "ended-143"]);
    assert_eq!(
        stty_state(&cockpit, &root.join("stty-after-signal"), "signal"),
        before,
        "a signal restores the terminal"
    );
}

#[test]
fn the_cockpit_ends_when_its_terminal_goes_away() {
    let s = session(json!([{"text": "x"}]), json!([command_check()]));
    let pid_file = s.env.root().join("cockpit.pid");
    let command = format!(
        "sh -c 'echo $$ > {}; exec {}'",
        pid_file.display(),
        cockpit_invocation(&s.env)
    );
    let Some(cockpit) = Cockpit::open_with(&s.env, &command) else {
        return;
    };
    cockpit.wait_shows(&["Missions (1)"]);
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Closing the window hangs up the cockpit's terminal. A cockpit that missed it would
    // spin on a dead terminal forever, and it would ignore SIGTERM as well.
    cockpit.tmux.run(&["kill-session", "-t", "t"]);
    eventually("the cockpit exiting after its terminal closed", || {
        process_is_gone(pid)
    });
}
