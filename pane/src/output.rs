//! A pane's output: the reader of its PTY master and the parser thread.
//!
//! - The reader appends what it reads to a pending buffer for the parser thread. It waits
//!   when 8 MiB are pending, which back-pressures the program the same way a slow terminal
//!   does. A small read after a quiet spell (an echo, a prompt) that finds the parser idle
//!   with nothing pending is fed to the screen and fanned out by the reader itself.
//! - In the server (a multi-threaded runtime) the master is read by a task of the runtime
//!   while the pane is quiet: a keystroke's echo is read, drawn and handed to the attach
//!   connection's writer on one worker thread, which sends it next, waking no other thread
//!   on the way. Once output streams (a second read right after the first), the task hands
//!   the reading to the pane's reader thread, which reads beside the parser thread and
//!   gives it back after the output paused for a moment: a flood of output never holds a
//!   worker of the runtime, whose tasks (the attached clients' writers among them) go on.
//!   Elsewhere the reader thread reads all along.
//! - A direct controller's key thread may claim the task's turn (`quiet_reading`): it then
//!   reads the quiet output beside the keys it types, and the reader thread gives a paused
//!   stream back to it instead of to the task.
//! - The parser thread takes everything pending at once (two buffers swap, so nothing is
//!   copied or allocated per read), feeds it to the screen, appends it to the session ring
//!   and fans it out to attached members (or, while the pane's view is in its history,
//!   keeps that view on its rows), all under one lock acquisition per batch. When it falls
//!   behind, batches grow, and the screen can fast-forward over rows that scroll out of
//!   the scrollback unseen (see `fast_forward`), so it catches up.

use std::fs::File;
use std::io::Read;
use std::os::fd::{BorrowedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use nagi_os::fds::{Readiness, wait_ready, wait_ready_for};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::runtime::{Handle, RuntimeFlavor};

use super::attach::KeyframeSource;
use super::core::{PaneCore, lock};

const READ_BUFFER_BYTES: usize = 64 * 1024;
const TASK_READ_BUFFER_BYTES: usize = 16 * 1024;
const MAX_PENDING_BYTES: usize = 8 * 1024 * 1024;
/// The largest read the reader feeds to the screen itself when the parser is idle.
pub(crate) const INLINE_READ_BYTES: usize = 4 * 1024;
/// How long the output must have been quiet for a read to count as an answer (to a
/// keystroke, say) rather than part of a stream; also how long the reader thread waits
/// for more of a stream before it gives the reading back to the task.
pub(crate) const QUIET: Duration = Duration::from_millis(1);

/// The master registered with the runtime the pane is started from, when that is a
/// multi-threaded one (the server's), for `read_while_quiet`. A single-threaded runtime
/// may be blocked by its caller, so a pane started from one (or from outside any) is read
/// by its reader thread alone.
pub fn register_master(master_fd: Option<RawFd>) -> Option<(Handle, AsyncFd<File>)> {
    let runtime = Handle::try_current()
        .ok()
        .filter(|runtime| runtime.runtime_flavor() == RuntimeFlavor::MultiThread)?;
    // SAFETY: the master's descriptor is open for the duration of this call (the caller
    // holds the pty pair); the clone is a descriptor of our own.
    let master = unsafe { BorrowedFd::borrow_raw(master_fd?) }
        .try_clone_to_owned()
        .ok()?;
    let _context = runtime.enter();
    let master = register(File::from(master)).ok()?;
    Some((runtime, master))
}

/// Registers the master for readability with the current runtime.
fn register(master: File) -> std::io::Result<AsyncFd<File>> {
    // SAFETY: the AsyncFd owns the File, whose descriptor stays open and the same until
    // the AsyncFd is dropped.
    unsafe { AsyncFd::register_with_interest(master, Interest::READABLE) }
        .map_err(|error| error.into_parts().1)
}

/// Marks the task gone however it ends, so that the reader thread reads on alone.
struct TaskGone<'a>(&'a PaneCore);

impl Drop for TaskGone<'_> {
    fn drop(&mut self) {
        lock(&self.0.reader_turn).task_gone = true;
        self.0.turn_changed.notify_all();
    }
}

/// How the task's reading stopped.
enum Stopped {
    /// Output streams: the reader thread should read it.
    Streaming,
    /// A direct controller's key thread claimed the quiet reading.
    Claimed,
    /// The output ended.
    Ended,
}

/// The reader as a task of the server's runtime, while the output is quiet (see the
/// module docs).
pub async fn read_while_quiet(core: Arc<PaneCore>, mut master: AsyncFd<File>) {
    let _gone = TaskGone(&core);
    // A terminal hands over at most 4 KiB per read; streams go to the thread's buffer.
    let mut buffer = vec![0u8; TASK_READ_BUFFER_BYTES];
    loop {
        let stopped = read_until_streaming(&core, &master, &mut buffer).await;
        // The reader thread reads the stream until it pauses, or the key thread reads
        // while the output is quiet. Meanwhile the master is out of the runtime's poll,
        // so that neither wakes a worker.
        let file = master.into_inner();
        match stopped {
            Stopped::Ended => {
                lock(&core.reader_turn).ended = true;
                end_of_output(&core);
                return;
            }
            Stopped::Streaming => {
                lock(&core.reader_turn).thread_reads = true;
                core.turn_changed.notify_all();
            }
            Stopped::Claimed => {}
        }
        loop {
            let back = core.turn_back.notified();
            {
                let mut turn = lock(&core.reader_turn);
                if turn.ended {
                    return;
                }
                if turn.keys_claim.is_some() && !turn.keys_read {
                    turn.keys_read = true;
                    turn.signal_keys();
                }
                if !turn.thread_reads && !turn.keys_read {
                    break;
                }
            }
            back.await;
        }
        master = match register(file) {
            Ok(master) => master,
            // The thread reads on alone (see `TaskGone`).
            Err(_) => return,
        };
    }
}

/// Reads while the output is quiet, until it streams or ends.
async fn read_until_streaming(
    core: &PaneCore,
    master: &AsyncFd<File>,
    buffer: &mut [u8],
) -> Stopped {
    // The turn starts after a pause (the pane's start, or the one the thread saw).
    let mut last_read = Instant::now()
        .checked_sub(QUIET)
        .unwrap_or_else(Instant::now);
    loop {
        if lock(&core.reader_turn).keys_claim.is_some() {
            return Stopped::Claimed;
        }
        // A claim comes with a wake-up of `turn_back`.
        let ready = tokio::select! {
            ready = master.readable() => ready,
            () = core.turn_back.notified() => continue,
        };
        let Ok(mut ready) = ready else {
            return Stopped::Ended;
        };
        let count = match ready.try_io(|master| master.get_ref().read(buffer)) {
            Err(_would_block) => continue,
            Ok(Ok(0)) => return Stopped::Ended,
            Ok(Ok(count)) => count,
            Ok(Err(error)) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            // EIO once every process closed the slave side.
            Ok(Err(_)) => return Stopped::Ended,
        };
        let quiet = last_read.elapsed() >= QUIET;
        last_read = Instant::now();
        if quiet && count <= INLINE_READ_BYTES && parse_inline(core, &buffer[..count]) {
            // An answer to a keystroke, most likely all there is: wait for the next
            // output without a read that would only say so.
            ready.clear_ready();
            continue;
        }
        drop(ready);
        loop {
            // Made before the check, so a wake-up between the check and the wait is kept.
            let space = core.space_notify.notified();
            if queue_output(core, &buffer[..count]) {
                break;
            }
            space.await;
        }
        if !quiet {
            return Stopped::Streaming;
        }
    }
}

/// The reader thread: in turns with the task (`shared`), or all along.
pub fn reader_thread(core: &PaneCore, mut reader: Box<dyn Read + Send>, shared: bool) {
    let mut buffer = vec![0u8; READ_BUFFER_BYTES];
    let mut last_read = Instant::now();
    loop {
        // Wait for the task to hand the reading over.
        let mut alone = !shared;
        if shared {
            let mut turn = lock(&core.reader_turn);
            while !turn.thread_reads && !turn.thread_alone() && !turn.ended {
                turn = core
                    .turn_changed
                    .wait(turn)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            if turn.ended {
                return;
            }
            alone = turn.thread_alone();
        }
        let ended = loop {
            let count = match reader.read(&mut buffer) {
                Ok(0) => break true,
                Ok(count) => count,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    let Some(fd) = core.master_fd else {
                        std::thread::sleep(QUIET);
                        continue;
                    };
                    if alone {
                        if wait_ready(fd, Readiness::Readable).is_err() {
                            break true;
                        }
                        continue;
                    }
                    match wait_ready_for(fd, Readiness::Readable, QUIET) {
                        Err(_) => break true,
                        Ok(true) => continue,
                        // The output paused: back to the task, unless it is gone.
                        Ok(false) => {
                            let mut turn = lock(&core.reader_turn);
                            if turn.thread_alone() {
                                alone = true;
                                continue;
                            }
                            turn.thread_reads = false;
                            turn.signal_keys();
                            break false;
                        }
                    }
                }
                // EIO once every process closed the slave side.
                Err(_) => break true,
            };
            let quiet = last_read.elapsed() >= QUIET;
            last_read = Instant::now();
            if quiet && count <= INLINE_READ_BYTES && parse_inline(core, &buffer[..count]) {
                continue;
            }
            queue_output_waiting(core, &buffer[..count]);
        };
        if ended {
            lock(&core.reader_turn).ended = true;
            core.turn_back.notify_one();
            end_of_output(core);
            return;
        }
        core.turn_back.notify_one();
    }
}

/// Appends output for the parser thread; false (and nothing appended) while 8 MiB are
/// pending and the pane is not closing.
fn queue_output(core: &PaneCore, bytes: &[u8]) -> bool {
    let mut pending = lock(&core.pending);
    if pending.bytes.len() >= MAX_PENDING_BYTES && !core.closing.load(Ordering::Acquire) {
        return false;
    }
    let was_empty = pending.bytes.is_empty();
    pending.bytes.extend_from_slice(bytes);
    drop(pending);
    if was_empty {
        core.data_ready.notify_one();
    }
    true
}

/// Appends output for the parser thread, waiting (on a reader's own thread) while 8 MiB
/// are pending and the pane is not closing.
pub(crate) fn queue_output_waiting(core: &PaneCore, bytes: &[u8]) {
    let mut pending = lock(&core.pending);
    while pending.bytes.len() >= MAX_PENDING_BYTES && !core.closing.load(Ordering::Acquire) {
        pending = core
            .space_ready
            .wait(pending)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
    }
    drop(pending);
    queue_output(core, bytes);
}

pub(crate) fn end_of_output(core: &PaneCore) {
    lock(&core.pending).eof = true;
    core.data_ready.notify_one();
}

/// Feeds a read to the screen on the reader (task or thread), when the parser thread is
/// idle and nothing is pending (so the output stays in order). False when it must queue
/// instead.
pub(crate) fn parse_inline(core: &PaneCore, bytes: &[u8]) -> bool {
    {
        let mut pending = lock(&core.pending);
        if pending.parsing || !pending.bytes.is_empty() {
            return false;
        }
        pending.parsing = true;
    }
    process_batch(core, bytes);
    // Only the reader appends to the pending bytes, so none came meanwhile.
    lock(&core.pending).parsing = false;
    true
}

fn process_batch(core: &PaneCore, batch: &[u8]) {
    let (title_changed, scrolled) = {
        let mut terminal = lock(&core.terminal);
        let mut session = lock(&core.session);
        // The members are sent the output before the screen takes it in, so that an echo
        // written inline to a terminal does not wait for the parse. Both locks are held
        // until both are done, so a member that joins sees a screen and a ring that agree.
        session.record_output(batch);
        let pushed_before = terminal.pushed_rows();
        terminal.process(batch);
        let title_changed = terminal.take_title_change();
        if session.keyframe_due() {
            let (rows, cols) = terminal.size();
            session.record_keyframe(KeyframeSource {
                data: terminal.keyframe(),
                cols,
                rows,
            });
        }
        let pushed = terminal.pushed_rows() - pushed_before;
        let scrolled = core.follow_output(&terminal, &mut session, pushed);
        (title_changed, scrolled)
    };
    core.bump_revision();
    if title_changed {
        core.emit_updated();
    }
    if let Some(scroll) = scrolled {
        core.announce_scroll(scroll);
    }
}

pub fn parser_loop(core: &PaneCore) {
    let mut batch: Vec<u8> = Vec::new();
    loop {
        {
            let mut pending = lock(&core.pending);
            pending.parsing = false;
            while pending.bytes.is_empty() && !pending.eof {
                pending = core
                    .data_ready
                    .wait(pending)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            if pending.bytes.is_empty() && pending.eof {
                break;
            }
            std::mem::swap(&mut pending.bytes, &mut batch);
            pending.parsing = true;
        }
        core.wake_reader();
        process_batch(core, &batch);
        let was_small = batch.len() < READ_BUFFER_BYTES;
        batch.clear();
        if was_small && batch.capacity() > 4 * READ_BUFFER_BYTES {
            batch = Vec::new();
        }
    }
    *lock(&core.drained) = true;
    core.drained_ready.notify_all();
}
