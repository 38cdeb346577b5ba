//! Spawning a provider in its own process group, capturing its stderr, and ending the whole
//! group when the run is over.
//!
//! Every provider is a group leader (`setpgid(0, 0)` before exec), so one `killpg` reaches
//! the provider and everything it started that stayed in its group. Shutdown is graceful
//! first: stdin is closed (Claude Code and ACP agents exit on end of input), then the group
//! gets SIGTERM, and after a grace period SIGKILL. SIGKILL is sent to the group even when
//! the leader already exited, to sweep helpers it left behind.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use crate::confine::{PreparedConfinement, restrict_current_thread};
use crate::framing::{BoundedLine, EventSink, LineReader, MAX_VISIBLE_TEXT_BYTES};
use crate::spec::{Confinement, LaunchError, TranscriptLine};

/// How long a provider may take to exit by itself after its stdin is closed.
const STDIN_CLOSE_GRACE: Duration = Duration::from_millis(1500);
/// How long the group has between SIGTERM and SIGKILL.
const TERMINATE_GRACE: Duration = Duration::from_secs(3);
/// How long we wait for stderr to reach end of file after the group is gone.
const STDERR_DRAIN_GRACE: Duration = Duration::from_secs(1);
/// At most this many stderr lines reach the transcript; the rest is drained silently.
const MAX_STDERR_LINES: usize = 2000;

/// What the provider's stdin is connected to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdinMode {
    Piped,
    Null,
}

/// How to start one provider process.
#[derive(Debug, Clone)]
pub struct ProcessConfig {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// `None` inherits the server's working directory.
    pub working_directory: Option<PathBuf>,
    /// Applied over the server's environment.
    pub env: BTreeMap<String, String>,
    pub stdin: StdinMode,
    pub confinement: Option<Confinement>,
}

/// A running provider process and the task that forwards its stderr.
pub struct ProviderProcess {
    child: Child,
    pid: u32,
    stderr_forwarder: Option<JoinHandle<()>>,
    exit_status: Option<std::process::ExitStatus>,
    group_ended: bool,
    stdin_mode: StdinMode,
}

/// The pipes of a freshly spawned provider.
pub struct ProviderPipes {
    pub stdin: Option<ChildStdin>,
    pub stdout: ChildStdout,
}

/// Spawns `command` confined by the Landlock ruleset `ruleset_fd`, from a thread of its own
/// that confines itself first: a Landlock domain and `no_new_privs` belong to a thread and
/// pass to the processes it starts. Unlike a `pre_exec` hook, this lets std start the child
/// with `posix_spawn` (vfork) instead of forking the whole server, which copies its page
/// tables and stalls its other threads meanwhile. The thread ends with the spawn,
/// so no confined thread is ever reused.
fn spawn_confined(command: &mut Command, ruleset_fd: std::os::fd::RawFd) -> std::io::Result<Child> {
    let runtime = tokio::runtime::Handle::current();
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("nagi-confined-spawn".into())
            .spawn_scoped(scope, move || {
                let _entered = runtime.enter();
                // SAFETY: plain system calls that restrict this thread only, which ends
                // right after the spawn.
                unsafe { restrict_current_thread(ruleset_fd)? };
                command.spawn()
            })?
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the confined spawn thread panicked")))
    })
}

impl ProviderProcess {
    /// Spawns the provider. Must be called inside a tokio runtime.
    pub fn spawn(
        config: &ProcessConfig,
        sink: EventSink,
    ) -> Result<(ProviderProcess, ProviderPipes), LaunchError> {
        let program_text = config.program.display().to_string();
        let mut command = Command::new(&config.program);
        // nagi's own variables (its socket, config dir, session) are not the provider's
        // business: they would tell it where the server keeps its state. Only what the
        // engine passes in `env` reaches it.
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("NAGI_")
                && !config.env.contains_key(&*name.to_string_lossy())
            {
                command.env_remove(&name);
            }
        }
        command
            .args(&config.args)
            .envs(&config.env)
            .stdin(match config.stdin {
                StdinMode::Piped => Stdio::piped(),
                StdinMode::Null => Stdio::null(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(directory) = &config.working_directory {
            command.current_dir(directory);
        }
        // Kept alive until the spawn returned: the child applies it before exec.
        let prepared = match &config.confinement {
            Some(confinement) => Some(
                PreparedConfinement::prepare(confinement)
                    .map_err(|error| LaunchError::Confinement(error.to_string()))?,
            ),
            None => None,
        };
        let spawned = match &prepared {
            Some(prepared) => spawn_confined(&mut command, prepared.raw_fd()),
            None => command.spawn(),
        };
        let mut child = spawned.map_err(|error| LaunchError::Spawn(program_text.clone(), error))?;
        drop(prepared);
        let pid = child.id().ok_or_else(|| {
            LaunchError::Spawn(
                program_text.clone(),
                std::io::Error::other("exited during spawn"),
            )
        })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let stderr_forwarder = tokio::spawn(forward_stderr(stderr, sink));
        let process = ProviderProcess {
            child,
            pid,
            stderr_forwarder: Some(stderr_forwarder),
            exit_status: None,
            group_ended: false,
            stdin_mode: config.stdin,
        };
        Ok((process, ProviderPipes { stdin, stdout }))
    }

    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Waits until the provider process exits by itself. Cancel-safe.
    pub async fn wait_for_exit(&mut self) -> Option<i32> {
        if let Some(status) = self.exit_status {
            return exit_code(status);
        }
        match self.child.wait().await {
            Ok(status) => {
                self.exit_status = Some(status);
                exit_code(status)
            }
            Err(_) => None,
        }
    }

    /// Ends the process group (see the module doc) and returns the provider's exit code.
    /// `stdin` is dropped first, which closes the provider's input.
    pub async fn shutdown(mut self, stdin: Option<ChildStdin>) -> Option<i32> {
        drop(stdin);
        // Only a provider that reads stdin can take closing it as the signal to exit.
        if self.exit_status.is_none()
            && self.stdin_mode == StdinMode::Piped
            && let Ok(Ok(status)) = tokio::time::timeout(STDIN_CLOSE_GRACE, self.child.wait()).await
        {
            self.exit_status = Some(status);
        }
        if self.exit_status.is_none() {
            self.signal_group(libc::SIGTERM);
            if let Ok(Ok(status)) = tokio::time::timeout(TERMINATE_GRACE, self.child.wait()).await {
                self.exit_status = Some(status);
            }
        }
        self.signal_group(libc::SIGKILL);
        self.group_ended = true;
        if self.exit_status.is_none()
            && let Ok(status) = self.child.wait().await
        {
            self.exit_status = Some(status);
        }
        if let Some(forwarder) = self.stderr_forwarder.take() {
            let abort = forwarder.abort_handle();
            if tokio::time::timeout(STDERR_DRAIN_GRACE, forwarder)
                .await
                .is_err()
            {
                abort.abort();
            }
        }
        self.exit_status.and_then(exit_code)
    }

    fn signal_group(&self, signal: libc::c_int) {
        // The pgid of a group we created; an already empty group is harmless.
        nagi_os::signals::signal_group(self.pid as libc::pid_t, signal);
    }
}

impl Drop for ProviderProcess {
    fn drop(&mut self) {
        // A session dropped without `shutdown` (runtime shutting down, a panic) must not
        // leave a provider tree behind.
        if !self.group_ended {
            self.signal_group(libc::SIGKILL);
        }
    }
}

fn exit_code(status: std::process::ExitStatus) -> Option<i32> {
    status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
}

async fn forward_stderr(stderr: tokio::process::ChildStderr, sink: EventSink) {
    let mut reader = LineReader::new(stderr, MAX_VISIBLE_TEXT_BYTES);
    let mut forwarded = 0usize;
    loop {
        let line = match reader.next_line().await {
            Ok(BoundedLine::Line(bytes)) | Ok(BoundedLine::TooLong(bytes)) => bytes,
            Ok(BoundedLine::Eof) | Err(_) => return,
        };
        if forwarded < MAX_STDERR_LINES {
            forwarded += 1;
            let text = String::from_utf8_lossy(&line).into_owned();
            if !sink.transcript(TranscriptLine::Stderr(text)).await {
                return;
            }
            if forwarded == MAX_STDERR_LINES {
                let notice = format!("stderr truncated after {MAX_STDERR_LINES} lines");
                let _ = sink.transcript(TranscriptLine::Info(notice)).await;
            }
        }
    }
}
