//! Walking the parsed TOML and collecting every problem with its path.

use std::collections::{BTreeMap, BTreeSet};

use toml::{Table, Value};

use super::rules::{
    check_argument, check_copy_ignored_path, check_cover_label, check_health_url, check_id,
    check_port_env, check_worktree_base, check_worktree_location,
};
use super::{
    DEFAULT_TIMEOUT_SECONDS, MAX_RECIPE_BYTES, ProjectRecipe, RecipeCheck, RecipeCommand,
    RecipeProblem, ServiceRecipe, WorktreeRecipe,
};

const MAX_SERVICES: usize = 16;
const MAX_CHECKS: usize = 32;
const MAX_CLEANUP: usize = 16;
const MAX_COPY_IGNORED: usize = 32;
const MAX_COVERS: usize = 16;
const MAX_ARGV: usize = 128;

/// `parent.key`, quoting keys that are not bare TOML keys.
fn key_path(parent: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"_-".contains(&byte));
    let key = if bare {
        key.to_owned()
    } else {
        format!("{key:?}")
    };
    if parent.is_empty() {
        key
    } else {
        format!("{parent}.{key}")
    }
}

fn index_path(parent: &str, index: usize) -> String {
    format!("{parent}[{index}]")
}

fn type_name(value: &Value) -> &'static str {
    value.type_str()
}

#[derive(Default)]
struct Validator {
    problems: Vec<RecipeProblem>,
}

impl Validator {
    fn problem(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.problems.push(RecipeProblem {
            path: path.into(),
            message: message.into(),
        });
    }

    fn check<T>(&mut self, path: &str, outcome: Result<T, String>) -> Option<T> {
        match outcome {
            Ok(value) => Some(value),
            Err(message) => {
                self.problem(path, message);
                None
            }
        }
    }

    fn reject_unknown_keys(&mut self, table: &Table, path: &str, allowed: &[&str]) {
        for key in table.keys() {
            if !allowed.contains(&key.as_str()) {
                self.problem(
                    key_path(path, key),
                    format!("unknown key `{key}` (allowed here: {})", allowed.join(", ")),
                );
            }
        }
    }

    fn table<'a>(&mut self, value: &'a Value, path: &str) -> Option<&'a Table> {
        match value {
            Value::Table(table) => Some(table),
            other => {
                self.problem(path, format!("must be a table, not {}", type_name(other)));
                None
            }
        }
    }

    fn string<'a>(&mut self, value: &'a Value, path: &str) -> Option<&'a str> {
        match value {
            Value::String(text) => Some(text),
            other => {
                self.problem(path, format!("must be a string, not {}", type_name(other)));
                None
            }
        }
    }

    fn required<'a>(&mut self, table: &'a Table, path: &str, key: &str) -> Option<&'a Value> {
        let value = table.get(key);
        if value.is_none() {
            self.problem(key_path(path, key), "is required");
        }
        value
    }

    fn timeout(&mut self, table: &Table, path: &str) -> u32 {
        let timeout_path = key_path(path, "timeout_seconds");
        match table.get("timeout_seconds") {
            None => DEFAULT_TIMEOUT_SECONDS,
            Some(Value::Integer(seconds)) if (1..=3600).contains(seconds) => *seconds as u32,
            Some(Value::Integer(seconds)) => {
                self.problem(
                    timeout_path,
                    format!("must be between 1 and 3600 seconds, not {seconds}"),
                );
                DEFAULT_TIMEOUT_SECONDS
            }
            Some(other) => {
                self.problem(
                    timeout_path,
                    format!("must be an integer, not {}", type_name(other)),
                );
                DEFAULT_TIMEOUT_SECONDS
            }
        }
    }

    /// Command rules: an argv array of 1..128 valid arguments.
    fn command(&mut self, value: &Value, path: &str) -> Option<Vec<String>> {
        let entries = match value {
            Value::Array(entries) => entries,
            Value::String(_) => {
                self.problem(
                    path,
                    "must be an argv array such as [\"npm\", \"test\"], not a shell string",
                );
                return None;
            }
            other => {
                self.problem(
                    path,
                    format!("must be an array of strings, not {}", type_name(other)),
                );
                return None;
            }
        };
        if entries.is_empty() || entries.len() > MAX_ARGV {
            self.problem(
                path,
                format!("must have 1 to {MAX_ARGV} entries, not {}", entries.len()),
            );
            return None;
        }
        let mut argv = Vec::with_capacity(entries.len());
        let mut valid = true;
        for (index, entry) in entries.iter().enumerate() {
            let entry_path = index_path(path, index);
            match self.string(entry, &entry_path) {
                Some(argument) if self.check(&entry_path, check_argument(argument)).is_some() => {
                    argv.push(argument.to_owned());
                }
                _ => valid = false,
            }
        }
        valid.then_some(argv)
    }

    fn recipe_command(&mut self, value: &Value, path: &str) -> Option<RecipeCommand> {
        let table = self.table(value, path)?;
        self.reject_unknown_keys(table, path, &["command", "timeout_seconds"]);
        let command = self
            .required(table, path, "command")
            .and_then(|command| self.command(command, &key_path(path, "command")));
        let timeout_seconds = self.timeout(table, path);
        Some(RecipeCommand {
            command: command?,
            timeout_seconds,
        })
    }

    fn schema(&mut self, root: &Table) {
        match root.get("schema") {
            None => self.problem("schema", "is required; add `schema = 1`"),
            Some(Value::Integer(1)) => {}
            Some(Value::Integer(other)) => {
                self.problem(
                    "schema",
                    format!("unsupported schema version {other}; this nagi reads schema 1"),
                );
            }
            Some(other) => self.problem(
                "schema",
                format!("must be the integer 1, not {}", type_name(other)),
            ),
        }
    }

    fn worktree(&mut self, value: Option<&Value>) -> WorktreeRecipe {
        let mut worktree = WorktreeRecipe::default();
        let Some(table) = value.and_then(|value| self.table(value, "worktree")) else {
            return worktree;
        };
        self.reject_unknown_keys(table, "worktree", &["location", "base", "copy_ignored"]);
        if let Some(location) = table
            .get("location")
            .and_then(|value| self.string(value, "worktree.location"))
            && self
                .check("worktree.location", check_worktree_location(location))
                .is_some()
        {
            worktree.location = Some(location.to_owned());
        }
        if let Some(base) = table
            .get("base")
            .and_then(|value| self.string(value, "worktree.base"))
            && self
                .check("worktree.base", check_worktree_base(base))
                .is_some()
        {
            worktree.base = base.to_owned();
        }
        if let Some(value) = table.get("copy_ignored") {
            worktree.copy_ignored = self.copy_ignored(value);
        }
        worktree
    }

    fn copy_ignored(&mut self, value: &Value) -> Vec<String> {
        const PATH: &str = "worktree.copy_ignored";
        let Value::Array(entries) = value else {
            self.problem(
                PATH,
                format!("must be an array of strings, not {}", type_name(value)),
            );
            return Vec::new();
        };
        if entries.len() > MAX_COPY_IGNORED {
            self.problem(
                PATH,
                format!(
                    "has {} entries; at most {MAX_COPY_IGNORED} are allowed",
                    entries.len()
                ),
            );
        }
        let mut seen = BTreeSet::new();
        let mut paths = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            let entry_path = index_path(PATH, index);
            let Some(path) = self.string(entry, &entry_path) else {
                continue;
            };
            if self
                .check(&entry_path, check_copy_ignored_path(path))
                .is_none()
            {
                continue;
            }
            if !seen.insert(path) {
                self.problem(entry_path, format!("`{path}` is listed more than once"));
                continue;
            }
            paths.push(path.to_owned());
        }
        paths
    }

    fn services(&mut self, value: Option<&Value>) -> BTreeMap<String, ServiceRecipe> {
        let mut services = BTreeMap::new();
        let Some(table) = value.and_then(|value| self.table(value, "services")) else {
            return services;
        };
        if table.len() > MAX_SERVICES {
            self.problem(
                "services",
                format!(
                    "has {} services; at most {MAX_SERVICES} are allowed",
                    table.len()
                ),
            );
        }
        for (id, service_value) in table {
            let path = key_path("services", id);
            let id_ok = self.check(
                &path,
                check_id(id).map_err(|message| format!("service id {message}")),
            );
            if let Some(service) = self.service(service_value, &path)
                && id_ok.is_some()
            {
                services.insert(id.clone(), service);
            }
        }
        services
    }

    fn service(&mut self, value: &Value, path: &str) -> Option<ServiceRecipe> {
        let table = self.table(value, path)?;
        self.reject_unknown_keys(
            table,
            path,
            &["command", "port_env", "health", "timeout_seconds"],
        );
        let command = self
            .required(table, path, "command")
            .and_then(|command| self.command(command, &key_path(path, "command")));
        let port_env_path = key_path(path, "port_env");
        let port_env = self
            .required(table, path, "port_env")
            .and_then(|value| self.string(value, &port_env_path))
            .and_then(|port_env| {
                self.check(&port_env_path, check_port_env(port_env))
                    .map(|()| port_env)
            });
        let health_path = key_path(path, "health");
        let health = self
            .required(table, path, "health")
            .and_then(|value| self.string(value, &health_path))
            .and_then(|health| {
                self.check(&health_path, check_health_url(health))
                    .map(|()| health)
            });
        let timeout_seconds = self.timeout(table, path);
        Some(ServiceRecipe {
            command: command?,
            port_env: port_env?.to_owned(),
            health: health?.to_owned(),
            timeout_seconds,
        })
    }

    fn array_of_tables<'a>(
        &mut self,
        value: Option<&'a Value>,
        path: &str,
        limit: usize,
    ) -> &'a [Value] {
        match value {
            None => &[],
            Some(Value::Array(entries)) => {
                if entries.len() > limit {
                    self.problem(
                        path,
                        format!("has {} entries; at most {limit} are allowed", entries.len()),
                    );
                }
                entries
            }
            Some(other) => {
                self.problem(
                    path,
                    format!("must be an array of tables, not {}", type_name(other)),
                );
                &[]
            }
        }
    }

    fn checks(&mut self, value: Option<&Value>) -> Vec<RecipeCheck> {
        let mut checks = Vec::new();
        let mut seen_ids = BTreeSet::new();
        for (index, entry) in self
            .array_of_tables(value, "checks", MAX_CHECKS)
            .iter()
            .enumerate()
        {
            let path = index_path("checks", index);
            let Some(table) = self.table(entry, &path) else {
                continue;
            };
            self.reject_unknown_keys(
                table,
                &path,
                &["id", "command", "timeout_seconds", "covers"],
            );
            let id_path = key_path(&path, "id");
            let id = self
                .required(table, &path, "id")
                .and_then(|value| self.string(value, &id_path))
                .and_then(|id| self.check(&id_path, check_id(id)).map(|()| id));
            if let Some(id) = id
                && !seen_ids.insert(id)
            {
                self.problem(&id_path, format!("check id `{id}` is used more than once"));
            }
            let command = self
                .required(table, &path, "command")
                .and_then(|command| self.command(command, &key_path(&path, "command")));
            let timeout_seconds = self.timeout(table, &path);
            let covers = self.covers(table.get("covers"), &key_path(&path, "covers"));
            if let (Some(id), Some(command), Some(covers)) = (id, command, covers) {
                checks.push(RecipeCheck {
                    id: id.to_owned(),
                    command,
                    timeout_seconds,
                    covers,
                });
            }
        }
        checks
    }

    fn covers(&mut self, value: Option<&Value>, path: &str) -> Option<Vec<String>> {
        let Some(value) = value else {
            return Some(Vec::new());
        };
        let Value::Array(entries) = value else {
            self.problem(
                path,
                format!("must be an array of strings, not {}", type_name(value)),
            );
            return None;
        };
        if entries.len() > MAX_COVERS {
            self.problem(
                path,
                format!(
                    "has {} labels; at most {MAX_COVERS} are allowed",
                    entries.len()
                ),
            );
        }
        let mut labels = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            let entry_path = index_path(path, index);
            if let Some(label) = self.string(entry, &entry_path)
                && self.check(&entry_path, check_cover_label(label)).is_some()
            {
                labels.push(label.to_owned());
            }
        }
        Some(labels)
    }

    fn cleanup(&mut self, value: Option<&Value>) -> Vec<RecipeCommand> {
        let entries = self.array_of_tables(value, "cleanup", MAX_CLEANUP);
        entries
            .iter()
            .enumerate()
            .filter_map(|(index, entry)| self.recipe_command(entry, &index_path("cleanup", index)))
            .collect()
    }
}

/// Parses and validates recipe text; every problem is reported.
pub fn validate_str(text: &str) -> Result<ProjectRecipe, Vec<RecipeProblem>> {
    if text.len() as u64 > MAX_RECIPE_BYTES {
        return Err(vec![RecipeProblem {
            path: String::new(),
            message: format!(
                "the recipe is {} bytes; at most {MAX_RECIPE_BYTES} are allowed",
                text.len()
            ),
        }]);
    }
    let root: Table = text.parse().map_err(|error: toml::de::Error| {
        vec![RecipeProblem {
            path: String::new(),
            message: format!("invalid TOML: {}", error.to_string().trim()),
        }]
    })?;
    let mut validator = Validator::default();
    validator.reject_unknown_keys(
        &root,
        "",
        &[
            "schema", "worktree", "setup", "services", "checks", "cleanup",
        ],
    );
    validator.schema(&root);
    let worktree = validator.worktree(root.get("worktree"));
    let setup = root
        .get("setup")
        .and_then(|value| validator.recipe_command(value, "setup"));
    let services = validator.services(root.get("services"));
    let checks = validator.checks(root.get("checks"));
    let cleanup = validator.cleanup(root.get("cleanup"));
    if !validator.problems.is_empty() {
        return Err(validator.problems);
    }
    Ok(ProjectRecipe {
        worktree,
        setup,
        services,
        checks,
        cleanup,
    })
}
