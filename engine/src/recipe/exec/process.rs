//! Service processes: starting one detached from the server, recognising it again after a
//! restart, and ending it with everything it started.
//!
//! # Markers
//!
//! Every process the server starts for a run carries `NAGI_SESSION_MARKER` (and
//! `NAGI_RUN_ID`), and a restarted server ends all of those at start-up, before recovery
//! adopts anything (`crate::leftovers`). Services must survive a restart to be adopted, so
//! they carry neither: both are removed from their environment, and they carry
//! `NAGI_SERVICE_LEASE=<lease id>` instead. The lease id is random per lease, so the marker
//! names exactly one service start; stopping a service ends its process group and every
//! process with its marker (descendants that left the group included).
//!
//! A service is recognised as the one a lease recorded by its pid, its kernel start time
//! (`/proc/<pid>/stat` field 22, so a reused pid never matches) and its marker.
//!
//! # Supervision, not a pane
//!
//! Panes end with the server (`PaneHost::shutdown`), and a healthy service must keep
//! running across a restart, so a service is a plain child process in its own process
//! group (stdin null, stdout and stderr appended to a log file the project pane follows).
//! A thread waits for it, so it never lingers as a zombie while this server lives; after a
//! restart it is an orphan that the system reaps.

use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::leftovers::{RUN_MARKER, SESSION_MARKER};
use nagi_exec::runner::resolve_program;
use nagi_os::procfs::{ProcStat, all_processes, read_stat};

/// The environment variable that marks a service's processes with its lease id.
pub const SERVICE_LEASE_MARKER: &str = "NAGI_SERVICE_LEASE";

/// Variables of the server's environment a service does not inherit: the leftover markers
/// (a restarted server would end the service before adopting it) and the identity of a
/// pane the server itself may run in (closing that pane must not end the service).
const NOT_INHERITED: &[&str] = &[
    SESSION_MARKER,
    RUN_MARKER,
    "NAGI_TERMINAL_ID",
    "NAGI_PANE_ID",
    "NAGI_TAB_ID",
    "NAGI_WORKSPACE_ID",
];

/// How a started service ended, once it has (filled in by its waiting thread).
#[derive(Debug, Clone, Default)]
pub struct ExitWatch(Arc<Mutex<Option<String>>>);

impl ExitWatch {
    /// `exited with code 1` or `was killed by signal 9`, once the process ended.
    pub fn exit_description(&self) -> Option<String> {
        self.0.lock().ok().and_then(|slot| slot.clone())
    }
}

/// Everything needed to start one service.
pub struct ServiceLaunch<'a> {
    pub worktree: &'a Path,
    pub argv: &'a [String],
    pub port_env: &'a str,
    pub port: u16,
    pub lease_id: &'a str,
    pub log_path: &'a Path,
}

/// A service process that was started by this server.
#[derive(Debug, Clone)]
pub struct StartedService {
    pub pid: u32,
    pub start_time: u64,
    pub exit: ExitWatch,
}

fn open_log(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Starts a service: cwd = worktree, the server's environment minus [`NOT_INHERITED`] plus
/// `<port_env>=<port>` and the lease marker, stdin null, output appended to its log, its own
/// process group. Blocking (briefly).
pub fn spawn_service(launch: &ServiceLaunch<'_>) -> Result<StartedService, String> {
    let search_path = std::env::var_os("PATH");
    let program = resolve_program(&launch.argv[0], launch.worktree, search_path.as_deref())
        .map_err(|error| error.to_string())?;
    let log = open_log(launch.log_path)
        .map_err(|error| format!("cannot open the log {}: {error}", launch.log_path.display()))?;
    let log_for_stderr = log
        .try_clone()
        .map_err(|error| format!("cannot open the log {}: {error}", launch.log_path.display()))?;
    let mut command = Command::new(&program);
    command.args(&launch.argv[1..]).current_dir(launch.worktree);
    for name in NOT_INHERITED {
        command.env_remove(name);
    }
    command
        .env("PWD", launch.worktree)
        .env(SERVICE_LEASE_MARKER, launch.lease_id)
        .env(launch.port_env, launch.port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(log_for_stderr))
        .process_group(0);
    let mut child = nagi_pane::process::with_spawn_lock(|| {
        let child = command.spawn()?;
        nagi_os::children::register_owned_child(child.id());
        Ok::<_, std::io::Error>(child)
    })
    .map_err(|error| format!("cannot start {}: {error}", program.display()))?;
    let pid = child.id();
    // The leader is our unreaped child here, so its /proc entry exists.
    let start_time = read_stat(pid as i32)
        .map(|stat| stat.start_time)
        .unwrap_or(0);
    let exit = ExitWatch::default();
    let slot = exit.0.clone();
    std::thread::Builder::new()
        .name(format!("nagi-service-{pid}"))
        .spawn(move || {
            let description = match child.wait() {
                Ok(status) => match (status.code(), status.signal()) {
                    (Some(code), _) => format!("exited with code {code}"),
                    (None, Some(signal)) => format!("was killed by signal {signal}"),
                    (None, None) => "ended".to_owned(),
                },
                Err(error) => format!("ended (its status could not be read: {error})"),
            };
            nagi_os::children::unregister_owned_child(pid);
            if let Ok(mut slot) = slot.lock() {
                *slot = Some(description);
            }
        })
        .map_err(|error| format!("cannot watch the service: {error}"))?;
    Ok(StartedService {
        pid,
        start_time,
        exit,
    })
}

fn environment_contains(pid: i32, entry: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|byte| *byte == 0).any(|item| item == entry))
}

fn marker_entry(lease_id: &str) -> Vec<u8> {
    format!("{SERVICE_LEASE_MARKER}={lease_id}").into_bytes()
}

/// Whether `pid` is still the live service process a lease recorded.
pub fn service_process_is_alive(pid: u32, start_time: u64, lease_id: &str) -> bool {
    let pid = pid as i32;
    read_stat(pid).is_some_and(|stat| !stat.is_zombie() && stat.start_time == start_time)
        && environment_contains(pid, &marker_entry(lease_id))
}

/// Live processes of a service: its process group (when the recorded leader is verified)
/// and every process carrying its lease marker.
fn service_processes(group: Option<i32>, lease_id: &str) -> Vec<ProcStat> {
    let marker = marker_entry(lease_id);
    let me = std::process::id() as i32;
    all_processes()
        .into_iter()
        .filter(|stat| stat.pid != me && !stat.is_zombie())
        .filter(|stat| {
            group.is_some_and(|group| stat.pgrp == group) || environment_contains(stat.pid, &marker)
        })
        .collect()
}

/// Ends a service: SIGTERM to its group and marked processes, up to `grace` for them to
/// go, then SIGKILL. Returns how many processes were signalled; `Err` names survivors.
/// Blocking for at most `grace` plus two seconds.
pub fn stop_service_processes(
    pid: Option<u32>,
    start_time: Option<u64>,
    lease_id: &str,
    grace: Duration,
) -> Result<usize, String> {
    let group = match (pid, start_time) {
        (Some(pid), Some(start_time)) if service_process_is_alive(pid, start_time, lease_id) => {
            Some(pid as i32)
        }
        _ => None,
    };
    let first = service_processes(group, lease_id);
    let signalled = first.len();
    if let Some(group) = group {
        // The group's leader was verified above and is not reaped before it exits.
        nagi_os::signals::signal_group(group, libc::SIGTERM);
    }
    for stat in &first {
        nagi_os::signals::signal_if_same(stat, libc::SIGTERM);
        nagi_os::signals::signal_if_same(stat, libc::SIGCONT);
    }
    let wait_for_end = |deadline: Instant, signal: Option<libc::c_int>| -> Vec<ProcStat> {
        loop {
            let remaining = service_processes(group, lease_id);
            if remaining.is_empty() || Instant::now() >= deadline {
                return remaining;
            }
            if let Some(signal) = signal {
                for stat in &remaining {
                    nagi_os::signals::signal_if_same(stat, signal);
                }
            }
            nagi_os::children::reap_orphans();
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    if wait_for_end(Instant::now() + grace, None).is_empty() {
        return Ok(signalled);
    }
    let survivors = wait_for_end(Instant::now() + Duration::from_secs(2), Some(libc::SIGKILL));
    if survivors.is_empty() {
        Ok(signalled)
    } else {
        let pids: Vec<String> = survivors.iter().map(|stat| stat.pid.to_string()).collect();
        Err(format!("processes {} survived SIGKILL", pids.join(", ")))
    }
}

/// The last `max_bytes` of a service log, for failure messages.
pub fn log_tail(path: &Path, max_bytes: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let length = file.metadata().map(|metadata| metadata.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(length.saturating_sub(max_bytes)));
    let mut bytes = Vec::new();
    let _ = file.take(max_bytes).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}
