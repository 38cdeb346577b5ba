//! Waiting on a few descriptors, edge-triggered: a descriptor is reported when something
//! arrives on it, not for as long as something is there.
//!
//! Why not `poll`: each `poll` asks every terminal again whether it can be read, and a
//! terminal with nothing to read then waits for its kernel worker to finish passing data
//! on (`n_tty_poll` flushes the terminal's pending work). A thread woken by that worker
//! often preempts it, reads what came, and polls again before the worker is done: it
//! then sleeps until the worker finishes and is woken once more, two context switches per
//! wake-up on the CPU that should be running the next hop of a keystroke (measured: 49-95
//! such waits in about 200 keys of a direct attach). Here a terminal is asked only when
//! its wait queue was woken for new data, which is then there to read.
//!
//! The price of edges: a reader must not leave data behind. A read that returns fewer bytes
//! than asked took everything that had arrived (a terminal's or a pipe's reads do); one that
//! fills the buffer may have left some, and the caller says so with `read_again` so that the
//! next wait reports that descriptor at once.

use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};

/// One descriptor to watch. `generation` tells a new file that got the number of a closed
/// one from the same file still open: a change of either registers the slot again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watched {
    pub fd: RawFd,
    pub generation: u64,
}

/// An epoll instance watching up to `N` slots for reads.
pub struct ReadableEdges<const N: usize> {
    poll: Poll,
    events: Events,
    registered: [Option<Watched>; N],
}

impl<const N: usize> ReadableEdges<N> {
    pub fn new() -> std::io::Result<ReadableEdges<N>> {
        Ok(ReadableEdges {
            poll: Poll::new()?,
            events: Events::with_capacity(N.max(1)),
            registered: [None; N],
        })
    }

    /// Blocks until something arrives on one of `wanted` (or one hangs up or fails), and
    /// answers which. A slot in `read_again` is reported at once, whether or not anything
    /// new came (its last read filled the buffer). A `None` slot is not watched.
    pub fn wait(
        &mut self,
        wanted: [Option<Watched>; N],
        read_again: [bool; N],
    ) -> std::io::Result<[bool; N]> {
        self.register(wanted)?;
        let timeout = read_again.contains(&true).then_some(Duration::ZERO);
        loop {
            match self.poll.poll(&mut self.events, timeout) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(error),
            }
            let mut ready = read_again;
            for event in self.events.iter() {
                if let Some(slot) = ready.get_mut(event.token().0) {
                    *slot = true;
                }
            }
            if ready.contains(&true) {
                return Ok(ready);
            }
        }
    }

    /// Brings the registrations in line with `wanted`: a slot whose descriptor or
    /// generation changed is dropped first (a closed descriptor has left the instance by
    /// itself, so that failure is ignored), then the new ones are added. A descriptor
    /// added with data waiting is reported by the next wait.
    fn register(&mut self, wanted: [Option<Watched>; N]) -> std::io::Result<()> {
        let registry = self.poll.registry();
        for (old, new) in self.registered.iter_mut().zip(wanted) {
            if *old != new
                && let Some(old) = old.take()
            {
                let _ = registry.deregister(&mut SourceFd(&old.fd));
            }
        }
        for (slot, (old, new)) in self.registered.iter_mut().zip(wanted).enumerate() {
            if old.is_none()
                && let Some(new) = new
                && new.fd >= 0
            {
                registry.register(&mut SourceFd(&new.fd), Token(slot), Interest::READABLE)?;
                *old = Some(new);
            }
        }
        Ok(())
    }
}

impl<const N: usize> AsRawFd for ReadableEdges<N> {
    /// The epoll instance: readable while something has arrived that no wait reported yet
    /// (for a thread that watches on someone else's behalf, as `idle_spin` does).
    fn as_raw_fd(&self) -> RawFd {
        self.poll.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::{FromRawFd, IntoRawFd};

    fn watched(fd: &impl AsRawFd, generation: u64) -> Option<Watched> {
        Some(Watched {
            fd: fd.as_raw_fd(),
            generation,
        })
    }

    fn nonblocking_pipe() -> (std::io::PipeReader, std::io::PipeWriter) {
        let (reader, writer) = std::io::pipe().unwrap();
        crate::fds::set_nonblocking(reader.as_raw_fd()).unwrap();
        (reader, writer)
    }

    #[test]
    fn reports_a_descriptor_when_data_arrives_and_not_again_until_more_does() {
        let (mut quiet, _quiet_writer) = nonblocking_pipe();
        let (mut talking, mut talking_writer) = nonblocking_pipe();
        let mut edges = ReadableEdges::<3>::new().unwrap();
        let wanted = [watched(&quiet, 0), None, watched(&talking, 0)];
        talking_writer.write_all(b"a").unwrap();
        assert_eq!(
            edges.wait(wanted, [false; 3]).unwrap(),
            [false, false, true]
        );
        // Left unread, the byte is not reported again: the caller owes a read.
        edges
            .poll
            .poll(&mut edges.events, Some(Duration::ZERO))
            .unwrap();
        assert!(edges.events.is_empty(), "an edge is reported once");
        let mut byte = [0u8; 8];
        assert_eq!(talking.read(&mut byte).unwrap(), 1);
        talking_writer.write_all(b"b").unwrap();
        assert_eq!(
            edges.wait(wanted, [false; 3]).unwrap(),
            [false, false, true]
        );
        assert!(
            quiet.read(&mut byte).is_err(),
            "nothing came on the quiet pipe"
        );
    }

    #[test]
    fn a_slot_to_read_again_is_reported_without_waiting() {
        let (quiet, _quiet_writer) = nonblocking_pipe();
        let mut edges = ReadableEdges::<1>::new().unwrap();
        assert_eq!(edges.wait([watched(&quiet, 0)], [true]).unwrap(), [true]);
    }

    #[test]
    fn a_new_file_under_a_reused_number_is_watched_once_its_generation_changes() {
        let mut edges = ReadableEdges::<2>::new().unwrap();
        let (first, first_writer) = nonblocking_pipe();
        let (stop, mut stop_writer) = nonblocking_pipe();
        edges
            .register([watched(&first, 1), watched(&stop, 0)])
            .unwrap();
        let number = first.into_raw_fd();
        drop(first_writer);
        let (second_at_other_number, mut second_writer) = nonblocking_pipe();
        // A new file under the old number, as the key thread's next claim may get: dup2
        // closes the first pipe (which leaves the epoll instance) and puts the second
        // there, with no moment in which another thread could take the number.
        // SAFETY: `number` is ours (taken out of `first`); it is owned again below.
        let reused = unsafe { libc::dup2(second_at_other_number.as_raw_fd(), number) };
        assert_eq!(reused, number);
        // SAFETY: dup2 made `number` a descriptor of its own that nothing else owns.
        let second = unsafe { std::os::fd::OwnedFd::from_raw_fd(number) };
        second_writer.write_all(b"x").unwrap();
        edges
            .register([watched(&second, 2), watched(&stop, 0)])
            .unwrap();
        // Bounded, so that a registration left stale fails here rather than hanging.
        edges
            .poll
            .poll(&mut edges.events, Some(Duration::from_secs(5)))
            .unwrap();
        let tokens: Vec<usize> = edges.events.iter().map(|event| event.token().0).collect();
        assert_eq!(tokens, [0], "the new file under the old number is watched");
        stop_writer.write_all(b"s").unwrap();
        let ready = edges.wait([watched(&second, 2), watched(&stop, 0)], [false; 2]);
        assert_eq!(ready.unwrap(), [false, true]);
    }

    #[test]
    fn a_hang_up_is_reported() {
        let (reader, writer) = nonblocking_pipe();
        let mut edges = ReadableEdges::<1>::new().unwrap();
        edges.register([watched(&reader, 0)]).unwrap();
        drop(writer);
        assert_eq!(edges.wait([watched(&reader, 0)], [false]).unwrap(), [true]);
    }
}
