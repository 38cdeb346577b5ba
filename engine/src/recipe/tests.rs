//! Recipe validation tests: one bad recipe per rule, plus good recipes.

use super::*;

const GOOD_RECIPE: &str = r#"
schema = 1

[worktree]
location = ".worktrees"
base = "main"
copy_ignored = [".env.example", "config/local.toml"]

[setup]
command = ["npm", "ci"]
timeout_seconds = 600

[services.web]
command = ["npm", "run", "dev"]
port_env = "PORT"
health = "http://127.0.0.1:{port}/health"

[services."api.v2"]
command = ["cargo", "run", "--bin", "api"]
port_env = "API_PORT"
health = "http://localhost:{port}"
timeout_seconds = 60

[[checks]]
id = "unit"
command = ["cargo", "test"]
covers = ["unit tests pass"]

[[cleanup]]
command = ["rm", "-rf", "tmp"]
"#;

#[test]
fn good_recipe_parses_with_defaults() {
    let recipe = validate_str(GOOD_RECIPE).unwrap();
    assert_eq!(recipe.worktree.base, "main");
    assert_eq!(
        recipe.worktree.copy_ignored,
        vec![".env.example", "config/local.toml"]
    );
    assert_eq!(recipe.setup.as_ref().unwrap().timeout_seconds, 600);
    let web = &recipe.services["web"];
    assert_eq!(web.timeout_seconds, DEFAULT_TIMEOUT_SECONDS);
    assert_eq!(web.port_env, "PORT");
    assert_eq!(recipe.services["api.v2"].timeout_seconds, 60);
    assert_eq!(recipe.checks[0].timeout_seconds, 300);
    assert_eq!(recipe.cleanup[0].command, vec!["rm", "-rf", "tmp"]);

    let minimal = validate_str("schema = 1\n").unwrap();
    assert_eq!(minimal.worktree, WorktreeRecipe::default());
    assert!(minimal.setup.is_none() && minimal.services.is_empty());
    assert!(minimal.checks.is_empty() && minimal.cleanup.is_empty());
}

fn service(health: &str) -> String {
    format!(
        "schema = 1\n[services.web]\ncommand = [\"web\"]\nport_env = \"PORT\"\nhealth = {health:?}\n"
    )
}

fn copy_ignored(path: &str) -> String {
    format!("schema = 1\n[worktree]\ncopy_ignored = [{path:?}]\n")
}

/// (recipe, expected problem path, message fragment)
fn bad_recipes() -> Vec<(String, &'static str, &'static str)> {
    let many_services: String = (0..17)
        .map(|index| format!("[services.s{index}]\ncommand = [\"x\"]\nport_env = \"P\"\nhealth = \"http://localhost:{{port}}\"\n"))
        .collect();
    let many_cleanup: String = (0..17)
        .map(|_| "[[cleanup]]\ncommand = [\"x\"]\n")
        .collect();
    let many_copies: String = (0..33)
        .map(|index| format!("\"f{index}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let long_argv: String = (0..129).map(|_| "\"a\"").collect::<Vec<_>>().join(", ");
    vec![
        ("schema = \"1\"".into(), "schema", "must be the integer 1"),
        ("schema = 2".into(), "schema", "unsupported schema version 2"),
        ("[worktree]\nlocation = \"x\"".into(), "schema", "is required"),
        ("schema = 1\nextra = true".into(), "extra", "unknown key `extra`"),
        ("schema = 1\n[worktree]\nbranch = \"x\"".into(), "worktree.branch", "unknown key"),
        ("schema = 1\n[worktree]\nlocation = \"/abs\"".into(), "worktree.location", "relative"),
        ("schema = 1\n[worktree]\nlocation = \"a/../b\"".into(), "worktree.location", "normal path components"),
        ("schema = 1\n[worktree]\nlocation = \"trees/\"".into(), "worktree.location", "must not end with"),
        ("schema = 1\n[worktree]\nbase = \"  \"".into(), "worktree.base", "blank"),
        (format!("schema = 1\n[worktree]\nbase = \"{}\"", "x".repeat(257)), "worktree.base", "256 bytes"),
        ("schema = 1\n[worktree]\nbase = \"a\\nb\"".into(), "worktree.base", "NUL, CR or LF"),
        (format!("schema = 1\n[worktree]\ncopy_ignored = [{many_copies}]"), "worktree.copy_ignored", "at most 32"),
        ("schema = 1\n[worktree]\ncopy_ignored = [\"a\", \"a\"]".into(), "worktree.copy_ignored[1]", "more than once"),
        (copy_ignored("*.toml"), "worktree.copy_ignored[0]", "globs"),
        (copy_ignored("../x"), "worktree.copy_ignored[0]", "`..`"),
        (copy_ignored("/etc/passwd"), "worktree.copy_ignored[0]", "relative"),
        (copy_ignored("config/"), "worktree.copy_ignored[0]", "separator"),
        (copy_ignored(".env"), "worktree.copy_ignored[0]", "looks like a secret"),
        (copy_ignored("app/.env.local"), "worktree.copy_ignored[0]", "looks like a secret"),
        (copy_ignored(".npmrc"), "worktree.copy_ignored[0]", "looks like a secret"),
        (copy_ignored("certs/server.PEM"), "worktree.copy_ignored[0]", "looks like a secret"),
        (copy_ignored("secrets.json"), "worktree.copy_ignored[0]", "looks like a secret"),
        (copy_ignored("id_ed25519"), "worktree.copy_ignored[0]", "looks like a secret"),
        ("schema = 1\n[setup]\ncommand = \"npm ci\"".into(), "setup.command", "not a shell string"),
        ("schema = 1\n[setup]\ntimeout_seconds = 5".into(), "setup.command", "is required"),
        ("schema = 1\n[setup]\ncommand = []".into(), "setup.command", "1 to 128 entries"),
        (format!("schema = 1\n[setup]\ncommand = [{long_argv}]"), "setup.command", "1 to 128 entries"),
        ("schema = 1\n[setup]\ncommand = [\"npm\", \"\"]".into(), "setup.command[1]", "must not be empty"),
        ("schema = 1\n[setup]\ncommand = [\"a\\nb\"]".into(), "setup.command[0]", "NUL, CR or LF"),
        ("schema = 1\n[setup]\ncommand = [1]".into(), "setup.command[0]", "must be a string"),
        ("schema = 1\n[setup]\ncommand = [\"x\"]\ntimeout_seconds = 0".into(), "setup.timeout_seconds", "between 1 and 3600"),
        ("schema = 1\n[setup]\ncommand = [\"x\"]\ntimeout_seconds = 3601".into(), "setup.timeout_seconds", "between 1 and 3600"),
        ("schema = 1\n[setup]\ncommand = [\"x\"]\ntimeout_seconds = \"5\"".into(), "setup.timeout_seconds", "must be an integer"),
        ("schema = 1\n[setup]\ncommand = [\"x\"]\nshell = true".into(), "setup.shell", "unknown key"),
        (format!("schema = 1\n{many_services}"), "services", "at most 16"),
        ("schema = 1\n[services.\"bad id\"]\ncommand = [\"x\"]\nport_env = \"P\"\nhealth = \"http://localhost:{port}\"".into(), "services.\"bad id\"", "service id may only contain"),
        ("schema = 1\n[services.web]\nport_env = \"P\"\nhealth = \"http://localhost:{port}\"".into(), "services.web.command", "is required"),
        ("schema = 1\n[services.web]\ncommand = [\"x\"]\nhealth = \"http://localhost:{port}\"".into(), "services.web.port_env", "is required"),
        ("schema = 1\n[services.web]\ncommand = [\"x\"]\nport_env = \"P\"".into(), "services.web.health", "is required"),
        ("schema = 1\n[services.web]\ncommand = [\"x\"]\nport_env = \"1PORT\"\nhealth = \"http://localhost:{port}\"".into(), "services.web.port_env", "environment variable name"),
        (format!("schema = 1\n[services.web]\ncommand = [\"x\"]\nport_env = \"{}\"\nhealth = \"http://localhost:{{port}}\"", "P".repeat(129)), "services.web.port_env", "1 to 128"),
        ("schema = 1\n[services.web]\ncommand = [\"x\"]\nport_env = \"P\"\nhealth = \"http://localhost:{port}\"\nurl = \"x\"".into(), "services.web.url", "unknown key"),
        (service("https://127.0.0.1:{port}/"), "services.web.health", "must start with"),
        (service("http://example.com:{port}/"), "services.web.health", "must start with"),
        (service("http://localhost:8080/"), "services.web.health", "exactly once (found 0)"),
        (service("http://localhost:{port}/{port}"), "services.web.health", "exactly once (found 2)"),
        (service("http://localhost:{port}@evil.example/"), "services.web.health", "only a path"),
        (service("http://localhost:{port}/a b"), "services.web.health", "whitespace"),
        (service(&format!("http://localhost:{{port}}/{}", "a".repeat(2048))), "services.web.health", "2048 bytes"),
        ("schema = 1\nservices = 3".into(), "services", "must be a table"),
        ("schema = 1\n[[checks]]\ncommand = [\"x\"]".into(), "checks[0].id", "is required"),
        ("schema = 1\n[[checks]]\nid = \"a b\"\ncommand = [\"x\"]".into(), "checks[0].id", "may only contain"),
        ("schema = 1\n[[checks]]\nid = \"t\"\ncommand = [\"x\"]\n[[checks]]\nid = \"t\"\ncommand = [\"y\"]".into(), "checks[1].id", "more than once"),
        ("schema = 1\n[[checks]]\nid = \"t\"\ncommand = [\"x\"]\ncovers = [\" \"]".into(), "checks[0].covers[0]", "blank"),
        (format!("schema = 1\n[[checks]]\nid = \"t\"\ncommand = [\"x\"]\ncovers = [{}]", (0..17).map(|_| "\"c\"").collect::<Vec<_>>().join(",")), "checks[0].covers", "at most 16"),
        ("schema = 1\n[[checks]]\nid = \"t\"\ncommand = [\"x\"]\nrequired = true".into(), "checks[0].required", "unknown key"),
        (format!("schema = 1\n{many_cleanup}"), "cleanup", "at most 16"),
        ("schema = 1\n[[cleanup]]\ncommand = [\"\"]".into(), "cleanup[0].command[0]", "must not be empty"),
        ("schema = 1\ncleanup = \"rm\"".into(), "cleanup", "must be an array of tables"),
        ("schema = 1\n[worktree\n".into(), "", "invalid TOML"),
    ]
}

#[test]
fn each_rule_reports_its_path_and_message() {
    for (recipe, expected_path, fragment) in bad_recipes() {
        let problems = validate_str(&recipe).expect_err(&recipe);
        assert!(
            problems
                .iter()
                .any(|problem| problem.path == expected_path && problem.message.contains(fragment)),
            "recipe:\n{recipe}\nexpected `{expected_path}` with {fragment:?}, got {problems:?}"
        );
    }
}

#[test]
fn all_problems_are_collected_at_once() {
    let recipe = "schema = 2\nunknown = 1\n[setup]\ncommand = \"sh -c x\"\n[services.web]\ncommand = [\"x\"]\nport_env = \"9\"\nhealth = \"http://evil/{port}\"\n";
    let problems = validate_str(recipe).unwrap_err();
    let paths: Vec<&str> = problems
        .iter()
        .map(|problem| problem.path.as_str())
        .collect();
    for expected in [
        "unknown",
        "schema",
        "setup.command",
        "services.web.port_env",
        "services.web.health",
    ] {
        assert!(
            paths.contains(&expected),
            "{expected} missing from {paths:?}"
        );
    }
    assert!(problems[0].to_string().contains(": "));
}

#[test]
fn oversized_recipes_are_refused() {
    let huge = format!("schema = 1\n# {}\n", "x".repeat(MAX_RECIPE_BYTES as usize));
    let problems = validate_str(&huge).unwrap_err();
    assert!(problems[0].message.contains("at most 262144"));
}

#[test]
fn files_must_be_regular_and_not_reached_through_symlinks() {
    let checkout = tempfile::tempdir().unwrap();
    assert_eq!(load_project_recipe(checkout.path()), Ok(None));
    std::fs::create_dir(checkout.path().join(".nagi")).unwrap();
    assert_eq!(load_project_recipe(checkout.path()), Ok(None));
    let recipe_path = checkout.path().join(RECIPE_RELATIVE_PATH);
    std::fs::write(&recipe_path, GOOD_RECIPE).unwrap();
    assert!(load_project_recipe(checkout.path()).unwrap().is_some());
    assert!(validate_file(&recipe_path).is_ok());

    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("real.toml"), GOOD_RECIPE).unwrap();
    std::fs::remove_file(&recipe_path).unwrap();
    std::os::unix::fs::symlink(elsewhere.path().join("real.toml"), &recipe_path).unwrap();
    let problems = load_project_recipe(checkout.path()).unwrap_err();
    assert!(problems[0].message.contains("symlink"), "{problems:?}");

    std::fs::remove_file(&recipe_path).unwrap();
    std::fs::create_dir(&recipe_path).unwrap();
    assert!(
        validate_file(&recipe_path).unwrap_err()[0]
            .message
            .contains("not a regular file")
    );

    let linked_checkout = tempfile::tempdir().unwrap();
    std::fs::create_dir(elsewhere.path().join(".nagi")).unwrap();
    std::fs::write(elsewhere.path().join(".nagi/project.toml"), GOOD_RECIPE).unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path().join(".nagi"),
        linked_checkout.path().join(".nagi"),
    )
    .unwrap();
    assert!(
        load_project_recipe(linked_checkout.path()).unwrap_err()[0]
            .message
            .contains("symlink")
    );
    assert!(
        validate_file(&linked_checkout.path().join(RECIPE_RELATIVE_PATH)).unwrap_err()[0]
            .message
            .contains("symlink")
    );

    let big = checkout.path().join("big.toml");
    std::fs::write(&big, "#".repeat(MAX_RECIPE_BYTES as usize + 1)).unwrap();
    assert!(
        validate_file(&big).unwrap_err()[0]
            .message
            .contains("at most")
    );
}

#[test]
fn scope_digest_covers_commands_services_and_copies_but_not_timeouts() {
    let base = validate_str(GOOD_RECIPE).unwrap();
    let digest = scope_digest(&base);
    assert_eq!(digest, scope_digest(&validate_str(GOOD_RECIPE).unwrap()));

    let changed = |from: &str, to: &str| {
        let text = GOOD_RECIPE.replacen(from, to, 1);
        assert_ne!(text, GOOD_RECIPE, "{from} not found");
        scope_digest(&validate_str(&text).unwrap())
    };
    assert_ne!(
        changed("[\"npm\", \"ci\"]", "[\"npm\", \"install\"]"),
        digest
    );
    assert_ne!(changed("\"PORT\"", "\"WEB_PORT\""), digest);
    assert_ne!(changed("/health", "/ready"), digest);
    assert_ne!(changed("config/local.toml", "config/other.toml"), digest);
    assert_ne!(
        changed("[\"rm\", \"-rf\", \"tmp\"]", "[\"rm\", \"-rf\", \"/\"]"),
        digest
    );
    assert_eq!(
        changed("timeout_seconds = 600", "timeout_seconds = 900"),
        digest
    );
    assert_eq!(changed("unit tests pass", "all tests pass"), digest);
    assert_eq!(
        changed(
            "copy_ignored = [\".env.example\", \"config/local.toml\"]",
            "copy_ignored = [\"config/local.toml\", \".env.example\"]"
        ),
        digest
    );
}
