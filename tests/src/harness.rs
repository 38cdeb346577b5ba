//! A fresh session for each test: its own config dir, socket and database, the real
//! `nagi` binary, and the server log printed when the test fails.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use nagi_schema::client::Client;
use serde_json::{Value, json};

/// The `nagi` binary built next to the test binaries (`cargo test --workspace` builds it).
pub fn nagi_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("NAGI_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let candidate = profile_dir.join("nagi");
    assert!(
        candidate.exists(),
        "{} does not exist: build it with `cargo build -p nagi` (cargo test --workspace does)",
        candidate.display()
    );
    candidate
}

/// A binary of this crate (fake providers, mock model), next to the test binaries.
pub fn test_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let candidate = profile_dir.join(name);
    assert!(
        candidate.exists(),
        "{} does not exist: build it with `cargo build -p nagi-tests --bins`",
        candidate.display()
    );
    candidate
}

pub struct ServerProcess {
    pub child: Child,
}

impl ServerProcess {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

pub struct TestEnv {
    pub dir: tempfile::TempDir,
    pub config_dir: PathBuf,
    pub socket: PathBuf,
    /// Extra environment for the server and every CLI call.
    pub env: BTreeMap<String, String>,
    server: Option<ServerProcess>,
}

/// The outcome of one CLI call, printable on failure.
pub struct CliRun {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl CliRun {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|error| panic!("stdout is not JSON ({error}):\n{}", self.describe()))
    }

    pub fn describe(&self) -> String {
        format!(
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

impl From<Output> for CliRun {
    fn from(output: Output) -> CliRun {
        CliRun {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let config_dir = root.join("cfg");
        let socket = config_dir.join("nagi.sock");
        TestEnv {
            dir,
            config_dir,
            socket,
            env: BTreeMap::new(),
            server: None,
        }
    }

    pub fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    /// The `HOME` of the server and every CLI call: a fresh directory, so nothing touches
    /// the real one. Confined read-only runs may write here.
    pub fn home(&self) -> PathBuf {
        let home = self.root().join("home");
        std::fs::create_dir_all(&home).unwrap();
        home
    }

    pub fn database_path(&self) -> PathBuf {
        self.config_dir.join("nagi.db")
    }

    pub fn server_log_path(&self) -> PathBuf {
        self.config_dir.join("server.log")
    }

    /// A `nagi` command for this session.
    pub fn command(&self) -> Command {
        let mut command = Command::new(nagi_binary());
        command
            .env_remove("NAGI_SOCKET_PATH")
            .env_remove("NAGI_SESSION")
            .env_remove("XDG_DATA_HOME")
            .env("NAGI_CONFIG_DIR", &self.config_dir)
            .env("HOME", self.home())
            .env("NAGI_LOG", "info")
            .envs(&self.env)
            .stdin(Stdio::null());
        command
    }

    /// Runs the CLI and captures its output.
    pub fn nagi(&self, args: &[&str]) -> CliRun {
        self.command()
            .args(args)
            .output()
            .expect("nagi runs")
            .into()
    }

    /// Runs the CLI and requires success.
    pub fn nagi_ok(&self, args: &[&str]) -> CliRun {
        let run = self.nagi(args);
        assert_eq!(run.status, 0, "nagi {args:?} failed:\n{}", run.describe());
        run
    }

    /// Starts `nagi server` in the foreground as a child and waits until it answers.
    pub fn start_server(&mut self) -> u32 {
        self.start_server_with(&[])
    }

    /// [`TestEnv::start_server`] in a session of its own, as the CLI starts a server when
    /// none answers (`cli/src/connect.rs`) and as tmux's server runs. Benchmarks against
    /// tmux use it: Linux schedules each session as a group (autogroup), and a server left
    /// in the benchmark's session would share its group's CPU with whatever else that
    /// session runs.
    pub fn start_server_in_own_session(&mut self) -> u32 {
        self.spawn_server(&[], true)
    }

    /// [`TestEnv::start_server`] with extra arguments to `nagi server`.
    pub fn start_server_with(&mut self, args: &[&str]) -> u32 {
        self.spawn_server(args, false)
    }

    fn spawn_server(&mut self, args: &[&str], own_session: bool) -> u32 {
        std::fs::create_dir_all(&self.config_dir).unwrap();
        #[allow(clippy::permissions_set_readonly_false)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&self.config_dir, std::fs::Permissions::from_mode(0o700))
                .unwrap();
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.server_log_path())
            .unwrap();
        let mut command = self.command();
        command
            .arg("server")
            .args(args)
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log));
        if own_session {
            use std::os::unix::process::CommandExt;
            // SAFETY: setsid is async-signal-safe.
            unsafe {
                command.pre_exec(|| {
                    if libc::setsid() < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let child = command.spawn().expect("nagi server starts");
        let pid = child.id();
        self.server = Some(ServerProcess { child });
        self.wait_until_answering();
        pid
    }

    pub fn wait_until_answering(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(mut client) = Client::connect(&self.socket) {
                let _ = client.set_read_timeout(Some(Duration::from_secs(5)));
                if client.request("ping", json!({})).is_ok() {
                    return;
                }
            }
            if let Some(server) = self.server.as_mut()
                && let Ok(Some(status)) = server.child.try_wait()
            {
                panic!(
                    "the server exited with {status} before answering:\n{}",
                    self.server_log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "the server did not answer within 30 s:\n{}",
            self.server_log()
        );
    }

    pub fn server_pid(&self) -> Option<u32> {
        self.server.as_ref().map(ServerProcess::pid)
    }

    /// Sends a signal to the server and waits for it to exit. Returns its exit status.
    pub fn signal_server(&mut self, signal: i32) -> Option<std::process::ExitStatus> {
        let mut server = self.server.take()?;
        // SAFETY: signalling our own child.
        unsafe {
            libc::kill(server.child.id() as i32, signal);
        }
        server.child.wait().ok()
    }

    pub fn kill_server(&mut self) {
        self.signal_server(libc::SIGKILL);
    }

    pub fn server_log(&self) -> String {
        std::fs::read_to_string(self.server_log_path()).unwrap_or_else(|_| "(no server log)".into())
    }

    pub fn client(&self) -> Client {
        let client = Client::connect(&self.socket)
            .unwrap_or_else(|error| panic!("{error}\n{}", self.server_log()));
        client
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        client
    }

    /// Sends one request and returns the whole response line (result or error).
    pub fn call(&self, method: &str, params: Value) -> Value {
        let line = json!({"id": "t1", "method": method, "params": params}).to_string();
        self.raw_line(&line)
            .unwrap_or_else(|| panic!("no response to {method}:\n{}", self.server_log()))
    }

    /// Calls and requires success; returns the `result`.
    pub fn ok(&self, method: &str, params: Value) -> Value {
        let response = self.call(method, params.clone());
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!(
                "{method} {params} failed: {response}\n{}",
                self.server_log()
            ),
        }
    }

    /// Calls and requires an error; returns its code.
    pub fn error_code(&self, method: &str, params: Value) -> String {
        let response = self.call(method, params.clone());
        match response
            .get("error")
            .and_then(|error| error.get("code"))
            .and_then(Value::as_str)
        {
            Some(code) => code.to_string(),
            None => panic!("{method} {params} was expected to fail but answered {response}"),
        }
    }

    /// Writes raw bytes plus a newline and reads one response line, if any arrives.
    pub fn raw_line(&self, line: &str) -> Option<Value> {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        self.raw_bytes(&bytes).pop()
    }

    /// Writes raw bytes, closes the write side, and reads every response line.
    pub fn raw_bytes(&self, bytes: &[u8]) -> Vec<Value> {
        let mut stream = UnixStream::connect(&self.socket)
            .unwrap_or_else(|error| panic!("{error}\n{}", self.server_log()));
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        // The server may close early (an over-long line); what it answered is still readable.
        let _ = stream.write_all(bytes);
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut text = String::new();
        let _ = BufReader::new(&stream).read_to_string(&mut text);
        text.lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// Reads one line from a stream with a timeout.
    pub fn read_line_from(reader: &mut BufReader<UnixStream>) -> Option<Value> {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => serde_json::from_str(&line).ok(),
        }
    }

    /// The committed store, read directly: event count and a digest of every mission row.
    /// Two equal fingerprints mean nothing was written in between.
    pub fn store_fingerprint(&self) -> (u64, String) {
        store_fingerprint(&self.database_path())
    }
}

pub fn store_fingerprint(database: &Path) -> (u64, String) {
    let connection =
        rusqlite::Connection::open_with_flags(database, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the database");
    let events: i64 = connection
        .query_row("SELECT count(*) FROM events", [], |row| row.get(0))
        .unwrap();
    let mut statement = connection
        .prepare("SELECT mission_id, doc FROM missions ORDER BY mission_id")
        .unwrap();
    let rows: Vec<String> = statement
        .query_map([], |row| {
            Ok(format!(
                "{}={}",
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let claims: i64 = connection
        .query_row("SELECT count(*) FROM claims", [], |row| row.get(0))
        .unwrap();
    let consents: i64 = connection
        .query_row("SELECT count(*) FROM consents", [], |row| row.get(0))
        .unwrap();
    (
        events as u64,
        format!("{}|claims={claims}|consents={consents}", rows.join("\n")),
    )
}

impl Default for TestEnv {
    fn default() -> Self {
        TestEnv::new()
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "===== server log ({}) =====\n{}",
                self.server_log_path().display(),
                self.server_log()
            );
        }
        if let Some(mut server) = self.server.take() {
            // SAFETY: signalling our own child.
            unsafe {
                libc::kill(server.child.id() as i32, libc::SIGTERM);
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                match server.child.try_wait() {
                    Ok(Some(_)) => break,
                    _ if Instant::now() > deadline => {
                        let _ = server.child.kill();
                        let _ = server.child.wait();
                        break;
                    }
                    _ => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        }
        // A server the CLI started in the background (autostart) is stopped too.
        if let Ok(mut client) = Client::connect(&self.socket) {
            let _ = client.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = client.request("server.stop", json!({}));
        }
    }
}

/// A mission create request with sensible defaults.
pub fn create_params(mission_id: &str, repository: &str) -> Value {
    json!({
        "mission_id": mission_id,
        "title": "Fix login",
        "repository_path": repository,
        "objective": "Make the login redirect work",
        "acceptance_criteria": ["Redirect test passes", "The login flow has no regression"],
    })
}

/// A closure plan of one required command check covering both criteria.
pub fn configure_params(mission_id: &str, program: &str, args: &[&str]) -> Value {
    json!({
        "mission_id": mission_id,
        "checks": [{
            "kind": "command",
            "id": "unit",
            "program": program,
            "args": args,
            "cwd": ".",
            "relevant_paths": [],
            "required_artifacts": [],
            "required": true,
            "covers": [0, 1],
        }],
    })
}

/// Polls `mission.get` until `predicate` holds or 60 s pass.
pub fn wait_for_mission(
    env: &TestEnv,
    mission_id: &str,
    what: &str,
    predicate: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = Value::Null;
    while Instant::now() < deadline {
        let response = env.call("mission.get", json!({"mission_id": mission_id}));
        if let Some(mission) = response
            .get("result")
            .and_then(|result| result.get("mission"))
        {
            if predicate(mission) {
                return mission.clone();
            }
            last = mission.clone();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "mission {mission_id} never became {what}; last view:\n{}\n{}",
        serde_json::to_string_pretty(&last).unwrap(),
        env.server_log()
    );
}

/// Whether process `pid` has ended: it no longer exists, or it is a zombie whose exit
/// status only waits for its reaper.
pub fn process_is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// `text` as a TOML basic string (JSON string escapes are valid TOML).
pub fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// The JSON lines of a fake provider's log (`NAGI_FAKE_LOG`); none while it does not exist.
pub fn log_entries(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// The `NAGI_SESSION_MARKER=…` environment entry that every process a server of
/// `session_dir` starts carries (the first 32 hex digits of the sha256 of the directory's
/// path), by which a restarted server finds leftovers.
pub fn session_marker_entry(session_dir: &Path) -> String {
    use sha2::Digest;
    use std::os::unix::ffi::OsStrExt;
    let digest = sha2::Sha256::digest(session_dir.as_os_str().as_bytes());
    format!("NAGI_SESSION_MARKER={}", hex::encode(&digest[..16]))
}

/// A test cannot run because something it needs is missing (a tool, root, a kernel
/// feature). Under CI (`CI=true`) the test fails with `reason`, so a green CI never hides
/// a test that did not run. Elsewhere the reason is printed and appended to the file named
/// by `NAGI_SKIP_LOG` (where `.ci/test` collects the skips), and the caller returns.
pub fn missing_prerequisite(test: &str, reason: &str) {
    if std::env::var("CI").is_ok_and(|value| value == "true" || value == "1") {
        panic!("{test} cannot run under CI: {reason}");
    }
    eprintln!("skipped: {test}: {reason}");
    if let Some(log) = std::env::var_os("NAGI_SKIP_LOG") {
        use std::io::Write;
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            let _ = writeln!(file, "{test}: {reason}");
        }
    }
}

/// Where a fake provider of `env` logs (`NAGI_FAKE_LOG`): a folder that the config of
/// [`fake_sandbox_section`] lets a confined read-only fake write, since nothing else of
/// the test's home is writable to it.
pub fn fake_log_path(env: &TestEnv) -> PathBuf {
    let folder = env.root().join("fake-logs");
    std::fs::create_dir_all(&folder).unwrap();
    folder.join("fake.log")
}

/// The `[sandbox]` section that grants confined fakes their log folder.
pub fn fake_sandbox_section(env: &TestEnv) -> String {
    let folder = fake_log_path(env).parent().unwrap().display().to_string();
    format!("[sandbox]\nwritable = [{}]\n", toml_string(&folder))
}
