//! `nagi pane attach --host NAME` and `nagi events subscribe --host NAME`: a pane or the
//! events of another host of the fleet, reached through a local socket that leads to that host's nagi socket (`[fleet.hosts.NAME] socket`), which
//! is usually forwarded over SSH:
//!
//! ```sh
//! ssh -N -o StreamLocalBindUnlink=yes -L /run/user/1000/nagi-b.sock:/run/user/1000/nagi/nagi.sock b
//! ```
//!
//! Through a forwarded socket the server cannot open the client's terminal, so the attach
//! is a stream (the server sends frames, this process draws them).

use std::path::{Path, PathBuf};
use std::time::Duration;

use nagi_engine::config::{FleetSettings, UserConfig};
use nagi_schema::client::Client;
use serde_json::Value;

use crate::connect::{remote, session_paths};
use crate::context::Context;
use crate::exit::CliError;

/// The socket `[fleet.hosts.NAME]` names, which must exist.
pub fn host_socket(context: &Context, host: &str) -> Result<PathBuf, CliError> {
    FleetSettings::check_host(host).map_err(CliError::Usage)?;
    let paths = session_paths(context.session.as_deref())?;
    let config_file = paths.config_file_path();
    let user =
        UserConfig::load(&config_file).map_err(|error| CliError::Usage(error.to_string()))?;
    let Some(settings) = user.fleet.as_ref().and_then(|fleet| fleet.hosts.get(host)) else {
        return Err(CliError::Usage(format!(
            "{} names no socket for host {host}: add `[fleet.hosts.{host}]` with \
             `socket = \"/path/to/nagi-{host}.sock\"`, and forward it from host {host} with \
             `ssh -N -o StreamLocalBindUnlink=yes -L /path/to/nagi-{host}.sock:REMOTE_SOCKET {host}` \
             (REMOTE_SOCKET: `nagi server` logs it on host {host})",
            config_file.display()
        )));
    };
    if !settings.socket.is_absolute() {
        return Err(CliError::Usage(format!(
            "[fleet.hosts.{host}] socket must be an absolute path, not {}",
            settings.socket.display()
        )));
    }
    Ok(settings.socket.clone())
}

/// A connection to the host's server through its socket (nothing is started here: the
/// server is the other host's).
pub fn connect(socket: &Path, host: &str) -> Result<Client, CliError> {
    Client::connect(socket).map_err(|error| {
        CliError::Unreachable(format!(
            "cannot reach host {host}'s nagi server through {}: {error} (is the ssh \
             forwarding running?)",
            socket.display()
        ))
    })
}

/// One request to the host's server through its socket.
pub fn request(socket: &Path, host: &str, method: &str, params: Value) -> Result<Value, CliError> {
    let mut client = connect(socket, host)?;
    let _ = client.set_read_timeout(Some(Duration::from_secs(30)));
    client.request(method, params).map_err(remote)
}
