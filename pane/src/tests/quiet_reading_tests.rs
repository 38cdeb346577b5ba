//! A key thread's turn at reading a real pane's output (`quiet_reading`), with the loop a
//! direct attach's key thread runs.

use std::io::Write as _;
use std::os::fd::AsRawFd as _;
use std::sync::atomic::{AtomicUsize, Ordering};

use nagi_os::fds::wait_readable_any;
use nagi_schema::pane::ReadSource;
use nagi_schema::session_protocol::SessionRole;

use super::*;
use crate::quiet_reading::QuietReading;

/// A thread that waits on the pane's output as a direct key thread does (without a
/// terminal), until its stop pipe is written; it counts the reads it made.
struct KeyLoop {
    stop: std::io::PipeWriter,
    reads: Arc<AtomicUsize>,
    thread: std::thread::JoinHandle<()>,
}

/// What the key thread types first, as the controller `client_id`.
struct Typing {
    host: Arc<PaneHost>,
    terminal_id: String,
    client_id: String,
    text: String,
}

impl KeyLoop {
    fn start(reading: QuietReading) -> KeyLoop {
        KeyLoop::start_typing(reading, None)
    }

    fn start_typing(reading: QuietReading, typing: Option<Typing>) -> KeyLoop {
        let (stop_reader, stop) = std::io::pipe().unwrap();
        let reads = Arc::new(AtomicUsize::new(0));
        let counted = reads.clone();
        let thread = std::thread::spawn(move || {
            let mut reading = Some(reading);
            if let Some(typing) = typing {
                typing
                    .host
                    .session_input_on_this_thread(
                        &typing.terminal_id,
                        &typing.client_id,
                        &typing.text,
                        &mut reading,
                    )
                    .expect("the controller types");
            }
            let mut reading = reading.expect("the claim is held again after typing");
            loop {
                let master = reading.master_to_wait_on().unwrap_or(-1);
                let [stopped, signalled, readable] =
                    wait_readable_any([stop_reader.as_raw_fd(), reading.signal_fd(), master])
                        .unwrap();
                if stopped {
                    return;
                }
                if signalled {
                    reading.signalled();
                }
                if readable {
                    reading.read_master();
                    counted.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        KeyLoop {
            stop,
            reads,
            thread,
        }
    }

    fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }

    /// Stops the thread; its claim is dropped with it.
    fn stop(mut self) {
        self.stop.write_all(b"x").unwrap();
        self.thread.join().unwrap();
    }
}

fn claim(host: &PaneHost, terminal_id: &str) -> Option<QuietReading> {
    host.claim_quiet_reading(terminal_id)
        .expect("the pane exists")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_thread_reads_the_echo_hands_a_stream_to_the_reader_thread_and_gives_the_turn_back() {
    let host = test_host();
    let pane = run_script(&host, r#"while IFS= read -r line; do eval "$line"; done"#);
    let reading = claim(&host, &pane.terminal_id).expect("the first claim is granted");
    assert!(
        claim(&host, &pane.terminal_id).is_none(),
        "a second key thread does not get the pane's output while one holds it"
    );
    let keys = KeyLoop::start(reading);
    // The task hands the turn over; from then on only the key thread reads quiet output.
    host.send_text(&pane.pane_id, "echo quiet-$((20+1))\n")
        .await
        .unwrap();
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.lines().any(|line| line == "quiet-21")
    })
    .await;
    assert!(keys.reads() > 0, "the key thread read the echo");

    // A stream goes to the reader thread and arrives whole and in order.
    host.send_text(&pane.pane_id, "seq 1 30000\n")
        .await
        .unwrap();
    let history = wait_for_text(&host, &pane.pane_id, ReadSource::Recent, |text| {
        text.lines().any(|line| line == "30000")
    })
    .await;
    let numbers: Vec<u32> = history
        .lines()
        .filter_map(|line| line.parse().ok())
        .collect();
    let tail = &numbers[numbers.len() - 1000..];
    assert!(
        tail.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "the stream's last thousand lines are in order"
    );

    // Once the stream paused, the turn is back with the key thread.
    let before = keys.reads();
    host.send_text(&pane.pane_id, "echo back-$((40+2))\n")
        .await
        .unwrap();
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.lines().any(|line| line == "back-42")
    })
    .await;
    eventually("the key thread read again after the stream", || {
        keys.reads() > before
    })
    .await;

    // Its claim gone, the task reads again, and a new claim can be had.
    keys.stop();
    host.send_text(&pane.pane_id, "echo task-$((3*3))\n")
        .await
        .unwrap();
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.lines().any(|line| line == "task-9")
    })
    .await;
    let keys = KeyLoop::start(claim(&host, &pane.terminal_id).expect("a claim again"));

    // The end of the output, read by the key thread, ends the pane.
    host.send_text(&pane.pane_id, "exit 3\n").await.unwrap();
    let core = host.pane_core(&pane.pane_id).unwrap();
    eventually("the pane's output ended and was processed", || {
        core.is_finished()
    })
    .await;
    keys.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_more_than_the_terminal_takes_does_not_stall_the_output_the_program_waits_on() {
    let host = test_host();
    // cat writes what it reads, and reads no more while its output is not read.
    let pane = run_script(&host, "stty -echo; cat");
    let _controller = host
        .session_join(&pane.terminal_id, SessionRole::Controller, None, "keys")
        .unwrap();
    let reading = claim(&host, &pane.terminal_id).expect("the claim is granted");
    // Far more than a terminal's input and output buffers hold together.
    let text: String = (1..=3000).map(|line| format!("{line:0>99}\n")).collect();
    let keys = KeyLoop::start_typing(
        reading,
        Some(Typing {
            host: host.clone(),
            terminal_id: pane.terminal_id.clone(),
            client_id: "keys".into(),
            text,
        }),
    );
    let last = format!("{:0>99}", 3000);
    wait_for_text(&host, &pane.pane_id, ReadSource::RecentUnwrapped, |text| {
        text.lines().any(|line| line == last)
    })
    .await;
    // The typing thread holds the quiet reading again and reads the next echo.
    let before = keys.reads();
    host.send_text(&pane.pane_id, "after\n").await.unwrap();
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.lines().any(|line| line == "after")
    })
    .await;
    eventually("the key thread read the output after typing", || {
        keys.reads() > before
    })
    .await;
    keys.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_controller_takes_the_quiet_reading_once_the_one_who_left_lets_go() {
    let host = test_host();
    let pane = run_script(&host, r#"while IFS= read -r line; do eval "$line"; done"#);
    // The controller who left: its key thread has not yet seen its connection end, so it
    // still holds the claim.
    let old = host
        .session_join(&pane.terminal_id, SessionRole::Controller, None, "old")
        .unwrap();
    let old_claim = claim(&host, &pane.terminal_id).expect("the old controller's claim");
    host.session_leave(&pane.terminal_id, "old").unwrap();
    drop(old);
    // Kept: a member whose stream is dropped is taken out of the session.
    let _new = host
        .session_join(&pane.terminal_id, SessionRole::Controller, None, "new")
        .unwrap();

    // Its thread started while the old claim was held, so it types without one.
    let mut reading = claim(&host, &pane.terminal_id);
    assert!(reading.is_none(), "the old thread still holds the claim");
    host.session_input_on_this_thread(&pane.terminal_id, "new", "echo one\n", &mut reading)
        .expect("the new controller types");
    assert!(reading.is_none(), "no claim while the old thread holds it");

    // The old thread ends; the new one's next key takes the claim, and it reads the echo.
    drop(old_claim);
    host.session_input_on_this_thread(&pane.terminal_id, "new", "echo t", &mut reading)
        .expect("the new controller types");
    let reading = reading.expect("the key took the claim the old thread let go");
    eventually("the pane's task handed the reading over", || {
        reading.master_to_wait_on().is_some()
    })
    .await;
    let keys = KeyLoop::start(reading);
    host.send_text(&pane.pane_id, "wo-$((1+1))\n")
        .await
        .unwrap();
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.lines().any(|line| line == "two-2")
    })
    .await;
    assert!(
        keys.reads() > 0,
        "the new controller's thread read the output"
    );
    keys.stop();
}
