//! The main loop: draw, read keys, apply server updates, send requests.
//!
//! Freshness: the request worker reads a snapshot every `refresh_interval`, and the
//! event follower turns every durable mission event into an immediate refresh, so the
//! screen follows the server within one event round trip and never drifts more than one
//! interval even if the event stream is down.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use ratatui::crossterm::event::{self, Event};

use crate::client::watch::{self, Watch};
use crate::client::{events, worker};
use crate::request::{Request, ServerUpdate};
use crate::state::App;
use crate::terminal::{SignalFlag, TerminalSession, exit_when_terminal_hangs_up};
use crate::ui;

/// How long the loop waits for a key before it looks at updates and redraws.
const FRAME: Duration = Duration::from_millis(100);

#[derive(Debug, Clone)]
pub struct CockpitConfig {
    pub socket_path: PathBuf,
    /// How often the worker reads a full snapshot without being asked.
    pub refresh_interval: Duration,
}

impl CockpitConfig {
    pub fn new(socket_path: PathBuf) -> CockpitConfig {
        CockpitConfig {
            socket_path,
            refresh_interval: Duration::from_millis(1000),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CockpitError {
    #[error("the cockpit cannot use this terminal: {0}")]
    Terminal(std::io::Error),
    #[error("the cockpit cannot watch for signals: {0}")]
    Signals(std::io::Error),
}

/// How the cockpit ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CockpitExit {
    Quit,
    /// Ended by this signal (the terminal was restored first).
    Signal(i32),
}

/// Runs the cockpit until the person quits or a signal ends it.
pub fn run(config: CockpitConfig) -> Result<CockpitExit, CockpitError> {
    let signals = SignalFlag::register().map_err(CockpitError::Signals)?;
    let (update_sender, updates) = channel();
    let requests = worker::spawn(
        config.socket_path.clone(),
        config.refresh_interval,
        update_sender.clone(),
    );
    events::spawn(config.socket_path.clone(), update_sender.clone());
    let mut terminal = TerminalSession::enter().map_err(CockpitError::Terminal)?;
    exit_when_terminal_hangs_up();
    let mut app = App::new();
    let mut watching: Option<Watch> = None;
    let _ = requests.send(Request::Refresh);
    let exit = loop {
        let mirror = watching.as_ref().map(|watch| watch.mirror.clone());
        terminal
            .draw(|frame| {
                let guard = mirror
                    .as_ref()
                    .map(|mirror| mirror.lock().expect("the mirror lock is never poisoned"));
                let screen = guard
                    .as_ref()
                    .and_then(|parser| parser.as_ref())
                    .map(|parser| parser.screen());
                ui::draw(frame, &app, screen);
            })
            .map_err(CockpitError::Terminal)?;
        if let Some(signal) = signals.received() {
            break CockpitExit::Signal(signal);
        }
        let mut outgoing = read_keys(&mut app).map_err(CockpitError::Terminal)?;
        outgoing.extend(drain_updates(&mut app, &updates));
        ring_alerts(&mut app);
        app.tick();
        let mut refreshed = false;
        for request in outgoing {
            match request {
                Request::Watch { pane_id } => {
                    if let Some(previous) = watching.take() {
                        previous.stop();
                    }
                    watching = Some(watch::start(
                        &config.socket_path,
                        &pane_id,
                        update_sender.clone(),
                    ));
                }
                Request::StopWatching => {
                    if let Some(previous) = watching.take() {
                        previous.stop();
                    }
                }
                Request::Refresh if refreshed => {}
                request => {
                    refreshed |= request == Request::Refresh;
                    let _ = requests.send(request);
                }
            }
        }
        if app.quit {
            break CockpitExit::Quit;
        }
    };
    drop(terminal);
    Ok(exit)
}

/// Rings the terminal's bell and raises its notification for every alert (between frames:
/// the sequences draw nothing).
fn ring_alerts(app: &mut App) {
    if app.alerts.is_empty() {
        return;
    }
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for alert in app.alerts.drain(..) {
        let _ = out.write_all(alert.escape_sequences().as_bytes());
    }
    let _ = out.flush();
}

/// Waits up to one frame for a key, then takes every key already typed.
fn read_keys(app: &mut App) -> std::io::Result<Vec<Request>> {
    let mut outgoing = Vec::new();
    let mut wait = FRAME;
    while event::poll(wait)? {
        if let Event::Key(key) = event::read()? {
            outgoing.extend(app.handle_key(key));
        }
        wait = Duration::ZERO;
    }
    Ok(outgoing)
}

fn drain_updates(app: &mut App, updates: &Receiver<ServerUpdate>) -> Vec<Request> {
    let mut outgoing = Vec::new();
    while let Ok(update) = updates.try_recv() {
        outgoing.extend(app.apply(update));
    }
    outgoing
}
