//! Who is connecting: the peer's process, taken at accept from a handle that pid reuse
//! cannot fool, and whether it is one of the server's own descendants (a process in a
//! managed pane, however it detached).
//!
//! The engine judges a connection's consent once, when it is accepted, from this handle;
//! a socket handed down to another process keeps the verdict of the process that
//! connected.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// `SO_PEERPIDFD` (Linux 6.5): a pidfd of the process that called `connect(2)`.
const SO_PEERPIDFD: libc::c_int = 77;

/// A handle on the process at the other end of a Unix socket: a pidfd, which keeps naming
/// that process even after it exits (its pid cannot be reused while the pidfd is open and
/// the process has not been reaped... and once it exits the pidfd says so).
#[derive(Debug)]
pub struct PeerProcess {
    pid: i32,
    pidfd: OwnedFd,
}

/// Why the peer's process cannot be held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerProcessError {
    /// The process that connected has already exited.
    Gone,
    /// The kernel gave no pid, or no pidfd for it.
    Unidentified,
}

impl PeerProcess {
    /// The peer of `socket`: `SO_PEERPIDFD` where the kernel has it, else `pidfd_open` of
    /// the pid `SO_PEERCRED` gave (a narrower guarantee: the pid could in theory have been
    /// reused between the connect and this call; the descendant walk then judges the new
    /// process, which is why an exited peer is refused rather than trusted).
    pub fn of_socket(
        socket: RawFd,
        credential_pid: Option<i32>,
    ) -> Result<PeerProcess, PeerProcessError> {
        let pid = credential_pid
            .filter(|pid| *pid > 0)
            .ok_or(PeerProcessError::Unidentified)?;
        let pidfd = match peer_pidfd(socket) {
            Ok(pidfd) => pidfd,
            Err(error) if error.raw_os_error() == Some(libc::ESRCH) => {
                return Err(PeerProcessError::Gone);
            }
            Err(_) => pidfd_open(pid).map_err(|error| {
                if error.raw_os_error() == Some(libc::ESRCH) {
                    PeerProcessError::Gone
                } else {
                    PeerProcessError::Unidentified
                }
            })?,
        };
        Ok(PeerProcess { pid, pidfd })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Whether the process has exited (a zombie counts as exited): its pidfd is readable.
    pub fn has_exited(&self) -> bool {
        let mut poll = libc::pollfd {
            fd: self.pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, zero timeout.
        let ready = unsafe { libc::poll(&mut poll, 1, 0) };
        ready != 0
    }
}

fn peer_pidfd(socket: RawFd) -> std::io::Result<OwnedFd> {
    let mut fd: libc::c_int = -1;
    let mut length = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `length` bytes into `fd`.
    let result = unsafe {
        libc::getsockopt(
            socket,
            libc::SOL_SOCKET,
            SO_PEERPIDFD,
            (&mut fd as *mut libc::c_int).cast(),
            &mut length,
        )
    };
    if result != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if fd < 0 {
        return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
    }
    // SAFETY: the kernel gave us a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn pidfd_open(pid: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: a plain system call with integer arguments.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel gave us a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procfs::{is_descendant_of, parent_pid};
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_child_process_descends_from_us_and_we_do_not_descend_from_it() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let me = std::process::id() as i32;
        let child_pid = child.id() as i32;
        assert_eq!(parent_pid(child_pid), Some(me));
        assert!(is_descendant_of(child_pid, me));
        assert!(!is_descendant_of(me, child_pid));
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn the_peer_of_a_socket_pair_is_this_process_and_alive() {
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let me = std::process::id() as i32;
        let peer = PeerProcess::of_socket(ours.as_raw_fd(), Some(me)).unwrap();
        assert_eq!(peer.pid(), me);
        assert!(!peer.has_exited());
    }

    #[test]
    fn a_peer_that_exited_after_connecting_is_seen_as_gone_though_its_socket_lives_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        // The connecting process exits at once; its socket is passed to nobody, but the
        // kernel keeps the accepted end and its credentials.
        let mut child = std::process::Command::new("python3")
            .arg("-c")
            .arg(format!(
                "import socket; s = socket.socket(socket.AF_UNIX); s.connect({:?}); import os; os._exit(0)",
                path.to_str().unwrap()
            ))
            .spawn()
            .expect("python3 runs the connecting client");
        let (accepted, _) = listener.accept().unwrap();
        child.wait().unwrap();
        let credentials_pid = Some(child.id() as i32);
        match PeerProcess::of_socket(accepted.as_raw_fd(), credentials_pid) {
            Err(PeerProcessError::Gone) => {}
            Ok(peer) => assert!(peer.has_exited(), "the exited peer must not look alive"),
            Err(other) => panic!("expected the peer to be gone, got {other:?}"),
        }
    }
}
