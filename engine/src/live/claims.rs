//! Checkout claims: one live run per canonical checkout (Git common dir + checkout root).
//!
//! Two layers. The `claims` table makes a claim atomic with the run it belongs to (a
//! unique key, written in the same transaction as `RunStarted`). An OS lock keeps two
//! servers (other sessions of the same user) off the same checkout; the OS drops it if the
//! server dies, and recovery takes it again.
//!
//! The OS lock is an open-file-description byte-range lock (`F_OFD_SETLK`) of one byte of
//! `<config dir>/mission-worktree-locks/claims.lock`, at an offset taken from the claim key
//! (62 bits of its SHA-256). Every session of the config dir opens that one file, so no
//! file is created per checkout: creating a file would be a visible cost on the path of
//! every `mission.start`. OFD locks belong to the open file description,
//! not the process, so closing some other descriptor of the file never drops them (unlike
//! classic `fcntl` locks), and they conflict between two servers, which open the file
//! separately.

use std::collections::HashSet;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Mutex;

/// The file every session's claim locks are byte ranges of.
pub const CLAIM_LOCK_FILE: &str = "claims.lock";

pub struct ClaimLocks {
    dir: PathBuf,
    state: Mutex<HeldLocks>,
}

#[derive(Default)]
struct HeldLocks {
    /// The lock file, opened on the first claim.
    file: Option<File>,
    held: HashSet<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimLockError {
    #[error("the checkout is held by another nagi server process (lock {0})")]
    HeldElsewhere(String),
    #[error("the checkout is already claimed by a run in this server")]
    HeldHere,
    #[error("cannot use the claim lock {path}: {message}")]
    Io { path: String, message: String },
}

/// The byte of the lock file that stands for `key`: 62 bits of the key's hash, so that the
/// range stays inside `off_t`. Keys that are not hex (never made by us) are hashed first.
fn lock_offset(key: &str) -> i64 {
    let prefix = key
        .get(..16)
        .and_then(|hex| u64::from_str_radix(hex, 16).ok());
    let value = prefix.unwrap_or_else(|| {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(key.as_bytes());
        u64::from_be_bytes(digest[..8].try_into().expect("eight bytes"))
    });
    (value >> 2) as i64
}

impl ClaimLocks {
    pub fn new(dir: PathBuf) -> ClaimLocks {
        ClaimLocks {
            dir,
            state: Mutex::new(HeldLocks::default()),
        }
    }

    fn lock_path(&self) -> PathBuf {
        self.dir.join(CLAIM_LOCK_FILE)
    }

    fn open_lock_file(&self) -> Result<File, ClaimLockError> {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let path = self.lock_path();
        let io_error = |message: String| ClaimLockError::Io {
            path: path.display().to_string(),
            message,
        };
        if !self.dir.exists() {
            std::fs::create_dir_all(&self.dir).map_err(|error| io_error(error.to_string()))?;
            std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|error| io_error(error.to_string()))?;
        }
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|error| io_error(format!("{error} (symlinks are refused)")))
    }

    /// Takes the OS lock for `key`. Fails if this process or another holds it.
    pub fn acquire(&self, key: &str) -> Result<(), ClaimLockError> {
        let mut state = self.state.lock().map_err(|_| ClaimLockError::HeldHere)?;
        if state.held.contains(key) {
            return Err(ClaimLockError::HeldHere);
        }
        if state.file.is_none() {
            state.file = Some(self.open_lock_file()?);
        }
        let file = state.file.as_ref().expect("opened above");
        let offset = lock_offset(key);
        match nagi_os::locks::set_byte_lock(file, offset, nagi_os::locks::RangeLock::Write) {
            Ok(()) => {}
            Err(error)
                if matches!(
                    error.raw_os_error(),
                    Some(libc::EAGAIN) | Some(libc::EACCES)
                ) =>
            {
                return Err(ClaimLockError::HeldElsewhere(format!(
                    "{} byte {offset}",
                    self.lock_path().display()
                )));
            }
            Err(error) => {
                return Err(ClaimLockError::Io {
                    path: self.lock_path().display().to_string(),
                    message: error.to_string(),
                });
            }
        }
        state.held.insert(key.to_string());
        Ok(())
    }

    pub fn release(&self, key: &str) {
        if let Ok(mut state) = self.state.lock()
            && state.held.remove(key)
            && let Some(file) = &state.file
            && let Err(error) = nagi_os::locks::set_byte_lock(
                file,
                lock_offset(key),
                nagi_os::locks::RangeLock::Unlock,
            )
        {
            tracing::warn!(%error, "cannot drop a checkout's OS lock; it goes with the server");
        }
    }

    pub fn is_held(&self, key: &str) -> bool {
        self.state
            .lock()
            .map(|state| state.held.contains(key))
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(seed: &str) -> String {
        use sha2::{Digest, Sha256};
        hex::encode(Sha256::digest(seed.as_bytes()))
    }

    #[test]
    fn two_servers_cannot_hold_the_same_checkout() {
        let dir = tempfile::tempdir().unwrap();
        // Two instances open the lock file separately, as two server processes do.
        let first = ClaimLocks::new(dir.path().join("locks"));
        let second = ClaimLocks::new(dir.path().join("locks"));
        let checkout = key("checkout-a");
        first.acquire(&checkout).unwrap();
        assert!(matches!(
            second.acquire(&checkout),
            Err(ClaimLockError::HeldElsewhere(_))
        ));
        assert_eq!(first.acquire(&checkout), Err(ClaimLockError::HeldHere));
        // Another checkout is free for the second server.
        second.acquire(&key("checkout-b")).unwrap();
        first.release(&checkout);
        assert!(!first.is_held(&checkout));
        second.acquire(&checkout).unwrap();
        assert!(second.is_held(&checkout));
    }

    #[test]
    fn a_lock_goes_with_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let checkout = key("checkout-a");
        let first = ClaimLocks::new(dir.path().join("locks"));
        first.acquire(&checkout).unwrap();
        drop(first);
        let second = ClaimLocks::new(dir.path().join("locks"));
        second.acquire(&checkout).unwrap();
    }

    #[test]
    fn the_lock_file_is_private_and_symlinks_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let locks = ClaimLocks::new(dir.path().join("locks"));
        locks.acquire(&key("checkout-a")).unwrap();
        let mode =
            |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir.path().join("locks")), 0o700);
        assert_eq!(mode(&dir.path().join("locks").join(CLAIM_LOCK_FILE)), 0o600);

        let hostile = dir.path().join("hostile");
        std::fs::create_dir(&hostile).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", hostile.join(CLAIM_LOCK_FILE)).unwrap();
        let refused = ClaimLocks::new(hostile).acquire(&key("checkout-a"));
        assert!(
            matches!(refused, Err(ClaimLockError::Io { .. })),
            "{refused:?}"
        );
    }

    #[test]
    fn offsets_stay_inside_off_t_and_differ_per_key() {
        let offsets: HashSet<i64> = (0..1000)
            .map(|index| lock_offset(&key(&format!("checkout-{index}"))))
            .collect();
        assert_eq!(offsets.len(), 1000);
        assert!(offsets.iter().all(|offset| *offset >= 0));
        assert!(lock_offset("not hex at all") >= 0);
    }
}
