//! `nagi project validate` (contract §11, issue 6): every rule of the recipe has a bad
//! recipe here with the TOML path and message the person sees; a valid recipe prints its
//! one-screen summary; `--json` gives the same as data. No server is involved.

use std::path::Path;

use nagi_tests::*;
use serde_json::Value;

fn write_recipe(dir: &Path, text: &str) -> std::path::PathBuf {
    let path = dir.join(".nagi/project.toml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn service(health: &str) -> String {
    format!(
        "schema = 1\n[services.web]\ncommand = [\"web\"]\nport_env = \"PORT\"\nhealth = {health:?}\n"
    )
}

fn copy(path: &str) -> String {
    format!("schema = 1\n[worktree]\ncopy_ignored = [{path:?}]\n")
}

/// (recipe, TOML path of the problem, message fragment): one row per rule of §11.
fn bad_recipes() -> Vec<(String, &'static str, &'static str)> {
    let many =
        |count: usize, make: &dyn Fn(usize) -> String| (0..count).map(make).collect::<String>();
    vec![
        ("[worktree]\nlocation = \"x\"".into(), "schema", "is required"),
        ("schema = 2".into(), "schema", "unsupported schema version 2"),
        ("schema = 1\ncolour = \"blue\"".into(), "colour", "unknown key `colour`"),
        ("schema = 1\n[worktree]\nbranch = \"x\"".into(), "worktree.branch", "unknown key"),
        ("schema = 1\n[worktree]\nlocation = \"/abs\"".into(), "worktree.location", "relative"),
        ("schema = 1\n[worktree]\nlocation = \"a/../b\"".into(), "worktree.location", "normal path components"),
        ("schema = 1\n[worktree]\nlocation = \"trees/\"".into(), "worktree.location", "must not end with"),
        ("schema = 1\n[worktree]\nbase = \"  \"".into(), "worktree.base", "blank"),
        (format!("schema = 1\n[worktree]\nbase = \"{}\"", "x".repeat(257)), "worktree.base", "256 bytes"),
        (
            format!("schema = 1\n[worktree]\ncopy_ignored = [{}]", (0..33).map(|i| format!("\"f{i}\"")).collect::<Vec<_>>().join(",")),
            "worktree.copy_ignored",
            "at most 32",
        ),
        ("schema = 1\n[worktree]\ncopy_ignored = [\"a\", \"a\"]".into(), "worktree.copy_ignored[1]", "more than once"),
        (copy("config/*.toml"), "worktree.copy_ignored[0]", "globs"),
        (copy("../outside"), "worktree.copy_ignored[0]", "`..`"),
        (copy("/etc/hosts"), "worktree.copy_ignored[0]", "relative"),
        (copy("config/"), "worktree.copy_ignored[0]", "separator"),
        (copy(".env.local"), "worktree.copy_ignored[0]", "looks like a secret"),
        (copy("certs/server.key"), "worktree.copy_ignored[0]", "looks like a secret"),
        (copy("credentials.json"), "worktree.copy_ignored[0]", "looks like a secret"),
        ("schema = 1\n[setup]\ncommand = \"npm ci\"".into(), "setup.command", "not a shell string"),
        ("schema = 1\n[setup]\ntimeout_seconds = 5".into(), "setup.command", "is required"),
        ("schema = 1\n[setup]\ncommand = []".into(), "setup.command", "1 to 128 entries"),
        ("schema = 1\n[setup]\ncommand = [\"npm\", \"\"]".into(), "setup.command[1]", "must not be empty"),
        (format!("schema = 1\n[setup]\ncommand = [\"{}\"]", "a".repeat(4097)), "setup.command[0]", "4096 bytes"),
        ("schema = 1\n[setup]\ncommand = [\"x\"]\ntimeout_seconds = 0".into(), "setup.timeout_seconds", "between 1 and 3600"),
        ("schema = 1\n[setup]\ncommand = [\"x\"]\nshell = true".into(), "setup.shell", "unknown key"),
        (
            format!("schema = 1\n{}", many(17, &|i| format!("[services.s{i}]\ncommand = [\"x\"]\nport_env = \"P\"\nhealth = \"http://localhost:{{port}}\"\n"))),
            "services",
            "at most 16",
        ),
        (
            "schema = 1\n[services.\"bad id\"]\ncommand = [\"x\"]\nport_env = \"P\"\nhealth = \"http://localhost:{port}\"".into(),
            "services.\"bad id\"",
            "service id may only contain",
        ),
        ("schema = 1\n[services.web]\ncommand = [\"x\"]\nhealth = \"http://localhost:{port}\"".into(), "services.web.port_env", "is required"),
        (
            "schema = 1\n[services.web]\ncommand = [\"x\"]\nport_env = \"1PORT\"\nhealth = \"http://localhost:{port}\"".into(),
            "services.web.port_env",
            "environment variable name",
        ),
        (service("https://127.0.0.1:{port}/"), "services.web.health", "must start with"),
        (service("http://localhost:3000/"), "services.web.health", "exactly once (found 0)"),
        (service("http://localhost:{port}@evil.example/"), "services.web.health", "only a path"),
        (service("http://localhost:{port}/a b"), "services.web.health", "whitespace"),
        (
            "schema = 1\n[services.web]\ncommand = [\"x\"]\nport_env = \"P\"\nhealth = \"http://localhost:{port}\"\ntimeout_seconds = 4000".into(),
            "services.web.timeout_seconds",
            "between 1 and 3600",
        ),
        ("schema = 1\n[[checks]]\ncommand = [\"x\"]".into(), "checks[0].id", "is required"),
        (
            "schema = 1\n[[checks]]\nid = \"t\"\ncommand = [\"x\"]\n[[checks]]\nid = \"t\"\ncommand = [\"y\"]".into(),
            "checks[1].id",
            "more than once",
        ),
        ("schema = 1\n[[checks]]\nid = \"t\"\ncommand = [\"x\"]\ncovers = [\" \"]".into(), "checks[0].covers[0]", "blank"),
        (format!("schema = 1\n{}", many(33, &|i| format!("[[checks]]\nid = \"c{i}\"\ncommand = [\"x\"]\n"))), "checks", "at most 32"),
        (format!("schema = 1\n{}", many(17, &|_| "[[cleanup]]\ncommand = [\"x\"]\n".into())), "cleanup", "at most 16"),
        ("schema = 1\ncleanup = \"rm -rf\"".into(), "cleanup", "must be an array of tables"),
        ("schema = 1\n[worktree\n".into(), "", "invalid TOML"),
    ]
}

#[test]
fn each_bad_recipe_exits_2_with_its_toml_path_and_message() {
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    for (recipe, expected_path, fragment) in bad_recipes() {
        let path = write_recipe(dir.path(), &recipe);
        let json_run = env.nagi(&["project", "validate", path.to_str().unwrap(), "--json"]);
        assert_eq!(
            json_run.status,
            2,
            "recipe:\n{recipe}\n{}",
            json_run.describe()
        );
        let report = json_run.json();
        assert_eq!(report["valid"], false);
        let problems = report["problems"].as_array().unwrap();
        assert!(
            problems
                .iter()
                .any(|problem| problem["path"] == expected_path
                    && problem["message"].as_str().unwrap().contains(fragment)),
            "recipe:\n{recipe}\nexpected `{expected_path}` with {fragment:?}, got {problems:?}"
        );
        let human = env.nagi(&["project", "validate", path.to_str().unwrap()]);
        assert_eq!(human.status, 2, "{}", human.describe());
        let location = if expected_path.is_empty() {
            "(file)"
        } else {
            expected_path
        };
        assert!(
            human.stdout.lines().any(|line| line
                .trim_start()
                .starts_with(&format!("{location}: "))
                && line.contains(fragment)),
            "recipe:\n{recipe}\n{}",
            human.describe()
        );
    }
}

#[test]
fn every_problem_of_a_recipe_is_printed_at_once() {
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let path = write_recipe(
        dir.path(),
        "schema = 1\nextra = 1\n[setup]\ncommand = []\n[services.web]\ncommand = [\"x\"]\nport_env = \"P\"\nhealth = \"http://example.com/\"\n",
    );
    let run = env.nagi(&["project", "validate", path.to_str().unwrap()]);
    assert_eq!(run.status, 2, "{}", run.describe());
    assert!(run.stdout.contains("3 problems"), "{}", run.describe());
    for location in ["extra: ", "setup.command: ", "services.web.health: "] {
        assert!(
            run.stdout.contains(location),
            "missing {location}\n{}",
            run.describe()
        );
    }
}

const GOOD_RECIPE: &str = r#"schema = 1

[worktree]
copy_ignored = ["config/local.toml"]

[setup]
command = ["npm", "ci"]
timeout_seconds = 600

[services.web]
command = ["npm", "run", "dev"]
port_env = "PORT"
health = "http://127.0.0.1:{port}/health"

[[checks]]
id = "unit"
command = ["npm", "test"]
covers = ["login works"]

[[cleanup]]
command = ["docker", "compose", "down"]
timeout_seconds = 60
"#;

#[test]
fn a_valid_recipe_in_the_current_checkout_prints_its_summary() {
    let env = TestEnv::new();
    let repo = TestRepo::new();
    write_recipe(&repo.path, GOOD_RECIPE);
    std::fs::create_dir_all(repo.path.join("src/deep")).unwrap();
    let run: CliRun = env
        .command()
        .args(["project", "validate"])
        .current_dir(repo.path.join("src/deep"))
        .output()
        .unwrap()
        .into();
    assert_eq!(run.status, 0, "{}", run.describe());
    let expected_path = repo.path.join(".nagi/project.toml");
    for fragment in [
        format!("{} is valid", expected_path.display()),
        "setup:    npm ci  (timeout 600 s)".to_owned(),
        "web: npm run dev  with PORT=<leased port>, healthy when http://127.0.0.1:{port}/health answers 2xx (timeout 300 s)".to_owned(),
        "copied into new worktrees (if Git-ignored): config/local.toml".to_owned(),
        "1. docker compose down  (timeout 60 s)".to_owned(),
        "unit: npm test  (timeout 300 s, covers: login works)".to_owned(),
        "consent scope digest: ".to_owned(),
    ] {
        assert!(run.stdout.contains(&fragment), "missing {fragment:?}\n{}", run.describe());
    }
}

#[test]
fn json_summary_of_a_valid_recipe() {
    let env = TestEnv::new();
    let dir = tempfile::tempdir().unwrap();
    let path = write_recipe(dir.path(), GOOD_RECIPE);
    let report = env
        .nagi_ok(&["project", "validate", path.to_str().unwrap(), "--json"])
        .json();
    assert_eq!(report["valid"], true);
    let summary = &report["summary"];
    assert_eq!(
        summary["setup"]["command"],
        serde_json::json!(["npm", "ci"])
    );
    assert_eq!(summary["services"][0]["id"], "web");
    assert_eq!(summary["services"][0]["port_env"], "PORT");
    assert_eq!(
        summary["services"][0]["health"],
        "http://127.0.0.1:{port}/health"
    );
    assert_eq!(summary["services"][0]["timeout_seconds"], 300);
    assert_eq!(
        summary["copy_ignored"],
        serde_json::json!(["config/local.toml"])
    );
    assert_eq!(summary["cleanup"][0]["timeout_seconds"], 60);
    assert_eq!(
        summary["checks"][0]["covers"],
        serde_json::json!(["login works"])
    );
    // No location: mission worktrees go to nagi's worktrees folder, outside the repository.
    assert_eq!(summary["worktree"]["location"], serde_json::Value::Null);
    assert_eq!(summary["scope_digest"].as_str().map(str::len), Some(64));
}

#[test]
fn a_missing_or_symlinked_recipe_is_a_problem_and_outside_a_checkout_a_usage_error() {
    let env = TestEnv::new();
    let repo = TestRepo::new();
    let run: CliRun = env
        .command()
        .args(["project", "validate", "--json"])
        .current_dir(&repo.path)
        .output()
        .unwrap()
        .into();
    assert_eq!(run.status, 2, "{}", run.describe());
    let problems: Value = run.json()["problems"].clone();
    assert!(
        problems[0]["message"]
            .as_str()
            .unwrap()
            .contains("cannot read"),
        "{problems}"
    );
    let real = repo.path.join("real.toml");
    std::fs::write(&real, "schema = 1\n").unwrap();
    std::fs::create_dir_all(repo.path.join(".nagi")).unwrap();
    std::os::unix::fs::symlink(&real, repo.path.join(".nagi/project.toml")).unwrap();
    let run: CliRun = env
        .command()
        .args(["project", "validate"])
        .current_dir(&repo.path)
        .output()
        .unwrap()
        .into();
    assert_eq!(run.status, 2, "{}", run.describe());
    assert!(run.stdout.contains("symlink"), "{}", run.describe());
    let outside = tempfile::tempdir().unwrap();
    let run: CliRun = env
        .command()
        .args(["project", "validate"])
        .current_dir(outside.path())
        .output()
        .unwrap()
        .into();
    assert_eq!(run.status, 2, "{}", run.describe());
    assert!(
        run.stderr.contains("not inside a Git checkout"),
        "{}",
        run.describe()
    );
}

const CHECKED_RECIPE: &str = r#"schema = 1

[[checks]]
id = "clean-env"
command = ["sh", "-c", "echo checking; test -z \"$PLANTED_SECRET\""]
covers = ["checks run without the caller's secrets"]

[[checks]]
id = "broken"
command = ["sh", "-c", "echo 'assertion failed' >&2; exit 3"]

[[checks]]
id = "slow"
command = ["sleep", "30"]
timeout_seconds = 1
"#;

fn project_check(env: &TestEnv, repo: &TestRepo, args: &[&str]) -> CliRun {
    env.command()
        .args(["project", "check"])
        .args(args)
        .env("PLANTED_SECRET", "hunter2")
        .current_dir(&repo.path)
        .output()
        .unwrap()
        .into()
}

#[test]
fn project_check_runs_every_check_and_fails_when_one_fails() {
    let env = TestEnv::new();
    let repo = TestRepo::new();
    write_recipe(&repo.path, CHECKED_RECIPE);
    let run = project_check(&env, &repo, &[]);
    assert_eq!(run.status, 1, "{}", run.describe());
    for fragment in [
        "checking",
        "check clean-env: passed in",
        "check broken: failed: exit code 3",
        "check slow: failed: the command timed out after 1000 ms",
        "1 of 3 checks passed",
    ] {
        assert!(
            run.stdout.contains(fragment),
            "missing {fragment:?}\n{}",
            run.describe()
        );
    }
    assert!(
        run.stderr.contains("assertion failed"),
        "{}",
        run.describe()
    );
}

#[test]
fn project_check_runs_only_the_chosen_checks_and_refuses_unknown_ones() {
    let env = TestEnv::new();
    let repo = TestRepo::new();
    write_recipe(&repo.path, CHECKED_RECIPE);
    let run = project_check(&env, &repo, &["--check", "clean-env", "--json"]);
    assert_eq!(run.status, 0, "{}", run.describe());
    let report = run.json();
    assert_eq!(report["passed"], 1, "{report}");
    assert_eq!(report["checks"][0]["id"], "clean-env", "{report}");
    assert_eq!(report["checks"][0]["stdout_tail"], "checking\n", "{report}");

    let unknown = project_check(&env, &repo, &["--check", "nope"]);
    assert_eq!(unknown.status, 2, "{}", unknown.describe());
    assert!(
        unknown
            .stderr
            .contains("no check `nope` (it has: clean-env, broken, slow)"),
        "{}",
        unknown.describe()
    );
    assert!(
        !unknown.stdout.contains("check clean-env"),
        "nothing ran: {}",
        unknown.describe()
    );
}

#[test]
fn project_check_refuses_an_invalid_or_missing_recipe() {
    let env = TestEnv::new();
    let repo = TestRepo::new();
    let missing = project_check(&env, &repo, &[]);
    assert_eq!(missing.status, 2, "{}", missing.describe());
    assert!(
        missing.stderr.contains("has no project recipe"),
        "{}",
        missing.describe()
    );
    write_recipe(
        &repo.path,
        "schema = 1\n[[checks]]\nid = \"x\"\ncommand = \"make\"\n",
    );
    let invalid = project_check(&env, &repo, &[]);
    assert_eq!(invalid.status, 2, "{}", invalid.describe());
    assert!(
        invalid.stderr.contains("checks[0].command"),
        "{}",
        invalid.describe()
    );
}
