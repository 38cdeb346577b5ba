//! Polling a connection's socket for a moment after a reply, instead of parking.
//!
//! A server thread that parks after sending a reply is woken by the client's next request.
//! On a machine whose idle CPUs halt (a virtual machine without guest halt-polling, like
//! the ones this project is measured on), that wake-up costs tens of microseconds: a
//! third of a whole durable `mission.create`. A client that sends its next request
//! promptly after each reply (a script, an importer, the cockpit replaying a list) gets
//! its socket polled for a short window after each reply instead, so the request is read
//! the moment it lands.
//!
//! Only a reply to a request that took a while (a durable commit: the thread slept in
//! `fsync` and both CPUs went idle) is followed by a poll. After a quick request the
//! client is usually still on the CPU it shares with this thread, and parking is what
//! keeps the two there: polling would push the client to the other CPU and double a
//! `ping`'s round trip.
//!
//! The cost is bounded: only one connection polls at a time, only when no other request
//! is being served, only while its client keeps answering within the window, and never
//! for longer than the window (`[server] reply_poll_microseconds`, 0 turns it off). A
//! client that goes quiet costs one window of one CPU, then nothing until it is prompt
//! again.

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::connection::Lines;

/// A request served in at least this long is followed by a poll: a commit takes longer,
/// a read or a `ping` much less.
pub const SLOW_REQUEST: Duration = Duration::from_micros(100);

/// What every connection of one server shares.
pub struct ReplyPolling {
    window: Duration,
    requests_in_flight: AtomicUsize,
    someone_polls: AtomicBool,
}

/// Marks one request as being served until dropped.
pub struct Serving<'a>(&'a ReplyPolling);

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        self.0.requests_in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl ReplyPolling {
    pub fn new(window: Duration) -> ReplyPolling {
        ReplyPolling {
            window,
            requests_in_flight: AtomicUsize::new(0),
            someone_polls: AtomicBool::new(false),
        }
    }

    pub fn serving(&self) -> Serving<'_> {
        self.requests_in_flight.fetch_add(1, Ordering::SeqCst);
        Serving(self)
    }
}

/// One connection's side: when its last reply went out, whether that request was slow,
/// and whether its client has been prompt.
#[derive(Default)]
pub struct ConnectionPoll {
    replied_at: Option<Instant>,
    last_request_was_slow: bool,
    client_is_prompt: bool,
}

/// What a poll found.
#[derive(Debug, PartialEq, Eq)]
pub enum Polled {
    /// Bytes (or the end of input) were read ahead into the line reader.
    Arrived,
    /// Nothing came within the window; wait as usual.
    TimedOut,
    /// Polling was not allowed this time; wait as usual.
    Skipped,
}

impl ConnectionPoll {
    /// Call once a reply has been flushed, with when its request was read.
    pub fn replied(&mut self, request_read_at: Instant) {
        let now = Instant::now();
        self.last_request_was_slow = now.duration_since(request_read_at) >= SLOW_REQUEST;
        self.replied_at = Some(now);
    }

    /// Call when the next request has been read, with how it was read. A request that a
    /// poll caught keeps the client prompt and one that a poll missed makes it not prompt;
    /// one read without a poll makes it prompt if it came within twice the window (the
    /// wait includes the wake-up the poll is there to save).
    pub fn request_read(&mut self, shared: &ReplyPolling, polled: &Polled) {
        let Some(replied_at) = self.replied_at.take() else {
            return;
        };
        self.client_is_prompt = match polled {
            Polled::Arrived => true,
            Polled::TimedOut => false,
            Polled::Skipped => replied_at.elapsed() <= shared.window * 2,
        };
    }

    /// Polls the connection's socket until bytes arrive or the window ends, when the
    /// last request was slow, this client has been prompt, nothing else is being served
    /// and no other connection polls. Bytes read go into `lines` ahead of anything it
    /// reads later.
    pub fn poll(&mut self, shared: &ReplyPolling, lines: &mut Lines) -> Polled {
        if !self.client_is_prompt
            || !self.last_request_was_slow
            || shared.window.is_zero()
            || self.replied_at.is_none()
            || !lines.holds_nothing()
            || !lines.get_ref().buffer().is_empty()
            || shared.requests_in_flight.load(Ordering::SeqCst) != 0
            || !runs_on_several_threads()
        {
            return Polled::Skipped;
        }
        if shared
            .someone_polls
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_err()
        {
            return Polled::Skipped;
        }
        let fd = lines.get_ref().get_ref().as_raw_fd();
        let deadline = Instant::now() + shared.window;
        let polled = read_ahead_until(fd, deadline, lines);
        shared.someone_polls.store(false, Ordering::SeqCst);
        polled
    }
}

/// A poll holds its thread; on a single-threaded runtime that would stall every other
/// task, so it polls only where other workers go on serving.
fn runs_on_several_threads() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|handle| handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

fn read_ahead_until(fd: std::os::fd::RawFd, deadline: Instant, lines: &mut Lines) -> Polled {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        // SAFETY: `buffer` is valid for writes of its length; `fd` is the connection's
        // open socket, borrowed from `lines` for the duration of the call.
        let read = unsafe {
            libc::recv(
                fd,
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if read >= 0 {
            // Zero is the end of input, which the line reader reports as such.
            lines.read_ahead(&buffer[..read as usize]);
            return Polled::Arrived;
        }
        let error = std::io::Error::last_os_error();
        match error.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted => {}
            // Any other error is left for the normal read to find and report.
            _ => return Polled::Skipped,
        }
        if Instant::now() >= deadline {
            return Polled::TimedOut;
        }
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use tokio::io::BufReader;

    use super::*;
    use crate::server::framing::{Frame, LineReader};

    /// The server's line reader on one end of a socket pair, and the client's end.
    fn connection() -> (Lines, std::os::unix::net::UnixStream) {
        let (server, client) = std::os::unix::net::UnixStream::pair().unwrap();
        server.set_nonblocking(true).unwrap();
        let server = tokio::net::UnixStream::from_std(server).unwrap();
        let (read_half, _write_half) = crate::server::socket::split(server).unwrap();
        (LineReader::new(BufReader::new(read_half), 1024), client)
    }

    /// When a request read now would have been read, had it taken a commit's time.
    fn slow_request_read_at() -> Instant {
        Instant::now() - SLOW_REQUEST
    }

    /// A connection whose client answered its last reply at once, and has just been
    /// answered again after a slow request.
    fn prompt_client(shared: &ReplyPolling) -> ConnectionPoll {
        let mut poll = ConnectionPoll::default();
        poll.replied(slow_request_read_at());
        poll.request_read(shared, &Polled::Skipped);
        poll.replied(slow_request_read_at());
        poll
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_prompt_client_s_next_request_is_read_during_the_poll() {
        let shared = ReplyPolling::new(Duration::from_secs(5));
        let (mut lines, mut client) = connection();
        let mut poll = prompt_client(&shared);
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            client.write_all(b"{\"id\":\"2\"}\n").unwrap();
            client
        });
        assert_eq!(poll.poll(&shared, &mut lines), Polled::Arrived);
        assert_eq!(
            lines.next_frame().await.unwrap(),
            Frame::Line(b"{\"id\":\"2\"}".to_vec())
        );
        poll.request_read(&shared, &Polled::Arrived);
        assert!(poll.client_is_prompt);
        drop(writer.join().unwrap());
        // The socket's own readiness is still right after bytes were taken past it.
        assert_eq!(lines.next_frame().await.unwrap(), Frame::End);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_client_that_was_slow_is_not_polled() {
        let shared = ReplyPolling::new(Duration::from_millis(1));
        let (mut lines, mut client) = connection();
        let mut poll = ConnectionPoll::default();
        poll.replied(slow_request_read_at());
        std::thread::sleep(Duration::from_millis(10));
        poll.request_read(&shared, &Polled::Skipped);
        poll.replied(slow_request_read_at());
        client.write_all(b"{}\n").unwrap();
        assert_eq!(poll.poll(&shared, &mut lines), Polled::Skipped);
        assert!(lines.holds_nothing(), "nothing is read ahead");
        assert_eq!(
            lines.next_frame().await.unwrap(),
            Frame::Line(b"{}".to_vec())
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn no_connection_polls_while_another_request_is_served() {
        let shared = ReplyPolling::new(Duration::from_secs(5));
        let (mut lines, mut client) = connection();
        let mut poll = prompt_client(&shared);
        client.write_all(b"{}\n").unwrap();
        let serving = shared.serving();
        assert_eq!(poll.poll(&shared, &mut lines), Polled::Skipped);
        assert!(lines.holds_nothing());
        drop(serving);
        assert_eq!(poll.poll(&shared, &mut lines), Polled::Arrived);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_poll_that_sees_nothing_gives_up_and_that_client_is_not_polled_again() {
        let shared = ReplyPolling::new(Duration::from_millis(5));
        let (mut lines, mut client) = connection();
        let mut poll = prompt_client(&shared);
        let started = Instant::now();
        assert_eq!(poll.poll(&shared, &mut lines), Polled::TimedOut);
        assert!(started.elapsed() >= Duration::from_millis(5));
        poll.request_read(&shared, &Polled::TimedOut);
        poll.replied(slow_request_read_at());
        client.write_all(b"{}\n").unwrap();
        assert_eq!(poll.poll(&shared, &mut lines), Polled::Skipped);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_client_that_hangs_up_during_the_poll_ends_the_connection() {
        let shared = ReplyPolling::new(Duration::from_secs(5));
        let (mut lines, client) = connection();
        let mut poll = prompt_client(&shared);
        drop(client);
        assert_eq!(poll.poll(&shared, &mut lines), Polled::Arrived);
        assert_eq!(lines.next_frame().await.unwrap(), Frame::End);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_reply_to_a_quick_request_is_not_followed_by_a_poll() {
        let shared = ReplyPolling::new(Duration::from_secs(5));
        let (mut lines, mut client) = connection();
        let mut poll = prompt_client(&shared);
        poll.request_read(&shared, &Polled::Arrived);
        poll.replied(Instant::now());
        client.write_all(b"{}\n").unwrap();
        assert_eq!(poll.poll(&shared, &mut lines), Polled::Skipped);
        assert!(lines.holds_nothing());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_zero_window_turns_polling_off() {
        let shared = ReplyPolling::new(Duration::ZERO);
        let (mut lines, mut client) = connection();
        let mut poll = prompt_client(&shared);
        client.write_all(b"{}\n").unwrap();
        assert_eq!(poll.poll(&shared, &mut lines), Polled::Skipped);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_single_threaded_runtime_is_never_held_by_a_poll() {
        let shared = ReplyPolling::new(Duration::from_secs(5));
        let (mut lines, mut client) = connection();
        let mut poll = prompt_client(&shared);
        client.write_all(b"{}\n").unwrap();
        assert_eq!(poll.poll(&shared, &mut lines), Polled::Skipped);
    }
}
