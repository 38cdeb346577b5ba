//! `nagi project validate`: checks `.nagi/project.toml` without a server and prints every
//! problem with its TOML path, or a one-screen summary of what the recipe would do.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use nagi_engine::recipe::{
    ProjectRecipe, RECIPE_RELATIVE_PATH, RecipeCommand, RecipeProblem, scope_digest, validate_file,
};
use serde_json::{Value, json};

use crate::CommandResult;
use crate::context::Context;
use crate::exit::{CliError, EXIT_OK, EXIT_USAGE};

#[derive(Debug, Subcommand)]
pub enum ProjectCommand {
    /// Check a project recipe: every problem with its TOML path (exit 2), or a summary.
    Validate(ValidateArgs),
    /// Run the recipe's `[[checks]]` in this checkout, as you, with the declared checks'
    /// cleared environment and each check's timeout (exit 1 when one fails).
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Run only this check (repeatable); default: every check, in order.
    #[arg(long = "check", value_name = "ID")]
    pub checks: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The recipe file; default: `.nagi/project.toml` of the checkout containing the
    /// current directory.
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
}

pub fn run(context: &Context, command: ProjectCommand) -> CommandResult {
    match command {
        ProjectCommand::Validate(args) => validate(context, args),
        ProjectCommand::Check(args) => super::project_check::run(context, args),
    }
}

fn validate(context: &Context, args: ValidateArgs) -> CommandResult {
    let path = match args.path {
        Some(path) => path,
        None => default_recipe_path()?,
    };
    match validate_file(&path) {
        Ok(recipe) => {
            if context.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&valid_json(&path, &recipe)).unwrap_or_default()
                );
            } else {
                print!("{}", summary(&path, &recipe));
            }
            Ok(EXIT_OK)
        }
        Err(problems) => {
            if context.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&problems_json(&path, &problems))
                        .unwrap_or_default()
                );
            } else {
                print!("{}", problem_list(&path, &problems));
            }
            Ok(EXIT_USAGE)
        }
    }
}

/// The root of the Git checkout containing the current directory.
pub(super) fn checkout_of_current_directory() -> Result<PathBuf, CliError> {
    let current = std::env::current_dir()
        .map_err(|error| CliError::Usage(format!("cannot read the current directory: {error}")))?;
    let root = nagi_exec::workspace::checkout_root(&current).map_err(|error| {
        CliError::Usage(format!(
            "{} is not inside a Git checkout ({error}); pass the recipe's path",
            current.display()
        ))
    })?;
    Ok(root)
}

fn default_recipe_path() -> Result<PathBuf, CliError> {
    Ok(checkout_of_current_directory()?.join(RECIPE_RELATIVE_PATH))
}

fn problem_list(path: &Path, problems: &[RecipeProblem]) -> String {
    let count = problems.len();
    let mut text = format!(
        "{}: {count} problem{}\n",
        path.display(),
        if count == 1 { "" } else { "s" }
    );
    for problem in problems {
        let location = if problem.path.is_empty() {
            "(file)"
        } else {
            problem.path.as_str()
        };
        text.push_str(&format!("  {location}: {}\n", problem.message));
    }
    text
}

fn problems_json(path: &Path, problems: &[RecipeProblem]) -> Value {
    let problems: Vec<Value> = problems
        .iter()
        .map(|problem| json!({"path": problem.path, "message": problem.message}))
        .collect();
    json!({"path": path.display().to_string(), "valid": false, "problems": problems})
}

fn argv(command: &[String]) -> String {
    nagi_engine::recipe::exec::describe_command(command)
}

fn command_json(command: &RecipeCommand) -> Value {
    json!({"command": command.command, "timeout_seconds": command.timeout_seconds})
}

fn valid_json(path: &Path, recipe: &ProjectRecipe) -> Value {
    let services: Vec<Value> = recipe
        .services
        .iter()
        .map(|(id, service)| {
            json!({
                "id": id,
                "command": service.command,
                "port_env": service.port_env,
                "health": service.health,
                "timeout_seconds": service.timeout_seconds,
            })
        })
        .collect();
    let checks: Vec<Value> = recipe
        .checks
        .iter()
        .map(|check| json!({"id": check.id, "command": check.command, "timeout_seconds": check.timeout_seconds, "covers": check.covers}))
        .collect();
    json!({
        "path": path.display().to_string(),
        "valid": true,
        "summary": {
            "worktree": {"location": recipe.worktree.location, "base": recipe.worktree.base},
            "copy_ignored": recipe.worktree.copy_ignored,
            "setup": recipe.setup.as_ref().map(command_json),
            "services": services,
            "cleanup": recipe.cleanup.iter().map(command_json).collect::<Vec<_>>(),
            "checks": checks,
            "scope_digest": scope_digest(recipe),
        }
    })
}

fn summary(path: &Path, recipe: &ProjectRecipe) -> String {
    let mut text = format!("{} is valid (schema 1)\n", path.display());
    match &recipe.setup {
        Some(setup) => text.push_str(&format!(
            "setup:    {}  (timeout {} s)\n",
            argv(&setup.command),
            setup.timeout_seconds
        )),
        None => text.push_str("setup:    none\n"),
    }
    if recipe.services.is_empty() {
        text.push_str("services: none\n");
    } else {
        text.push_str("services:\n");
        for (id, service) in &recipe.services {
            text.push_str(&format!(
                "  {id}: {}  with {}=<leased port>, healthy when {} answers 2xx (timeout {} s)\n",
                argv(&service.command),
                service.port_env,
                service.health,
                service.timeout_seconds
            ));
        }
    }
    if recipe.worktree.copy_ignored.is_empty() {
        text.push_str("copied into new worktrees: nothing\n");
    } else {
        text.push_str(&format!(
            "copied into new worktrees (if Git-ignored): {}\n",
            recipe.worktree.copy_ignored.join(", ")
        ));
    }
    if recipe.cleanup.is_empty() {
        text.push_str("cleanup on archive: none\n");
    } else {
        text.push_str("cleanup on archive, in order:\n");
        for (index, cleanup) in recipe.cleanup.iter().enumerate() {
            text.push_str(&format!(
                "  {}. {}  (timeout {} s)\n",
                index + 1,
                argv(&cleanup.command),
                cleanup.timeout_seconds
            ));
        }
    }
    if recipe.checks.is_empty() {
        text.push_str("checks (nagi project check): none\n");
    } else {
        text.push_str("checks (nagi project check):\n");
        for check in &recipe.checks {
            let covers = if check.covers.is_empty() {
                String::new()
            } else {
                format!(", covers: {}", check.covers.join("; "))
            };
            text.push_str(&format!(
                "  {}: {}  (timeout {} s{covers})\n",
                check.id,
                argv(&check.command),
                check.timeout_seconds
            ));
        }
    }
    let place = match &recipe.worktree.location {
        Some(location) => format!("{location}/<mission id> in the checkout"),
        None => "nagi's worktrees folder (outside the repository)".to_string(),
    };
    text.push_str(&format!(
        "worktrees: {place}, branch mission/<mission id> from {}\n",
        recipe.worktree.base
    ));
    text.push_str(&format!("consent scope digest: {}\n", scope_digest(recipe)));
    text
}
