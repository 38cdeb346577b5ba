//! Tests of the pane host with real PTYs and real processes.

mod attach_tests;
mod dispatch_tests;
mod input_tests;
mod lifecycle_tests;
mod process_tests;
mod quiet_reading_tests;
mod screen_tests;
mod scroll_tests;

use std::sync::Arc;
use std::time::Duration;

use nagi_schema::pane::{PaneInfo, ReadFormat, ReadSource};
use nagi_schema::pane_events::PaneEventEnvelope;
use tokio::sync::broadcast;

use super::{PaneHost, PaneHostConfig, WorkspaceCreate};

/// Generous: the machine is shared and slow at times. Tests poll; they never assert on
/// elapsed time.
pub const PATIENCE: Duration = Duration::from_secs(30);

pub fn test_config() -> PaneHostConfig {
    PaneHostConfig {
        socket_path: Some("/tmp/nagi-test/nagi.sock".into()),
        default_shell: Some("/bin/sh".into()),
        scrollback_lines: 2_000,
        initial_cols: 80,
        initial_rows: 24,
        close_grace: Duration::from_millis(300),
        ..PaneHostConfig::default()
    }
}

pub fn test_host() -> Arc<PaneHost> {
    PaneHost::new(test_config())
}

pub fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|part| part.to_string()).collect()
}

/// A workspace whose root pane runs `sh -c script`.
pub fn run_script(host: &PaneHost, script: &str) -> PaneInfo {
    let (_, _, pane) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["sh", "-c", script])),
            ..WorkspaceCreate::default()
        })
        .expect("workspace starts");
    pane
}

pub fn read_text(host: &PaneHost, pane_id: &str, source: ReadSource, lines: Option<u32>) -> String {
    host.read(pane_id, source, lines, ReadFormat::Text, true)
        .expect("read")
        .text
}

/// Polls a read until `accept` holds; panics with the last text after `PATIENCE`.
pub async fn wait_for_text(
    host: &PaneHost,
    pane_id: &str,
    source: ReadSource,
    accept: impl Fn(&str) -> bool,
) -> String {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let text = read_text(
            host,
            pane_id,
            source,
            Some(10_000).filter(|_| source != ReadSource::Visible),
        );
        if accept(&text) {
            return text;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "pane {pane_id} never showed the expected text; last {source:?} read:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The next event satisfying `accept`.
pub async fn next_event(
    events: &mut broadcast::Receiver<PaneEventEnvelope>,
    accept: impl Fn(&PaneEventEnvelope) -> bool,
) -> PaneEventEnvelope {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("event arrives in time")
            .expect("event bus open");
        if accept(&event) {
            return event;
        }
    }
}

/// Polls until `condition` holds.
pub async fn eventually(what: &str, condition: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
