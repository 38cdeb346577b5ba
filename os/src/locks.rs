//! File locks: the server's whole-file `flock`, and the one-byte open-file-description
//! locks (`F_OFD_SETLK`) of checkout claims. Both are taken without waiting and released by
//! the kernel when the holder dies, so a SIGKILLed server never leaves one behind.

use std::fs::File;
use std::os::fd::AsRawFd;

/// Takes an exclusive `flock` on `file` without waiting; `false` when another open file
/// holds it.
pub fn try_lock_exclusive(file: &File) -> bool {
    // SAFETY: flock on a valid, owned file descriptor.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Whether a one-byte range lock is taken or given back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeLock {
    Write,
    Unlock,
}

/// Takes or gives back the write lock of the byte at `offset` of `file`, without waiting.
/// The lock belongs to the open file description, so two descriptors of one process
/// exclude each other as two processes do. Busy: `EAGAIN` or `EACCES`.
pub fn set_byte_lock(file: &File, offset: i64, lock: RangeLock) -> std::io::Result<()> {
    // SAFETY: a zeroed flock is a valid value; the fields that matter are set below.
    let mut range: libc::flock = unsafe { std::mem::zeroed() };
    range.l_type = match lock {
        RangeLock::Write => libc::F_WRLCK,
        RangeLock::Unlock => libc::F_UNLCK,
    } as libc::c_short;
    range.l_whence = libc::SEEK_SET as libc::c_short;
    range.l_start = offset;
    range.l_len = 1;
    // SAFETY: fcntl on a valid, owned descriptor with a pointer to a live flock.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &range) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_open_files_exclude_each_other_until_the_lock_is_given_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("locks");
        let first = File::create(&path).unwrap();
        let second = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        set_byte_lock(&first, 7, RangeLock::Write).unwrap();
        assert!(set_byte_lock(&second, 7, RangeLock::Write).is_err());
        set_byte_lock(&second, 8, RangeLock::Write).unwrap();
        set_byte_lock(&first, 7, RangeLock::Unlock).unwrap();
        set_byte_lock(&second, 7, RangeLock::Write).unwrap();

        assert!(try_lock_exclusive(&first));
        assert!(!try_lock_exclusive(&second));
        drop(first);
        assert!(try_lock_exclusive(&second));
    }
}
