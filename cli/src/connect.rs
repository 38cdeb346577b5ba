//! Finding the server: resolve the session's socket, connect, and start a server in the
//! background when a command needs one and none answers (saying so on stderr).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nagi_engine::paths::{PathEnvironment, SessionPaths, resolve_session_paths};
use nagi_schema::client::{Client, ClientError};

use crate::exit::CliError;

pub fn session_paths(session: Option<&str>) -> Result<SessionPaths, CliError> {
    resolve_session_paths(session, &PathEnvironment::from_process())
        .map_err(|error| CliError::Usage(error.to_string()))
}

fn answers_ping(socket: &Path) -> bool {
    match Client::connect(socket) {
        Ok(mut client) => {
            let _ = client.set_read_timeout(Some(Duration::from_secs(5)));
            client.request("ping", serde_json::json!({})).is_ok()
        }
        Err(_) => false,
    }
}

/// Connects to a running server, without starting one.
pub fn connect_existing(paths: &SessionPaths) -> Result<Client, CliError> {
    Client::connect(&paths.socket_path).map_err(|error| CliError::Unreachable(error.to_string()))
}

/// Connects, starting a background server first if none answers.
pub fn connect_or_start(paths: &SessionPaths, session: Option<&str>) -> Result<Client, CliError> {
    if let Ok(client) = Client::connect(&paths.socket_path) {
        return Ok(client);
    }
    start_background_server(paths, session)?;
    Client::connect(&paths.socket_path).map_err(|error| CliError::Unreachable(error.to_string()))
}

fn start_background_server(paths: &SessionPaths, session: Option<&str>) -> Result<(), CliError> {
    nagi_engine::daemon::ensure_private_dir(&paths.data_dir)
        .map_err(|error| CliError::Unreachable(error.to_string()))?;
    let log_path = paths.server_log_path();
    use std::os::unix::fs::OpenOptionsExt;
    let log = std::fs::OpenOptions::new()
        .mode(0o600)
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|error| {
            CliError::Unreachable(format!(
                "cannot open the server log {}: {error}",
                log_path.display()
            ))
        })?;
    let log_err = log
        .try_clone()
        .map_err(|error| CliError::Unreachable(error.to_string()))?;
    let executable =
        std::env::current_exe().map_err(|error| CliError::Unreachable(error.to_string()))?;
    let mut command = Command::new(executable);
    if let Some(name) = session {
        command.args(["--session", name]);
    }
    command
        .arg("server")
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(log_err));
    // The environment (NAGI_SOCKET_PATH, NAGI_SESSION, NAGI_CONFIG_DIR) is inherited, so
    // the server resolves the same paths.
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe; the server detaches from our terminal.
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
    }
    let child = command
        .spawn()
        .map_err(|error| CliError::Unreachable(format!("cannot start a server: {error}")))?;
    eprintln!(
        "nagi: no server answered at {}; started one in the background (pid {}, log {})",
        paths.socket_path.display(),
        child.id(),
        log_path.display()
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if answers_ping(&paths.socket_path) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    Err(CliError::Unreachable(format!(
        "the background server did not answer within 15 s; see {}",
        log_path.display()
    )))
}

/// Turns a client error into the CLI's error.
pub fn remote(error: ClientError) -> CliError {
    match error {
        ClientError::Remote { code, message } => CliError::Remote { code, message },
        other => CliError::Unreachable(other.to_string()),
    }
}
