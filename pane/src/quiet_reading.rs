//! A direct controller's key thread reading the pane's master while the output is quiet.
//!
//! In the server, a pane's master is read by a task of the runtime while the output is
//! quiet and by the pane's reader thread while it streams (see `output`). A direct
//! attach's key thread (the server's thread that reads the controller's terminal and
//! types into the pane) can claim the task's turn. It then waits on the master beside the
//! terminal, so that a keystroke and its echo are handled by one thread, as in tmux's
//! server, and no worker of the runtime is woken per key.
//!
//! The turn moves under the pane's `reader_turn` lock, so that one reader reads at a time
//! and the output stays in order:
//! - the claim is granted by the task, which takes the master out of the runtime's poll
//!   first and then writes to the claim's signal pipe;
//! - a stream is handed to the reader thread as the task hands it, and the thread gives it
//!   back to the claimant (through the signal pipe) once it pauses;
//! - dropping the [`QuietReading`] gives the turn back to the task (or, when the task is
//!   gone, to the reader thread).
//!
//! At most one key thread holds a claim. A second controller's thread types without one,
//! and takes the claim after a key once the holder let it go.

use std::fs::File;
use std::io::{PipeReader, Read};
use std::mem::ManuallyDrop;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use nagi_os::fds::set_nonblocking;

use super::core::{KeysClaim, PaneCore, lock};
use super::output::{INLINE_READ_BYTES, QUIET, end_of_output, parse_inline, queue_output_waiting};

/// A read of the master takes at most this much, as the task's reads do.
const READ_BYTES: usize = 16 * 1024;

static NEXT_CLAIM: AtomicU64 = AtomicU64::new(1);

/// A key thread's claim on the quiet reading of one pane's master (see the module docs).
pub struct QuietReading {
    core: Arc<PaneCore>,
    claim: u64,
    signal: PipeReader,
    buffer: Vec<u8>,
    last_read: Instant,
}

impl QuietReading {
    /// Claims the quiet reading of `core`'s master; `None` when another key thread holds
    /// it, the pane has no task that could hand it over, or its output ended.
    pub(crate) fn claim(core: Arc<PaneCore>) -> std::io::Result<Option<QuietReading>> {
        if core.master_fd.is_none() || !QuietReading::claimable(&core) {
            return Ok(None);
        }
        let (signal, signal_writer) = std::io::pipe()?;
        set_nonblocking(signal.as_raw_fd())?;
        set_nonblocking(signal_writer.as_raw_fd())?;
        let claim = NEXT_CLAIM.fetch_add(1, Ordering::Relaxed);
        {
            let mut turn = lock(&core.reader_turn);
            if !turn.claimable() {
                return Ok(None);
            }
            turn.keys_claim = Some(KeysClaim {
                id: claim,
                signal: signal_writer,
            });
        }
        core.turn_back.notify_one();
        Ok(Some(QuietReading {
            core,
            claim,
            signal,
            buffer: vec![0; READ_BYTES],
            last_read: Instant::now(),
        }))
    }

    /// Whether a claim could be granted now: checked before the claim's pipe is made, as a
    /// key thread without a claim asks again after every key.
    fn claimable(core: &PaneCore) -> bool {
        lock(&core.reader_turn).claimable()
    }

    /// Tells this claim from any other, including a later claim whose pipe got the
    /// descriptor numbers of this one's.
    pub fn claim_id(&self) -> u64 {
        self.claim
    }

    /// The pipe that says the turn may have come: wait on it, and call
    /// [`QuietReading::signalled`] when it is readable.
    pub fn signal_fd(&self) -> RawFd {
        self.signal.as_raw_fd()
    }

    /// Empties the signal pipe.
    pub fn signalled(&mut self) {
        let mut bytes = [0u8; 64];
        while matches!((&self.signal).read(&mut bytes), Ok(count) if count > 0) {}
    }

    /// The master, while it is this claim's turn to read it.
    pub fn master_to_wait_on(&self) -> Option<RawFd> {
        let turn = lock(&self.core.reader_turn);
        let holds = turn.keys_read
            && !turn.thread_reads
            && !turn.ended
            && turn.keys_claim.as_ref().map(|claim| claim.id) == Some(self.claim);
        if holds { self.core.master_fd } else { None }
    }

    /// The master was readable: reads what is there once, and feeds it to the pane as the
    /// task would. A read right after another (a stream) goes to the reader thread, which
    /// reads on until the output pauses. Waits only while 8 MiB of output are pending.
    /// Answers whether the read filled the buffer, so that more may be waiting (a caller
    /// that waits for edges reads again without waiting).
    pub fn read_master(&mut self) -> bool {
        let Some(fd) = self.master_to_wait_on() else {
            return false;
        };
        // SAFETY: the pane holds the master open while its core lives (`core` is ours);
        // the File is never dropped, so the descriptor is not closed here.
        let master = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
        let count = match (&*master).read(&mut self.buffer) {
            Ok(0) => {
                self.output_ended();
                return false;
            }
            Ok(count) => count,
            // Interrupted before anything was read: read again.
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => return true,
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => return false,
            // EIO once every process closed the slave side.
            Err(_) => {
                self.output_ended();
                return false;
            }
        };
        let filled = count == self.buffer.len();
        let core = &*self.core;
        let bytes = &self.buffer[..count];
        let quiet = self.last_read.elapsed() >= QUIET;
        self.last_read = Instant::now();
        if quiet && count <= INLINE_READ_BYTES && parse_inline(core, bytes) {
            return filled;
        }
        queue_output_waiting(core, bytes);
        if !quiet {
            lock(&core.reader_turn).thread_reads = true;
            core.turn_changed.notify_all();
        }
        filled
    }

    fn output_ended(&self) {
        lock(&self.core.reader_turn).ended = true;
        end_of_output(&self.core);
        self.core.turn_back.notify_one();
        self.core.turn_changed.notify_all();
    }
}

impl Drop for QuietReading {
    fn drop(&mut self) {
        {
            let mut turn = lock(&self.core.reader_turn);
            if turn.keys_claim.as_ref().map(|claim| claim.id) != Some(self.claim) {
                return;
            }
            turn.keys_claim = None;
            turn.keys_read = false;
        }
        self.core.turn_back.notify_one();
        self.core.turn_changed.notify_all();
    }
}
