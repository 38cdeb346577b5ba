//! Supervising one child process: own process group, stdin null, bounded
//! output, timeout, cancellation, and no surviving descendants.
//!
//! Why the shape: a check (or a git command) may start background children
//! that inherit its stdout/stderr pipes. Waiting for pipe EOF alone would hang
//! on such a child; waiting for the leader alone would leave it running. So
//! the leader's exit is observed with `waitid(WNOWAIT)` (the leader stays a
//! zombie, which keeps its pid and process group id from being reused), then
//! the whole group is killed with `SIGKILL`, which closes every write end the
//! group held, and only then is the leader reaped. A descendant that left the
//! group (`setsid`) can keep a pipe open; after `exit_grace` we stop waiting
//! for it and say so in [`SupervisedOutput::output_held_open`].
//!
//! Output is read by one thread per pipe and handed over a channel to the
//! calling thread, which hashes it, keeps a bounded tail (or the whole stream
//! when asked) and forwards each chunk to the caller's [`OutputSink`]. The sink
//! therefore runs on the caller's thread and needs no `Send`.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

/// Which output stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// Receives output chunks live, in arrival order, on the supervising thread
/// (used to show check output in a pane transcript).
pub trait OutputSink {
    fn output_chunk(&mut self, stream: OutputStream, bytes: &[u8]);
}

impl<F: FnMut(OutputStream, &[u8])> OutputSink for F {
    fn output_chunk(&mut self, stream: OutputStream, bytes: &[u8]) {
        self(stream, bytes)
    }
}

/// A sink that drops everything.
pub struct DiscardOutput;

impl OutputSink for DiscardOutput {
    fn output_chunk(&mut self, _stream: OutputStream, _bytes: &[u8]) {}
}

/// Shared flag a caller sets to stop a running command (checked every 50 ms).
#[derive(Debug, Clone, Default)]
pub struct CancellationFlag(Arc<AtomicBool>);

impl CancellationFlag {
    pub fn new() -> CancellationFlag {
        CancellationFlag::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Limits of one supervised run.
#[derive(Debug, Clone)]
pub struct SupervisionLimits {
    pub timeout: Duration,
    pub stdout_limit_bytes: u64,
    pub stderr_limit_bytes: u64,
    /// Bytes of each stream's end kept in [`StreamCapture::tail`].
    pub tail_bytes: usize,
    /// Keep the whole stdout (up to its limit) in [`StreamCapture::full`].
    pub keep_full_stdout: bool,
    /// How long to wait for pipe EOF after the process group was killed.
    pub exit_grace: Duration,
    pub cancellation: Option<CancellationFlag>,
}

/// Why a run was stopped before the command ended on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    TimedOut,
    StdoutLimitExceeded,
    StderrLimitExceeded,
    Cancelled,
}

/// What was captured from one stream.
#[derive(Debug, Clone, Default)]
pub struct StreamCapture {
    /// Bytes accepted (never more than the stream's limit).
    pub total_bytes: u64,
    /// Lowercase hex SHA-256 of the accepted bytes.
    pub sha256: String,
    /// The last `tail_bytes` accepted bytes.
    pub tail: Vec<u8>,
    /// Every accepted byte, when requested.
    pub full: Option<Vec<u8>>,
}

/// Result of a supervised run.
#[derive(Debug, Clone)]
pub struct SupervisedOutput {
    pub started_at_millis: u64,
    pub finished_at_millis: u64,
    pub duration: Duration,
    /// Exit code; `-1` when the leader was killed by a signal.
    pub exit_code: i32,
    pub signal: Option<i32>,
    pub stop_reason: Option<StopReason>,
    pub stdout: StreamCapture,
    pub stderr: StreamCapture,
    /// A process outside the group still held a pipe open after the grace.
    pub output_held_open: bool,
}

enum SupervisionEvent {
    Chunk(OutputStream, Vec<u8>),
    Closed(OutputStream),
    LeaderExited,
}

struct StreamAccumulator {
    limit_bytes: u64,
    tail_bytes: usize,
    hasher: Sha256,
    total_bytes: u64,
    tail: Vec<u8>,
    full: Option<Vec<u8>>,
}

impl StreamAccumulator {
    fn new(limit_bytes: u64, tail_bytes: usize, keep_full: bool) -> StreamAccumulator {
        StreamAccumulator {
            limit_bytes,
            tail_bytes,
            hasher: Sha256::new(),
            total_bytes: 0,
            tail: Vec::new(),
            full: keep_full.then(Vec::new),
        }
    }

    /// Accepts bytes up to the limit; returns the accepted part and whether
    /// the limit was exceeded.
    fn accept<'a>(&mut self, bytes: &'a [u8]) -> (&'a [u8], bool) {
        let room = self.limit_bytes.saturating_sub(self.total_bytes);
        let accepted_length = (bytes.len() as u64).min(room) as usize;
        let accepted = &bytes[..accepted_length];
        self.hasher.update(accepted);
        self.total_bytes += accepted_length as u64;
        if let Some(full) = &mut self.full {
            full.extend_from_slice(accepted);
        }
        self.tail.extend_from_slice(accepted);
        if self.tail.len() > self.tail_bytes.saturating_mul(2).max(4096) {
            let excess = self.tail.len() - self.tail_bytes;
            self.tail.drain(..excess);
        }
        (accepted, accepted_length < bytes.len())
    }

    fn finish(mut self) -> StreamCapture {
        if self.tail.len() > self.tail_bytes {
            let excess = self.tail.len() - self.tail_bytes;
            self.tail.drain(..excess);
        }
        StreamCapture {
            total_bytes: self.total_bytes,
            sha256: hex::encode(self.hasher.finalize()),
            tail: self.tail,
            full: self.full,
        }
    }
}

/// Milliseconds since the Unix epoch (0 if the clock is before 1970).
pub fn unix_millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0)
}

fn kill_process_group(process_group_id: libc::pid_t) {
    // The group id is the leader's pid, which cannot be reused while the leader is
    // unreaped.
    nagi_os::signals::signal_group(process_group_id, libc::SIGKILL);
}

/// Blocks until the child has exited without reaping it.
fn wait_for_exit_without_reaping(process_id: libc::pid_t) {
    loop {
        // SAFETY: `siginfo` is plain old data that waitid fills in.
        let outcome = unsafe {
            let mut siginfo: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                process_id as libc::id_t,
                &mut siginfo,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if outcome == 0 {
            return;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

fn spawn_pipe_reader(
    mut pipe: impl Read + Send + 'static,
    stream: OutputStream,
    events: mpsc::Sender<SupervisionEvent>,
) {
    thread::spawn(move || {
        let mut buffer = vec![0_u8; 64 * 1024];
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) => break,
                Ok(length) => {
                    if events
                        .send(SupervisionEvent::Chunk(stream, buffer[..length].to_vec()))
                        .is_err()
                    {
                        return;
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let _ = events.send(SupervisionEvent::Closed(stream));
    });
}

/// Spawns `command` (its program, args, env and cwd already set) in its own
/// process group with stdin null and piped output, and supervises it to the
/// end. Only spawn and reap failures are errors; timeouts, limits and
/// cancellation are reported in [`SupervisedOutput::stop_reason`].
pub fn supervise(
    mut command: Command,
    limits: &SupervisionLimits,
    sink: &mut dyn OutputSink,
) -> std::io::Result<SupervisedOutput> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let started_wall = SystemTime::now();
    let started = Instant::now();
    let mut child: Child = command.spawn()?;
    let process_id = child.id() as libc::pid_t;
    let (events_sender, events) = mpsc::channel();
    let stdout_pipe = child.stdout.take().expect("stdout was piped");
    let stderr_pipe = child.stderr.take().expect("stderr was piped");
    spawn_pipe_reader(stdout_pipe, OutputStream::Stdout, events_sender.clone());
    spawn_pipe_reader(stderr_pipe, OutputStream::Stderr, events_sender.clone());
    thread::spawn(move || {
        wait_for_exit_without_reaping(process_id);
        let _ = events_sender.send(SupervisionEvent::LeaderExited);
    });

    let mut stdout = StreamAccumulator::new(
        limits.stdout_limit_bytes,
        limits.tail_bytes,
        limits.keep_full_stdout,
    );
    let mut stderr = StreamAccumulator::new(limits.stderr_limit_bytes, limits.tail_bytes, false);
    let deadline = started + limits.timeout;
    let mut stop_reason: Option<StopReason> = None;
    let mut leader_exited = false;
    let mut stdout_open = true;
    let mut stderr_open = true;
    let mut grace_deadline: Option<Instant> = None;
    let mut output_held_open = false;
    let stop = |reason: StopReason, stop_reason: &mut Option<StopReason>| {
        if stop_reason.is_none() {
            *stop_reason = Some(reason);
            kill_process_group(process_id);
        }
    };

    while !(leader_exited && !stdout_open && !stderr_open) {
        let now = Instant::now();
        if !leader_exited && now >= deadline {
            stop(StopReason::TimedOut, &mut stop_reason);
        }
        if let Some(cancellation) = &limits.cancellation
            && !leader_exited
            && cancellation.is_cancelled()
        {
            stop(StopReason::Cancelled, &mut stop_reason);
        }
        if let Some(grace_end) = grace_deadline
            && now >= grace_end
        {
            output_held_open = true;
            break;
        }
        let mut wait = Duration::from_secs(3600);
        if !leader_exited && stop_reason.is_none() {
            wait = wait.min(deadline.saturating_duration_since(now));
        }
        if limits.cancellation.is_some() {
            wait = wait.min(Duration::from_millis(50));
        }
        if let Some(grace_end) = grace_deadline {
            wait = wait.min(grace_end.saturating_duration_since(now));
        }
        match events.recv_timeout(wait) {
            Ok(SupervisionEvent::Chunk(stream, bytes)) => {
                let accumulator = match stream {
                    OutputStream::Stdout => &mut stdout,
                    OutputStream::Stderr => &mut stderr,
                };
                let (accepted, exceeded) = accumulator.accept(&bytes);
                if !accepted.is_empty() {
                    sink.output_chunk(stream, accepted);
                }
                if exceeded {
                    let reason = match stream {
                        OutputStream::Stdout => StopReason::StdoutLimitExceeded,
                        OutputStream::Stderr => StopReason::StderrLimitExceeded,
                    };
                    stop(reason, &mut stop_reason);
                }
            }
            Ok(SupervisionEvent::Closed(OutputStream::Stdout)) => stdout_open = false,
            Ok(SupervisionEvent::Closed(OutputStream::Stderr)) => stderr_open = false,
            Ok(SupervisionEvent::LeaderExited) => {
                leader_exited = true;
                // Descendants never outlive the command.
                kill_process_group(process_id);
                grace_deadline = Some(Instant::now() + limits.exit_grace);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }

    let exit_status = child.wait()?;
    let finished_wall = SystemTime::now();
    Ok(SupervisedOutput {
        started_at_millis: unix_millis(started_wall),
        finished_at_millis: unix_millis(finished_wall),
        duration: started.elapsed(),
        exit_code: exit_status.code().unwrap_or(-1),
        signal: exit_status.signal(),
        stop_reason,
        stdout: stdout.finish(),
        stderr: stderr.finish(),
        output_held_open,
    })
}
