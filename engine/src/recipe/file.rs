//! Reading `.nagi/project.toml` safely: a regular file reached without
//! symlinks, at most 256 KiB.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::{ProjectRecipe, RecipeProblem, validate_str};

/// Where the recipe lives inside a checkout.
pub const RECIPE_RELATIVE_PATH: &str = ".nagi/project.toml";

/// Largest recipe accepted (256 KiB).
pub const MAX_RECIPE_BYTES: u64 = 256 * 1024;

fn file_problem(message: String) -> Vec<RecipeProblem> {
    vec![RecipeProblem {
        path: String::new(),
        message,
    }]
}

/// Loads the recipe of a checkout; `Ok(None)` when there is none (absence is
/// not an error). A symlinked `.nagi` directory is refused.
pub fn load_project_recipe(
    checkout_root: &Path,
) -> Result<Option<ProjectRecipe>, Vec<RecipeProblem>> {
    let directory = checkout_root.join(".nagi");
    match std::fs::symlink_metadata(&directory) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(file_problem(format!(
                "cannot inspect {}: {error}",
                directory.display()
            )));
        }
        Ok(metadata) if metadata.file_type().is_symlink() => {
            return Err(file_problem(format!(
                "{} is a symlink; the recipe directory must be a real directory",
                directory.display()
            )));
        }
        Ok(metadata) if !metadata.is_dir() => {
            return Err(file_problem(format!(
                "{} is not a directory",
                directory.display()
            )));
        }
        Ok(_) => {}
    }
    let path = checkout_root.join(RECIPE_RELATIVE_PATH);
    match std::fs::symlink_metadata(&path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        _ => validate_file(&path).map(Some),
    }
}

/// Reads and validates a recipe file. The file must be a regular file (not a
/// symlink), and if it sits in a `.nagi` directory, that must not be a
/// symlink either.
pub fn validate_file(path: &Path) -> Result<ProjectRecipe, Vec<RecipeProblem>> {
    if let Some(parent) = path.parent()
        && parent.file_name().is_some_and(|name| name == ".nagi")
        && std::fs::symlink_metadata(parent).is_ok_and(|metadata| metadata.file_type().is_symlink())
    {
        return Err(file_problem(format!(
            "{} is a symlink; the recipe directory must be a real directory",
            parent.display()
        )));
    }
    let metadata = std::fs::symlink_metadata(path)
        .map_err(|error| file_problem(format!("cannot read {}: {error}", path.display())))?;
    if metadata.file_type().is_symlink() {
        return Err(file_problem(format!(
            "{} is a symlink; the recipe must be a regular file",
            path.display()
        )));
    }
    if !metadata.is_file() {
        return Err(file_problem(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    if metadata.len() > MAX_RECIPE_BYTES {
        return Err(file_problem(format!(
            "{} is {} bytes; a recipe may be at most {MAX_RECIPE_BYTES} bytes",
            path.display(),
            metadata.len()
        )));
    }
    // O_NOFOLLOW: the file cannot be swapped for a symlink after the check.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|error| file_problem(format!("cannot open {}: {error}", path.display())))?;
    let mut bytes = Vec::new();
    file.take(MAX_RECIPE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| file_problem(format!("cannot read {}: {error}", path.display())))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| file_problem(format!("{} is not valid UTF-8", path.display())))?;
    validate_str(&text)
}
