//! Processes a previous server of this session left behind.
//!
//! Every process the server starts for a run — the provider, its descendants, check
//! commands, the transcript pane's follower — carries `NAGI_SESSION_MARKER=<digest of the
//! session dir>` in its environment (a digest, so that no process the server starts is
//! told where nagi keeps its database and config), and descendants inherit it however they detach. A server that died
//! (SIGKILL, crash, power loss) cannot end them itself; the next server of the same
//! session finds them by that marker at start-up, before it launches anything, and ends
//! them, so no orphan survives a restart.

use std::path::Path;
use std::time::{Duration, Instant};

pub const SESSION_MARKER: &str = "NAGI_SESSION_MARKER";

/// The value of [`SESSION_MARKER`] for a session: the first 32 hex digits of the sha256 of
/// its directory's path.
pub fn session_marker_value(session_dir: &Path) -> String {
    use sha2::Digest;
    use std::os::unix::ffi::OsStrExt;
    let digest = sha2::Sha256::digest(session_dir.as_os_str().as_bytes());
    hex::encode(&digest[..16])
}
pub const RUN_MARKER: &str = "NAGI_RUN_ID";

fn environment_has(pid: i32, needle: &[u8]) -> bool {
    match std::fs::read(format!("/proc/{pid}/environ")) {
        Ok(environ) => environ
            .split(|byte| *byte == 0)
            .any(|entry| entry == needle),
        Err(_) => false,
    }
}

/// Pids of processes (other than this one) that carry this session's marker.
fn marker_entry(session_dir: &Path) -> Vec<u8> {
    format!("{SESSION_MARKER}={}", session_marker_value(session_dir)).into_bytes()
}

pub fn marked_processes(session_dir: &Path) -> Vec<i32> {
    let needle = marker_entry(session_dir);
    let me = std::process::id() as i32;
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| *pid != me && environment_has(*pid, &needle))
        .collect()
}

/// Ends every marked process of this session. Returns how many were found.
pub fn end_leftovers(session_dir: &Path) -> usize {
    let found = marked_processes(session_dir);
    if found.is_empty() {
        return 0;
    }
    tracing::warn!(
        count = found.len(),
        "ending processes a previous server of this session left behind"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let remaining = marked_processes(session_dir);
        if remaining.is_empty() || Instant::now() > deadline {
            break;
        }
        for pid in remaining {
            // Only the process that carried this session's marker when it was read: the
            // pid is checked again against the start time seen now.
            if let Some(stat) = nagi_os::procfs::read_stat(pid)
                && environment_has(pid, &marker_entry(session_dir))
            {
                nagi_os::signals::signal_if_same(&stat, libc::SIGKILL);
            }
        }
        // Reap what was ours (the subreaper may have inherited them).
        nagi_os::children::reap_orphans();
        std::thread::sleep(Duration::from_millis(20));
    }
    found.len()
}
