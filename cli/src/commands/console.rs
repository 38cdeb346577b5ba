//! `nagi run console MISSION`: the run's own pane. It shows the run's transcript as the
//! server writes it and takes the person's input: a line typed is the agent's next turn
//! (`mission.send`: queued while a turn runs, or the provider resumed on its session), and
//! Ctrl-C interrupts the turn in progress (`mission.interrupt`).
//!
//! The pane's terminal stays in its normal (cooked) mode: the line discipline echoes and
//! edits what is typed, and turns Ctrl-C into SIGINT for this process, which asks the
//! server for the interrupt instead of ending the console.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

use crate::CommandResult;
use crate::context::Context;
use crate::exit::{CliError, EXIT_OK};

/// How often the transcript is read for what was appended.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(10);

#[derive(Debug, Subcommand)]
pub enum RunCommand {
    /// Follow a mission's run and talk to its agent: a line typed is the next turn,
    /// Ctrl-C interrupts the turn. It is what a run's pane runs.
    Console(ConsoleArgs),
}

#[derive(Debug, Args)]
pub struct ConsoleArgs {
    pub mission_id: String,
    /// The run (default: the mission's current run).
    #[arg(long)]
    pub run: Option<String>,
    /// The transcript to follow (default: the run's transcript in this session's data
    /// folder).
    #[arg(long, value_name = "FILE")]
    pub transcript: Option<PathBuf>,
}

pub fn run(context: &Context, command: RunCommand) -> CommandResult {
    let RunCommand::Console(args) = command;
    let transcript = match args.transcript.clone() {
        Some(path) => path,
        None => default_transcript(context, &args)?,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| CliError::Unreachable(format!("cannot start the console: {error}")))?;
    runtime.block_on(console(context, &args.mission_id, transcript))?;
    Ok(EXIT_OK)
}

fn default_transcript(context: &Context, args: &ConsoleArgs) -> Result<PathBuf, CliError> {
    let run_id = match &args.run {
        Some(run_id) => run_id.clone(),
        None => {
            let mission = context.request("mission.get", json!({"mission_id": args.mission_id}))?;
            mission["mission"]["run"]["run_id"]
                .as_str()
                .ok_or_else(|| {
                    CliError::Usage(format!("mission {} has no run yet", args.mission_id))
                })?
                .to_string()
        }
    };
    let paths = crate::connect::session_paths(context.session.as_deref())?;
    Ok(paths
        .transcript_dir()
        .join(&args.mission_id)
        .join(format!("{run_id}.log")))
}

/// One line on the console from nagi itself (dim, so it stands apart from the agent).
fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "\x1b[2m[console] {text}\x1b[0m\r\n");
    let _ = out.flush();
}

async fn console(context: &Context, mission_id: &str, transcript: PathBuf) -> Result<(), CliError> {
    say(&format!(
        "mission {mission_id}: type a line and Enter to send it to the agent; Ctrl-C interrupts its turn"
    ));
    let mut interrupts = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|error| CliError::Unreachable(format!("cannot catch Ctrl-C: {error}")))?;
    tokio::spawn(follow(transcript));
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdin_open = true;
    loop {
        tokio::select! {
            line = lines.next_line(), if stdin_open => match line {
                Ok(Some(line)) if line.trim().is_empty() => {}
                Ok(Some(line)) => request(context, "mission.send", json!({"mission_id": mission_id, "text": line})).await,
                // Nothing more can be typed; the run is still shown.
                Ok(None) | Err(_) => stdin_open = false,
            },
            _ = interrupts.recv() => {
                request(context, "mission.interrupt", json!({"mission_id": mission_id})).await;
            }
        }
    }
}

/// Sends one request on a blocking thread and says how it went.
async fn request(context: &Context, method: &'static str, params: Value) {
    let session = context.session.clone();
    // Never starts a server: a console only talks to the server whose pane it is in.
    let answer = tokio::task::spawn_blocking(move || {
        let paths = crate::connect::session_paths(session.as_deref())?;
        crate::connect::connect_existing(&paths)?
            .request(method, params)
            .map_err(crate::connect::remote)
    })
    .await;
    match answer {
        Ok(Ok(result)) => say(&describe(method, &result)),
        Ok(Err(CliError::Remote { code, message })) => {
            say(&format!("\x1b[31m{method} refused ({code}): {message}"))
        }
        Ok(Err(
            CliError::Usage(message) | CliError::Unreachable(message) | CliError::Timeout(message),
        )) => say(&format!("\x1b[31m{method} failed: {message}")),
        Err(error) => say(&format!("\x1b[31m{method} failed: {error}")),
    }
}

fn describe(method: &str, result: &Value) -> String {
    match (method, result["delivery"].as_str()) {
        ("mission.send", Some("queued")) => "queued: it is sent when this turn completes".into(),
        ("mission.send", _) => "sent: the agent resumes its session".into(),
        _ => format!(
            "interrupt sent; the mission is {}",
            result["mission"]["status"].as_str().unwrap_or("unknown")
        ),
    }
}

/// Copies the transcript to the terminal as it grows (from its start; it is created when
/// the run's session is bound).
async fn follow(path: PathBuf) {
    let mut file = loop {
        match tokio::fs::File::open(&path).await {
            Ok(file) => break file,
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buffer).await {
            Ok(0) => tokio::time::sleep(FOLLOW_INTERVAL).await,
            Ok(read) => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&buffer[..read]);
                let _ = out.flush();
            }
            Err(error) => {
                say(&format!("cannot read the transcript: {error}"));
                return;
            }
        }
    }
}
