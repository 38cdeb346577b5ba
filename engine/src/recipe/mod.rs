//! The project recipe `.nagi/project.toml` (contract §11): parsing,
//! validation and the digest of what a person consents to.
//!
//! Validation collects **every** problem (each with its TOML path such as
//! `services.web.health`) instead of stopping at the first, so a person can fix
//! a recipe in one pass. Executing it (worktree copies, setup, services,
//! cleanup) is [`exec`].

pub mod exec;
mod file;
mod rules;
mod scope;
mod validate;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

pub use file::{MAX_RECIPE_BYTES, RECIPE_RELATIVE_PATH, load_project_recipe, validate_file};
pub use scope::scope_digest;
pub use validate::validate_str;

/// Default `timeout_seconds` of every command and service.
pub const DEFAULT_TIMEOUT_SECONDS: u32 = 300;

/// A validated recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRecipe {
    pub worktree: WorktreeRecipe,
    pub setup: Option<RecipeCommand>,
    /// Keyed by service id.
    pub services: BTreeMap<String, ServiceRecipe>,
    pub checks: Vec<RecipeCheck>,
    pub cleanup: Vec<RecipeCommand>,
}

/// `[worktree]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeRecipe {
    /// Where mission worktrees go, relative to the checkout root; `None` (the default):
    /// nagi's own worktrees folder, outside the repository.
    pub location: Option<String>,
    /// The ref a new mission worktree is made from when the start names none (`HEAD`).
    pub base: String,
    /// Exact relative paths of ignored files copied into new worktrees.
    pub copy_ignored: Vec<String>,
}

impl Default for WorktreeRecipe {
    fn default() -> WorktreeRecipe {
        WorktreeRecipe {
            location: None,
            base: "HEAD".to_owned(),
            copy_ignored: Vec::new(),
        }
    }
}

/// An argv command with its timeout (`[setup]`, `[[cleanup]]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeCommand {
    pub command: Vec<String>,
    pub timeout_seconds: u32,
}

/// `[services.<id>]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceRecipe {
    pub command: Vec<String>,
    /// Environment variable that receives the leased port.
    pub port_env: String,
    /// Health URL template containing `{port}` exactly once.
    pub health: String,
    pub timeout_seconds: u32,
}

/// `[[checks]]` (used by `nagi project check`, not by missions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeCheck {
    pub id: String,
    pub command: Vec<String>,
    pub timeout_seconds: u32,
    pub covers: Vec<String>,
}

/// One thing wrong with a recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeProblem {
    /// TOML path of the offending value (`""` for the file as a whole).
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for RecipeProblem {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(formatter, "{}", self.message)
        } else {
            write!(formatter, "{}: {}", self.path, self.message)
        }
    }
}
