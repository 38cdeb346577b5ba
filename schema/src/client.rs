//! A small blocking client of the socket protocol, used by the CLI, the cockpit and tests.
//! One connection carries many requests, answered in order.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot reach the nagi server at {path}: {source}")]
    Connect {
        path: String,
        source: std::io::Error,
    },
    #[error("connection to the nagi server failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("{code}: {message}")]
    Remote { code: String, message: String },
    #[error("the server sent something unexpected: {0}")]
    Protocol(String),
    #[error("the server closed the connection")]
    Closed,
}

impl ClientError {
    /// The wire error code, for remote errors.
    pub fn code(&self) -> Option<&str> {
        match self {
            ClientError::Remote { code, .. } => Some(code),
            _ => None,
        }
    }
}

pub struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_id: u64,
}

impl Client {
    pub fn connect(path: &Path) -> Result<Client, ClientError> {
        let stream = UnixStream::connect(path).map_err(|source| ClientError::Connect {
            path: path.display().to_string(),
            source,
        })?;
        let writer = stream.try_clone()?;
        Ok(Client {
            reader: BufReader::new(stream),
            writer,
            next_id: 1,
        })
    }

    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> Result<(), ClientError> {
        self.writer.set_read_timeout(timeout)?;
        Ok(())
    }

    /// Sends one request and waits for its response. Returns the `result` object.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = format!("c{}", self.next_id);
        self.next_id += 1;
        let line = serde_json::json!({"id": id, "method": method, "params": params});
        self.send_line(&line.to_string())?;
        let response = self.read_value()?;
        Self::into_result(response)
    }

    /// Splits a response into its result or its error.
    pub fn into_result(mut response: Value) -> Result<Value, ClientError> {
        if let Some(error) = response.get("error") {
            let code = error
                .get("code")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_string();
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            return Err(ClientError::Remote { code, message });
        }
        match response.get_mut("result") {
            Some(result) => Ok(result.take()),
            None => Err(ClientError::Protocol(format!(
                "a response without result or error: {response}"
            ))),
        }
    }

    /// Writes one raw line (a newline is appended).
    pub fn send_line(&mut self, line: &str) -> Result<(), ClientError> {
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        self.writer.write_all(&bytes)?;
        Ok(())
    }

    /// Reads the next line as JSON (responses and pushed events alike).
    pub fn read_value(&mut self) -> Result<Value, ClientError> {
        let mut line = String::new();
        let read = self.reader.read_line(&mut line)?;
        if read == 0 {
            return Err(ClientError::Closed);
        }
        serde_json::from_str(&line)
            .map_err(|error| ClientError::Protocol(format!("{error}: {line}")))
    }
}
