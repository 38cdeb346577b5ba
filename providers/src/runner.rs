//! The part of every adapter that is the same: spawn the provider, run the protocol driver
//! until it ends, report why, end the process group, report `Stopped` last.

use std::future::Future;

use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::mpsc;

use crate::framing::{EventSink, SessionEnd};
use crate::process::{ProcessConfig, ProviderProcess};
use crate::spec::{LaunchError, ProviderCommand, ProviderEvent, ProviderHandle};

/// How many engine commands may queue for one run.
const COMMAND_CHANNEL_CAPACITY: usize = 64;

/// What a protocol driver works with. Drivers take the pipes they need out of the options;
/// whatever is left is closed by the runner during shutdown.
pub struct SessionIo {
    pub process: ProviderProcess,
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    pub commands: mpsc::Receiver<ProviderCommand>,
    pub sink: EventSink,
}

impl SessionIo {
    /// A failure describing a provider that closed its output or exited on its own,
    /// including its exit code when it is known within a moment.
    pub async fn provider_gone(&mut self, what: &str) -> SessionEnd {
        let code = tokio::time::timeout(
            std::time::Duration::from_secs(2),
            self.process.wait_for_exit(),
        )
        .await;
        let reason = match code {
            Ok(Some(code)) => format!("{what}: the provider exited with code {code}"),
            Ok(None) => format!("{what}: the provider exited"),
            Err(_) => format!("{what}: the provider closed its output"),
        };
        SessionEnd::failed(crate::spec::FailureKind::Disconnected, reason)
    }
}

/// A provider protocol: runs one session over [`SessionIo`] until it ends.
pub trait Driver: Send + 'static {
    fn run(self, io: &mut SessionIo) -> impl Future<Output = SessionEnd> + Send;
}

/// Spawns the provider described by `config` and runs `driver` on a tokio task.
pub fn start<D: Driver>(config: ProcessConfig, driver: D) -> Result<ProviderHandle, LaunchError> {
    let (sink, events) = EventSink::channel();
    let (commands_sender, commands) = mpsc::channel(COMMAND_CHANNEL_CAPACITY);
    let (process, pipes) = ProviderProcess::spawn(&config, sink.clone())?;
    let pid = process.pid();
    let mut io = SessionIo {
        process,
        stdin: pipes.stdin,
        stdout: Some(pipes.stdout),
        commands,
        sink,
    };
    tokio::spawn(async move {
        let end = driver.run(&mut io).await;
        let SessionIo {
            process,
            stdin,
            stdout,
            commands,
            sink,
        } = io;
        drop(commands);
        if let SessionEnd::Failed { kind, reason } = end {
            sink.send(ProviderEvent::TransportFailed { kind, reason })
                .await;
        }
        drop(stdout);
        let exit_code = process.shutdown(stdin).await;
        sink.send(ProviderEvent::Stopped { exit_code }).await;
    });
    Ok(ProviderHandle {
        commands: commands_sender,
        events,
        pid,
    })
}

/// Sends one event; a closed engine side ends the session as a shutdown.
pub async fn send(io: &SessionIo, event: ProviderEvent) -> Result<(), SessionEnd> {
    if io.sink.send(event).await {
        Ok(())
    } else {
        Err(SessionEnd::ShutdownRequested)
    }
}

/// Sends one transcript line (truncated at the visible-text limit).
pub async fn transcript(
    io: &SessionIo,
    line: crate::spec::TranscriptLine,
) -> Result<(), SessionEnd> {
    if io.sink.transcript(line).await {
        Ok(())
    } else {
        Err(SessionEnd::ShutdownRequested)
    }
}

/// Sleeps until `deadline`, or forever without one.
pub async fn sleep_until_optional(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
