//! `nagi demo`: a real mission end to end with no account and no network. It makes a Git
//! repository in a temp dir, starts a private server for it, and runs a mission through
//! nagi's built-in offline demo agent (`agent.rs`, which speaks the Codex app-server
//! protocol): create → configure → start (read-only, checks consented) → the check runs →
//! ready_to_close → proof receipt → close → archived. It ends by printing the proof and how
//! to watch the run's pane. Nothing outside the temp dir is touched.

pub mod agent;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nagi_schema::client::Client;
use serde_json::{Value, json};

use crate::CommandResult;
use crate::context::Context;
use crate::exit::{CliError, EXIT_OK};
use crate::output;

fn step(text: &str) {
    println!("\x1b[1;32m==>\x1b[0m {text}");
}

fn git(dir: &Path, args: &[&str]) -> Result<(), CliError> {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "nagi demo")
        .env("GIT_AUTHOR_EMAIL", "demo@nagi.invalid")
        .env("GIT_COMMITTER_NAME", "nagi demo")
        .env("GIT_COMMITTER_EMAIL", "demo@nagi.invalid")
        .stdout(Stdio::null())
        .status()
        .map_err(|error| CliError::Usage(format!("the demo needs git: {error}")))?;
    if !status.success() {
        return Err(CliError::Usage(format!("git {args:?} failed")));
    }
    Ok(())
}

fn make_repository(root: &Path) -> Result<PathBuf, CliError> {
    let repo = root.join("demo-project");
    std::fs::create_dir_all(repo.join("src"))
        .map_err(|error| CliError::Usage(error.to_string()))?;
    std::fs::write(
        repo.join("README.md"),
        "# demo-project\n\nA tiny project for nagi's demo.\n",
    )
    .map_err(|error| CliError::Usage(error.to_string()))?;
    std::fs::write(
        repo.join("src/lib.rs"),
        "pub fn answer() -> u32 {\n    42\n}\n",
    )
    .map_err(|error| CliError::Usage(error.to_string()))?;
    git(&repo, &["init", "-q", "-b", "main"])?;
    git(&repo, &["add", "-A"])?;
    git(&repo, &["commit", "-q", "-m", "initial"])?;
    Ok(repo)
}

fn start_server(config_dir: &Path) -> Result<Client, CliError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(config_dir).map_err(|error| CliError::Usage(error.to_string()))?;
    std::fs::set_permissions(config_dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|error| CliError::Usage(error.to_string()))?;
    let executable = std::env::current_exe().map_err(|error| CliError::Usage(error.to_string()))?;
    let config = format!(
        "# nagi demo: the built-in offline agent stands in for Codex.\n[providers.codex]\ncommand = [{}, \"demo-agent\"]\n",
        serde_json::to_string(&executable.display().to_string()).unwrap_or_default()
    );
    std::fs::write(config_dir.join("config.toml"), config)
        .map_err(|error| CliError::Usage(error.to_string()))?;
    let log = std::fs::File::create(config_dir.join("server.log"))
        .map_err(|error| CliError::Usage(error.to_string()))?;
    let mut command = Command::new(&executable);
    command
        .arg("server")
        .env("NAGI_CONFIG_DIR", config_dir)
        .env_remove("NAGI_SOCKET_PATH")
        .env_remove("NAGI_SESSION")
        .stdin(Stdio::null())
        .stdout(Stdio::from(
            log.try_clone()
                .map_err(|error| CliError::Usage(error.to_string()))?,
        ))
        .stderr(Stdio::from(log));
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe; the demo server outlives this command.
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
    }
    let child = command
        .spawn()
        .map_err(|error| CliError::Unreachable(format!("cannot start the demo server: {error}")))?;
    let socket = config_dir.join("nagi.sock");
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if let Ok(mut client) = Client::connect(&socket)
            && client.request("ping", json!({})).is_ok()
        {
            step(&format!(
                "started a private nagi server (pid {}) for {}",
                child.id(),
                config_dir.display()
            ));
            return Ok(client);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    Err(CliError::Unreachable(format!(
        "the demo server did not answer; see {}",
        config_dir.join("server.log").display()
    )))
}

fn request(client: &mut Client, method: &str, params: Value) -> Result<Value, CliError> {
    client
        .request(method, params)
        .map_err(crate::connect::remote)
}

/// Follows mission events until the mission reaches `status`, printing each.
fn follow_until(socket: &Path, after: u64, status: &str) -> Result<u64, CliError> {
    let mut client = Client::connect(socket).map_err(crate::connect::remote)?;
    client
        .set_read_timeout(Some(Duration::from_secs(120)))
        .map_err(crate::connect::remote)?;
    request(
        &mut client,
        "events.subscribe",
        json!({"subscriptions": [{"type": "mission", "mission_id": "demo"}], "after_seq": after}),
    )?;
    loop {
        let event = client.read_value().map_err(|error| {
            CliError::Timeout(format!(
                "waiting for the mission to become {status}: {error}"
            ))
        })?;
        println!("    {}", output::event_line(&event));
        let data = event.get("data").cloned().unwrap_or(Value::Null);
        let seq = data.get("seq").and_then(Value::as_u64).unwrap_or(after);
        match data.get("status").and_then(Value::as_str) {
            Some(reached) if reached == status => return Ok(seq),
            Some("failed") | Some("blocked") => {
                return Err(CliError::Remote {
                    code: "demo_failed".into(),
                    message: format!(
                        "the demo mission ended {}: {}",
                        data["status"],
                        data.get("reason").and_then(Value::as_str).unwrap_or("")
                    ),
                });
            }
            _ => {}
        }
    }
}

pub fn run(context: &Context) -> CommandResult {
    let root = tempfile::Builder::new()
        .prefix("nagi-demo-")
        .tempdir()
        .map_err(|error| CliError::Usage(error.to_string()))?
        .keep();
    let root = std::fs::canonicalize(&root).map_err(|error| CliError::Usage(error.to_string()))?;
    step(&format!("making a Git repository in {}", root.display()));
    let repo = make_repository(&root)?;
    let config_dir = root.join("config");
    let mut client = start_server(&config_dir)?;
    let socket = config_dir.join("nagi.sock");

    step("creating the mission and freezing its closure plan");
    request(
        &mut client,
        "mission.create",
        json!({"mission_id": "demo", "title": "Document the demo project", "repository_path": repo.display().to_string(),
               "objective": "Make sure the README names the project.",
               "acceptance_criteria": ["README.md names the project (demo-project)"]}),
    )?;
    request(
        &mut client,
        "mission.configure",
        json!({"mission_id": "demo", "checks": [{"kind": "command", "id": "readme-names-project", "program": "grep", "args": ["-q", "demo-project", "README.md"],
               "cwd": ".", "relevant_paths": [{"type": "exact", "path": "README.md"}], "required_artifacts": [], "required": true, "covers": [0]}]}),
    )?;

    step(
        "starting a read-only run with the offline demo agent; the check runs when its turn completes",
    );
    let started = request(
        &mut client,
        "mission.start",
        json!({"mission_id": "demo", "run_id": "demo-run", "provider": "codex", "mode": "managed", "execute_declared_checks": true}),
    )?;
    let pane = started["mission"]["run"]["pane_id"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let ready_seq = follow_until(&socket, 0, "ready_to_close")?;

    step("the proof verified; its receipt:");
    let receipt = request(
        &mut client,
        "mission.proof.get",
        json!({"mission_id": "demo"}),
    )?;
    print!("{}", output::receipt(&receipt["receipt"]));

    step("closing: nagi re-verifies the same workspace and archives the mission");
    request(&mut client, "mission.close", json!({"mission_id": "demo"}))?;
    follow_until(&socket, ready_seq, "archived")?;
    let archived = request(
        &mut client,
        "mission.proof.get",
        json!({"mission_id": "demo"}),
    )?;
    print!("{}", output::receipt(&archived["receipt"]));

    let env = format!("NAGI_CONFIG_DIR={}", config_dir.display());
    let nagi = program_to_type();
    println!();
    step("done. The server keeps running so you can look around:");
    println!("    {env} {nagi} mission get demo");
    println!(
        "    {env} {nagi} pane attach {pane} --observe     (the run's console; Ctrl-\\ detaches)"
    );
    println!("    {env} {nagi} events subscribe --after 0");
    println!(
        "    {env} {nagi} server stop                      (then remove {})",
        root.display()
    );
    if nagi != "nagi" {
        println!(
            "    (`nagi` on your PATH is not this build; `cargo install --path cli` installs it)"
        );
    }
    if context.json {
        println!(
            "{}",
            json!({"root": root, "config_dir": config_dir, "pane_id": pane, "receipt": archived["receipt"]})
        );
    }
    Ok(EXIT_OK)
}

/// How to call this very binary in the commands the demo prints: `nagi` when that name on
/// the PATH is this binary, else its full path (after `cargo run`, nothing is installed).
fn program_to_type() -> String {
    let Ok(this) = std::env::current_exe().and_then(std::fs::canonicalize) else {
        return "nagi".to_string();
    };
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|folder| folder.join("nagi"))
            .find(|candidate| candidate.is_file())
    });
    match on_path.and_then(|found| std::fs::canonicalize(found).ok()) {
        Some(found) if found == this => "nagi".to_string(),
        _ => this.display().to_string(),
    }
}
