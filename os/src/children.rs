//! Children of the server: the child subreaper, the registry of children that have an
//! owner who waits for them, and the reaper of the orphans nobody owns.
//!
//! Reaping without stealing:
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

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::procfs::{all_processes, read_stat};

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

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
