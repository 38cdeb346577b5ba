//! Real missions end to end with each real provider CLI against our own mock model server
//! (issue 4): `mission.start` → the native session is captured → the turn completes →
//! `review_required` (or `ready_to_close` when the declared checks ran) with passing check
//! evidence; a tool call reads a file and its content
//! reaches the model; a tool call tries to write, and the read-only run leaves the workspace
//! byte-for-byte unchanged; and the run resumes after a server restart without replaying
//! the prompt.
//!
//! The CLIs are the pinned ones `.ci/install-providers` puts into
//! `<repo>/.tools/npm/node_modules/.bin/`. A test skips (printing why) only when its CLI is not
//! installed. Every test has its own temp dirs, config dir, socket, throwaway HOME and mock
//! port, so the tests do not depend on `--test-threads`.

mod acp;
mod claude;
mod codex;
mod conversation;
mod interrupt;
mod opencode;
mod resume;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nagi_tests::mock_model::{MockModelConfig, MockModelServer, Scenario};
use nagi_tests::real_cli::*;
use nagi_tests::*;
use serde_json::{Value, json};

/// The README every test repository holds; the read tool must bring this word to the model.
pub const SECRET_WORD: &str = "pomegranate";
pub const README_TEXT: &str = "# demo\n\nThe secret word is pomegranate.\n";
/// The file the write attempts target; it must never appear.
pub const WRITTEN_FILE: &str = "written-by-agent.txt";
/// How long a whole real-CLI turn may take here (OpenCode needs 10–30 s on a cold data dir on
/// two busy cores; the others a few seconds).
pub const TURN_DEADLINE: Duration = Duration::from_secs(180);

/// Writes `<config dir>/config.toml` with one `[providers.<name>]` entry.
pub fn write_provider_config(
    config_dir: &Path,
    provider: RealProvider,
    command: Vec<String>,
    args: Vec<String>,
    env: BTreeMap<String, String>,
) {
    let mut entry = toml::Table::new();
    entry.insert(
        "command".into(),
        toml::Value::Array(command.into_iter().map(toml::Value::String).collect()),
    );
    entry.insert(
        "args".into(),
        toml::Value::Array(args.into_iter().map(toml::Value::String).collect()),
    );
    entry.insert(
        "env".into(),
        toml::Value::Table(
            env.into_iter()
                .map(|(name, value)| (name, toml::Value::String(value)))
                .collect(),
        ),
    );
    let mut providers = toml::Table::new();
    providers.insert(provider.wire_name().into(), toml::Value::Table(entry));
    let mut root = toml::Table::new();
    root.insert("providers".into(), toml::Value::Table(providers));
    std::fs::create_dir_all(config_dir).expect("create the config dir");
    std::fs::write(
        config_dir.join("config.toml"),
        toml::to_string(&root).expect("serialise config.toml"),
    )
    .expect("write config.toml");
}

/// A repository whose README holds the secret word, committed.
pub fn repository_with_readme() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("README.md", README_TEXT);
    git(
        &repo.path,
        &["commit", "-q", "-am", "a README with a secret word"],
    );
    repo
}

/// The scenario of one mission turn: read the README, try to write `WRITTEN_FILE` with
/// `write_call`, then say `final_text` (held back `final_delay_ms`).
pub fn read_write_scenario(
    workspace: &Path,
    write_call: Value,
    final_text: &str,
    final_delay_ms: u64,
) -> Scenario {
    let scenario = json!({
        "workspace": workspace,
        "title": "Mock session",
        "steps": [
            {"call": {"read": {"path": "README.md"}}},
            {"text": "Now trying to write a file.", "call": write_call},
            {"text": final_text, "delay_ms": final_delay_ms}
        ]
    });
    Scenario::from_json(&scenario.to_string()).expect("a valid scenario")
}

pub fn start_mock(scenario: Scenario) -> MockModelServer {
    MockModelServer::start(MockModelConfig {
        scenario,
        log_dir: None,
        port: 0,
    })
    .expect("start the mock model")
}

/// Every file under `root` with its bytes (`.git` included), to prove a run changed nothing.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![root.to_owned()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).expect("read dir") {
            let path = entry.expect("dir entry").path();
            let metadata = std::fs::symlink_metadata(&path).expect("stat");
            if metadata.is_dir() {
                pending.push(path);
            } else {
                let bytes = if metadata.file_type().is_symlink() {
                    std::fs::read_link(&path)
                        .expect("read link")
                        .into_os_string()
                        .into_encoded_bytes()
                } else {
                    std::fs::read(&path).expect("read file")
                };
                files.insert(
                    path.strip_prefix(root).expect("under root").to_owned(),
                    bytes,
                );
            }
        }
    }
    files
}

/// Describes what differs between two snapshots, for a failure message.
pub fn snapshot_difference(
    before: &BTreeMap<PathBuf, Vec<u8>>,
    after: &BTreeMap<PathBuf, Vec<u8>>,
) -> String {
    let mut lines = Vec::new();
    for (path, bytes) in after {
        match before.get(path) {
            None => lines.push(format!("added {}", path.display())),
            Some(old) if old != bytes => lines.push(format!("changed {}", path.display())),
            Some(_) => {}
        }
    }
    for path in before.keys().filter(|path| !after.contains_key(*path)) {
        lines.push(format!("removed {}", path.display()));
    }
    lines.join("\n")
}

/// One test's session: the real server with a provider config, a repository, a CLI home and
/// the mock model.
pub struct RealSession {
    pub env: TestEnv,
    pub repo: TestRepo,
    pub home: CliHome,
    pub mock: MockModelServer,
    pub provider: RealProvider,
}

impl RealSession {
    /// Everything but the server: call [`RealSession::start_server`] next.
    pub fn new(
        provider: RealProvider,
        cli: &Path,
        scenario_for: impl FnOnce(&Path) -> Scenario,
    ) -> RealSession {
        let env = TestEnv::new();
        let repo = repository_with_readme();
        let home = CliHome::new(&env.root());
        let mock = start_mock(scenario_for(&repo.path));
        let cli_env = home.env(provider, &mock.base_url());
        let cli_text = cli.display().to_string();
        let (command, args) = match provider {
            RealProvider::Codex => (vec![cli_text], codex_overrides(&mock.base_url())),
            RealProvider::ClaudeCode | RealProvider::OpenCode => (vec![cli_text], Vec::new()),
            RealProvider::OpenCodeAcp => (vec![cli_text, "acp".to_string()], Vec::new()),
        };
        write_provider_config(&env.config_dir, provider, command, args, cli_env);
        RealSession {
            env,
            repo,
            home,
            mock,
            provider,
        }
    }

    pub fn start_server(&mut self) {
        self.env.start_server();
    }

    /// `mission.create` + `mission.configure` with the check `test -f README.md`.
    pub fn create_configured_mission(&self, mission_id: &str) {
        self.env.ok(
            "mission.create",
            create_params(mission_id, &self.repo.path_text()),
        );
        self.env.ok(
            "mission.configure",
            configure_params(mission_id, "test", &["-f", "README.md"]),
        );
    }

    pub fn start_params(&self, mission_id: &str, run_id: &str) -> Value {
        json!({
            "mission_id": mission_id,
            "run_id": run_id,
            "provider": self.provider.wire_name(),
            "mode": "managed",
            "execute_declared_checks": true,
        })
    }

    /// `mission.start`, read-only over the public socket, with the declared checks consented.
    pub fn start_mission(&self, mission_id: &str, run_id: &str) -> Value {
        self.env
            .ok("mission.start", self.start_params(mission_id, run_id))
    }

    /// Starts the mission's run the way a person would for this provider: an ACP agent
    /// with the write scope granted in the cockpit (preview, then approve what was shown),
    /// any other over the public socket as `start_mission` does.
    pub fn start_run(&self, mission_id: &str, run_id: &str) {
        if self.provider != RealProvider::OpenCodeAcp {
            self.start_mission(mission_id, run_id);
            return;
        }
        let action = json!({"kind": "start_run", "mission_id": mission_id, "run_id": run_id,
                            "provider": "acp", "write_scope": true, "execute_declared_checks": true});
        let shown = self.env.ok("cockpit.preview", json!({"action": action}))["preview"].clone();
        self.env.ok(
            "cockpit.decide",
            json!({"action": action, "shown_digest": shown["digest"], "decision": "approve"}),
        );
    }

    pub fn mission(&self, mission_id: &str) -> Value {
        self.env
            .ok("mission.get", json!({"mission_id": mission_id}))["mission"]
            .clone()
    }

    /// Waits (up to the turn deadline) for the mission to reach `status`, failing early when it
    /// settles somewhere else.
    pub fn wait_for_status(&self, mission_id: &str, status: &str) -> Value {
        self.wait_for_any_status(mission_id, &[status])
    }

    /// Waits (up to the turn deadline) for the mission to reach one of `statuses`.
    pub fn wait_for_any_status(&self, mission_id: &str, statuses: &[&str]) -> Value {
        let status = statuses.join(" or ");
        let deadline = Instant::now() + TURN_DEADLINE;
        let mut last = Value::Null;
        while Instant::now() < deadline {
            let mission = self.mission(mission_id);
            if statuses.iter().any(|wanted| mission["status"] == *wanted) {
                return mission;
            }
            if matches!(mission["status"].as_str(), Some("failed" | "blocked")) {
                panic!(
                    "mission {mission_id} became {} while waiting for {status}:\n{}\n--- transcript\n{}",
                    mission["status"],
                    serde_json::to_string_pretty(&mission).unwrap(),
                    self.transcript_text(&mission)
                );
            }
            last = mission;
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "mission {mission_id} never became {status}; last view:\n{}\n--- transcript\n{}",
            serde_json::to_string_pretty(&last).unwrap(),
            self.transcript_text(&last)
        );
    }

    /// Waits until the turn is over and the checks have finished (the evidence of every
    /// declared check is recorded): the mission is `review_required`, or `ready_to_close`
    /// when the declared checks ran and the proof verified.
    pub fn wait_for_review_with_evidence(&self, mission_id: &str) -> Value {
        self.wait_for_any_status(mission_id, &["review_required", "ready_to_close"]);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let mission = self.mission(mission_id);
            let recorded = mission["evidence"].as_array().map(Vec::len).unwrap_or(0);
            if recorded >= mission["declared_check_count"].as_u64().unwrap_or(1) as usize
                && self.checks_finished(mission_id)
            {
                return mission;
            }
            assert!(
                Instant::now() < deadline,
                "the declared checks never finished:\n{}",
                serde_json::to_string_pretty(&mission).unwrap()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn checks_finished(&self, mission_id: &str) -> bool {
        let kinds: Vec<String> = self
            .mission_events(mission_id)
            .iter()
            .filter_map(|event| event["event"].as_str().map(String::from))
            .collect();
        let started = kinds
            .iter()
            .filter(|kind| kind.as_str() == "mission_checks_started")
            .count();
        let finished = kinds
            .iter()
            .filter(|kind| kind.as_str() == "mission_checks_finished")
            .count();
        started > 0 && started == finished
    }

    /// Every durable event of the mission so far, replayed through `events.subscribe`.
    pub fn mission_events(&self, mission_id: &str) -> Vec<Value> {
        mission_events(&self.env, mission_id)
    }

    /// The run's stored record in `missions.doc`, read straight from the database.
    pub fn stored_run(&self, mission_id: &str) -> Value {
        stored_mission_doc(&self.env, mission_id)["run"].clone()
    }

    /// The run pane's text, or a note why there is none.
    /// The agent's text as the run's console got it streamed (its `agent_delta` records
    /// joined), beside the run's transcript.
    pub fn streamed_agent_text(&self, mission_id: &str, run_id: &str) -> String {
        let records = self
            .env
            .config_dir
            .join("transcripts")
            .join(mission_id)
            .join(format!("{run_id}.console.jsonl"));
        std::fs::read_to_string(&records)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", records.display()))
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|record| record["kind"] == "agent_delta")
            .map(|record| record["text"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    pub fn transcript_text(&self, mission: &Value) -> String {
        match self.pane_text(mission) {
            Ok(text) => text,
            Err(error) => error,
        }
    }

    /// What the run's pane shows (`pane.read` of `run.pane_id`). While this server does not
    /// serve the pane methods on its socket yet (they arrive with the `panes2` branch), the
    /// transcript file the pane follows with `tail -F` is read instead, and that is said.
    fn pane_text(&self, mission: &Value) -> Result<String, String> {
        let Some(pane_id) = mission["run"]["pane_id"].as_str() else {
            return Err(format!("(the run view has no pane_id: {mission})"));
        };
        match read_pane(&self.env, pane_id) {
            Ok(text) => Ok(text),
            Err(error) if error.contains("unknown method") && error.contains("pane.read") => {
                eprintln!(
                    "note: this server does not serve pane.read yet; reading the transcript file the pane {pane_id} follows"
                );
                let run_id = mission["run"]["run_id"].as_str().unwrap_or_default();
                let mission_id = mission["mission_id"].as_str().unwrap_or_default();
                let path = self
                    .env
                    .config_dir
                    .join("transcripts")
                    .join(mission_id)
                    .join(format!("{run_id}.log"));
                std::fs::read_to_string(&path)
                    .map(|text| strip_ansi(&text))
                    .map_err(|error| format!("(cannot read {}: {error})", path.display()))
            }
            Err(error) => Err(format!("(pane.read failed: {error})")),
        }
    }

    /// Waits until the run's pane shows `text`.
    pub fn wait_for_pane_text(&self, mission: &Value, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let shown = self.transcript_text(mission);
            if shown.contains(text) {
                return shown;
            }
            assert!(
                Instant::now() < deadline,
                "the run pane never showed {text:?}; it shows:\n{shown}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The content the mock's request log shows coming back as the result of call `call_id`.
    pub fn tool_result_sent_to_model(&self, call_id: &str) -> Option<String> {
        self.mock
            .main_requests()
            .iter()
            .flat_map(|request| request.tool_results())
            .find(|result| result.call_id == call_id)
            .map(|result| result.content)
    }
}

/// Every durable event of one mission, replayed from sequence 0 up to the head.
pub fn mission_events(env: &TestEnv, mission_id: &str) -> Vec<Value> {
    let mut stream = UnixStream::connect(&env.socket).expect("connect for events");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let request = json!({"id": "replay", "method": "events.subscribe",
                         "params": {"subscriptions": [{"type": "mission", "mission_id": mission_id}], "after_seq": 0}});
    stream.write_all(format!("{request}\n").as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let ack = TestEnv::read_line_from(&mut reader).expect("a subscription ack");
    let head = ack["result"]["head_seq"]
        .as_u64()
        .unwrap_or_else(|| panic!("bad ack {ack}"));
    let mut events = Vec::new();
    loop {
        // The mission's own events may end before the head (other missions' events).
        if events
            .last()
            .and_then(|event: &Value| event["data"]["seq"].as_u64())
            .is_some_and(|seq| seq >= head)
        {
            break;
        }
        match TestEnv::read_line_from(&mut reader) {
            Some(event) => events.push(event),
            None => break,
        }
    }
    events
}

/// The statuses the mission went through, in order, without repeats.
pub fn status_history(events: &[Value]) -> Vec<String> {
    let mut statuses: Vec<String> = Vec::new();
    for status in events
        .iter()
        .filter_map(|event| event["data"]["status"].as_str())
    {
        if statuses.last().map(String::as_str) != Some(status) {
            statuses.push(status.to_string());
        }
    }
    statuses
}

/// The mission's stored document, from a read-only connection to the database.
pub fn stored_mission_doc(env: &TestEnv, mission_id: &str) -> Value {
    let connection = rusqlite::Connection::open_with_flags(
        env.database_path(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open the database read-only");
    let doc: String = connection
        .query_row(
            "SELECT doc FROM missions WHERE mission_id = ?1",
            [mission_id],
            |row| row.get(0),
        )
        .unwrap_or_else(|error| panic!("no stored mission {mission_id}: {error}"));
    serde_json::from_str(&doc).expect("missions.doc is JSON")
}

/// Reads a pane's recent text (soft wraps joined, ANSI stripped).
pub fn read_pane(env: &TestEnv, pane_id: &str) -> Result<String, String> {
    let response = env.call(
        "pane.read",
        json!({"pane_id": pane_id, "source": "recent_unwrapped", "lines": 5000}),
    );
    match response.get("result") {
        Some(result) => Ok(result["read"]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()),
        None => Err(response.to_string()),
    }
}

/// Drops ANSI CSI sequences (`ESC [ ... letter`) from transcript text.
pub fn strip_ansi(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut characters = text.chars().peekable();
    while let Some(character) = characters.next() {
        if character == '\x1b' && characters.peek() == Some(&'[') {
            characters.next();
            for following in characters.by_ref() {
                if following.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(character);
        }
    }
    plain
}

/// Fails if `needle` occurs anywhere in `value` (keys or strings).
pub fn assert_nowhere_in(value: &Value, needle: &str, what: &str) {
    let text = value.to_string();
    assert!(
        !text.contains(needle),
        "{what} exposes the native session id {needle}: {text}"
    );
}

/// How often the mission prompt's objective reaches the model in `request`'s user texts.
pub fn objective_count(request: &nagi_tests::mock_model::LoggedRequest, objective: &str) -> usize {
    request
        .user_texts()
        .iter()
        .map(|text| text.matches(objective).count())
        .sum()
}

/// The tokens recorded for the mission's run are what the mock reported: 10 in and 5 out
/// for every main request it answered (`mock_model::replies`), and the mission's usage is
/// its run's. `priced`: whether the CLI prices its turns (Claude Code does).
pub fn assert_usage_is_what_the_mock_reported(
    session: &RealSession,
    mission_id: &str,
    priced: bool,
) {
    let answered = session
        .mock
        .main_requests()
        .iter()
        .filter(|request| request.status == 200 && request.step.is_some())
        .count() as u64;
    assert!(answered > 0, "the mock answered no model request");
    let mission = session
        .env
        .ok("mission.get", json!({"mission_id": mission_id}))["mission"]
        .clone();
    let usage = &mission["run"]["usage"];
    assert_eq!(
        usage["input_tokens"],
        10 * answered,
        "{answered} answered requests: {mission}"
    );
    assert_eq!(
        usage["output_tokens"],
        5 * answered,
        "{answered} answered requests: {mission}"
    );
    assert_eq!(usage["cached_input_tokens"], 0, "{usage}");
    assert_eq!(
        mission["usage"], *usage,
        "one run: the mission's usage is its run's"
    );
    match usage["cost_usd"].as_f64() {
        Some(cost) => assert!(priced && cost > 0.0, "{usage}"),
        None => assert!(!priced, "a priced turn should record its cost: {usage}"),
    }
}

/// The objective `create_params` gives every mission (part of the mission prompt).
pub const OBJECTIVE: &str = "Make the login redirect work";

/// The assertions every real mission shares once its turn is over. `final_text` is the
/// scripted agent text; `mission_id`'s run must have read the README and failed to write.
pub fn assert_completed_read_only_mission(
    session: &RealSession,
    mission_id: &str,
    final_text: &str,
    before: &BTreeMap<PathBuf, Vec<u8>>,
) {
    let mission = session.wait_for_review_with_evidence(mission_id);
    let transcript = session.transcript_text(&mission);

    // active, then review_required (or straight to ready_to_close once the checks ran).
    let history = status_history(&session.mission_events(mission_id));
    let position = |status: &str| history.iter().position(|seen| seen == status);
    let (Some(active), Some(review)) = (
        position("active"),
        position("review_required").or(position("ready_to_close")),
    ) else {
        panic!(
            "the mission should pass active then review_required or ready_to_close; statuses: {history:?}"
        );
    };
    assert!(active < review, "statuses: {history:?}");

    // The native session id is stored, and nothing on the wire shows it.
    let stored = session.stored_run(mission_id);
    let session_id = stored["provider_session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no provider_session_id stored: {stored}"))
        .to_string();
    assert!(!session_id.is_empty());
    assert_eq!(stored["sandbox"], "read_only", "{stored}");
    assert_nowhere_in(&mission, &session_id, "mission.get");
    assert_nowhere_in(
        &session.env.ok("mission.list", json!({})),
        &session_id,
        "mission.list",
    );

    // The scripted agent text is in the run's pane.
    session.wait_for_pane_text(&mission, final_text);

    // The read tool returned the README to the model.
    let read_result = session
        .tool_result_sent_to_model("call_mock_0")
        .unwrap_or_else(|| panic!("no request carried the read result; transcript:\n{transcript}"));
    assert!(
        read_result.contains(SECRET_WORD),
        "the read tool result should hold the README: {read_result:?}"
    );
    assert!(
        session.tool_result_sent_to_model("call_mock_1").is_some(),
        "the write attempt was answered, so the turn went on"
    );

    // The write attempt changed nothing; a change would have to raise a security warning.
    let after = snapshot(&session.repo.path);
    if &after != before {
        let attention = session.env.ok(
            "attention.list",
            json!({"mission_id": mission_id, "include_closed": true}),
        );
        let warned = attention.to_string().contains("security_warning");
        panic!(
            "the read-only run changed the workspace (security warning raised: {warned}):\n{}\nattention: {attention}",
            snapshot_difference(before, &after)
        );
    }
    assert!(!session.repo.path.join(WRITTEN_FILE).exists());

    // The declared check ran after the turn and passed.
    let evidence = mission["evidence"].as_array().expect("evidence list");
    let unit = evidence
        .iter()
        .find(|item| item["check_id"] == "unit")
        .unwrap_or_else(|| panic!("no evidence for the check: {mission}"));
    assert_eq!(unit["assessment"], "passed", "{unit}");
    assert_eq!(
        mission["run"]["live"], false,
        "the provider part of the run is over: {mission}"
    );
}

/// The pids of live processes whose environment has `HOME=<home>`: the providers (and their
/// helpers) this test's server started, since every one of them got this test's own HOME.
pub fn provider_processes(home: &Path) -> BTreeSet<u32> {
    let needle = format!("HOME={}", home.display()).into_bytes();
    let mut pids = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let is_zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| {
                stat.rsplit(')')
                    .next()
                    .is_some_and(|rest| rest.trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if !is_zombie
            && environ
                .split(|byte| *byte == 0)
                .any(|variable| variable == needle.as_slice())
        {
            pids.insert(pid);
        }
    }
    pids
}

/// Kills, by pid, whatever provider process of this test is still alive when the test ends,
/// so a failing test leaves nothing behind.
pub struct ProviderSweep {
    pub home: PathBuf,
}

impl Drop for ProviderSweep {
    fn drop(&mut self) {
        for pid in provider_processes(&self.home) {
            // SAFETY: signalling a process this test's server started (found by its HOME).
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
    }
}
