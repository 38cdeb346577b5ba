//! Checkout claims: one live run per canonical checkout (Git common dir + checkout root).
//!
//! Two layers. The `claims` table makes a claim atomic with the run it belongs to (a
//! unique key, written in the same transaction as `RunStarted`). An exclusive OS file lock
//! on `<config dir>/mission-worktree-locks/<key>.lock`, held by this server process, keeps
//! two servers (other sessions of the same user) off the same checkout; the OS drops it if
//! the server dies, and recovery takes it again.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::PathBuf;
use std::sync::Mutex;

pub struct ClaimLocks {
    dir: PathBuf,
    held: Mutex<HashMap<String, File>>,
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

impl ClaimLocks {
    pub fn new(dir: PathBuf) -> ClaimLocks {
        ClaimLocks {
            dir,
            held: Mutex::new(HashMap::new()),
        }
    }

    fn lock_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.lock"))
    }

    /// Takes the OS lock for `key`. Fails if this process or another holds it.
    pub fn acquire(&self, key: &str) -> Result<(), ClaimLockError> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut held = self.held.lock().map_err(|_| ClaimLockError::HeldHere)?;
        if held.contains_key(key) {
            return Err(ClaimLockError::HeldHere);
        }
        let path = self.lock_path(key);
        let io_error = |message: String| ClaimLockError::Io {
            path: path.display().to_string(),
            message,
        };
        if !self.dir.exists() {
            std::fs::create_dir_all(&self.dir).map_err(|error| io_error(error.to_string()))?;
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|error| io_error(error.to_string()))?;
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|error| io_error(format!("{error} (symlinks are refused)")))?;
        // SAFETY: flock on a valid, owned descriptor.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        if !locked {
            return Err(ClaimLockError::HeldElsewhere(path.display().to_string()));
        }
        held.insert(key.to_string(), file);
        Ok(())
    }

    pub fn release(&self, key: &str) {
        if let Ok(mut held) = self.held.lock() {
            held.remove(key);
        }
    }

    pub fn is_held(&self, key: &str) -> bool {
        self.held
            .lock()
            .map(|held| held.contains_key(key))
            .unwrap_or(false)
    }
}

/// Releases a run's claim: the store row, then the OS lock.
pub async fn release_claim(
    engine: &std::sync::Arc<crate::engine::Engine>,
    mission_id: &str,
    run_id: &str,
    claim_key: &str,
) -> Result<(), crate::errors::EngineError> {
    let (mission, run, key) = (
        mission_id.to_string(),
        run_id.to_string(),
        claim_key.to_string(),
    );
    let released = engine
        .missions
        .transact(move |writer| Ok(writer.release_claim(&key, &mission, &run)?))
        .await;
    engine.claim_locks.release(claim_key);
    released.map(|_| ())
}
