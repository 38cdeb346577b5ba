//! Waiting for a file to grow: the kernel's inotify tells when it was written to, so the
//! console draws a record as soon as the server appends it; where inotify cannot be had,
//! a short poll does the same more slowly.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use tokio::io::unix::AsyncFd;

/// How often the file is read when inotify is not available.
const POLL_INTERVAL: Duration = Duration::from_millis(10);
/// How often it is read even with inotify (a write the watch missed, e.g. after the file
/// was replaced).
const WATCHED_POLL_INTERVAL: Duration = Duration::from_millis(250);

pub struct Appended {
    watch: Option<AsyncFd<OwnedFd>>,
}

impl Appended {
    /// Watches `path`, which exists.
    pub fn watch(path: &Path) -> Appended {
        Appended {
            watch: inotify_watch(path),
        }
    }

    /// Returns once the file may have grown: `true` when the kernel said it was written
    /// to, `false` after a poll interval.
    pub async fn next(&mut self) -> bool {
        let Some(watch) = &self.watch else {
            tokio::time::sleep(POLL_INTERVAL).await;
            return false;
        };
        match tokio::time::timeout(WATCHED_POLL_INTERVAL, watch.readable()).await {
            Ok(Ok(mut ready)) => {
                drain(watch.get_ref());
                ready.clear_ready();
                true
            }
            _ => false,
        }
    }
}

/// An inotify descriptor watching `path` for writes, or `None` when the kernel refuses.
fn inotify_watch(path: &Path) -> Option<AsyncFd<OwnedFd>> {
    // SAFETY: inotify_init1 takes flags only and returns a new descriptor or -1.
    let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just opened and is owned here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a valid descriptor and a NUL-terminated path.
    let added = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), path.as_ptr(), libc::IN_MODIFY) };
    if added < 0 {
        return None;
    }
    // SAFETY: the descriptor is an open inotify descriptor owned by the AsyncFd from here
    // on, and stays open until it is dropped.
    unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }.ok()
}

/// Reads the pending events (only their arrival matters).
fn drain(fd: &OwnedFd) {
    let mut buffer = [0u8; 4096];
    loop {
        // SAFETY: reads into a buffer of the given length from a descriptor owned here.
        let read = unsafe { libc::read(fd.as_raw_fd(), buffer.as_mut_ptr().cast(), buffer.len()) };
        if read <= 0 {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_write_to_the_watched_file_wakes_the_follower() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.jsonl");
        std::fs::write(&path, "").unwrap();
        let mut appended = Appended::watch(&path);
        assert!(appended.watch.is_some(), "inotify is available on Linux");
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        file.write_all(b"{}\n").unwrap();
        assert!(appended.next().await, "woken by the write, not by the poll");
        // Nothing written since: the next wait ends with the poll.
        assert!(!appended.next().await);
    }
}
