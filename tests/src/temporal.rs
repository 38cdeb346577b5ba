//! A Temporal dev server for the fleet tests: `temporal server start-dev` on a free loopback
//! port with its own SQLite file, headless, ready once `temporal operator cluster health`
//! answers `SERVING`; [`TemporalDev::kill`] and [`TemporalDev::restart`] SIGKILL it and
//! start it again on the same port and database file. Its log is printed when a test
//! fails. Nothing is installed at test time: the binary is `NAGI_TEMPORAL_BIN`,
//! or `.tools/temporal/bin/temporal` (`.ci/install-temporal`), or `temporal` on `PATH`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where the Temporal CLI is, if anywhere.
pub fn temporal_binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("NAGI_TEMPORAL_BIN") {
        return Some(PathBuf::from(path));
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    let installed = workspace.join(".tools/temporal/bin/temporal");
    if installed.is_file() {
        return Some(installed);
    }
    let on_path = std::env::var_os("PATH")?;
    std::env::split_paths(&on_path)
        .map(|dir| dir.join("temporal"))
        .find(|candidate| candidate.is_file())
}

/// A running dev server; killed (and its files removed) on drop.
pub struct TemporalDev {
    binary: PathBuf,
    child: Option<Child>,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
    listener.local_addr().unwrap().port()
}

impl TemporalDev {
    /// Starts a dev server with a fresh database and waits until it serves (30 s at most).
    pub fn start(binary: &Path) -> TemporalDev {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut dev = TemporalDev {
            binary: binary.to_path_buf(),
            child: None,
            port: free_port(),
            dir,
        };
        dev.spawn();
        dev
    }

    /// `127.0.0.1:PORT`, as `nagi server --fleet` takes it.
    pub fn address(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("temporal.log")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .unwrap();
        let child = Command::new(&self.binary)
            .args(["server", "start-dev", "--ip", "127.0.0.1", "--headless"])
            .args(["--port", &self.port.to_string()])
            .arg("--db-filename")
            .arg(self.dir.path().join("temporal.db"))
            .args(["--namespace", "default", "--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap_or_else(|error| panic!("{} does not start: {error}", self.binary.display()));
        self.child = Some(child);
        self.wait_until_serving();
    }

    /// Runs `temporal operator ARGS --address ADDRESS` against this server and requires
    /// success (a namespace created or deleted, say).
    pub fn operator(&self, args: &[&str]) {
        let output = Command::new(&self.binary)
            .arg("operator")
            .args(args)
            .args(["--address", &self.address()])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|error| panic!("{} does not run: {error}", self.binary.display()));
        assert!(
            output.status.success(),
            "temporal operator {args:?} failed: {}\n{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// With `NAGI_RECORD_FLEET_HISTORIES=DIR`, writes the history of every mission workflow
    /// this server holds to `DIR/<name>-<workflow id>.json`, in the SDK's own JSON (what
    /// `WorkflowHistory::from_json` reads), for the fleet crate's replay test
    /// (`fleet/tests/replay.rs`); otherwise does nothing.
    #[cfg(feature = "fleet")]
    pub fn record_histories(&self, name: &str) {
        use futures::StreamExt;
        use temporalio_client::{
            Client, ClientOptions, Connection, ConnectionOptions, UntypedWorkflow, Url,
            WorkflowFetchHistoryOptions, WorkflowListOptions,
        };
        let Some(dir) = std::env::var_os("NAGI_RECORD_FLEET_HISTORIES") else {
            return;
        };
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        let url: Url = format!("http://{}", self.address()).parse().unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let connection = Connection::connect(ConnectionOptions::new(url).build())
                .await
                .expect("connect to the dev server");
            let client = Client::new(connection, ClientOptions::new("default").build()).unwrap();
            let mut executions = client.list_workflows(
                "WorkflowType = 'MissionLifecycle'",
                WorkflowListOptions::default(),
            );
            while let Some(execution) = executions.next().await {
                let workflow_id = execution.expect("list the workflows").id().to_string();
                let history = client
                    .get_workflow_handle::<UntypedWorkflow>(workflow_id.clone())
                    .fetch_history(WorkflowFetchHistoryOptions::default())
                    .to_json()
                    .await
                    .expect("fetch a history");
                std::fs::write(dir.join(format!("{name}-{workflow_id}.json")), history).unwrap();
            }
        });
    }

    /// SIGKILLs the dev server (it gets no chance to flush or shut down) and waits until
    /// its port refuses connections; [`TemporalDev::restart`] starts it again.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // `Child::kill` is SIGKILL on Unix.
            let _ = child.kill();
            let _ = child.wait();
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(self.address()).is_ok() {
            assert!(
                Instant::now() < deadline,
                "the killed Temporal dev server's port {} still answers:\n{}",
                self.port,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts the dev server again on the same port with the same `--db-filename` (what it
    /// had acknowledged before a [`TemporalDev::kill`] is in it) and waits until it serves.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "restart the dev server after a kill");
        use std::io::Write;
        if let Ok(mut log) = std::fs::OpenOptions::new()
            .append(true)
            .open(self.log_path())
        {
            let _ = writeln!(log, "===== restarted by the test =====");
        }
        self.spawn();
    }

    /// [`TemporalDev::kill`], then [`TemporalDev::restart`].
    pub fn kill_and_restart(&mut self) {
        self.kill();
        self.restart();
    }

    fn wait_until_serving(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let health = Command::new(&self.binary)
                .args([
                    "operator",
                    "cluster",
                    "health",
                    "--address",
                    &self.address(),
                ])
                .stdin(Stdio::null())
                .output();
            if let Ok(output) = health
                && String::from_utf8_lossy(&output.stdout).contains("SERVING")
            {
                return;
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!(
                    "the Temporal dev server exited with {status}:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "the Temporal dev server did not serve within 30 s:\n{}",
            self.log()
        );
    }
}

impl Drop for TemporalDev {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "===== Temporal dev server log ({}) =====\n{}",
                self.log_path().display(),
                self.log()
            );
        }
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
