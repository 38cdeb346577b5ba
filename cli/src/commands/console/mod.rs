//! `nagi run console MISSION`: the run's own pane. It follows the run's console records as
//! the server appends them (`nagi_schema::console`) and draws them to the pane's width
//! (`draw.rs`); and it takes the person's input: a line typed is the agent's next turn
//! (`mission.send`: queued while a turn runs, or the provider resumed on its session), and
//! Ctrl-C interrupts the turn in progress (`mission.interrupt`).
//!
//! The pane's terminal stays in its normal (cooked) mode: the line discipline echoes and
//! edits what is typed, and turns Ctrl-C into SIGINT for this process, which asks the
//! server for the interrupt instead of ending the console.

mod appended;
mod draw;

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nagi_schema::console::ConsoleRecord;

use clap::{Args, Subcommand};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

use crate::CommandResult;
use crate::context::Context;
use crate::exit::{CliError, EXIT_OK};

/// Records kept to draw again when the pane's width changes.
const REDRAWN_RECORDS: usize = 5_000;

/// The console's drawing state, shared by the records it follows and its own notes.
type SharedDrawer = Arc<Mutex<Screen>>;

/// What is drawn, and at which width: a pane that changes width (an attached client of
/// another size) is cleared and its records drawn again, wrapped to the new width, since a
/// terminal cuts rows that were wider rather than wrapping them again.
#[derive(Default)]
struct Screen {
    drawer: draw::Drawer,
    history: std::collections::VecDeque<ConsoleRecord>,
    width: usize,
}

impl Screen {
    fn draw(&mut self, records: &[ConsoleRecord], width: usize) -> String {
        let mut out = String::new();
        if self.width != 0 && width != self.width {
            out.push_str(&self.redraw(width));
        }
        self.width = width;
        for record in records {
            out.push_str(&self.drawer.draw(record, width));
            if self.history.len() == REDRAWN_RECORDS {
                self.history.pop_front();
            }
            self.history.push_back(record.clone());
        }
        out
    }

    /// Clears the screen and its scrollback, and draws every kept record at `width`.
    fn redraw(&mut self, width: usize) -> String {
        self.width = width;
        self.drawer = draw::Drawer::default();
        let mut out = String::from("\x1b[H\x1b[2J\x1b[3J");
        for record in &self.history {
            out.push_str(&self.drawer.draw(record, width));
        }
        out
    }
}

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
    /// The run's transcript; its console records are beside it (default: the run's
    /// transcript in this session's data folder).
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

/// Draws records on the console, in one write.
fn show(drawer: &SharedDrawer, records: &[ConsoleRecord]) {
    let width = pane_width();
    let drawn = match drawer.lock() {
        Ok(mut screen) => screen.draw(records, width),
        Err(_) => return,
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(drawn.as_bytes());
    let _ = out.flush();
}

/// One line on the console from the console itself.
fn say(drawer: &SharedDrawer, text: &str) {
    show(
        drawer,
        &[ConsoleRecord::Info {
            text: format!("[console] {text}"),
        }],
    );
}

/// The pane's width in columns (80 when the output is not a terminal).
fn pane_width() -> usize {
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct it is given.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let known = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    if known && size.ws_col > 0 {
        usize::from(size.ws_col)
    } else {
        80
    }
}

async fn console(context: &Context, mission_id: &str, transcript: PathBuf) -> Result<(), CliError> {
    let drawer = SharedDrawer::default();
    say(
        &drawer,
        &format!(
            "mission {mission_id}: type a line and Enter to send it to the agent; Ctrl-C interrupts its turn"
        ),
    );
    let mut interrupts = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|error| CliError::Unreachable(format!("cannot catch Ctrl-C: {error}")))?;
    let mut resizes = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change())
        .map_err(|error| {
            CliError::Unreachable(format!("cannot follow the pane's size: {error}"))
        })?;
    tokio::spawn(follow(
        nagi_schema::console::records_path(&transcript),
        drawer.clone(),
    ));
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut stdin_open = true;
    loop {
        tokio::select! {
            line = lines.next_line(), if stdin_open => match line {
                Ok(Some(line)) if line.trim().is_empty() => {}
                Ok(Some(line)) => request(context, &drawer, "mission.send", json!({"mission_id": mission_id, "text": line})).await,
                // Nothing more can be typed; the run is still shown.
                Ok(None) | Err(_) => stdin_open = false,
            },
            _ = resizes.recv() => show(&drawer, &[]),
            _ = interrupts.recv() => {
                request(context, &drawer, "mission.interrupt", json!({"mission_id": mission_id})).await;
            }
        }
    }
}

/// Sends one request on a blocking thread and says how it went.
async fn request(context: &Context, drawer: &SharedDrawer, method: &'static str, params: Value) {
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
        Ok(Ok(result)) => say(drawer, &describe(method, &result)),
        Ok(Err(CliError::Remote { code, message })) => {
            say(drawer, &format!("{method} refused ({code}): {message}"))
        }
        Ok(Err(
            CliError::Usage(message) | CliError::Unreachable(message) | CliError::Timeout(message),
        )) => say(drawer, &format!("{method} failed: {message}")),
        Err(error) => say(drawer, &format!("{method} failed: {error}")),
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

/// Draws the run's console records as the server appends them (from the file's start; it
/// is created when the run's session is bound). A line not ended yet is kept until it is.
async fn follow(path: PathBuf, drawer: SharedDrawer) {
    let mut file = loop {
        match tokio::fs::File::open(&path).await {
            Ok(file) => break file,
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    let mut appended = appended::Appended::watch(&path);
    let mut buffer = vec![0u8; 64 * 1024];
    let mut partial = Vec::new();
    loop {
        match file.read(&mut buffer).await {
            Ok(0) => {
                appended.next().await;
            }
            Ok(read) => {
                partial.extend_from_slice(&buffer[..read]);
                let Some(end) = partial.iter().rposition(|byte| *byte == b'\n') else {
                    continue;
                };
                let complete: Vec<u8> = partial.drain(..=end).collect();
                // A record of a newer server that this console does not know is skipped.
                let records: Vec<ConsoleRecord> = complete
                    .split(|byte| *byte == b'\n')
                    .filter_map(|line| serde_json::from_slice(line).ok())
                    .collect();
                show(&drawer, &records);
            }
            Err(error) => {
                say(&drawer, &format!("cannot read the run's records: {error}"));
                return;
            }
        }
    }
}
