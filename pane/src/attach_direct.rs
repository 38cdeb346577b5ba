//! The terminal of a direct session member (the server serves the client's terminal
//! itself), as the pane's output sees it: when nothing is queued for the member and
//! nothing of it is being written, the pane's reader writes a read's bytes to the terminal
//! at once, without a frame, a queue or a wake-up of the connection's writer; otherwise the
//! bytes are queued as frames, as for any member, and the writer writes them in order.
//!
//! `outstanding` counts the frames queued for the member and not yet written: the fan-out
//! adds one before it queues a frame (under the session's lock), the writer takes one off
//! after it wrote a frame it took from the queue. Zero means that the queue is empty and
//! the writer is not in the middle of a frame, so a write here cannot overtake one.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct DirectOutput {
    /// A descriptor of the terminal's non-blocking open file description.
    terminal: File,
    outstanding: AtomicUsize,
}

impl DirectOutput {
    /// `terminal` must be non-blocking: the pane's reader never waits on it.
    pub fn new(terminal: File) -> DirectOutput {
        DirectOutput {
            terminal,
            outstanding: AtomicUsize::new(0),
        }
    }

    /// The connection's writer wrote a frame it took from the member's queue.
    pub fn frame_written(&self) {
        let _ = self
            .outstanding
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |count| {
                count.checked_sub(1)
            });
    }

    pub(crate) fn set_outstanding(&self, count: usize) {
        self.outstanding.store(count, Ordering::Release);
    }

    pub(crate) fn idle(&self) -> bool {
        self.outstanding.load(Ordering::Acquire) == 0
    }

    pub(crate) fn queued(&self) {
        self.outstanding.fetch_add(1, Ordering::AcqRel);
    }

    pub(crate) fn unqueued(&self) {
        self.frame_written();
    }

    /// Writes what the terminal takes now; how many bytes that was (the rest is queued).
    pub(crate) fn write_now(&self, bytes: &[u8]) -> usize {
        let mut written = 0;
        while written < bytes.len() {
            match (&self.terminal).write(&bytes[written..]) {
                Ok(0) => break,
                Ok(count) => written += count,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                // Full (or gone): the writer takes over, and finds out.
                Err(_) => break,
            }
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;
    use std::os::fd::{FromRawFd as _, OwnedFd};
    use std::sync::Arc;

    use nagi_schema::session_protocol::{SessionFramePayload, SessionRole};

    use super::*;
    use crate::attach::{KeyframeSource, SessionState};

    /// A non-blocking pipe: (read end, write end).
    fn pipe() -> (File, File) {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two new descriptors into `fds`.
        let status = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) };
        assert_eq!(status, 0);
        // SAFETY: both descriptors were just opened and are owned here.
        unsafe {
            (
                File::from(OwnedFd::from_raw_fd(fds[0])),
                File::from(OwnedFd::from_raw_fd(fds[1])),
            )
        }
    }

    fn keyframe() -> KeyframeSource {
        KeyframeSource {
            data: b"SCREEN".to_vec(),
            cols: 80,
            rows: 24,
        }
    }

    fn read_all(file: &mut File) -> Vec<u8> {
        let mut buffer = vec![0; 65536];
        match file.read(&mut buffer) {
            Ok(count) => buffer[..count].to_vec(),
            Err(_) => Vec::new(),
        }
    }

    #[test]
    fn output_goes_straight_to_an_idle_terminal_and_is_queued_behind_unwritten_frames() {
        let mut session = SessionState::new("term_1".into(), 1 << 20, 16, 0);
        let mut member = session.join("a", SessionRole::Controller, None, keyframe);
        let (mut terminal, write_end) = pipe();
        let output = Arc::new(DirectOutput::new(write_end));
        assert!(session.set_direct_output("a", output.clone()));
        // The replay is still queued: output goes behind it.
        session.record_output(b"first");
        assert!(read_all(&mut terminal).is_empty());
        let mut queued = Vec::new();
        while let Ok(frame) = member.frames.try_recv() {
            queued.push(frame.payload.clone());
            output.frame_written();
        }
        assert!(matches!(
            queued.last(),
            Some(SessionFramePayload::Output { .. })
        ));
        // Everything written: the next output reaches the terminal without a frame.
        session.record_output(b"echo");
        assert_eq!(read_all(&mut terminal), b"echo");
        assert!(member.frames.try_recv().is_err(), "no frame was queued");
        // A control frame queued and not yet written holds the output back again.
        session.record_resize(100, 30);
        session.record_output(b"later");
        assert!(read_all(&mut terminal).is_empty());
        let payloads: Vec<_> = std::iter::from_fn(|| member.frames.try_recv().ok())
            .map(|frame| frame.payload.clone())
            .collect();
        assert!(matches!(payloads[0], SessionFramePayload::Resize { .. }));
        assert!(matches!(payloads[1], SessionFramePayload::Output { .. }));
    }
}
