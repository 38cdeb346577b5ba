//! Process control for panes: the child subreaper, reaping orphans, finding a pane's whole
//! process tree, ending it, and reading process details from /proc (Linux).
//!
//! # Reaping without stealing
//!
//! The server is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so a pane process that
//! double-forks and calls `setsid` is re-parented to the server instead of init, and stays
//! findable and killable. Such orphans must be reaped by the server, or they remain
//! zombies. A global `waitpid(-1)` would do that, but it would also collect the exit status
//! of children that belong to someone else: the pane children that portable-pty spawned
//! (waited for by their pane's waiter thread), and processes the rest of the engine starts
//! with `std::process` or `tokio::process`. Those owners would then see `ECHILD`.
//!
//! So [`reap_orphans`] only reaps a zombie child when both hold:
//! - it is not registered as owned ([`register_owned_child`]; pane children are
//!   registered while the spawn lock is held, so the reaper can never see them
//!   unregistered), and
//! - its session differs from the server's own session. Everything a pane starts runs in
//!   the pane's session (portable-pty calls `setsid`) or in a session of its own, while
//!   children that the engine spawns with `std::process`/`tokio::process` inherit the
//!   server's session and are therefore never touched. A child the engine starts in a new
//!   session must be registered with [`register_owned_child`].
//!
//! It first peeks with `waitid(P_ALL, WEXITED | WNOHANG | WNOWAIT)`, which leaves the
//! zombie in place; only when the peeked child is reapable does it call `waitpid` on that
//! exact pid. When the peeked child belongs to someone else, it scans /proc for other
//! zombie children instead.
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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

static OWNED_CHILDREN: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
static SPAWN_LOCK: Mutex<()> = Mutex::new(());

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Makes this process a child subreaper: orphaned descendants are re-parented to it.
/// Idempotent. The server calls it at start; [`super::PaneHost::new`] calls it as well.
pub fn become_child_subreaper() -> std::io::Result<()> {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only reads its integer argument.
    let result = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Marks a child as owned by someone who will wait for it; the reaper leaves it alone.
pub fn register_owned_child(pid: u32) {
    lock(&OWNED_CHILDREN).insert(pid as i32);
}

/// Forgets an owned child, after its owner has waited for it.
pub fn unregister_owned_child(pid: u32) {
    lock(&OWNED_CHILDREN).remove(&(pid as i32));
}

/// Runs `spawn` (which must register the child it starts) so that the reaper cannot run
/// between the fork and the registration.
pub fn with_spawn_lock<T>(spawn: impl FnOnce() -> T) -> T {
    let _guard = lock(&SPAWN_LOCK);
    spawn()
}

pub use nagi_os::procfs::{ProcStat, all_processes, process_is_gone, read_stat};

fn own_pid() -> i32 {
    std::process::id() as i32
}

fn own_session() -> i32 {
    // SAFETY: getsid(0) has no preconditions.
    unsafe { libc::getsid(0) }
}

fn reapable(pid: i32, server_session: i32) -> bool {
    if lock(&OWNED_CHILDREN).contains(&pid) {
        return false;
    }
    read_stat(pid).is_some_and(|stat| stat.session != server_session)
}

fn reap_exact(pid: i32) -> bool {
    let mut status = 0;
    // SAFETY: waitpid on one pid with WNOHANG; `status` is a valid out pointer.
    unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) == pid }
}

/// Peeks at one waitable child without reaping it.
fn peek_waitable_child() -> Option<i32> {
    // SAFETY: siginfo_t is plain data; waitid fills it. WNOWAIT leaves the child waitable.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let result = libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        if result != 0 {
            return None;
        }
        let pid = info.si_pid();
        (pid > 0).then_some(pid)
    }
}

/// Reaps zombie children that nobody owns (see the module docs). Returns how many.
pub fn reap_orphans() -> usize {
    let _guard = lock(&SPAWN_LOCK);
    let server_session = own_session();
    let mut reaped = 0;
    while let Some(pid) = peek_waitable_child() {
        if reapable(pid, server_session) && reap_exact(pid) {
            reaped += 1;
            continue;
        }
        // The waitable child belongs to someone else; look for other zombies.
        let me = own_pid();
        for stat in all_processes() {
            if stat.ppid == me
                && stat.is_zombie()
                && reapable(stat.pid, server_session)
                && reap_exact(stat.pid)
            {
                reaped += 1;
            }
        }
        break;
    }
    reaped
}

/// A background thread that reaps orphans every `interval` until dropped.
pub struct OrphanReaper {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl OrphanReaper {
    pub fn start(interval: Duration) -> OrphanReaper {
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let thread = std::thread::Builder::new()
            .name("nagi-orphan-reaper".into())
            .stack_size(256 * 1024)
            .spawn(move || {
                while !thread_stop.load(Ordering::Relaxed) {
                    reap_orphans();
                    std::thread::park_timeout(interval);
                }
            })
            .ok();
        OrphanReaper { stop, thread }
    }
}

impl Drop for OrphanReaper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
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

/// Sends `signal` to the process only if it is still the one seen in the scan.
fn signal_if_same(stat: &ProcStat, signal: libc::c_int) {
    let still_same = read_stat(stat.pid)
        .is_some_and(|now| now.start_time == stat.start_time && !now.is_zombie());
    if still_same {
        // SAFETY: kill has no memory preconditions.
        unsafe {
            libc::kill(stat.pid, signal);
        }
    }
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
        assert_eq!(stat.session, own_session());
        assert!(!stat.is_zombie());
        let details = process_details(own_pid()).unwrap();
        assert!(details.cwd.is_some());
        assert!(details.argv.is_some_and(|argv| !argv.is_empty()));
    }

    #[test]
    fn children_in_the_server_session_are_never_reaped() {
        become_child_subreaper().unwrap();
        // A std::process child in our session: its owner must get its status.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "exit 7"])
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !read_stat(pid).is_some_and(|stat| stat.is_zombie()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        reap_orphans();
        assert!(
            read_stat(pid).is_some_and(|stat| stat.is_zombie()),
            "still waiting for its owner"
        );
        assert_eq!(child.wait().unwrap().code(), Some(7));
    }

    #[test]
    fn orphans_in_other_sessions_are_reaped() {
        become_child_subreaper().unwrap();
        // setsid makes a new session; the inner shell forks a sleeper and exits, so the
        // sleeper is orphaned and re-parented to us (the subreaper).
        // The setsid'd shell is our own child in another session, so it must be
        // registered (atomically with the spawn) or the reaper would take its status.
        let child = with_spawn_lock(|| {
            let child = std::process::Command::new("setsid")
                .args(["sh", "-c", "sleep 0.3 & echo $!"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            register_owned_child(child.id());
            child
        });
        let shell = child.id();
        let output = child.wait_with_output().unwrap();
        unregister_owned_child(shell);
        assert!(output.status.success());
        let orphan: i32 = String::from_utf8_lossy(&output.stdout)
            .trim()
            .parse()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            reap_orphans();
            if read_stat(orphan).is_none() {
                break;
            }
            assert!(Instant::now() < deadline, "orphan {orphan} was not reaped");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
