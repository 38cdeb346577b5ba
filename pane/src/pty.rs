//! Starting a pane process on a PTY, and the threads (and task) of a pane: the reader and
//! the parser of its output (see `output`), and the waiter, which waits for the pane's
//! child (`waitpid` on that pid only), records the exit status, and after the remaining
//! output is parsed emits `pane_exited` and the session's `closed` frame.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use nagi_os::fds::set_nonblocking;
use nagi_schema::pane::PaneExitStatus;
use nagi_schema::pane_events::PaneEventData;
use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};
use tokio::sync::{Notify, watch};

use super::attach::SessionState;
use super::core::{PaneCore, PaneIdentity, PaneInput, PaneMeta, Pending, ReaderTurn, lock};
use super::error::PaneError;
use super::events::EventBus;
use super::output;
use super::process;
use super::screen::Terminal;

/// After the child exits, how long to wait for the last output before announcing it.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(500);

/// Everything needed to start one pane.
pub struct PaneLaunch {
    pub pane_id: String,
    pub workspace_id: String,
    pub tab_id: String,
    pub terminal_id: String,
    pub command: Vec<String>,
    pub cwd: String,
    /// Caller-provided environment; the server's `NAGI_*` values override it.
    pub env: BTreeMap<String, String>,
    pub socket_path: Option<PathBuf>,
    pub cols: u16,
    pub rows: u16,
    pub scrollback_lines: usize,
    pub ring_bytes: usize,
    pub keyframe_interval_bytes: usize,
    pub queue_capacity: usize,
    pub label: Option<String>,
    pub events: Arc<EventBus>,
}

fn spawn_failed(program: &str, error: impl std::fmt::Display) -> PaneError {
    PaneError::PaneSpawnFailed {
        program: program.to_string(),
        message: error.to_string(),
    }
}

fn build_command(launch: &PaneLaunch) -> CommandBuilder {
    let mut command = CommandBuilder::new(&launch.command[0]);
    command.args(&launch.command[1..]);
    command.cwd(&launch.cwd);
    if !launch.env.contains_key("TERM") {
        command.env("TERM", "xterm-256color");
    }
    for (key, value) in &launch.env {
        command.env(key, value);
    }
    match &launch.socket_path {
        Some(path) => command.env("NAGI_SOCKET_PATH", path),
        None => command.env_remove("NAGI_SOCKET_PATH"),
    }
    command.env("NAGI_ENV", "1");
    command.env("NAGI_WORKSPACE_ID", &launch.workspace_id);
    command.env("NAGI_TAB_ID", &launch.tab_id);
    command.env("NAGI_PANE_ID", &launch.pane_id);
    command.env("NAGI_TERMINAL_ID", &launch.terminal_id);
    command
}

fn spawn_thread(
    name: &str,
    stack_bytes: usize,
    body: impl FnOnce() + Send + 'static,
) -> Result<(), PaneError> {
    std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(stack_bytes)
        .spawn(body)
        .map(|_| ())
        .map_err(|error| spawn_failed(name, format!("could not start thread: {error}")))
}

/// Opens a PTY, starts the pane's program on it, and starts the pane's threads.
pub fn spawn_pane(launch: PaneLaunch) -> Result<Arc<PaneCore>, PaneError> {
    let program = launch.command.first().cloned().unwrap_or_default();
    if program.is_empty() {
        return Err(PaneError::invalid("command must name a program"));
    }
    let size = PtySize {
        rows: launch.rows,
        cols: launch.cols,
        pixel_width: 0,
        pixel_height: 0,
    };
    let pair = native_pty_system()
        .openpty(size)
        .map_err(|error| spawn_failed(&program, format!("openpty: {error}")))?;
    // The master is non-blocking, so that typing can be written to it right on the
    // connection's task when the terminal takes it at once (`try_session_input`); the
    // reader and blocking writes wait for readiness instead.
    if let Some(fd) = pair.master.as_raw_fd() {
        set_nonblocking(fd).map_err(|error| spawn_failed(&program, error))?;
    }
    let command = build_command(&launch);
    let child = process::with_spawn_lock(|| {
        let child = pair
            .slave
            .spawn_command(command)
            .map_err(|error| format!("{error:#}"))?;
        if let Some(pid) = child.process_id() {
            process::register_owned_child(pid);
        }
        Ok::<_, String>(child)
    })
    .map_err(|error| spawn_failed(&program, error))?;
    drop(pair.slave);
    let pid = child.process_id().unwrap_or(0);
    let reader = pair
        .master
        .try_clone_reader()
        .map_err(|error| spawn_failed(&program, error))?;
    let writer = pair
        .master
        .take_writer()
        .map_err(|error| spawn_failed(&program, error))?;
    let master_fd = pair.master.as_raw_fd();
    let tty = pair
        .master
        .tty_name()
        .map(|path| path.to_string_lossy().into_owned());
    let (changes, _) = watch::channel(0);
    let core = Arc::new(PaneCore {
        identity: PaneIdentity {
            pane_id: launch.pane_id.clone(),
            workspace_id: launch.workspace_id.clone(),
            tab_id: launch.tab_id.clone(),
            terminal_id: launch.terminal_id.clone(),
            command: launch.command.clone(),
            cwd: launch.cwd.clone(),
            pid,
        },
        terminal: Mutex::new(Terminal::new(
            launch.rows,
            launch.cols,
            launch.scrollback_lines,
        )),
        session: Mutex::new(SessionState::new(
            launch.terminal_id.clone(),
            launch.ring_bytes,
            launch.queue_capacity,
            launch.keyframe_interval_bytes,
        )),
        input: Mutex::new(PaneInput {
            writer,
            backlog: Vec::new(),
        }),
        master: Mutex::new(pair.master),
        master_fd,
        tty,
        meta: Mutex::new(PaneMeta {
            label: launch.label.clone(),
            ..PaneMeta::default()
        }),
        focused: AtomicBool::new(false),
        revision: AtomicU64::new(0),
        changes,
        pending: Mutex::new(Pending::default()),
        data_ready: Condvar::new(),
        space_ready: Condvar::new(),
        space_notify: Notify::new(),
        reader_turn: Mutex::new(ReaderTurn::default()),
        turn_changed: Condvar::new(),
        turn_back: Notify::new(),
        drained: Mutex::new(false),
        drained_ready: Condvar::new(),
        closing: AtomicBool::new(false),
        finished: AtomicBool::new(false),
        events: launch.events.clone(),
    });
    let registered = output::register_master(master_fd);
    let shared = registered.is_some();
    // Without a task, nobody can hand the quiet reading to a key thread.
    lock(&core.reader_turn).task_gone = !shared;
    let reader_core = core.clone();
    spawn_thread("nagi-pane-reader", 256 * 1024, move || {
        output::reader_thread(&reader_core, reader, shared)
    })?;
    if let Some((runtime, master)) = registered {
        runtime.spawn(output::read_while_quiet(core.clone(), master));
    }
    let parser_core = core.clone();
    spawn_thread("nagi-pane-parser", 1024 * 1024, move || {
        output::parser_loop(&parser_core)
    })?;
    let waiter_core = core.clone();
    spawn_thread("nagi-pane-waiter", 256 * 1024, move || {
        waiter_loop(&waiter_core, child)
    })?;
    Ok(core)
}

fn exit_status_of(child: &mut Box<dyn Child + Send + Sync>) -> PaneExitStatus {
    use std::os::unix::process::ExitStatusExt as _;
    let plain: &mut dyn Child = &mut **child;
    if let Some(std_child) = plain.downcast_mut::<std::process::Child>() {
        return match std_child.wait() {
            Ok(status) => PaneExitStatus {
                exit_code: status.code(),
                signal: status.signal(),
            },
            Err(_) => PaneExitStatus {
                exit_code: None,
                signal: None,
            },
        };
    }
    match child.wait() {
        Ok(status) if status.signal().is_none() => PaneExitStatus {
            exit_code: Some(status.exit_code() as i32),
            signal: None,
        },
        _ => PaneExitStatus {
            exit_code: None,
            signal: None,
        },
    }
}

fn waiter_loop(core: &PaneCore, mut child: Box<dyn Child + Send + Sync>) {
    let exit = exit_status_of(&mut child);
    process::unregister_owned_child(core.identity.pid);
    lock(&core.meta).exit = Some(exit);
    core.wait_drained(DRAIN_AFTER_EXIT);
    lock(&core.session).record_closed(exit.exit_code);
    core.finished.store(true, Ordering::Release);
    core.bump_revision();
    core.events.emit(PaneEventData::PaneExited {
        pane_id: core.identity.pane_id.clone(),
        workspace_id: core.identity.workspace_id.clone(),
        exit_code: exit.exit_code,
        signal: exit.signal,
    });
}
