//! The shared state of one pane: its terminal, its session (attach) state, its PTY ends,
//! its metadata and exit status. The host registry holds an `Arc<PaneCore>`; so do the
//! pane's reader, parser and waiter threads (see `pty`).
//!
//! Lock order: `terminal` before `session`; `meta` is never held with either.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

use nagi_os::fds::{Readiness, wait_ready};
use nagi_schema::pane::{
    MAX_READ_LINES, PaneExitStatus, PaneInfo, PaneProcessInfo, PaneProcessInfoProcess,
    PaneReadResult, PaneScrollInfo, ReadFormat, ReadSource,
};
use nagi_schema::pane_events::{PaneEventData, PaneScrollChangedEvent, PaneSubscriptionEnvelope};
use nagi_schema::session_protocol::{
    MIN_SESSION_COLS, MIN_SESSION_ROWS, SessionRole, SessionScrollStep,
};
use portable_pty::{MasterPty, PtySize};
use tokio::sync::watch;

use super::attach::{KeyframeSource, SessionMembership, SessionState};
use super::error::PaneError;
use super::events::EventBus;
use super::keys::{KeyCombo, encode_key_combos};
use super::metadata::{MetadataView, PaneMetadata};
use super::process;
use super::screen::{ReadLines, Terminal};
use super::scroll::{anchored_offset, draw_view, stepped_offset};

pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The fixed facts of a pane.
#[derive(Debug, Clone)]
pub struct PaneIdentity {
    pub pane_id: String,
    pub workspace_id: String,
    pub tab_id: String,
    pub terminal_id: String,
    pub command: Vec<String>,
    pub cwd: String,
    pub pid: u32,
}

/// Mutable, non-terminal state of a pane.
#[derive(Debug, Default)]
pub struct PaneMeta {
    pub label: Option<String>,
    pub metadata: PaneMetadata,
    pub exit: Option<PaneExitStatus>,
    /// A process that works for this pane outside its terminal: a run's provider, whose
    /// console the pane shows. `pane.process_info` names it (`agent_processes`).
    pub agent_pid: Option<u32>,
}

/// Output handed from the reader to the parser thread.
#[derive(Default)]
pub struct Pending {
    pub bytes: Vec<u8>,
    pub eof: bool,
    /// A batch is being fed to the screen (by the parser thread, or by the reader
    /// itself for a small read while the parser was idle): output read meanwhile must
    /// queue behind it.
    pub parsing: bool,
}

/// Who reads the master, where a task and the reader thread take turns (see
/// `output`).
#[derive(Debug, Default)]
pub struct ReaderTurn {
    /// The reader thread reads (output streams); otherwise the task does.
    pub thread_reads: bool,
    /// The task is gone (its runtime stopped): the thread reads from now on.
    pub task_gone: bool,
    /// The output ended: nobody reads anymore.
    pub ended: bool,
    /// A direct controller's key thread that asked to read while the output is quiet (see
    /// `quiet_reading`).
    pub keys_claim: Option<KeysClaim>,
    /// The task handed the quiet reading to the claimant; it reads whenever the reader
    /// thread does not.
    pub keys_read: bool,
}

/// A key thread's claim on the quiet reading of the master.
#[derive(Debug)]
pub struct KeysClaim {
    pub id: u64,
    /// Written (a byte, never waiting) when the claimant's turn may have come.
    pub signal: std::io::PipeWriter,
}

impl ReaderTurn {
    /// The reader thread reads alone: no task hands the reading over anymore, and no key
    /// thread holds it.
    pub fn thread_alone(&self) -> bool {
        self.task_gone && !self.keys_read
    }

    /// A key thread may claim the quiet reading: the output goes on, a task can hand the
    /// reading over, and no other key thread holds it.
    pub fn claimable(&self) -> bool {
        !self.ended && !self.task_gone && self.keys_claim.is_none()
    }

    /// Tells the key thread that holds the quiet reading (if one does) that its turn may
    /// have come.
    pub fn signal_keys(&self) {
        if self.keys_read
            && let Some(claim) = &self.keys_claim
        {
            use std::io::Write as _;
            // A full pipe already holds a wake-up.
            let _ = (&claim.signal).write(&[1]);
        }
    }
}

/// The input side of a pane's PTY master (non-blocking, see `pty`).
pub struct PaneInput {
    pub writer: Box<dyn std::io::Write + Send>,
    /// Input accepted but not yet taken by the terminal, whose input buffer was full: it
    /// goes in before any later input.
    pub backlog: Vec<u8>,
}

/// How much of an input [`PaneCore::try_session_input`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputWritten {
    All,
    /// Some of it waits in the backlog: [`PaneCore::flush_input`] must finish it.
    Backlogged,
}

/// Writes as much of `bytes` as the terminal takes now, without waiting.
fn write_available(writer: &mut dyn std::io::Write, bytes: &[u8]) -> std::io::Result<usize> {
    let mut written = 0;
    while written < bytes.len() {
        match writer.write(&bytes[written..]) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(count) => written += count,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(error) => return Err(error),
        }
    }
    Ok(written)
}

pub struct PaneCore {
    pub identity: PaneIdentity,
    pub terminal: Mutex<Terminal>,
    pub session: Mutex<SessionState>,
    pub input: Mutex<PaneInput>,
    pub master: Mutex<Box<dyn MasterPty + Send>>,
    pub master_fd: Option<i32>,
    pub tty: Option<String>,
    pub meta: Mutex<PaneMeta>,
    pub focused: AtomicBool,
    pub revision: AtomicU64,
    /// The latest revision, for waiters on output or state changes.
    pub changes: watch::Sender<u64>,
    pub pending: Mutex<Pending>,
    pub data_ready: Condvar,
    pub space_ready: Condvar,
    /// The same for a reader that runs as a task.
    pub space_notify: tokio::sync::Notify,
    /// Whether the reader task or the reader thread reads the master (see `output`).
    pub reader_turn: Mutex<ReaderTurn>,
    /// Tells the reader thread that its turn came (or that the task is gone).
    pub turn_changed: Condvar,
    /// Tells the reader task that its turn came back (or that the output ended).
    pub turn_back: tokio::sync::Notify,
    /// Set by the parser thread when the output after EOF is fully processed.
    pub drained: Mutex<bool>,
    pub drained_ready: Condvar,
    /// Set when the pane is being closed; threads stop waiting for space.
    pub closing: AtomicBool,
    /// Set once the process has exited and its last output was processed.
    pub finished: AtomicBool,
    pub events: std::sync::Arc<EventBus>,
}

/// One process as `pane.process_info` shows it.
fn process_entry(details: process::ProcessDetails) -> PaneProcessInfoProcess {
    PaneProcessInfoProcess {
        pid: details.pid as u32,
        name: details.name,
        argv0: details.argv.as_ref().and_then(|argv| argv.first().cloned()),
        cmdline: details.argv.as_ref().map(|argv| argv.join(" ")),
        argv: details.argv,
        cwd: details.cwd,
    }
}

/// Spinner and activity glyphs removed from the front of `terminal_title_stripped`.
fn is_activity_glyph(character: char) -> bool {
    ('\u{2800}'..='\u{28ff}').contains(&character) || "✳✶✻✽✢✦✧★☆●○◐◓◑◒•⏺◉◎".contains(character)
}

pub fn strip_activity_glyph(title: &str) -> String {
    let mut chars = title.chars();
    match chars.next() {
        Some(first) if is_activity_glyph(first) => chars.as_str().trim_start().to_string(),
        _ => title.to_string(),
    }
}

/// The view's scroll metrics (`pane.get`, `pane.scroll_changed`) at `offset`.
fn scroll_info(terminal: &Terminal, offset: usize) -> PaneScrollInfo {
    PaneScrollInfo {
        offset_from_bottom: offset as u64,
        max_offset_from_bottom: terminal.scroll_limit() as u64,
        viewport_rows: u64::from(terminal.size().0),
    }
}

/// Checks `lines` of a read: 1..=10000 when given.
pub fn validate_lines(lines: Option<u32>) -> Result<(), PaneError> {
    match lines {
        Some(lines) if lines == 0 || lines > MAX_READ_LINES => Err(PaneError::LinesOutOfRange {
            lines,
            max: MAX_READ_LINES,
        }),
        _ => Ok(()),
    }
}

/// `format: ansi` or `strip_ansi: false` ask for escape sequences.
pub fn wants_ansi(format: ReadFormat, strip_ansi: bool) -> bool {
    format == ReadFormat::Ansi || !strip_ansi
}

impl PaneCore {
    pub fn bump_revision(&self) -> u64 {
        let revision = self.revision.fetch_add(1, Ordering::AcqRel) + 1;
        self.changes.send_replace(revision);
        revision
    }

    /// Tells the reader that the parser took pending output, or that the pane is closing:
    /// a reader waiting for space goes on.
    pub fn wake_reader(&self) {
        self.space_ready.notify_all();
        self.space_notify.notify_one();
    }

    /// The process ended and its output is fully processed: nothing will change anymore.
    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    pub fn exit_status(&self) -> Option<PaneExitStatus> {
        lock(&self.meta).exit
    }

    pub fn metadata_view(&self) -> MetadataView {
        lock(&self.meta).metadata.view(Instant::now())
    }

    pub fn info(&self) -> PaneInfo {
        let (label, view, exit) = {
            let meta = lock(&self.meta);
            (
                meta.label.clone(),
                meta.metadata.view(Instant::now()),
                meta.exit,
            )
        };
        let (title, scroll) = {
            let terminal = lock(&self.terminal);
            let offset = lock(&self.session).view_offset();
            (
                terminal.title().map(str::to_string),
                scroll_info(&terminal, offset),
            )
        };
        let foreground_cwd = self
            .master_fd
            .and_then(process::foreground_process_group)
            .and_then(process::process_cwd);
        PaneInfo {
            pane_id: self.identity.pane_id.clone(),
            terminal_id: self.identity.terminal_id.clone(),
            workspace_id: self.identity.workspace_id.clone(),
            tab_id: self.identity.tab_id.clone(),
            focused: self.focused.load(Ordering::Acquire),
            agent_status: view.agent_status,
            revision: self.revision.load(Ordering::Acquire),
            label,
            cwd: Some(self.identity.cwd.clone()),
            foreground_cwd,
            agent: view.agent,
            display_agent: view.display_agent,
            title: view.title,
            state_labels: view.state_labels,
            tokens: view.tokens,
            agent_session: view.agent_session,
            scroll: Some(scroll),
            terminal_title_stripped: title.as_deref().map(strip_activity_glyph),
            terminal_title: title,
            command: self.identity.command.clone(),
            pid: Some(self.identity.pid),
            exit_status: exit,
        }
    }

    /// Reads a source; `lines` must be validated.
    pub fn read_lines(
        &self,
        source: ReadSource,
        lines: Option<u32>,
        ansi: bool,
    ) -> Result<(ReadLines, u64), PaneError> {
        if source == ReadSource::Detection {
            return Err(PaneError::FeatureUnavailable {
                feature: "read source `detection` (screen-based agent detection)".into(),
            });
        }
        let terminal = lock(&self.terminal);
        let revision = self.revision.load(Ordering::Acquire);
        Ok((terminal.read(source, lines, ansi), revision))
    }

    pub fn read(
        &self,
        source: ReadSource,
        lines: Option<u32>,
        ansi: bool,
    ) -> Result<PaneReadResult, PaneError> {
        validate_lines(lines)?;
        let (read, revision) = self.read_lines(source, lines, ansi)?;
        Ok(self.read_result(source, ansi, &read, revision))
    }

    pub fn read_result(
        &self,
        source: ReadSource,
        ansi: bool,
        read: &ReadLines,
        revision: u64,
    ) -> PaneReadResult {
        PaneReadResult {
            pane_id: self.identity.pane_id.clone(),
            workspace_id: self.identity.workspace_id.clone(),
            tab_id: self.identity.tab_id.clone(),
            source,
            format: if ansi {
                ReadFormat::Ansi
            } else {
                ReadFormat::Text
            },
            text: read.text(ansi),
            revision,
            truncated: read.truncated,
        }
    }

    fn ensure_running(&self) -> Result<(), PaneError> {
        if self.exit_status().is_some() {
            return Err(PaneError::PaneExited {
                pane_id: self.identity.pane_id.clone(),
            });
        }
        Ok(())
    }

    fn io_error(&self, error: &std::io::Error) -> PaneError {
        PaneError::PaneIo {
            pane_id: self.identity.pane_id.clone(),
            message: error.to_string(),
        }
    }

    /// Writes the backlog and then `bytes` to the terminal, waiting while its input buffer
    /// is full. On an error the rest is dropped.
    fn write_waiting(&self, input: &mut PaneInput, bytes: &[u8]) -> Result<(), PaneError> {
        let mut rest = std::mem::take(&mut input.backlog);
        rest.extend_from_slice(bytes);
        let mut from = 0;
        while from < rest.len() {
            from += write_available(&mut *input.writer, &rest[from..])
                .map_err(|error| self.io_error(&error))?;
            if from < rest.len() {
                // Full: wait until the program reads some of its input.
                let Some(fd) = self.master_fd else {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    continue;
                };
                wait_ready(fd, Readiness::Writable).map_err(|error| self.io_error(&error))?;
            }
        }
        input.writer.flush().map_err(|error| self.io_error(&error))
    }

    /// Writes bytes to the terminal. Blocks while the terminal's input buffer is full.
    pub fn write_input(&self, bytes: &[u8]) -> Result<(), PaneError> {
        self.ensure_running()?;
        if bytes.is_empty() {
            return Ok(());
        }
        self.write_waiting(&mut lock(&self.input), bytes)
    }

    /// Writes what waits in the backlog. Blocks while the terminal's input buffer is full.
    pub fn flush_input(&self) -> Result<(), PaneError> {
        self.write_waiting(&mut lock(&self.input), &[])
    }

    /// Encodes key combos for the terminal's current cursor-key mode.
    pub fn encode_keys(&self, combos: &[KeyCombo]) -> Vec<u8> {
        let application_cursor = lock(&self.terminal).application_cursor();
        encode_key_combos(combos, application_cursor)
    }

    /// Resizes the PTY and the screen, and records a resize frame.
    pub fn resize(&self, cols: u16, rows: u16) -> Result<(), PaneError> {
        if cols < MIN_SESSION_COLS || rows < MIN_SESSION_ROWS {
            return Err(PaneError::ResizeTooSmall {
                cols,
                rows,
                min_cols: MIN_SESSION_COLS,
                min_rows: MIN_SESSION_ROWS,
            });
        }
        let mut terminal = lock(&self.terminal);
        lock(&self.master)
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|error| PaneError::PaneIo {
                pane_id: self.identity.pane_id.clone(),
                message: error.to_string(),
            })?;
        terminal.resize(rows, cols);
        // A keyframe right after the resize lets every attached client repaint the screen
        // exactly at the new size, whatever its own terminal makes of the size change.
        let mut session = lock(&self.session);
        session.record_resize(cols, rows);
        session.record_keyframe(KeyframeSource {
            data: terminal.keyframe(),
            cols,
            rows,
        });
        // A view in the history is drawn again at the new size.
        let scrolled = match session.view_offset() {
            0 => None,
            offset => self.show_view(&terminal, &mut session, offset),
        };
        drop(session);
        drop(terminal);
        self.bump_revision();
        if let Some(scroll) = scrolled {
            self.announce_scroll(scroll);
        }
        Ok(())
    }

    /// Shows the members the view at `offset` (clamped to the history; 0 is the live
    /// screen). Returns the new scroll metrics when the offset changed.
    fn show_view(
        &self,
        terminal: &Terminal,
        session: &mut SessionState,
        offset: usize,
    ) -> Option<PaneScrollInfo> {
        let before = session.view_offset();
        let offset = offset.min(terminal.scroll_limit());
        let (rows, cols) = terminal.size();
        if offset == 0 {
            if before != 0 {
                session.show_live(KeyframeSource {
                    data: terminal.keyframe(),
                    cols,
                    rows,
                });
            }
        } else {
            session.show_history(
                offset,
                KeyframeSource {
                    data: draw_view(terminal, offset),
                    cols,
                    rows,
                },
            );
        }
        (offset != before).then(|| scroll_info(terminal, offset))
    }

    /// Moves the pane's view to the offset `target` picks from (current offset, how far
    /// the history goes, screen rows), and announces the change.
    fn move_view(&self, target: impl FnOnce(usize, usize, u16) -> usize) {
        let scrolled = {
            let terminal = lock(&self.terminal);
            let mut session = lock(&self.session);
            let current = session.view_offset();
            let offset = target(current, terminal.scroll_limit(), terminal.size().0);
            if offset == current {
                None
            } else {
                self.show_view(&terminal, &mut session, offset)
            }
        };
        if let Some(scroll) = scrolled {
            self.bump_revision();
            self.announce_scroll(scroll);
        }
    }

    /// After the parser fed a batch that pushed `pushed` rows into the history: keeps a
    /// view in the history on the rows it showed, and draws it again when what is in
    /// sight changed. A view on the live screen is left alone (the batch's output frames
    /// show it). Returns the new scroll metrics when the offset changed; the caller
    /// announces them once the locks are released.
    pub fn follow_output(
        &self,
        terminal: &Terminal,
        session: &mut SessionState,
        pushed: u64,
    ) -> Option<PaneScrollInfo> {
        let current = session.view_offset();
        if current == 0 {
            return None;
        }
        let offset = anchored_offset(current, pushed, terminal.scroll_limit());
        let live_rows_in_sight = offset < usize::from(terminal.size().0);
        if pushed == 0 && !live_rows_in_sight {
            // Nothing scrolled and only history rows are in sight: the view is unchanged.
            return None;
        }
        self.show_view(terminal, session, offset)
    }

    /// `pane.scroll_changed` to the subscribers of this pane.
    pub fn announce_scroll(&self, scroll: PaneScrollInfo) {
        self.events
            .emit_subscription_event(PaneSubscriptionEnvelope::ScrollChanged(
                PaneScrollChangedEvent {
                    pane_id: self.identity.pane_id.clone(),
                    workspace_id: self.identity.workspace_id.clone(),
                    scroll,
                },
            ));
    }

    pub fn join_session(
        &self,
        client_id: &str,
        role: SessionRole,
        replay_from: Option<u64>,
    ) -> SessionMembership {
        let terminal = lock(&self.terminal);
        let mut session = lock(&self.session);
        session.join(client_id, role, replay_from, || {
            let (rows, cols) = terminal.size();
            KeyframeSource {
                data: terminal.keyframe(),
                cols,
                rows,
            }
        })
    }

    pub fn leave_session(&self, client_id: &str) -> bool {
        lock(&self.session).leave(client_id)
    }

    fn require_controller(&self, client_id: &str) -> Result<(), PaneError> {
        if lock(&self.session).is_controller(client_id) {
            Ok(())
        } else {
            Err(PaneError::NotController {
                session_id: self.identity.terminal_id.clone(),
                client_id: client_id.to_string(),
            })
        }
    }

    /// Typing from the controller, done at once where nothing can make it wait: the
    /// common case of a key typed at the live screen, written to the terminal right on
    /// the connection's task. `None` when it has to wait (the session or the input is busy
    /// on another thread, or the view must first come back from the history): then
    /// [`session_input`](Self::session_input) does it on a blocking thread. When the
    /// terminal took only part of it, the rest is in the backlog.
    pub fn try_session_input(
        &self,
        client_id: &str,
        data: &[u8],
    ) -> Option<Result<InputWritten, PaneError>> {
        {
            let session = self.session.try_lock().ok()?;
            if !session.is_controller(client_id) {
                return Some(Err(PaneError::NotController {
                    session_id: self.identity.terminal_id.clone(),
                    client_id: client_id.to_string(),
                }));
            }
            if !data.is_empty() && session.view_offset() != 0 {
                return None;
            }
        }
        if let Err(error) = self.ensure_running() {
            return Some(Err(error));
        }
        let mut input = self.input.try_lock().ok()?;
        if data.is_empty() {
            return Some(Ok(InputWritten::All));
        }
        if !input.backlog.is_empty() {
            input.backlog.extend_from_slice(data);
            return Some(Ok(InputWritten::Backlogged));
        }
        Some(match write_available(&mut *input.writer, data) {
            Ok(written) if written == data.len() => Ok(InputWritten::All),
            Ok(written) => {
                input.backlog.extend_from_slice(&data[written..]);
                Ok(InputWritten::Backlogged)
            }
            Err(error) => Err(self.io_error(&error)),
        })
    }

    /// Typing from the controller; like a terminal, it brings the view back to the live
    /// screen first.
    pub fn session_input(&self, client_id: &str, data: &[u8]) -> Result<(), PaneError> {
        self.require_controller(client_id)?;
        if !data.is_empty() {
            self.move_view(|_, _, _| 0);
        }
        self.write_input(data)
    }

    /// `session_scroll` (controller only): moves the pane's view of its history.
    pub fn session_scroll(
        &self,
        client_id: &str,
        step: SessionScrollStep,
    ) -> Result<(), PaneError> {
        self.require_controller(client_id)?;
        self.move_view(|current, limit, rows| stepped_offset(step, current, limit, rows));
        Ok(())
    }

    pub fn session_resize(&self, client_id: &str, cols: u16, rows: u16) -> Result<(), PaneError> {
        self.require_controller(client_id)?;
        self.resize(cols, rows)
    }

    pub fn process_info(&self) -> PaneProcessInfo {
        let foreground = self.master_fd.and_then(process::foreground_process_group);
        let foreground_processes = foreground
            .map(process::processes_in_group)
            .unwrap_or_default()
            .into_iter()
            .filter_map(process::process_details)
            .map(process_entry)
            .collect();
        let running = self.exit_status().is_none();
        let agent_processes = lock(&self.meta)
            .agent_pid
            .and_then(|pid| process::process_details(pid as i32))
            .map(process_entry)
            .into_iter()
            .collect();
        PaneProcessInfo {
            pane_id: self.identity.pane_id.clone(),
            shell_pid: running.then_some(self.identity.pid),
            foreground_process_group_id: foreground.map(|pgrp| pgrp as u32),
            foreground_processes,
            agent_processes,
            tty: self.tty.clone(),
        }
    }

    /// Emits `pane_updated` with the current info.
    pub fn emit_updated(&self) {
        self.events
            .emit(PaneEventData::PaneUpdated { pane: self.info() });
    }

    /// Blocks until the parser processed all output after EOF, or `timeout` passes.
    pub fn wait_drained(&self, timeout: std::time::Duration) -> bool {
        let drained = lock(&self.drained);
        let (drained, _) = self
            .drained_ready
            .wait_timeout_while(drained, timeout, |drained| !*drained)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *drained
    }

    pub fn process_identity(&self) -> process::PaneProcessIdentity {
        process::PaneProcessIdentity {
            pid: self.identity.pid as i32,
            environment_marker: format!("NAGI_TERMINAL_ID={}", self.identity.terminal_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activity_glyphs_are_stripped_once() {
        assert_eq!(strip_activity_glyph("⠋ building"), "building");
        assert_eq!(strip_activity_glyph("✳ ✳ twice"), "✳ twice");
        assert_eq!(strip_activity_glyph("plain - title"), "plain - title");
    }

    #[test]
    fn lines_are_bounded() {
        assert!(validate_lines(None).is_ok());
        assert!(validate_lines(Some(1)).is_ok());
        assert!(validate_lines(Some(10_000)).is_ok());
        assert!(matches!(
            validate_lines(Some(0)),
            Err(PaneError::LinesOutOfRange { lines: 0, .. })
        ));
        assert!(matches!(
            validate_lines(Some(10_001)),
            Err(PaneError::LinesOutOfRange { lines: 10_001, .. })
        ));
    }
}
