//! `nagi server`: everything from an empty session directory to a serving socket, and
//! back down to a clean stop.
//!
//! Order: private directory → exclusive server lock → open and migrate the store →
//! reconcile live runs (recovery) → bind the socket (0600) → serve until `server.stop`,
//! SIGTERM or SIGINT → drain in-flight requests → close the store (every queued commit
//! finishes) → remove the socket.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nagi_store::{Store, StoreConfig};

use crate::config::EngineConfig;
use crate::engine::{Engine, Shutdown};
use crate::live::registry::RunRegistry;
use crate::missions::Missions;

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("a nagi server is already running for {socket}")]
    AlreadyRunning { socket: String },
    #[error("{0}")]
    Setup(String),
    #[error("cannot open the database {path}: {message}")]
    Store { path: String, message: String },
}

/// Creates `dir` with mode 0700, or checks that an existing one is private.
pub fn ensure_private_dir(dir: &Path) -> Result<(), DaemonError> {
    if !dir.exists() {
        std::fs::create_dir_all(dir).map_err(|error| {
            DaemonError::Setup(format!("cannot create {}: {error}", dir.display()))
        })?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(|error| {
            DaemonError::Setup(format!("cannot make {} private: {error}", dir.display()))
        })?;
        return Ok(());
    }
    let metadata = std::fs::metadata(dir)
        .map_err(|error| DaemonError::Setup(format!("cannot read {}: {error}", dir.display())))?;
    if !metadata.is_dir() {
        return Err(DaemonError::Setup(format!(
            "{} exists and is not a directory",
            dir.display()
        )));
    }
    let mode = metadata.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(DaemonError::Setup(format!(
            "{} is accessible to other users (mode {mode:o}); nagi keeps its socket and database only in a private \
             directory — run `chmod 700 {}` or choose another path",
            dir.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// An exclusive, non-blocking lock on the session's server lock file. Held for the
/// server's lifetime; released by the OS if the process dies.
pub struct ServerLock {
    _file: std::fs::File,
}

pub fn take_server_lock(path: &Path) -> Result<Option<ServerLock>, DaemonError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(|error| DaemonError::Setup(describe_unwritable(path, &error)))?;
    let locked = nagi_os::locks::try_lock_exclusive(&file);
    Ok(locked.then_some(ServerLock { _file: file }))
}

/// How long a held lock may stay held by a server that does not answer before a new
/// server gives up. A SIGKILLed server's lock and listening socket can outlive it for a
/// moment in a child that was between fork and exec when it died.
const DYING_SERVER_GRACE: Duration = Duration::from_secs(3);

/// The server lock, waiting out a server that holds it but no longer answers; `None` when
/// a server answers on `socket` (or keeps the lock without answering past the grace).
fn take_lock_unless_answering(
    lock_path: &Path,
    socket: &Path,
) -> Result<Option<ServerLock>, DaemonError> {
    let deadline = Instant::now() + DYING_SERVER_GRACE;
    loop {
        if let Some(lock) = take_server_lock(lock_path)? {
            return Ok(Some(lock));
        }
        if server_answers(socket) || Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether a server answers `ping` on `socket`. Connecting is not enough: a listening
/// socket accepts connections into its backlog as long as any process holds it open.
fn server_answers(socket: &Path) -> bool {
    use std::io::{BufRead, Write};
    let Ok(stream) = std::os::unix::net::UnixStream::connect(socket) else {
        return false;
    };
    let timeout = Some(Duration::from_secs(2));
    if stream.set_read_timeout(timeout).is_err() || stream.set_write_timeout(timeout).is_err() {
        return false;
    }
    let mut writer = &stream;
    if writer
        .write_all(b"{\"id\":\"answers\",\"method\":\"ping\",\"params\":{}}\n")
        .is_err()
    {
        return false;
    }
    let mut line = String::new();
    matches!(std::io::BufReader::new(&stream).read_line(&mut line), Ok(count) if count > 0)
}

/// Names the fix for the common causes, so a read-only disk does not read as a bug.
fn describe_unwritable(path: &Path, error: &std::io::Error) -> String {
    let directory = path.parent().unwrap_or(path).display();
    match error.kind() {
        std::io::ErrorKind::ReadOnlyFilesystem => format!(
            "the data directory {directory} is on a read-only filesystem: the server needs to write its database there; remount it read-write or choose another socket path (NAGI_SOCKET_PATH)"
        ),
        std::io::ErrorKind::PermissionDenied => {
            format!(
                "the data directory {directory} is not writable by this user: the server needs to write its database there ({error})"
            )
        }
        _ => format!("cannot open {}: {error}", path.display()),
    }
}

/// Raises the open-file limit to its hard maximum: every connection and pane is a file.
fn raise_open_file_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain getrlimit/setrlimit on a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// Something that lives as long as the server's engine: started once the engine has
/// recovered and before the socket serves, stopped after the socket has drained and before
/// the live runs are stopped. Fleet mode's Temporal worker is one (crate `nagi-fleet`).
pub trait ServerAttachment: Send {
    /// Before recovery: sets up what the engine asks of it (fleet mode's router), so that
    /// the start can archive the missions the fleet handed to another host while this one
    /// was gone before recovery would resume their runs. An error stops the server's start.
    fn before_recovery(&mut self, _engine: &Arc<Engine>) -> Result<(), String> {
        Ok(())
    }
    /// Starts; an error stops the server's start (nothing is served).
    fn start(&mut self, engine: Arc<Engine>) -> Result<(), String>;
    /// Stops and waits until it has stopped.
    fn stop(&mut self);
}

/// Runs the server in the foreground until it is stopped.
pub fn run_server(config: EngineConfig) -> Result<(), DaemonError> {
    run_server_with(config, None)
}

/// [`run_server`] with an attachment that starts and stops with the engine.
pub fn run_server_with(
    config: EngineConfig,
    mut attachment: Option<Box<dyn ServerAttachment>>,
) -> Result<(), DaemonError> {
    let paths = config.paths.clone();
    ensure_private_dir(&paths.data_dir)?;
    let socket_text = paths.socket_path.display().to_string();
    let lock = take_lock_unless_answering(&paths.server_lock_path(), &paths.socket_path)?;
    let Some(lock) = lock else {
        return Err(DaemonError::AlreadyRunning {
            socket: socket_text,
        });
    };
    if paths.socket_path.exists() {
        // We hold the lock, so nobody serves this socket: it is stale. A live server of an
        // older nagi without the lock would still answer; refuse to steal from it.
        if server_answers(&paths.socket_path) {
            return Err(DaemonError::AlreadyRunning {
                socket: socket_text,
            });
        }
        std::fs::remove_file(&paths.socket_path).map_err(|error| {
            DaemonError::Setup(format!(
                "cannot remove the stale socket {socket_text}: {error}"
            ))
        })?;
    }
    raise_open_file_limit();
    // Pane processes that double-fork stay beneath the server.
    if let Err(error) = nagi_os::children::become_child_subreaper() {
        tracing::warn!(%error, "cannot become the child subreaper; orphaned pane processes go to init");
    }

    let mut store_config = StoreConfig::new(paths.database_path());
    store_config.max_page_count = config.store_max_page_count;
    if config.user.server.full_integrity_check {
        store_config.integrity_check = nagi_store::IntegrityCheck::Full;
    }
    let store = Arc::new(
        Store::open(store_config).map_err(|error| DaemonError::Store {
            path: paths.database_path().display().to_string(),
            message: error.message,
        })?,
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("nagi-server")
        .build()
        .map_err(|error| DaemonError::Setup(format!("cannot start the runtime: {error}")))?;

    let outcome = runtime.block_on(async {
        let missions = Missions::new(store.clone()).map_err(|error| DaemonError::Setup(error.to_string()))?;
        let panes = nagi_pane::PaneHost::new(nagi_pane::PaneHostConfig {
            socket_path: Some(paths.socket_path.clone()),
            workspace_number_file: Some(paths.data_dir.join("workspace-number")),
            ..nagi_pane::PaneHostConfig::default()
        });
        let engine = Arc::new(Engine {
            config: crate::config::ConfigCell::new(config),
            missions,
            runs: Arc::new(RunRegistry::default()),
            panes: panes.clone(),
            checkouts: Default::default(),
            claim_locks: crate::live::claims::ClaimLocks::new(paths.claim_lock_dir()),
            provider_versions: Default::default(),
            supervisors: Default::default(),
            shutdown: Shutdown::new(),
            server_uid: unsafe { libc::geteuid() },
            server_pid: std::process::id(),
            fleet: std::sync::OnceLock::new(),
        });
        if let Some(attachment) = attachment.as_mut() {
            attachment.before_recovery(&engine).map_err(DaemonError::Setup)?;
            crate::api::fleet_missions::retire_handed_away(&engine).await;
        }
        // Recovery comes before serving: no client sees a run the store calls live that
        // this process does not hold.
        let actions = crate::runs::recovery::recover(&engine).await.map_err(|error| DaemonError::Setup(format!("recovery failed: {error}")))?;
        for action in &actions {
            tracing::info!(mission = %action.mission_id, action = %action.action, reason = %action.reason, "recovered");
        }
        if let Some(attachment) = attachment.as_mut()
            && let Err(message) = attachment.start(engine.clone())
        {
            stop_live_runs(&engine).await;
            panes.shutdown().await;
            return Err(DaemonError::Setup(message));
        }
        let listener = match bind_private_socket(&paths.socket_path) {
            Ok(listener) => listener,
            Err(error) => {
                if let Some(attachment) = attachment.as_mut() {
                    attachment.stop();
                }
                return Err(error);
            }
        };
        spawn_signal_handlers(engine.shutdown.clone());
        spawn_notifier(engine.clone());
        tracing::info!(socket = %socket_text, "nagi server is serving");
        crate::server::run(listener, engine.clone()).await;
        if let Some(attachment) = attachment.as_mut() {
            // The worker's thread is joined off the runtime's workers.
            tokio::task::block_in_place(|| attachment.stop());
        }
        stop_live_runs(&engine).await;
        // Every pane process tree ends with the server.
        panes.shutdown().await;
        // No provider runs now: the runs' scratch folders go (a run resumed by the next
        // server gets a fresh one).
        let scratch_paths = paths.clone();
        let _ = tokio::task::spawn_blocking(move || {
            crate::launch::scratch::remove_session_scratch(&scratch_paths)
        })
        .await;
        Ok::<(), DaemonError>(())
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    store.close();
    let _ = std::fs::remove_file(&paths.socket_path);
    drop(lock);
    outcome
}

/// Asks every live provider to stop and waits (bounded) until they have. Their missions stay
/// live in the store, and the next start resumes them.
async fn stop_live_runs(engine: &Arc<Engine>) {
    for run in engine.runs.live_runs() {
        let _ = run
            .commands
            .send(nagi_providers::ProviderCommand::Shutdown)
            .await;
    }
    // The supervisors end once their providers have; no new run starts after this point
    // (the socket no longer accepts requests), so closing the tracker is safe.
    engine.supervisors.close();
    if tokio::time::timeout(
        std::time::Duration::from_secs(10),
        engine.supervisors.wait(),
    )
    .await
    .is_err()
    {
        tracing::warn!(
            live = engine.runs.live_run_count(),
            "providers did not stop within 10 s; the server stops without them"
        );
    }
}

fn bind_private_socket(path: &Path) -> Result<tokio::net::UnixListener, DaemonError> {
    // Bind under a restrictive umask so the socket is never briefly open to others.
    // SAFETY: umask only changes this process's file-creation mask.
    let previous = unsafe { libc::umask(0o177) };
    let bound = tokio::net::UnixListener::bind(path);
    unsafe { libc::umask(previous) };
    let listener = bound
        .map_err(|error| DaemonError::Setup(format!("cannot bind {}: {error}", path.display())))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|error| DaemonError::Setup(format!("cannot set the socket's mode: {error}")))?;
    Ok(listener)
}

fn spawn_signal_handlers(shutdown: Shutdown) {
    use tokio::signal::unix::{SignalKind, signal};
    for kind in [SignalKind::terminate(), SignalKind::interrupt()] {
        let shutdown = shutdown.clone();
        match signal(kind) {
            Ok(mut stream) => {
                tokio::spawn(async move {
                    if stream.recv().await.is_some() {
                        tracing::info!("signal received; shutting down after in-flight work");
                        shutdown.trigger();
                    }
                });
            }
            Err(error) => tracing::warn!(%error, "cannot install a signal handler"),
        }
    }
}

/// Follows the committed log from its head now and notifies what each new event calls for.
fn spawn_notifier(engine: Arc<Engine>) {
    tokio::spawn(async move {
        let mut head = engine.missions.head();
        let mut seen = *head.borrow();
        loop {
            tokio::select! {
                changed = head.changed() => if changed.is_err() { return },
                () = engine.shutdown.wait() => return,
            }
            let now = *head.borrow();
            // With nowhere to send them (no session bus, no command, or switched off), the
            // log is not read at all: a server pays nothing for notifications it cannot show.
            if !engine.config.current().user.notify.has_a_sink() {
                seen = now;
                continue;
            }
            while seen < now {
                let rows = match engine
                    .missions
                    .read(|reader| reader.events_after(seen, 256))
                {
                    Ok(rows) if !rows.is_empty() => rows,
                    _ => break,
                };
                for row in rows {
                    seen = row.seq;
                    if !crate::notify::may_notify(&row.kind) {
                        continue;
                    }
                    let Ok(stored) =
                        serde_json::from_str::<nagi_mission::StoredEvent>(&row.payload)
                    else {
                        continue;
                    };
                    let Some(notification) = crate::notify::for_event(&row.mission_id, &stored)
                    else {
                        continue;
                    };
                    let settings = engine.config.current().user.notify.clone();
                    if settings.wants(notification.kind) {
                        tokio::spawn(async move {
                            crate::notify::deliver(&settings, &notification).await
                        });
                    }
                }
            }
        }
    });
}
