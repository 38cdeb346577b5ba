//! Non-blocking descriptors: switching one to non-blocking mode, and waiting until it can
//! be read or written.

use std::os::fd::RawFd;

/// Puts the open file description of `fd` in non-blocking mode. Every descriptor that
/// shares it (`dup`s) becomes non-blocking too.
pub fn set_nonblocking(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl with F_GETFL/F_SETFL touches only the descriptor's flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// What to wait for on a descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    Readable,
    Writable,
}

/// Blocks until `fd` is ready for `readiness`, or has hung up or failed (the next read or
/// write then reports what happened).
pub fn wait_ready(fd: RawFd, readiness: Readiness) -> std::io::Result<()> {
    let events = match readiness {
        Readiness::Readable => libc::POLLIN,
        Readiness::Writable => libc::POLLOUT,
    };
    let mut poll = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd, for the duration of the call.
        if unsafe { libc::poll(&mut poll, 1, -1) } >= 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Waits up to `timeout` (rounded up to whole milliseconds) for `fd` to be ready for
/// `readiness`, or to have hung up or failed. False when the time ran out first.
pub fn wait_ready_for(
    fd: RawFd,
    readiness: Readiness,
    timeout: std::time::Duration,
) -> std::io::Result<bool> {
    let events = match readiness {
        Readiness::Readable => libc::POLLIN,
        Readiness::Writable => libc::POLLOUT,
    };
    let mut poll = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let millis = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    loop {
        // SAFETY: one valid pollfd, for the duration of the call.
        let ready = unsafe { libc::poll(&mut poll, 1, millis) };
        if ready >= 0 {
            return Ok(ready > 0);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// Blocks until one of `fds` is readable (or has hung up or failed); which ones are. A
/// negative descriptor is not waited on and never ready, so a caller can leave a slot
/// empty for a while.
pub fn wait_readable_any<const N: usize>(fds: [RawFd; N]) -> std::io::Result<[bool; N]> {
    let mut polls = readable_polls(fds);
    loop {
        if let Some(ready) = poll_readable(&mut polls, -1)? {
            return Ok(ready);
        }
    }
}

fn readable_polls<const N: usize>(fds: [RawFd; N]) -> [libc::pollfd; N] {
    fds.map(|fd| libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    })
}

/// One `poll` of `polls` for up to `timeout_millis` (-1: no limit): which are ready, or
/// `None` when none is yet (the timeout passed, or a signal interrupted the call).
fn poll_readable<const N: usize>(
    polls: &mut [libc::pollfd; N],
    timeout_millis: i32,
) -> std::io::Result<Option<[bool; N]>> {
    // SAFETY: N valid pollfds, for the duration of the call.
    let ready = unsafe { libc::poll(polls.as_mut_ptr(), N as libc::nfds_t, timeout_millis) };
    if ready > 0 {
        return Ok(Some(polls.map(|poll| poll.fd >= 0 && poll.revents != 0)));
    }
    if ready < 0 {
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn a_nonblocking_read_with_nothing_there_would_block_until_data_comes() {
        let (mut reader, mut writer) = UnixStream::pair().unwrap();
        set_nonblocking(reader.as_raw_fd()).unwrap();
        let mut buffer = [0u8; 8];
        let error = reader.read(&mut buffer).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::WouldBlock);
        assert!(
            !wait_ready_for(
                reader.as_raw_fd(),
                Readiness::Readable,
                std::time::Duration::from_millis(1)
            )
            .unwrap()
        );
        wait_ready(writer.as_raw_fd(), Readiness::Writable).unwrap();
        writer.write_all(b"x").unwrap();
        wait_ready(reader.as_raw_fd(), Readiness::Readable).unwrap();
        assert_eq!(reader.read(&mut buffer).unwrap(), 1);
    }

    #[test]
    fn waiting_on_several_descriptors_says_which_are_readable_and_skips_empty_slots() {
        let (quiet, quiet_peer) = UnixStream::pair().unwrap();
        let (talking, mut talking_peer) = UnixStream::pair().unwrap();
        talking_peer.write_all(b"x").unwrap();
        let ready = wait_readable_any([quiet.as_raw_fd(), -1, talking.as_raw_fd()]).unwrap();
        assert_eq!(ready, [false, false, true]);
        // A peer that hung up counts as readable: the next read says so.
        drop(quiet_peer);
        let ready = wait_readable_any([quiet.as_raw_fd(), -1]).unwrap();
        assert_eq!(ready, [true, false]);
    }
}
