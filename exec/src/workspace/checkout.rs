//! The one way nagi finds the Git checkout a directory belongs to: libgit2's discovery,
//! which reads `.git` and the repository's config and runs no program.
//!
//! The engine (a mission's repository, a worktree's repository, claim keys) and the
//! workspace scanner (`locate_checkout`) both start here, so a checkout root and a common
//! dir are worked out by the same rule everywhere. Paths are canonical (symlinks resolved).

use std::path::{Path, PathBuf};

/// The checkout holding a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundCheckout {
    /// The checkout's top-level directory (its work tree).
    pub root: PathBuf,
    /// The Git common dir, shared by the main checkout and its linked worktrees.
    pub common_dir: PathBuf,
    /// This checkout's own Git dir (`.git`, or `.git/worktrees/<name>` for a linked one);
    /// its index lives here.
    pub git_dir: PathBuf,
    /// Whether this is a linked worktree (`git worktree add`).
    pub is_linked: bool,
    /// `sha1` or `sha256` (`extensions.objectFormat`).
    pub object_format: String,
}

/// Why no checkout was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FindCheckoutError {
    #[error("cannot resolve {path:?}: {message}")]
    Unresolvable { path: PathBuf, message: String },
    #[error("{path:?} is not inside a Git checkout")]
    NotInCheckout { path: PathBuf },
    #[error("{path:?} is in a bare repository, which has no checkout")]
    Bare { path: PathBuf },
    #[error("cannot open the Git repository of {path:?}: {message}")]
    Unreadable { path: PathBuf, message: String },
}

fn canonical(path: &Path) -> Result<PathBuf, FindCheckoutError> {
    std::fs::canonicalize(path).map_err(|error| FindCheckoutError::Unresolvable {
        path: path.to_path_buf(),
        message: error.to_string(),
    })
}

/// The checkout `directory` (any directory inside it) belongs to.
pub fn find_checkout(directory: &Path) -> Result<FoundCheckout, FindCheckoutError> {
    let directory = canonical(directory)?;
    let repository = git2::Repository::discover(&directory).map_err(|error| {
        if error.code() == git2::ErrorCode::NotFound {
            FindCheckoutError::NotInCheckout {
                path: directory.clone(),
            }
        } else {
            FindCheckoutError::Unreadable {
                path: directory.clone(),
                message: error.message().to_string(),
            }
        }
    })?;
    let Some(workdir) = repository.workdir() else {
        return Err(FindCheckoutError::Bare { path: directory });
    };
    let object_format = repository
        .config()
        .ok()
        .and_then(|config| config.get_string("extensions.objectformat").ok())
        .map(|format| format.to_ascii_lowercase())
        .unwrap_or_else(|| "sha1".to_string());
    Ok(FoundCheckout {
        root: canonical(workdir)?,
        common_dir: canonical(repository.commondir())?,
        git_dir: canonical(repository.path())?,
        is_linked: repository.is_worktree(),
        object_format,
    })
}

impl FoundCheckout {
    /// The main checkout's root: this one's, or for a linked worktree the work tree of the
    /// common dir's repository (the common dir itself when that repository is bare).
    pub fn main_root(&self) -> Result<PathBuf, FindCheckoutError> {
        if !self.is_linked {
            return Ok(self.root.clone());
        }
        let main = git2::Repository::open(&self.common_dir).map_err(|error| {
            FindCheckoutError::Unreadable {
                path: self.common_dir.clone(),
                message: error.message().to_string(),
            }
        })?;
        match main.workdir() {
            Some(workdir) => canonical(workdir),
            None => Ok(self.common_dir.clone()),
        }
    }

    /// `HEAD^{commit}` as a full hex id; `None` while HEAD is unborn.
    pub fn head_commit(&self) -> Result<Option<String>, FindCheckoutError> {
        let repository =
            git2::Repository::open(&self.root).map_err(|error| FindCheckoutError::Unreadable {
                path: self.root.clone(),
                message: error.message().to_string(),
            })?;
        let head = match repository.head() {
            Ok(head) => head,
            Err(error)
                if matches!(
                    error.code(),
                    git2::ErrorCode::UnbornBranch | git2::ErrorCode::NotFound
                ) =>
            {
                return Ok(None);
            }
            Err(error) => {
                return Err(FindCheckoutError::Unreadable {
                    path: self.root.clone(),
                    message: error.message().to_string(),
                });
            }
        };
        Ok(head
            .peel_to_commit()
            .ok()
            .map(|commit| commit.id().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(directory: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(args)
            .current_dir(directory)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn a_checkout_a_linked_worktree_and_their_absence_are_told_apart() {
        let temp = tempfile::tempdir().unwrap();
        let base = canonical(temp.path()).unwrap();
        let main = base.join("main");
        std::fs::create_dir_all(main.join("src")).unwrap();
        git(&main, &["init", "-q", "-b", "main"]);
        assert_eq!(find_checkout(&main).unwrap().head_commit().unwrap(), None);
        git(&main, &["commit", "-q", "--allow-empty", "-m", "first"]);
        git(&main, &["worktree", "add", "-q", "-b", "side", "../linked"]);

        let found = find_checkout(&main.join("src")).unwrap();
        assert_eq!(found.root, main);
        assert_eq!(found.common_dir, main.join(".git"));
        assert_eq!(found.git_dir, main.join(".git"));
        assert!(!found.is_linked);
        assert_eq!(found.object_format, "sha1");
        let head = found.head_commit().unwrap().unwrap();
        assert_eq!(head.len(), 40);

        let linked = find_checkout(&base.join("linked")).unwrap();
        assert_eq!(linked.root, base.join("linked"));
        assert_eq!(linked.common_dir, main.join(".git"));
        assert_eq!(linked.git_dir, main.join(".git/worktrees/linked"));
        assert!(linked.is_linked);
        assert_eq!(linked.main_root().unwrap(), main);
        assert_eq!(linked.head_commit().unwrap(), Some(head));

        let outside = base.join("outside");
        std::fs::create_dir(&outside).unwrap();
        assert_eq!(
            find_checkout(&outside),
            Err(FindCheckoutError::NotInCheckout { path: outside })
        );
        let bare = base.join("bare.git");
        git(&base, &["init", "-q", "--bare", "bare.git"]);
        assert_eq!(
            find_checkout(&bare),
            Err(FindCheckoutError::Bare { path: bare })
        );
        assert!(matches!(
            find_checkout(&base.join("missing")),
            Err(FindCheckoutError::Unresolvable { .. })
        ));
    }
}
