//! What every command gets: the session to reach and whether to print JSON.

use nagi_schema::client::Client;
use serde_json::Value;

use crate::CommandResult;
use crate::connect::{connect_or_start, remote, session_paths};
use crate::exit::EXIT_OK;

/// What every command gets: where to connect and how to print.
pub struct Context {
    pub session: Option<String>,
    pub json: bool,
}

impl Context {
    pub fn client(&self) -> Result<Client, crate::exit::CliError> {
        let paths = session_paths(self.session.as_deref())?;
        connect_or_start(&paths, self.session.as_deref())
    }

    /// Sends one request (starting a server if needed) and returns its result.
    pub fn request(&self, method: &str, params: Value) -> Result<Value, crate::exit::CliError> {
        self.client()?.request(method, params).map_err(remote)
    }

    /// Prints a result: JSON as is, or the human rendering.
    pub fn print(&self, result: &Value, human: impl FnOnce(&Value) -> String) -> CommandResult {
        if self.json {
            println!(
                "{}",
                serde_json::to_string_pretty(result).unwrap_or_default()
            );
        } else {
            print!("{}", human(result));
        }
        Ok(EXIT_OK)
    }
}
