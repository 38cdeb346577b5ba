//! `nagi mission ...`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::{Value, json};

use crate::CommandResult;
use crate::context::Context;
use crate::exit::CliError;
use crate::output;
use crate::spec::{
    CheckEntry, apply_covers_flag, command_check_from_flag, manual_check_from_flag,
    read_mission_file,
};

#[derive(Debug, Subcommand)]
pub enum MissionCommand {
    /// Create a draft mission for a Git checkout.
    Create(CreateArgs),
    /// The missions with their titles; archived ones only with --all (`--json` lists all).
    List {
        /// Show archived missions too.
        #[arg(long)]
        all: bool,
    },
    /// The full mission: criteria, checks, evidence, run, attention.
    Get { mission_id: String },
    /// Freeze the checks that prove the criteria.
    Configure(ConfigureArgs),
    /// Start a read-only provider run on the mission.
    Start(StartArgs),
    /// Answer an attention item (only the cockpit can grant this).
    Respond(RespondArgs),
    /// Re-verify a ready mission and archive it.
    Close { mission_id: String },
    /// Give the mission up: archive it without a proof, with a reason; a live run is
    /// stopped, its claim, services and panes let go. Its history stays.
    Abandon {
        mission_id: String,
        /// Why (kept in the mission's view and history).
        #[arg(long)]
        reason: String,
    },
    /// Tell the run's agent something: the next turn in the same session. Queued while a
    /// turn runs; after the run ended, the provider starts again on its session (read-only
    /// unless the run was granted more). TEXT, or stdin when TEXT is `-` or absent.
    Send {
        mission_id: String,
        text: Option<String>,
        #[command(flatten)]
        model: ModelArgs,
    },
    /// Interrupt the agent's turn in progress (the provider's own interrupt); the mission
    /// is blocked until a follow-up or a new run.
    Interrupt { mission_id: String },
    /// Stop the run's provider and release the run; the mission is blocked until a
    /// follow-up or a new run.
    Stop { mission_id: String },
    /// The run's native session id and the vendor's command that resumes it by hand (only
    /// in your own terminal, never to a process nagi started).
    Session { mission_id: String },
    /// Delete a draft that never ran (a typo in its title or checks); its id is free again.
    /// A mission that ran is abandoned instead.
    Delete { mission_id: String },
    /// The proof receipt of a ready or archived mission; with --export, an evidence pack.
    Proof {
        mission_id: String,
        /// Write an evidence pack to FILE instead (a tar archive: the receipt, the evidence
        /// record of every check it binds, the handoff artifacts and the mission, with a
        /// manifest of their SHA-256; check it with `nagi proof verify FILE`).
        #[arg(long, value_name = "FILE")]
        export: Option<PathBuf>,
    },
    /// The mission's change against the commit its worktree was made from: the files,
    /// then the hunks (coloured and paged on a terminal).
    Diff(super::diff::DiffArgs),
    /// Land a ready mission's change: re-verify, commit it on mission/<id>, integrate it
    /// into a branch (squash by default), archive the mission. Asks for consent.
    Land(super::land::LandArgs),
    /// Rebase the mission branch onto the current tip of the branch it lands in (or
    /// --onto), carrying the worktree's uncommitted changes over. Asks for consent.
    Sync(super::land::SyncArgs),
    /// Run the declared command checks now and record their evidence.
    Verify {
        mission_id: String,
        /// Consent to run the declared commands with your OS permissions (required).
        #[arg(long = "execute-checks")]
        execute_checks: bool,
    },
    /// Hand the mission to another provider through a digest-bound artifact.
    #[command(subcommand)]
    Handoff(HandoffCommand),
    /// Restart recovery: with --dry-run, show what the next server start would do with every
    /// run the store says was live (needs no server).
    Recover {
        #[arg(long = "dry-run")]
        dry_run: bool,
    },
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// Mission id (letters, digits, `_ . : -`). May come from --file.
    pub mission_id: Option<String>,
    #[arg(long)]
    pub title: Option<String>,
    /// Root of the Git checkout (default: the current directory).
    #[arg(long = "repo", value_name = "PATH")]
    pub repository: Option<PathBuf>,
    #[arg(long)]
    pub objective: Option<String>,
    /// An acceptance criterion; repeat for each, in order.
    #[arg(long = "criterion", value_name = "TEXT")]
    pub criteria: Vec<String>,
    /// A TOML or JSON file with mission_id, title, repository_path, objective,
    /// acceptance_criteria (flags override it).
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ConfigureArgs {
    pub mission_id: String,
    /// A command check: 'ID=PROGRAM ARGS...' (required, covers every criterion).
    #[arg(long = "check", value_name = "ID=COMMAND")]
    pub checks: Vec<String>,
    /// A manual check: 'ID=REVIEWER[,REVIEWER...]'.
    #[arg(long = "manual-check", value_name = "ID=REVIEWERS")]
    pub manual_checks: Vec<String>,
    /// Which criteria a check covers, numbered from 1 as `mission get` shows them: 'ID=1,3'.
    #[arg(long = "covers", value_name = "ID=NUMBERS")]
    pub covers: Vec<String>,
    /// A TOML or JSON file with [[checks]] tables.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// The providers a run can use, as the CLI spells them: the wire names, and the names
/// people type (`claude`, `opencode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProviderChoice {
    Codex,
    #[value(name = "claude_code", alias = "claude", alias = "claude-code")]
    ClaudeCode,
    #[value(name = "open_code", alias = "opencode", alias = "open-code")]
    OpenCode,
    Acp,
}

impl ProviderChoice {
    /// The provider's name on the wire.
    pub fn wire_name(self) -> &'static str {
        match self {
            ProviderChoice::Codex => "codex",
            ProviderChoice::ClaudeCode => "claude_code",
            ProviderChoice::OpenCode => "open_code",
            ProviderChoice::Acp => "acp",
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum HandoffCommand {
    /// Build the redacted continuation artifact and print its digest.
    Preview {
        mission_id: String,
        #[arg(long, value_enum)]
        to: ProviderChoice,
        /// Fleet mode: hand the mission to this host, when its own host is gone (the new
        /// host clones the repository's remote).
        #[arg(long, value_name = "NAME")]
        host: Option<String>,
    },
    /// Start the continuation from an inspected preview.
    Start {
        mission_id: String,
        #[arg(long, value_enum)]
        to: ProviderChoice,
        /// The artifact_sha256 printed by the preview.
        #[arg(long)]
        digest: String,
        /// The generated_at_millis printed by the preview.
        #[arg(long = "generated-at")]
        generated_at: u64,
        /// Fleet mode: the host the preview named.
        #[arg(long, value_name = "NAME")]
        host: Option<String>,
    },
    /// Print a handoff artifact a continuation started from, by its digest.
    Show {
        /// The artifact_sha256 (the run's `handoff_artifact_sha256` in `nagi mission get`).
        artifact_sha256: String,
    },
}

#[derive(Debug, Args)]
pub struct StartArgs {
    pub mission_id: String,
    /// The provider (acp needs the cockpit).
    #[arg(long, value_enum)]
    pub provider: ProviderChoice,
    /// The run id (default: run-<unix milliseconds>); it may not name another mission's run.
    #[arg(long = "run-id", value_name = "ID")]
    pub run_id: Option<String>,
    /// Run in this checkout root of the mission's repository instead of the mission's own
    /// worktree.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["in_place", "base"])]
    pub worktree: Option<PathBuf>,
    /// Run in the repository's checkout itself instead of the mission's own worktree
    /// (by default a mission works in a linked worktree on branch mission/<id>, made at its
    /// first start).
    #[arg(long = "in-place", conflicts_with = "base")]
    pub in_place: bool,
    /// The branch, tag or commit the mission's worktree is made from at its first start
    /// (default: the checkout's HEAD, or the recipe's [worktree] base).
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// Consent to run the declared command checks, with your OS permissions, when the
    /// provider's turn completes.
    #[arg(long = "execute-checks")]
    pub execute_checks: bool,
    /// Let the provider write in its worktree. Shows the consent preview here and asks
    /// (as the cockpit does); only a terminal of your own may grant it.
    #[arg(long)]
    pub write: bool,
    /// Run the repository's .nagi/project.toml setup and services for this run (asks, as
    /// --write does).
    #[arg(long = "execute-recipe")]
    pub execute_recipe: bool,
    /// Approve the consent preview without asking.
    #[arg(long)]
    pub yes: bool,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// The model and reasoning effort of a run (start) or from a follow-up on (send).
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// The model, as the provider names it (gpt-5.4, claude-sonnet-4-5, provider/model
    /// for OpenCode); default: the provider's own.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The reasoning effort, where the provider has one (low, medium, high, …).
    #[arg(long, value_name = "EFFORT")]
    pub effort: Option<String>,
}

impl ModelArgs {
    /// Adds `model` and `reasoning_effort` to a request's params or an action.
    fn add_to(&self, params: &mut Value) {
        if let Some(model) = &self.model {
            params["model"] = json!(model);
        }
        if let Some(effort) = &self.effort {
            params["reasoning_effort"] = json!(effort);
        }
    }
}

#[derive(Debug, Args)]
pub struct RespondArgs {
    pub mission_id: String,
    #[arg(long = "run", value_name = "RUN")]
    pub run_id: String,
    #[arg(long = "attention", value_name = "ATTENTION")]
    pub attention_id: String,
    /// approve_once, approve_for_session, deny or answer.
    #[arg(long)]
    pub decision: String,
    /// An answer: 'QUESTION_ID=VALUE'; repeat for several values.
    #[arg(long = "answer", value_name = "QUESTION=VALUE")]
    pub answers: Vec<String>,
    /// Approve the consent preview without asking.
    #[arg(long)]
    pub yes: bool,
}

fn mission_view_text(result: &Value) -> String {
    output::mission(result.get("mission").unwrap_or(&Value::Null))
}

pub fn run(context: &Context, command: MissionCommand) -> CommandResult {
    match command {
        MissionCommand::Create(args) => create(context, args),
        MissionCommand::List { all } => {
            let result = context.request("mission.list", json!({}))?;
            context.print(&result, |result| {
                output::mission_list(
                    result
                        .get("missions")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or(&[]),
                    all,
                )
            })
        }
        MissionCommand::Get { mission_id } => {
            let mut client = context.client()?;
            let result = client
                .request("mission.get", json!({"mission_id": mission_id}))
                .map_err(crate::connect::remote)?;
            if context.json {
                return context.print(&result, mission_view_text);
            }
            let attention = client
                .request("attention.list", json!({"mission_id": mission_id}))
                .map_err(crate::connect::remote)?;
            let items = attention
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            context.print(&result, |result| {
                let mut text = mission_view_text(result);
                for item in &items {
                    text.push_str(
                        &output::attention_item(item)
                            .lines()
                            .map(|line| format!("    {line}\n"))
                            .collect::<String>(),
                    );
                }
                text
            })
        }
        MissionCommand::Start(args) => {
            let run_id = args.run_id.unwrap_or_else(|| {
                let millis = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis())
                    .unwrap_or(0);
                format!("run-{millis}")
            });
            let worktree = args
                .worktree
                .map(|path| absolute(&path.display().to_string()))
                .transpose()?;
            let mission_worktree = worktree.is_none() && !args.in_place;
            if args.write || args.execute_recipe || matches!(args.provider, ProviderChoice::Acp) {
                // Authority the public socket cannot grant: asked for here, as the cockpit
                // asks for it.
                let mut action = json!({
                    "kind": "start_run",
                    "mission_id": args.mission_id,
                    "run_id": run_id,
                    "provider": args.provider.wire_name(),
                    "worktree_path": worktree,
                    "worktree": mission_worktree,
                    "base": args.base,
                    "write_scope": args.write || matches!(args.provider, ProviderChoice::Acp),
                    "execute_project_recipe": args.execute_recipe,
                    "execute_declared_checks": args.execute_checks,
                });
                args.model.add_to(&mut action);
                let outcome = super::consent::ask_and_decide(context, action, args.yes)?;
                return context.print(&outcome, |outcome| {
                    let summary = outcome.get("summary").and_then(Value::as_str).unwrap_or("");
                    match outcome.get("mission") {
                        Some(mission) if mission.is_object() => {
                            format!("{summary}\n{}", output::mission(mission))
                        }
                        _ => format!("{summary}\n"),
                    }
                });
            }
            let mut params = json!({
                "mission_id": args.mission_id,
                "run_id": run_id,
                "provider": args.provider.wire_name(),
                "mode": "managed",
                "worktree_path": worktree,
                "execute_declared_checks": args.execute_checks,
            });
            args.model.add_to(&mut params);
            if mission_worktree {
                params["worktree"] = json!(true);
                if let Some(base) = &args.base {
                    params["base"] = json!(base);
                }
            }
            let result = context.request("mission.start", params)?;
            context.print(&result, |result| {
                format!("run started\n{}", mission_view_text(result))
            })
        }
        MissionCommand::Configure(args) => configure(context, args),
        MissionCommand::Diff(args) => super::diff::run(context, args),
        MissionCommand::Land(args) => super::land::run(context, args),
        MissionCommand::Sync(args) => super::land::sync(context, args),
        MissionCommand::Abandon { mission_id, reason } => {
            let result = context.request(
                "mission.abandon",
                json!({"mission_id": mission_id, "reason": reason}),
            )?;
            context.print(&result, |result| {
                format!("mission abandoned\n{}", mission_view_text(result))
            })
        }
        MissionCommand::Send {
            mission_id,
            text,
            model,
        } => {
            let text = follow_up_text(text)?;
            let mut params = json!({"mission_id": mission_id, "text": text});
            model.add_to(&mut params);
            let result = context.request("mission.send", params)?;
            context.print(&result, |result| {
                let how = match result.get("delivery").and_then(Value::as_str) {
                    Some("queued") => {
                        "follow-up queued: it is sent when the running turn completes"
                    }
                    _ => "follow-up sent: the provider resumed its session",
                };
                format!("{how}\n{}", mission_view_text(result))
            })
        }
        MissionCommand::Interrupt { mission_id } => {
            let result = context.request("mission.interrupt", json!({"mission_id": mission_id}))?;
            context.print(&result, |result| {
                format!("interrupt sent\n{}", mission_view_text(result))
            })
        }
        MissionCommand::Stop { mission_id } => {
            let result = context.request("mission.stop", json!({"mission_id": mission_id}))?;
            context.print(&result, |result| {
                format!("run stopped\n{}", mission_view_text(result))
            })
        }
        MissionCommand::Session { mission_id } => {
            let result = context.request("mission.session", json!({"mission_id": mission_id}))?;
            context.print(&result, |result| {
                let session = &result["session"];
                let mut text = format!(
                    "run {} ({}) session {}\n",
                    result["run_id"].as_str().unwrap_or_default(),
                    result["provider"].as_str().unwrap_or_default(),
                    session["id"].as_str().unwrap_or_default()
                );
                if let Some(command) = session["resume_command"].as_str() {
                    text.push_str(&format!(
                        "resume it by hand: cd {} && {command}\n",
                        result["worktree_path"].as_str().unwrap_or_default()
                    ));
                }
                text
            })
        }
        MissionCommand::Delete { mission_id } => {
            let result = context.request("mission.delete", json!({"mission_id": mission_id}))?;
            context.print(&result, |_| {
                format!("mission {mission_id} deleted; its id is free again\n")
            })
        }
        MissionCommand::Respond(args) => respond(context, args),
        MissionCommand::Recover { dry_run } => recover(context, dry_run),
        MissionCommand::Proof {
            mission_id,
            export: Some(file),
        } => super::evidence_pack::export(context, &mission_id, &file),
        MissionCommand::Proof {
            mission_id,
            export: None,
        } => {
            let result = context.request("mission.proof.get", json!({"mission_id": mission_id}))?;
            context.print(&result, |result| {
                output::receipt(result.get("receipt").unwrap_or(&Value::Null))
            })
        }
        MissionCommand::Verify {
            mission_id,
            execute_checks,
        } => {
            let result = context
                .request(
                    "mission.verify",
                    json!({"mission_id": mission_id, "execute_declared_checks": execute_checks}),
                )
                .map_err(|error| match error {
                    // The server names its wire field; a person at the CLI needs the flag.
                    CliError::Remote { code, .. }
                        if !execute_checks && code == "interactive_consent_required" =>
                    {
                        CliError::Remote {
                            code,
                            message: format!(
                                "verifying runs the mission's declared commands with your OS permissions; \
                                 consent with: nagi mission verify {mission_id} --execute-checks"
                            ),
                        }
                    }
                    other => other,
                })?;
            context.print(&result, |result| {
                format!(
                    "verification started; the checks run now\n{}",
                    mission_view_text(result)
                )
            })
        }
        MissionCommand::Handoff(HandoffCommand::Preview {
            mission_id,
            to,
            host,
        }) => {
            let mut params = json!({"mission_id": mission_id, "to": to.wire_name()});
            if let Some(host) = host {
                params["host"] = json!(host);
            }
            let result = context.request("mission.handoff.preview", params)?;
            context.print(&result, |result| {
                output::handoff_artifact(result.get("artifact").unwrap_or(&Value::Null))
            })
        }
        MissionCommand::Handoff(HandoffCommand::Start {
            mission_id,
            to,
            digest,
            generated_at,
            host,
        }) => {
            let mut params = json!({"mission_id": mission_id, "to": to.wire_name(), "artifact_sha256": digest, "generated_at_millis": generated_at});
            if let Some(host) = host {
                params["host"] = json!(host);
            }
            let result = context.request("mission.handoff.start", params)?;
            context.print(&result, |result| {
                format!("continuation started\n{}", mission_view_text(result))
            })
        }
        MissionCommand::Handoff(HandoffCommand::Show { artifact_sha256 }) => {
            super::evidence_pack::handoff_show(context, &artifact_sha256)
        }
        MissionCommand::Close { mission_id } => {
            let result = context.request("mission.close", json!({"mission_id": mission_id}))?;
            context.print(&result, |result| {
                format!(
                    "close accepted; re-verifying\n{}",
                    mission_view_text(result)
                )
            })
        }
    }
}

fn create(context: &Context, args: CreateArgs) -> CommandResult {
    let file = args.file.as_deref().map(read_mission_file).transpose()?;
    let from_file =
        |pick: fn(&crate::spec::MissionFile) -> Option<String>| file.as_ref().and_then(pick);
    let mission_id = args
        .mission_id
        .or_else(|| from_file(|file| file.mission_id.clone()))
        .ok_or_else(|| {
            CliError::Usage("give a mission id (argument or mission_id in --file)".into())
        })?;
    let title = args
        .title
        .or_else(|| from_file(|file| file.title.clone()))
        .ok_or_else(|| CliError::Usage("give --title (or title in --file)".into()))?;
    let objective = args
        .objective
        .or_else(|| from_file(|file| file.objective.clone()))
        .ok_or_else(|| CliError::Usage("give --objective (or objective in --file)".into()))?;
    let criteria = if args.criteria.is_empty() {
        file.as_ref()
            .map(|file| file.acceptance_criteria.clone())
            .unwrap_or_default()
    } else {
        args.criteria
    };
    if criteria.is_empty() {
        return Err(CliError::Usage(
            "give at least one --criterion (or acceptance_criteria in --file)".into(),
        ));
    }
    let repository = match args
        .repository
        .map(|path| path.display().to_string())
        .or_else(|| from_file(|file| file.repository_path.clone()))
    {
        Some(path) => path,
        None => std::env::current_dir()
            .map_err(|error| CliError::Usage(error.to_string()))?
            .display()
            .to_string(),
    };
    let repository = absolute(&repository)?;
    let result = context.request(
        "mission.create",
        json!({
            "mission_id": mission_id,
            "title": title,
            "repository_path": repository,
            "objective": objective,
            "acceptance_criteria": criteria,
        }),
    )?;
    context.print(&result, |result| {
        let created = result.get("created").and_then(Value::as_bool) == Some(true);
        let headline = if created {
            "created"
        } else {
            "already exists, unchanged"
        };
        format!("{headline}\n{}", mission_view_text(result))
    })
}

/// The socket wants absolute paths; a relative one is taken from the current directory.
fn absolute(path: &str) -> Result<String, CliError> {
    let path = PathBuf::from(path);
    if path.is_absolute() {
        return Ok(path.display().to_string());
    }
    let current = std::env::current_dir().map_err(|error| CliError::Usage(error.to_string()))?;
    Ok(current.join(path).display().to_string())
}

fn configure(context: &Context, args: ConfigureArgs) -> CommandResult {
    let mut entries: Vec<CheckEntry> = match &args.file {
        Some(path) => read_mission_file(path)?.checks,
        None => Vec::new(),
    };
    for text in &args.checks {
        entries.push(command_check_from_flag(text)?);
    }
    for text in &args.manual_checks {
        entries.push(manual_check_from_flag(text)?);
    }
    for text in &args.covers {
        apply_covers_flag(&mut entries, text)?;
    }
    if entries.is_empty() {
        return Err(CliError::Usage(
            "give at least one --check, --manual-check or a --file with [[checks]]".into(),
        ));
    }
    let mission = context.request("mission.get", json!({"mission_id": args.mission_id}))?;
    let criteria_count = mission
        .get("mission")
        .and_then(|mission| mission.get("criteria"))
        .and_then(Value::as_array)
        .map(Vec::len)
        .unwrap_or(0);
    let checks = entries
        .into_iter()
        .map(|entry| entry.into_check(criteria_count))
        .collect::<Result<Vec<_>, _>>()?;
    let result = context.request(
        "mission.configure",
        json!({"mission_id": args.mission_id, "checks": checks}),
    )?;
    context.print(&result, |result| {
        let configured = result.get("configured").and_then(Value::as_bool) == Some(true);
        let headline = if configured {
            "closure plan frozen"
        } else {
            "the same closure plan was already configured"
        };
        format!("{headline}\n{}", mission_view_text(result))
    })
}

fn respond(context: &Context, args: RespondArgs) -> CommandResult {
    let mut answers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for text in &args.answers {
        let (question, value) = text.split_once('=').ok_or_else(|| {
            CliError::Usage(format!("--answer expects QUESTION=VALUE, got {text:?}"))
        })?;
        answers
            .entry(question.to_string())
            .or_default()
            .push(value.to_string());
    }
    // Answering needs a person's consent: asked for here, as the cockpit asks for it.
    let action = json!({
        "kind": "respond",
        "mission_id": args.mission_id,
        "run_id": args.run_id,
        "attention_id": args.attention_id,
        "decision": args.decision,
        "answers": answers,
    });
    let outcome = super::consent::ask_and_decide(context, action, args.yes)?;
    context.print(&outcome, |outcome| {
        format!(
            "{}\n",
            outcome
                .get("summary")
                .and_then(Value::as_str)
                .unwrap_or("response queued")
        )
    })
}

fn recover(context: &Context, dry_run: bool) -> CommandResult {
    let paths = crate::connect::session_paths(context.session.as_deref())?;
    if !dry_run {
        let result = context.request("ping", json!({}))?;
        let _ = result;
        println!(
            "recovery runs whenever the server starts; the server for this session is running"
        );
        return Ok(crate::exit::EXIT_OK);
    }
    if nagi_schema::client::Client::connect(&paths.socket_path).is_ok() {
        eprintln!("nagi: a server is running for this session; it already recovered at its start");
    }
    let actions = nagi_engine::runs::recovery::recovery_plan(&paths.database_path())
        .map_err(|error| CliError::Usage(error.to_string()))?;
    if context.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&actions).unwrap_or_default()
        );
    } else if actions.is_empty() {
        println!("no live runs: recovery would do nothing");
    } else {
        for action in &actions {
            println!(
                "{:<24} {:<14} {:<14} {}",
                action.mission_id,
                action.run_id.as_deref().unwrap_or("-"),
                action.action,
                action.reason
            );
        }
    }
    Ok(crate::exit::EXIT_OK)
}

/// The follow-up's text: the argument, or stdin when it is `-` or absent.
fn follow_up_text(text: Option<String>) -> Result<String, CliError> {
    match text.as_deref() {
        Some(text) if text != "-" => Ok(text.to_string()),
        _ => {
            let mut read = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut read).map_err(|error| {
                CliError::Usage(format!("cannot read the follow-up from stdin: {error}"))
            })?;
            Ok(read.trim_end_matches('\n').to_string())
        }
    }
}
