//! `[worktree].copy_ignored`: copying declared Git-ignored files (local config, generated
//! fixtures) from the source checkout into a new mission worktree (contract §11).
//!
//! Every declared path is checked before the first byte is copied, so a refused file
//! leaves the worktree untouched. A source must be a regular file reached without
//! symlinks (no component of its path may be a symlink), at most 16 MiB, and Git-ignored
//! in the source checkout (its ignore rules, read with libgit2), unless the destination already holds
//! identical bytes (a tracked file arrives with the checkout). A destination that exists
//! with other content is refused, as is one reached through a symlink (a tracked symlink
//! in the worktree must not redirect the copy outside it). At most 64 MiB are copied in
//! total. Missing sources are skipped. Copies keep the source's permission bits (`rwx` for
//! user, group and others; set-id and sticky bits are not copied).

use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::errors::RecipeExecError;
use crate::recipe::ProjectRecipe;

/// Largest file copied (16 MiB).
pub const MAX_COPY_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Most bytes copied into one worktree (64 MiB).
pub const MAX_COPY_TOTAL_BYTES: u64 = 64 * 1024 * 1024;

/// What happened to one declared path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyOutcome {
    Copied,
    /// The worktree already had identical bytes (for example a tracked file).
    AlreadyPresent,
    /// The source checkout has no such file; nothing to copy.
    MissingSource,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopiedFile {
    /// The declared relative path, with `/` separators.
    pub path: String,
    /// Size of the source (0 when missing).
    pub bytes: u64,
    pub outcome: CopyOutcome,
}

enum Reached {
    Missing,
    File(std::fs::Metadata),
}

fn refused(path: &str, reason: impl Into<String>) -> RecipeExecError {
    RecipeExecError::CopyRefused {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

fn components(relative: &str) -> Vec<&str> {
    relative.split(['/', '\\']).collect()
}

/// Walks `relative` below `root` one component at a time without following symlinks.
/// `side` names the checkout in messages.
fn reach(root: &Path, relative: &str, side: &str) -> Result<Reached, RecipeExecError> {
    let parts = components(relative);
    let mut current = root.to_path_buf();
    for (index, part) in parts.iter().enumerate() {
        current.push(part);
        let shown = parts[..=index].join("/");
        let metadata = match std::fs::symlink_metadata(&current) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Reached::Missing);
            }
            Err(error) if error.raw_os_error() == Some(libc::ENOTDIR) => {
                return Ok(Reached::Missing);
            }
            Err(error) => {
                return Err(refused(
                    relative,
                    format!("cannot inspect `{shown}` in the {side}: {error}"),
                ));
            }
        };
        if metadata.file_type().is_symlink() {
            return Err(refused(
                relative,
                format!(
                    "`{shown}` in the {side} is a symbolic link; copied files must be reached without symlinks"
                ),
            ));
        }
        let last = index + 1 == parts.len();
        if last {
            if !metadata.is_file() {
                return Err(refused(
                    relative,
                    format!("is not a regular file in the {side}"),
                ));
            }
            return Ok(Reached::File(metadata));
        }
        if !metadata.is_dir() {
            // A file where a directory would be: the path cannot exist.
            return Ok(Reached::Missing);
        }
    }
    Ok(Reached::Missing)
}

/// Reads a whole file (at most `MAX_COPY_FILE_BYTES`) without following a final symlink.
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_COPY_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_COPY_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "grew beyond {MAX_COPY_FILE_BYTES} bytes while it was read"
        )));
    }
    Ok(bytes)
}

/// Asks the source repository's ignore rules (libgit2: `.gitignore` files, `info/exclude`,
/// `core.excludesFile`). A tracked file never gets this far unless the worktree lacks its
/// bytes, i.e. it was modified in the source, which is not a file to copy either.
struct IgnoreChecker {
    source_checkout: PathBuf,
    repository: Option<git2::Repository>,
}

impl IgnoreChecker {
    fn is_ignored(&mut self, relative: &str) -> Result<bool, RecipeExecError> {
        if self.repository.is_none() {
            let repository = git2::Repository::open(&self.source_checkout).map_err(|error| {
                refused(
                    relative,
                    format!(
                        "cannot open the source repository to check its ignore rules: {}",
                        error.message()
                    ),
                )
            })?;
            self.repository = Some(repository);
        }
        let repository = self.repository.as_ref().expect("set above");
        let git_path = components(relative).join("/");
        repository
            .is_path_ignored(Path::new(&git_path))
            .map_err(|error| {
                refused(
                    relative,
                    format!("cannot check whether Git ignores it: {}", error.message()),
                )
            })
    }
}

struct PlannedCopy {
    relative: String,
    source: PathBuf,
    destination: PathBuf,
    mode: u32,
}

/// Creates the missing directories of `relative`'s parent below `root`, refusing symlinks.
fn create_parent_directories(root: &Path, relative: &str) -> Result<(), RecipeExecError> {
    let parts = components(relative);
    let mut current = root.to_path_buf();
    for part in &parts[..parts.len() - 1] {
        current.push(part);
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.is_dir() && !metadata.file_type().is_symlink() => continue,
            Ok(_) => {
                return Err(refused(
                    relative,
                    format!(
                        "{} in the new worktree is not a directory",
                        current.display()
                    ),
                ));
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&current).map_err(|error| {
                    refused(
                        relative,
                        format!("cannot create {}: {error}", current.display()),
                    )
                })?;
            }
            Err(error) => {
                return Err(refused(
                    relative,
                    format!("cannot inspect {}: {error}", current.display()),
                ));
            }
        }
    }
    Ok(())
}

fn copy_one(planned: &PlannedCopy) -> Result<(), RecipeExecError> {
    let relative = planned.relative.as_str();
    let bytes = read_bounded(&planned.source)
        .map_err(|error| refused(relative, format!("cannot read the source: {error}")))?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(&planned.destination)
        .map_err(|error| {
            refused(
                relative,
                format!("cannot create it in the new worktree: {error}"),
            )
        })?;
    file.write_all(&bytes).map_err(|error| {
        refused(
            relative,
            format!("cannot write it in the new worktree: {error}"),
        )
    })?;
    file.sync_all().map_err(|error| {
        refused(
            relative,
            format!("cannot write it in the new worktree: {error}"),
        )
    })?;
    std::fs::set_permissions(
        &planned.destination,
        std::fs::Permissions::from_mode(planned.mode),
    )
    .map_err(|error| refused(relative, format!("cannot set its permissions: {error}")))?;
    Ok(())
}

/// Copies the recipe's `copy_ignored` files from `source_checkout` into
/// `destination_worktree` (see the module docs for every rule). Blocking: it reads Git's
/// ignore rules and files; call it from `spawn_blocking` in async code.
pub fn copy_ignored(
    source_checkout: &Path,
    destination_worktree: &Path,
    recipe: &ProjectRecipe,
) -> Result<Vec<CopiedFile>, RecipeExecError> {
    let mut checker = IgnoreChecker {
        source_checkout: source_checkout.to_path_buf(),
        repository: None,
    };
    let mut report = Vec::new();
    let mut planned = Vec::new();
    let mut total_bytes: u64 = 0;
    for relative in &recipe.worktree.copy_ignored {
        let shown = components(relative).join("/");
        let Reached::File(metadata) = reach(source_checkout, relative, "source checkout")? else {
            report.push(CopiedFile {
                path: shown,
                bytes: 0,
                outcome: CopyOutcome::MissingSource,
            });
            continue;
        };
        let size = metadata.len();
        if size > MAX_COPY_FILE_BYTES {
            return Err(refused(
                relative,
                format!(
                    "is {size} bytes; a copied file may be at most {MAX_COPY_FILE_BYTES} bytes (16 MiB)"
                ),
            ));
        }
        let source = source_checkout.join(relative);
        let destination = destination_worktree.join(relative);
        if let Reached::File(existing) = reach(destination_worktree, relative, "new worktree")? {
            let identical = existing.len() == size
                && read_bounded(&source)
                    .ok()
                    .zip(read_bounded(&destination).ok())
                    .is_some_and(|(ours, theirs)| ours == theirs);
            if !identical {
                return Err(refused(
                    relative,
                    "the new worktree already has this file with different content; it is not overwritten",
                ));
            }
            report.push(CopiedFile {
                path: shown,
                bytes: size,
                outcome: CopyOutcome::AlreadyPresent,
            });
            continue;
        }
        if !checker.is_ignored(relative)? {
            return Err(refused(
                relative,
                "is not ignored by Git in the source checkout; only ignored files are copied (tracked files arrive with the checkout)",
            ));
        }
        total_bytes += size;
        if total_bytes > MAX_COPY_TOTAL_BYTES {
            return Err(refused(
                relative,
                format!(
                    "copying it would bring the total to {total_bytes} bytes; at most {MAX_COPY_TOTAL_BYTES} bytes (64 MiB) are copied"
                ),
            ));
        }
        planned.push(PlannedCopy {
            relative: relative.clone(),
            source,
            destination,
            mode: metadata.permissions().mode() & 0o777,
        });
        report.push(CopiedFile {
            path: shown,
            bytes: size,
            outcome: CopyOutcome::Copied,
        });
    }
    for copy in &planned {
        create_parent_directories(destination_worktree, &copy.relative)?;
        copy_one(copy)?;
    }
    Ok(report)
}
