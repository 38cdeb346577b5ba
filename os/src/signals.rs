//! Signals, sent only to the process that was meant: a pid seen in a scan of `/proc` is
//! signalled only if it still has the start time it had then, so a reused pid is never hit.

use crate::procfs::{ProcStat, read_stat};

/// Sends `signal` to the process of `stat` if it is still that process and not a zombie.
/// Returns whether the signal was sent.
pub fn signal_if_same(stat: &ProcStat, signal: libc::c_int) -> bool {
    let still_same = read_stat(stat.pid)
        .is_some_and(|now| now.start_time == stat.start_time && !now.is_zombie());
    // SAFETY: kill has no memory preconditions; the pid was just checked to be the process
    // seen in the scan.
    still_same && unsafe { libc::kill(stat.pid, signal) } == 0
}

/// Sends `signal` to every process of the group led by `group_leader`. The caller owns the
/// leader and has not reaped it, so the group id cannot have been reused. An empty group
/// (`ESRCH`) is not an error worth reporting.
pub fn signal_group(group_leader: libc::pid_t, signal: libc::c_int) {
    // SAFETY: killpg has no memory preconditions.
    unsafe {
        libc::killpg(group_leader, signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_signalled_only_while_it_is_the_one_seen() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let seen = read_stat(child.id() as i32).unwrap();
        let mut changed = seen.clone();
        changed.start_time += 1;
        assert!(
            !signal_if_same(&changed, libc::SIGTERM),
            "a different start time is another process"
        );
        assert!(signal_if_same(&seen, libc::SIGTERM));
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGTERM));
    }
}
