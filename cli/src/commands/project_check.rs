//! `nagi project check`: runs the `[[checks]]` of `.nagi/project.toml` in the current
//! checkout, without a server. These are the project's own checks for a person at the
//! terminal; missions never run them (they use their frozen closure plan), so nothing is
//! recorded. Each check runs through the same trusted runner as a mission's declared
//! checks: argv only, the cleared environment, its own process group, its timeout.

use std::io::Write;
use std::time::Duration;

use nagi_engine::recipe::{RECIPE_RELATIVE_PATH, RecipeCheck, validate_file};
use nagi_exec::runner::{
    CommandCheckRequest, CommandOutcome, OutputStream, RunnerConfig, run_command_check,
};
use serde_json::{Value, json};

use super::project::{CheckArgs, checkout_of_current_directory};
use crate::CommandResult;
use crate::context::Context;
use crate::exit::{CliError, EXIT_OK, EXIT_REMOTE_ERROR};

/// How one check ended.
enum CheckResult {
    Ran(CommandOutcome),
    NotStarted(String),
}

impl CheckResult {
    fn passed(&self) -> bool {
        matches!(self, CheckResult::Ran(outcome) if outcome.succeeded())
    }

    fn describe(&self) -> String {
        match self {
            CheckResult::Ran(outcome) if outcome.succeeded() => {
                format!("passed in {:.1} s", outcome.duration_millis as f64 / 1000.0)
            }
            CheckResult::Ran(outcome) => match (&outcome.failure, outcome.signal) {
                (Some(failure), _) => format!("failed: {failure}"),
                (None, Some(signal)) => format!("failed: killed by signal {signal}"),
                (None, None) => format!("failed: exit code {}", outcome.exit_code),
            },
            CheckResult::NotStarted(reason) => format!("could not start: {reason}"),
        }
    }
}

pub fn run(context: &Context, args: CheckArgs) -> CommandResult {
    let checkout = checkout_of_current_directory()?;
    let recipe_path = checkout.join(RECIPE_RELATIVE_PATH);
    if !recipe_path.exists() {
        return Err(CliError::Usage(format!(
            "{} does not exist; this checkout has no project recipe",
            recipe_path.display()
        )));
    }
    let recipe = validate_file(&recipe_path).map_err(|problems| {
        let listed: Vec<String> = problems.iter().map(ToString::to_string).collect();
        CliError::Usage(format!(
            "{} is not valid (see `nagi project validate`): {}",
            recipe_path.display(),
            listed.join("; ")
        ))
    })?;
    let selected = select_checks(&recipe.checks, &args.checks)?;
    let mut results = Vec::new();
    for check in selected {
        if !context.json {
            println!(
                "check {}: {}",
                check.id,
                nagi_engine::recipe::exec::describe_command(&check.command)
            );
        }
        let result = run_one(&checkout, check, !context.json);
        if !context.json {
            println!("check {}: {}", check.id, result.describe());
        }
        results.push((check, result));
    }
    let passed = results.iter().filter(|(_, result)| result.passed()).count();
    if context.json {
        let checks: Vec<Value> = results
            .iter()
            .map(|(check, result)| result_json(check, result))
            .collect();
        let report = json!({"checkout": checkout.display().to_string(), "passed": passed, "total": results.len(), "checks": checks});
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        println!("{passed} of {} checks passed", results.len());
    }
    Ok(if passed == results.len() {
        EXIT_OK
    } else {
        EXIT_REMOTE_ERROR
    })
}

/// The checks to run, in recipe order; an unknown id is a usage error before anything runs.
fn select_checks<'a>(
    checks: &'a [RecipeCheck],
    wanted: &[String],
) -> Result<Vec<&'a RecipeCheck>, CliError> {
    if checks.is_empty() {
        return Err(CliError::Usage(
            "the project recipe declares no [[checks]]".to_string(),
        ));
    }
    if let Some(unknown) = wanted
        .iter()
        .find(|id| !checks.iter().any(|check| &check.id == *id))
    {
        let known: Vec<&str> = checks.iter().map(|check| check.id.as_str()).collect();
        return Err(CliError::Usage(format!(
            "the project recipe has no check `{unknown}` (it has: {})",
            known.join(", ")
        )));
    }
    Ok(checks
        .iter()
        .filter(|check| wanted.is_empty() || wanted.contains(&check.id))
        .collect())
}

fn run_one(checkout: &std::path::Path, check: &RecipeCheck, stream: bool) -> CheckResult {
    let Some((program, args)) = check.command.split_first() else {
        return CheckResult::NotStarted("the command is empty".to_string());
    };
    let request = CommandCheckRequest {
        worktree: checkout.to_path_buf(),
        cwd: ".".to_string(),
        program: program.clone(),
        args: args.to_vec(),
    };
    let config = RunnerConfig {
        timeout: Duration::from_secs(u64::from(check.timeout_seconds)),
        ..RunnerConfig::default()
    };
    let mut sink = |which: OutputStream, bytes: &[u8]| {
        if !stream {
            return;
        }
        let _ = match which {
            OutputStream::Stdout => std::io::stdout().write_all(bytes),
            OutputStream::Stderr => std::io::stderr().write_all(bytes),
        };
    };
    match run_command_check(&request, &config, &mut sink) {
        Ok(outcome) => CheckResult::Ran(outcome),
        Err(error) => CheckResult::NotStarted(error.to_string()),
    }
}

fn result_json(check: &RecipeCheck, result: &CheckResult) -> Value {
    let mut value = json!({
        "id": check.id,
        "command": check.command,
        "covers": check.covers,
        "passed": result.passed(),
        "result": result.describe(),
    });
    if let CheckResult::Ran(outcome) = result {
        value["exit_code"] = json!(outcome.exit_code);
        value["duration_millis"] = json!(outcome.duration_millis);
        value["stdout_tail"] = json!(outcome.stdout.tail);
        value["stderr_tail"] = json!(outcome.stderr.tail);
    }
    value
}
