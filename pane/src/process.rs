//! Process control for panes: finding a pane's whole process tree, ending it, and reading
//! process details from /proc (Linux). The subreaper, the owned-child registry and the
//! orphan reaper are the OS seam's (`nagi_os::children`), re-exported here.
//!
//! # Ending a pane
//!
//! [`terminate_pane_processes`] finds the pane's processes as: the pane's child, every
//! process in the pane's session, every child of the server whose environment carries the
//! pane's `NAGI_TERMINAL_ID` (orphans that called `setsid`), and all descendants of those.
//! It sends SIGHUP and SIGTERM (and SIGCONT, so stopped jobs can react), waits a short
//! grace period, then sends SIGKILL to whatever is left, rescanning each round so that
//! processes forked meanwhile are caught too. Each signal is sent only after checking that
//! the pid still has the start time seen in the scan, so a reused pid is never hit.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

pub use nagi_os::children::{
    OrphanReaper, become_child_subreaper, reap_orphans, register_owned_child,
    unregister_owned_child, with_spawn_lock,
};
pub use nagi_os::procfs::{ProcStat, all_processes, process_is_gone, read_stat};
use nagi_os::signals::signal_if_same;

fn own_pid() -> i32 {
    std::process::id() as i32
}

/// What identifies a pane's processes.
#[derive(Debug, Clone)]
pub struct PaneProcessIdentity {
    /// The pane's child (a session leader: portable-pty calls `setsid`).
    pub pid: i32,
    /// `NAGI_TERMINAL_ID=<terminal id>`, present in the environment of pane processes.
    pub environment_marker: String,
}

fn environment_contains(pid: i32, entry: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|byte| *byte == 0).any(|item| item == entry))
}

/// The pane's live processes (see the module docs), zombies excluded.
pub fn pane_process_tree(identity: &PaneProcessIdentity) -> Vec<ProcStat> {
    let me = own_pid();
    let processes = all_processes();
    let mut children: HashMap<i32, Vec<usize>> = HashMap::new();
    for (index, stat) in processes.iter().enumerate() {
        children.entry(stat.ppid).or_default().push(index);
    }
    let marker = identity.environment_marker.as_bytes();
    let mut selected = BTreeSet::new();
    let mut queue: Vec<usize> = processes
        .iter()
        .enumerate()
        .filter(|(_, stat)| {
            stat.pid != me
                && (stat.pid == identity.pid
                    || stat.session == identity.pid
                    || (stat.ppid == me && environment_contains(stat.pid, marker)))
        })
        .map(|(index, _)| index)
        .collect();
    while let Some(index) = queue.pop() {
        if !selected.insert(index) {
            continue;
        }
        if let Some(kids) = children.get(&processes[index].pid) {
            queue.extend(kids.iter().copied().filter(|kid| processes[*kid].pid != me));
        }
    }
    selected
        .into_iter()
        .map(|index| processes[index].clone())
        .filter(|stat| !stat.is_zombie())
        .collect()
}

/// What [`terminate_pane_processes`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Termination {
    /// Every pid that was signalled.
    pub signalled: Vec<i32>,
    /// Pids that needed SIGKILL.
    pub killed: Vec<i32>,
    /// Pids still alive at the end (should be empty).
    pub survivors: Vec<i32>,
}

/// Ends every process of a pane (see the module docs). Blocks for up to `grace` plus a
/// few rounds of SIGKILL.
pub fn terminate_pane_processes(identity: &PaneProcessIdentity, grace: Duration) -> Termination {
    let mut termination = Termination::default();
    let mut signalled = BTreeSet::new();
    let tree = pane_process_tree(identity);
    for stat in &tree {
        signal_if_same(stat, libc::SIGHUP);
        signal_if_same(stat, libc::SIGTERM);
        signal_if_same(stat, libc::SIGCONT);
        signalled.insert(stat.pid);
    }
    let deadline = Instant::now() + grace;
    loop {
        reap_orphans();
        let live = pane_process_tree(identity);
        if live.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            break;
        }
        for stat in &live {
            if signalled.insert(stat.pid) {
                // Forked after the first round: it gets the same polite signals.
                signal_if_same(stat, libc::SIGHUP);
                signal_if_same(stat, libc::SIGTERM);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for _ in 0..20 {
        let live = pane_process_tree(identity);
        if live.is_empty() {
            break;
        }
        for stat in &live {
            signal_if_same(stat, libc::SIGKILL);
            signalled.insert(stat.pid);
            if !termination.killed.contains(&stat.pid) {
                termination.killed.push(stat.pid);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
        reap_orphans();
    }
    reap_orphans();
    termination.survivors = pane_process_tree(identity)
        .iter()
        .map(|stat| stat.pid)
        .collect();
    termination.signalled = signalled.into_iter().collect();
    termination
}

/// Details of one process, for `pane.process_info`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessDetails {
    pub pid: i32,
    pub name: String,
    pub argv: Option<Vec<String>>,
    pub cwd: Option<String>,
}

pub fn process_cwd(pid: i32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/cwd"))
        .ok()
        .map(|path| path.to_string_lossy().into_owned())
}

pub fn process_details(pid: i32) -> Option<ProcessDetails> {
    let stat = read_stat(pid)?;
    let argv = std::fs::read(format!("/proc/{pid}/cmdline"))
        .ok()
        .map(|cmdline| {
            cmdline
                .split(|byte| *byte == 0)
                .filter(|part| !part.is_empty())
                .map(|part| String::from_utf8_lossy(part).into_owned())
                .collect::<Vec<_>>()
        });
    Some(ProcessDetails {
        pid,
        name: stat.comm,
        argv: argv.filter(|argv| !argv.is_empty()),
        cwd: process_cwd(pid),
    })
}

/// Live processes of a process group, by pid.
pub fn processes_in_group(pgrp: i32) -> Vec<i32> {
    let mut pids: Vec<i32> = all_processes()
        .into_iter()
        .filter(|stat| stat.pgrp == pgrp && !stat.is_zombie())
        .map(|stat| stat.pid)
        .collect();
    pids.sort_unstable();
    pids
}

/// The foreground process group of a terminal, from its master side.
pub fn foreground_process_group(master_fd: i32) -> Option<i32> {
    // SAFETY: tcgetpgrp only queries the descriptor.
    let pgrp = unsafe { libc::tcgetpgrp(master_fd) };
    (pgrp > 0).then_some(pgrp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_its_own_stat() {
        let stat = read_stat(own_pid()).expect("own stat");
        assert_eq!(stat.pid, own_pid());
        assert_eq!(stat.session, unsafe { libc::getsid(0) });
        assert!(!stat.is_zombie());
        let details = process_details(own_pid()).unwrap();
        assert!(details.cwd.is_some());
        assert!(details.argv.is_some_and(|argv| !argv.is_empty()));
    }
}
