//! Canonical checkout paths (contract §2.1 step 2, §10).

use std::path::{Path, PathBuf};

use nagi_exec::workspace::checkout::{FindCheckoutError, find_checkout};

/// A canonical checkout: its root and the Git common dir it shares with linked worktrees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkout {
    pub root: PathBuf,
    pub common_dir: PathBuf,
}

impl Checkout {
    /// The claim key: one live run per (common dir, checkout root).
    pub fn claim_key(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        hasher.update(self.common_dir.as_os_str().as_encoded_bytes());
        hasher.update([0]);
        hasher.update(self.root.as_os_str().as_encoded_bytes());
        hex::encode(hasher.finalize())
    }
}

/// Resolves `raw` (relative paths against the server's working directory, symlinks
/// resolved) and requires it to be the root of a Git checkout.
pub fn canonical_checkout(raw: &str) -> Result<Checkout, String> {
    if raw.is_empty() {
        return Err("the repository path is empty".into());
    }
    if raw.contains('\0') {
        return Err("the repository path contains a NUL byte".into());
    }
    let path = Path::new(raw);
    if !path.is_absolute() {
        return Err(format!(
            "{raw:?} is a relative path; give the checkout's absolute path (the server's working directory is not the caller's)"
        ));
    }
    let canonical =
        std::fs::canonicalize(path).map_err(|error| format!("cannot resolve {raw:?}: {error}"))?;
    if !canonical.is_dir() {
        return Err(format!("{} is not a directory", canonical.display()));
    }
    let found = find_checkout(&canonical).map_err(|error| match error {
        FindCheckoutError::NotInCheckout { .. } => {
            format!("{} is not inside a Git checkout", canonical.display())
        }
        FindCheckoutError::Bare { .. } => format!(
            "{} is a bare repository; a mission needs a checkout",
            canonical.display()
        ),
        other => other.to_string(),
    })?;
    if found.root != canonical {
        return Err(format!(
            "{} is inside the checkout {} but is not its root; give the checkout root",
            canonical.display(),
            found.root.display()
        ));
    }
    Ok(Checkout {
        root: found.root,
        common_dir: found.common_dir,
    })
}

/// Remembers checkouts already verified, keyed by canonical path, as long as their `.git`
/// entry is the same file (device, inode, change time). Verifying with libgit2 opens the
/// repository; a hit costs one `canonicalize` and one `stat`. Failures are never cached.
#[derive(Default)]
pub struct CheckoutCache {
    entries: std::sync::Mutex<std::collections::HashMap<PathBuf, (GitEntryStamp, Checkout)>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct GitEntryStamp {
    device: u64,
    inode: u64,
    changed_seconds: i64,
    changed_nanos: i64,
}

fn git_entry_stamp(root: &Path) -> Option<GitEntryStamp> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::symlink_metadata(root.join(".git")).ok()?;
    Some(GitEntryStamp {
        device: metadata.dev(),
        inode: metadata.ino(),
        changed_seconds: metadata.ctime(),
        changed_nanos: metadata.ctime_nsec(),
    })
}

impl CheckoutCache {
    /// The checkout `raw` names. A hit is answered here; a miss opens the repository with
    /// libgit2 on the blocking pool, so that no runtime worker waits on the disk for it.
    pub async fn canonical_checkout(&self, raw: &str) -> Result<Checkout, String> {
        if let Some(checkout) = self.cached(raw) {
            return Ok(checkout);
        }
        let owned = raw.to_string();
        let checkout = tokio::task::spawn_blocking(move || canonical_checkout(&owned))
            .await
            .map_err(|error| format!("the checkout lookup of {raw:?} stopped: {error}"))??;
        self.remember(&checkout);
        Ok(checkout)
    }

    fn cached(&self, raw: &str) -> Option<Checkout> {
        if !Path::new(raw).is_absolute() {
            return None;
        }
        let canonical = std::fs::canonicalize(raw).ok()?;
        let stamp = git_entry_stamp(&canonical)?;
        let (cached_stamp, checkout) = self.entries.lock().ok()?.get(&canonical).cloned()?;
        (cached_stamp == stamp).then_some(checkout)
    }

    fn remember(&self, checkout: &Checkout) {
        if let Some(stamp) = git_entry_stamp(&checkout.root)
            && let Ok(mut entries) = self.entries.lock()
        {
            if entries.len() > 4096 {
                entries.clear();
            }
            entries.insert(checkout.root.clone(), (stamp, checkout.clone()));
        }
    }
}

/// Reads `HEAD^{commit}` of a checkout as a full hex object id.
pub fn head_commit(root: &Path) -> Result<String, String> {
    let repository = git2::Repository::open(root)
        .map_err(|error| format!("cannot open {}: {error}", root.display()))?;
    let head = repository
        .head()
        .map_err(|error| format!("cannot read HEAD of {}: {error}", root.display()))?;
    let commit = head
        .peel_to_commit()
        .map_err(|error| format!("HEAD of {} is not a commit: {error}", root.display()))?;
    Ok(commit.id().to_string())
}

pub fn path_text(path: &Path) -> Result<String, String> {
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{} is not valid UTF-8", path.display()))
}
