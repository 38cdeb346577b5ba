//! Canonical checkout paths (MISSIONS.md §2.1 step 2, §10).

use std::path::{Path, PathBuf};

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
    let canonical = std::fs::canonicalize(path).map_err(|error| format!("cannot resolve {raw:?}: {error}"))?;
    if !canonical.is_dir() {
        return Err(format!("{} is not a directory", canonical.display()));
    }
    let repository = git2::Repository::discover(&canonical)
        .map_err(|_| format!("{} is not inside a Git checkout", canonical.display()))?;
    let Some(workdir) = repository.workdir() else {
        return Err(format!("{} is a bare repository; a mission needs a checkout", canonical.display()));
    };
    let root = std::fs::canonicalize(workdir).map_err(|error| format!("cannot resolve the checkout root: {error}"))?;
    if root != canonical {
        return Err(format!(
            "{} is inside the checkout {} but is not its root; give the checkout root",
            canonical.display(),
            root.display()
        ));
    }
    let common_dir = std::fs::canonicalize(repository.commondir())
        .map_err(|error| format!("cannot resolve the Git common dir: {error}"))?;
    Ok(Checkout { root, common_dir })
}

/// Reads `HEAD^{commit}` of a checkout as a full hex object id.
pub fn head_commit(root: &Path) -> Result<String, String> {
    let repository = git2::Repository::open(root).map_err(|error| format!("cannot open {}: {error}", root.display()))?;
    let head = repository.head().map_err(|error| format!("cannot read HEAD of {}: {error}", root.display()))?;
    let commit = head.peel_to_commit().map_err(|error| format!("HEAD of {} is not a commit: {error}", root.display()))?;
    Ok(commit.id().to_string())
}

pub fn path_text(path: &Path) -> Result<String, String> {
    path.to_str().map(str::to_string).ok_or_else(|| format!("{} is not valid UTF-8", path.display()))
}
