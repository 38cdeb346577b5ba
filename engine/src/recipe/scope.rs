//! The digest of what running a recipe may do, for consent.
//!
//! A person who consents to `execute_project_recipe` consents to these
//! commands, these services (argv, port variable, health URL), and these
//! files being copied. The digest covers exactly that, so a change to any of
//! them asks again, while changing only a timeout, a check's `covers` labels
//! or the unused `[worktree].location`/`base` does not.

use nagi_mission::digest::CanonicalHasher;

use super::ProjectRecipe;

/// Prefix of our recipe digests (not a contract digest).
const RECIPE_DIGEST_PREFIX: &str = "nagi-project-recipe-v1";

/// Canonical digest of the recipe's scope (lowercase hex SHA-256).
pub fn scope_digest(recipe: &ProjectRecipe) -> String {
    let mut hasher = CanonicalHasher::with_prefix(RECIPE_DIGEST_PREFIX, "consent-scope");
    match &recipe.setup {
        Some(setup) => hasher.bool(true).string_list(&setup.command),
        None => hasher.bool(false),
    };
    hasher.u64(recipe.services.len() as u64);
    for (id, service) in &recipe.services {
        hasher
            .string(id)
            .string_list(&service.command)
            .string(&service.port_env)
            .string(&service.health);
    }
    hasher.u64(recipe.checks.len() as u64);
    for check in &recipe.checks {
        hasher.string(&check.id).string_list(&check.command);
    }
    hasher.u64(recipe.cleanup.len() as u64);
    for cleanup in &recipe.cleanup {
        hasher.string_list(&cleanup.command);
    }
    hasher.sorted_string_list(&recipe.worktree.copy_ignored);
    hasher.finish()
}
