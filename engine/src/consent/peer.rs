//! The authority rule (DESIGN §7): the server accepts a consent only from a peer that has
//! the server's uid, is not a descendant of the server (the server is a subreaper, so no
//! pane process can escape that by double-forking or `setsid`), and whose controlling
//! terminal is not one of the server's managed PTYs.

use std::os::unix::fs::MetadataExt;

use crate::api::Peer;
use crate::engine::Engine;
use crate::server::peer::is_descendant_of;

/// Why a peer may not grant consent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

/// The controlling terminal of `pid` as (major, minor), from `/proc/<pid>/stat` field 7.
fn controlling_terminal(pid: i32) -> Option<(u32, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    let tty_nr: u64 = after_name.split_whitespace().nth(4)?.parse().ok()?;
    if tty_nr == 0 {
        return None;
    }
    // The kernel's encoding: minor in bits 0–7 and 20–31, major in bits 8–19.
    let major = ((tty_nr >> 8) & 0xfff) as u32;
    let minor = ((tty_nr & 0xff) | ((tty_nr >> 12) & 0xfff00)) as u32;
    Some((major, minor))
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

pub fn check_consent_peer(engine: &Engine, peer: Peer) -> Result<(), Refusal> {
    if peer.uid != engine.server_uid {
        return Err(Refusal(format!(
            "the peer runs as uid {}, not the server's uid {}",
            peer.uid, engine.server_uid
        )));
    }
    let Some(pid) = peer.pid else {
        return Err(Refusal("the peer's process cannot be identified".into()));
    };
    if is_descendant_of(pid, engine.server_pid as i32) {
        return Err(Refusal(
            "the peer is a process the nagi server started (a managed pane, a provider, a check or one of their \
             descendants); consent must come from a person's own terminal"
                .into(),
        ));
    }
    if let Some(terminal) = controlling_terminal(pid)
        && managed_terminals(engine).contains(&terminal)
    {
        return Err(Refusal("the peer's terminal is a managed pane of this server; run the cockpit in your own terminal".into()));
    }
    Ok(())
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
