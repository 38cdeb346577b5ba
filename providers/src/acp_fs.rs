//! The client side of ACP's file-system methods, scoped to the worktree.
//!
//! An ACP agent may ask its client to read (`fs/read_text_file`) or write
//! (`fs/write_text_file`) a file. We serve both only beneath the claimed worktree, and writes
//! only when the run has write consent (`Sandbox::WorkspaceWrite`). Paths are resolved with
//! symlinks followed, so a link inside the worktree cannot point a write outside it.

use std::path::{Component, Path, PathBuf};

use crate::spec::Sandbox;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileAccessError {
    #[error("write refused: this run is read-only")]
    ReadOnly,
    #[error("{0} is not an absolute path")]
    NotAbsolute(PathBuf),
    #[error("{0} is outside the worktree")]
    OutsideWorktree(PathBuf),
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
}

/// File access for one run.
#[derive(Debug, Clone)]
pub struct WorktreeFiles {
    /// The worktree with symlinks resolved.
    root: PathBuf,
    sandbox: Sandbox,
}

impl WorktreeFiles {
    pub fn new(worktree: &Path, sandbox: Sandbox) -> std::io::Result<WorktreeFiles> {
        Ok(WorktreeFiles {
            root: std::fs::canonicalize(worktree)?,
            sandbox,
        })
    }

    pub fn can_write(&self) -> bool {
        self.sandbox == Sandbox::WorkspaceWrite
    }

    /// Resolves `path` to a location inside the worktree. The file itself may not exist
    /// yet (a write creates it); its parent directory must.
    fn resolve(&self, path: &Path) -> Result<PathBuf, FileAccessError> {
        if !path.is_absolute() {
            return Err(FileAccessError::NotAbsolute(path.to_path_buf()));
        }
        if path
            .components()
            .any(|component| component == Component::ParentDir)
        {
            return Err(FileAccessError::OutsideWorktree(path.to_path_buf()));
        }
        let io_error = |error: std::io::Error| FileAccessError::Io {
            path: path.to_path_buf(),
            message: error.to_string(),
        };
        let resolved = match std::fs::canonicalize(path) {
            Ok(resolved) => resolved,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let parent = path
                    .parent()
                    .ok_or_else(|| FileAccessError::OutsideWorktree(path.to_path_buf()))?;
                let name = path
                    .file_name()
                    .ok_or_else(|| FileAccessError::OutsideWorktree(path.to_path_buf()))?;
                std::fs::canonicalize(parent).map_err(io_error)?.join(name)
            }
            Err(error) => return Err(io_error(error)),
        };
        if resolved.starts_with(&self.root) {
            Ok(resolved)
        } else {
            Err(FileAccessError::OutsideWorktree(path.to_path_buf()))
        }
    }

    /// `fs/read_text_file`: the text of a file, optionally from 1-based `line` for `limit`
    /// lines.
    pub async fn read(
        &self,
        path: &Path,
        line: Option<u32>,
        limit: Option<u32>,
    ) -> Result<String, FileAccessError> {
        let resolved = self.resolve(path)?;
        let text = tokio::fs::read_to_string(&resolved)
            .await
            .map_err(|error| FileAccessError::Io {
                path: path.to_path_buf(),
                message: error.to_string(),
            })?;
        if line.is_none() && limit.is_none() {
            return Ok(text);
        }
        let skip = line.map_or(0, |line| line.saturating_sub(1) as usize);
        let take = limit.map_or(usize::MAX, |limit| limit as usize);
        Ok(text.split_inclusive('\n').skip(skip).take(take).collect())
    }

    /// `fs/write_text_file`: only with write consent, only inside the worktree.
    pub async fn write(&self, path: &Path, content: &str) -> Result<PathBuf, FileAccessError> {
        if !self.can_write() {
            return Err(FileAccessError::ReadOnly);
        }
        let resolved = self.resolve(path)?;
        tokio::fs::write(&resolved, content)
            .await
            .map_err(|error| FileAccessError::Io {
                path: path.to_path_buf(),
                message: error.to_string(),
            })?;
        Ok(resolved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn writes_stay_inside_the_worktree_and_need_consent() {
        let worktree = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let files = WorktreeFiles::new(worktree.path(), Sandbox::WorkspaceWrite).unwrap();
        files
            .write(&worktree.path().join("a.txt"), "hi")
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(worktree.path().join("a.txt")).unwrap(),
            "hi"
        );
        assert!(matches!(
            files.write(&outside.path().join("b.txt"), "x").await,
            Err(FileAccessError::OutsideWorktree(_))
        ));
        assert!(matches!(
            files.write(Path::new("relative.txt"), "x").await,
            Err(FileAccessError::NotAbsolute(_))
        ));
        std::os::unix::fs::symlink(outside.path(), worktree.path().join("link")).unwrap();
        assert!(matches!(
            files.write(&worktree.path().join("link/c.txt"), "x").await,
            Err(FileAccessError::OutsideWorktree(_))
        ));
        assert!(!outside.path().join("c.txt").exists());

        let read_only = WorktreeFiles::new(worktree.path(), Sandbox::ReadOnly).unwrap();
        assert_eq!(
            read_only.write(&worktree.path().join("d.txt"), "x").await,
            Err(FileAccessError::ReadOnly)
        );
        assert_eq!(
            read_only
                .read(&worktree.path().join("a.txt"), None, None)
                .await
                .unwrap(),
            "hi"
        );
    }

    #[tokio::test]
    async fn reads_honour_line_and_limit() {
        let worktree = tempfile::tempdir().unwrap();
        std::fs::write(worktree.path().join("f"), "1\n2\n3\n4\n").unwrap();
        let files = WorktreeFiles::new(worktree.path(), Sandbox::ReadOnly).unwrap();
        assert_eq!(
            files
                .read(&worktree.path().join("f"), Some(2), Some(2))
                .await
                .unwrap(),
            "2\n3\n"
        );
    }
}
