//! Where a declared command runs and which file it executes (contract §5.4).

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use super::RunnerError;

/// Resolves `<worktree>/<cwd>` through symlinks and requires the result to be
/// a directory inside the (canonical) worktree. A symlinked cwd that resolves
/// inside is allowed; one that escapes is rejected.
pub fn resolve_working_directory(worktree: &Path, cwd: &str) -> Result<PathBuf, RunnerError> {
    let relative = Path::new(cwd);
    let is_relative_and_down_only = relative
        .components()
        .all(|component| matches!(component, Component::Normal(_) | Component::CurDir));
    if cwd.is_empty() || cwd.contains('\0') || !is_relative_and_down_only {
        return Err(RunnerError::InvalidWorkingDirectory {
            cwd: cwd.to_owned(),
        });
    }
    let canonical_worktree =
        worktree
            .canonicalize()
            .map_err(|source| RunnerError::WorktreeUnavailable {
                worktree: worktree.to_path_buf(),
                source,
            })?;
    let joined = canonical_worktree.join(relative);
    let canonical_cwd =
        joined
            .canonicalize()
            .map_err(|source| RunnerError::WorkingDirectoryUnavailable {
                path: joined.clone(),
                source,
            })?;
    if !canonical_cwd.starts_with(&canonical_worktree) {
        return Err(RunnerError::WorkingDirectoryEscapesWorktree {
            cwd: cwd.to_owned(),
            resolved: canonical_cwd,
            worktree: canonical_worktree,
        });
    }
    if !canonical_cwd.is_dir() {
        return Err(RunnerError::WorkingDirectoryNotADirectory {
            path: canonical_cwd,
        });
    }
    Ok(canonical_cwd)
}

enum Candidate {
    Executable(PathBuf),
    NotExecutable(PathBuf),
    NotRegularFile(PathBuf),
    Absent,
}

fn inspect_candidate(path: PathBuf) -> Candidate {
    // `metadata` follows symlinks: a symlink to an executable is executable.
    match std::fs::metadata(&path) {
        Err(_) => Candidate::Absent,
        Ok(metadata) if !metadata.is_file() => Candidate::NotRegularFile(path),
        Ok(metadata) if metadata.permissions().mode() & 0o111 == 0 => {
            Candidate::NotExecutable(path)
        }
        Ok(_) => Candidate::Executable(path),
    }
}

/// Resolves `program`: a name with a path separator (or an absolute path) is
/// taken relative to `cwd`; a bare name is searched on `search_path` (the
/// `PATH` the command will get), where empty and relative entries are resolved
/// against `cwd`. The result must be an executable regular file.
pub fn resolve_program(
    program: &str,
    cwd: &Path,
    search_path: Option<&OsStr>,
) -> Result<PathBuf, RunnerError> {
    if program.trim().is_empty() || program.contains('\0') {
        return Err(RunnerError::InvalidProgram {
            program: program.to_owned(),
        });
    }
    if program.contains('/') {
        return match inspect_candidate(cwd.join(program)) {
            Candidate::Executable(path) => Ok(path),
            Candidate::NotExecutable(path) => Err(RunnerError::ProgramNotExecutable { path }),
            Candidate::NotRegularFile(path) => Err(RunnerError::ProgramNotRegularFile { path }),
            Candidate::Absent => Err(RunnerError::ProgramNotFound {
                program: program.to_owned(),
                searched: vec![cwd.join(program)],
            }),
        };
    }
    let mut searched = Vec::new();
    let mut first_rejected: Option<Candidate> = None;
    let entries: Vec<OsString> = match search_path {
        Some(path_value) => std::env::split_paths(path_value)
            .map(PathBuf::into_os_string)
            .collect(),
        None => Vec::new(),
    };
    for entry in entries {
        let directory = if entry.is_empty() {
            cwd.to_path_buf()
        } else {
            cwd.join(&entry)
        };
        let candidate_path = directory.join(program);
        searched.push(candidate_path.clone());
        match inspect_candidate(candidate_path) {
            Candidate::Executable(path) => return Ok(path),
            Candidate::Absent => {}
            rejected => {
                first_rejected.get_or_insert(rejected);
            }
        }
    }
    match first_rejected {
        Some(Candidate::NotExecutable(path)) => Err(RunnerError::ProgramNotExecutable { path }),
        Some(Candidate::NotRegularFile(path)) => Err(RunnerError::ProgramNotRegularFile { path }),
        _ => Err(RunnerError::ProgramNotFound {
            program: program.to_owned(),
            searched,
        }),
    }
}
