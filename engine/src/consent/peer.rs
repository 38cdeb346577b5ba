//! The authority rule: the server accepts a consent only on a connection whose connecting
//! process has the server's uid, is not a descendant of the server (the server is a
//! subreaper, so no pane process can escape that by double-forking or `setsid`), and whose
//! controlling terminal is not one of the server's managed PTYs. The verdict is made when
//! the connection is accepted and bound to it: a process that connects and then hands its
//! socket to a child and exits leaves the child with its own (refused) verdict, and a peer
//! already gone when it is judged is refused.

use std::os::unix::fs::MetadataExt;

use crate::engine::Engine;
use nagi_os::peer::{PeerProcess, PeerProcessError};
use nagi_os::procfs::is_descendant_of;

/// Whether a connection may grant consent, judged once when it is accepted and kept for
/// its whole life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsentVerdict {
    Allowed,
    Refused(RefusalReason),
}

/// Why a connection may not grant consent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalReason {
    OtherUid {
        peer_uid: u32,
        server_uid: u32,
    },
    /// The kernel named no process for the peer.
    Unidentified,
    /// The process that connected had exited before it could be judged (its socket may
    /// live on in a process it started).
    Gone,
    Descendant,
    ManagedTerminal,
    /// The request came through the fleet from another host, which did not allow its
    /// client's consent by its own rule (fleet mode: `api::fleet_route`).
    NotAllowedOnOriginHost,
}

impl std::fmt::Display for RefusalReason {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RefusalReason::OtherUid { peer_uid, server_uid } => write!(
                formatter,
                "the peer runs as uid {peer_uid}, not the server's uid {server_uid}"
            ),
            RefusalReason::Unidentified => {
                formatter.write_str("the peer's process cannot be identified")
            }
            RefusalReason::Gone => formatter.write_str(
                "the process that opened this connection exited before it could be judged; \
                 consent must come from a connection opened by a person's own cockpit",
            ),
            RefusalReason::Descendant => formatter.write_str(
                "the peer is a process the nagi server started (a managed pane, a provider, a check or one of \
                 their descendants); consent must come from a person's own terminal",
            ),
            RefusalReason::ManagedTerminal => formatter.write_str(
                "the peer's terminal is a managed pane of this server; run the cockpit in your own terminal",
            ),
            RefusalReason::NotAllowedOnOriginHost => formatter.write_str(
                "the request came from another host of the fleet, whose own consent rule did not \
                 allow its client; run the cockpit in your own terminal on that host",
            ),
        }
    }
}

/// The controlling terminal of `pid` as (major, minor), from `/proc/<pid>/stat` field 7.
fn controlling_terminal(pid: i32) -> Option<(u32, u32)> {
    nagi_os::procfs::read_stat(pid)?.controlling_terminal()
}

fn device_of(path: &str) -> Option<(u32, u32)> {
    let rdev = std::fs::metadata(path).ok()?.rdev();
    Some((libc::major(rdev), libc::minor(rdev)))
}

/// The terminals of every pane this server manages.
fn managed_terminals(engine: &Engine) -> Vec<(u32, u32)> {
    let Ok(panes) = engine.panes.list_panes(None) else {
        return Vec::new();
    };
    panes
        .iter()
        .filter_map(|pane| engine.panes.process_info(Some(&pane.pane_id)).ok())
        .filter_map(|info| info.tty)
        .filter_map(|tty| device_of(&tty))
        .collect()
}

/// Whether `pid`'s controlling terminal is one of this server's managed panes.
pub fn runs_in_managed_pane(engine: &Engine, pid: i32) -> bool {
    controlling_terminal(pid).is_some_and(|terminal| managed_terminals(engine).contains(&terminal))
}

/// Judges the process that opened a connection, at accept. The pidfd taken first keeps
/// naming that process, so the `/proc` reads below cannot be about a recycled pid unless
/// the process has exited, which the final check refuses.
pub fn judge_connection(
    engine: &Engine,
    peer_uid: u32,
    process: Result<PeerProcess, PeerProcessError>,
) -> ConsentVerdict {
    let refused = ConsentVerdict::Refused;
    if peer_uid != engine.server_uid {
        return refused(RefusalReason::OtherUid {
            peer_uid,
            server_uid: engine.server_uid,
        });
    }
    let process = match process {
        Ok(process) => process,
        Err(PeerProcessError::Gone) => return refused(RefusalReason::Gone),
        Err(PeerProcessError::Unidentified) => return refused(RefusalReason::Unidentified),
    };
    if process.has_exited() {
        return refused(RefusalReason::Gone);
    }
    let pid = process.pid();
    if is_descendant_of(pid, engine.server_pid as i32) {
        return refused(RefusalReason::Descendant);
    }
    let terminal = controlling_terminal(pid);
    // Exited while being judged: what was read may describe a dead process, or nothing.
    if process.has_exited() {
        return refused(RefusalReason::Gone);
    }
    if let Some(terminal) = terminal
        && managed_terminals(engine).contains(&terminal)
    {
        return refused(RefusalReason::ManagedTerminal);
    }
    ConsentVerdict::Allowed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_process_has_a_readable_terminal_entry() {
        // Either no controlling terminal or a decodable one; never a parse failure panic.
        let _ = controlling_terminal(std::process::id() as i32);
        assert_eq!(controlling_terminal(i32::MAX), None);
    }
}
