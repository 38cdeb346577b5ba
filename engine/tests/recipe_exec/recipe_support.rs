//! Fixtures: real Git repositories (`support`'s, with the copy tests' `.gitignore`), engines on real session directories, progress capture.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use nagi_engine::config::{EngineConfig, UserConfig};
use nagi_engine::engine::{Engine, Shutdown};
use nagi_engine::live::claims::ClaimLocks;
use nagi_engine::live::registry::RunRegistry;
use nagi_engine::missions::Missions;
use nagi_engine::paths::SessionPaths;
use nagi_pane::{PaneHost, PaneHostConfig};
use nagi_store::access::PortLeaseRow;
use nagi_store::{Store, StoreConfig};

pub use crate::support::{TestRepository, git_in};

/// A checkout whose `.gitignore` names what the copy tests copy or refuse to.
pub fn copy_test_repository() -> TestRepository {
    TestRepository::with_gitignore(
        "config/local.toml\n*.big\nlink.toml\nreal.toml\nconfdir\nreal_dir/\nfixtures/\n.worktrees/\ntrees/\n",
    )
}

/// An engine on a real session directory (store, panes), as the server builds it.
pub struct TestSession {
    _directory: Option<tempfile::TempDir>,
    pub engine: Arc<Engine>,
}

impl TestSession {
    pub async fn new() -> TestSession {
        let directory = tempfile::tempdir().unwrap();
        let mut session = TestSession::at(directory.path()).await;
        session._directory = Some(directory);
        session
    }

    pub async fn at(root: &Path) -> TestSession {
        let root = root.canonicalize().unwrap();
        let data_dir = root.join("session");
        std::fs::create_dir_all(&data_dir).unwrap();
        let paths = SessionPaths {
            config_dir: root.join("config"),
            socket_path: data_dir.join("nagi.sock"),
            data_dir,
            session_name: None,
        };
        let store = Arc::new(Store::open(StoreConfig::new(paths.database_path())).unwrap());
        let missions = Missions::new(store).unwrap();
        let engine = Arc::new(Engine {
            config: nagi_engine::config::ConfigCell::new(EngineConfig::new(
                paths.clone(),
                UserConfig::default(),
            )),
            missions,
            runs: Arc::new(RunRegistry::default()),
            panes: PaneHost::new(PaneHostConfig::default()),
            checkouts: Default::default(),
            claim_locks: ClaimLocks::new(paths.claim_lock_dir()),
            provider_versions: Default::default(),
            supervisors: Default::default(),
            shutdown: Shutdown::new(),
            // SAFETY: geteuid has no preconditions.
            server_uid: unsafe { libc::geteuid() },
            server_pid: std::process::id(),
            fleet: std::sync::OnceLock::new(),
        });
        TestSession {
            _directory: None,
            engine,
        }
    }

    pub fn leases(&self, run_id: &str) -> Vec<PortLeaseRow> {
        self.engine
            .missions
            .store()
            .read(|reader| reader.port_leases_of_run("m1", run_id))
            .unwrap()
    }

    /// What a stopping server does: its panes end, its store closes. Services live on.
    pub async fn shutdown(&self) {
        self.engine.panes.shutdown().await;
        self.engine.missions.store().close();
    }
}

/// Collects the progress lines a launch reports.
#[derive(Clone, Default)]
pub struct ProgressLines(Arc<Mutex<Vec<String>>>);

impl ProgressLines {
    pub fn sink(&self) -> impl Fn(&str) + Send + Sync + 'static {
        let lines = self.0.clone();
        move |line: &str| lines.lock().unwrap().push(line.to_owned())
    }

    pub fn joined(&self) -> String {
        self.0.lock().unwrap().join("\n")
    }
}

pub fn eventually<T>(timeout: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = probe() {
            return Some(value);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The real interpreter (not a version-manager shim), so the service's pid is Python's.
pub fn python3() -> String {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let output = Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .expect("python3 runs");
            String::from_utf8(output.stdout).unwrap().trim().to_owned()
        })
        .clone()
}

/// A `[services.<id>]` table: Python's `http.server` on `$PORT`.
pub fn http_service_toml(id: &str, timeout_seconds: u32) -> String {
    format!(
        "[services.{id}]\ncommand = [\"sh\", \"-c\", \"exec {} -m http.server \\\"$PORT\\\" --bind 127.0.0.1\"]\nport_env = \"PORT\"\nhealth = \"http://127.0.0.1:{{port}}/\"\ntimeout_seconds = {timeout_seconds}\n",
        python3()
    )
}

pub fn process_environment(pid: u32) -> Vec<String> {
    let bytes = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    bytes
        .split(|byte| *byte == 0)
        .map(|entry| String::from_utf8_lossy(entry).into_owned())
        .collect()
}
