//! HTTP to the local OpenCode server, with `ureq` on blocking threads.
//!
//! Every request carries basic auth (the server was started with a fresh password) and the
//! worktree as `directory`. The event stream runs on its own thread and forwards complete
//! events to the driver; it ends when the server closes the stream (or the process dies).

use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

use base64::Engine;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::framing::MAX_FRAME_BYTES;
use crate::opencode_codec::SseAssembler;

/// `/doc` is a large OpenAPI document; everything else is small.
const MAX_DOC_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The request may or may not have reached the server.
    #[error("{method} {path} failed: {message}")]
    Transport {
        method: &'static str,
        path: String,
        message: String,
    },
    #[error("{method} {path} answered HTTP {status}: {body}")]
    Status {
        method: &'static str,
        path: String,
        status: u16,
        body: String,
    },
    #[error("{method} {path} answered with a body that is not JSON: {message}")]
    NotJson {
        method: &'static str,
        path: String,
        message: String,
    },
}

/// A handle on one OpenCode server. Cheap to clone.
#[derive(Clone)]
pub struct OpenCodeHttp {
    agent: ureq::Agent,
    streaming_agent: ureq::Agent,
    base_url: String,
    authorization: String,
    directory_query: String,
}

/// What the event thread delivers.
#[derive(Debug)]
pub enum StreamItem {
    Event(String),
    /// The stream ended; `Some` with the reason when it broke rather than closed.
    Ended(Option<String>),
    /// An event over the frame limit.
    TooLong,
}

fn agent(timeout: Option<Duration>) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(timeout)
        .http_status_as_error(false)
        // A proxy from the environment must never see a request meant for 127.0.0.1.
        .proxy(None)
        .build()
        .into()
}

fn percent_encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~' | b'/') {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

impl OpenCodeHttp {
    pub fn new(
        port: u16,
        username: &str,
        password: &str,
        directory: &str,
        timeout: Duration,
    ) -> OpenCodeHttp {
        let credentials =
            base64::engine::general_purpose::STANDARD.encode(format!("{username}:{password}"));
        OpenCodeHttp {
            agent: agent(Some(timeout)),
            streaming_agent: agent(None),
            base_url: format!("http://127.0.0.1:{port}"),
            authorization: format!("Basic {credentials}"),
            directory_query: format!("directory={}", percent_encode(directory)),
        }
    }

    fn url(&self, path: &str, with_directory: bool) -> String {
        if !with_directory {
            return format!("{}{path}", self.base_url);
        }
        let separator = if path.contains('?') { '&' } else { '?' };
        format!("{}{path}{separator}{}", self.base_url, self.directory_query)
    }

    /// A blocking request; `body: None` is a GET. Returns the status and the body text.
    fn call_blocking(
        &self,
        method: &'static str,
        path: &str,
        body: Option<&Value>,
        with_directory: bool,
    ) -> Result<(u16, String), HttpError> {
        let url = self.url(path, with_directory);
        let transport = |error: ureq::Error| HttpError::Transport {
            method,
            path: path.to_string(),
            message: error.to_string(),
        };
        let response = match body {
            None => self
                .agent
                .get(&url)
                .header("Authorization", &self.authorization)
                .call(),
            Some(body) => self
                .agent
                .post(&url)
                .header("Authorization", &self.authorization)
                .content_type("application/json")
                .send(body.to_string()),
        }
        .map_err(transport)?;
        let status = response.status().as_u16();
        let limit = if path == "/doc" {
            MAX_DOC_BYTES
        } else {
            MAX_FRAME_BYTES as u64
        };
        let text = response
            .into_body()
            .into_with_config()
            .limit(limit)
            .read_to_string()
            .map_err(transport)?;
        Ok((status, text))
    }

    /// Runs a request on a blocking thread.
    pub async fn call(
        &self,
        method: &'static str,
        path: &str,
        body: Option<Value>,
        with_directory: bool,
    ) -> Result<(u16, String), HttpError> {
        let client = self.clone();
        let owned_path = path.to_string();
        tokio::task::spawn_blocking(move || {
            client.call_blocking(method, &owned_path, body.as_ref(), with_directory)
        })
        .await
        .unwrap_or_else(|error| {
            Err(HttpError::Transport {
                method,
                path: path.to_string(),
                message: error.to_string(),
            })
        })
    }

    /// A request whose answer must be 200 with a JSON body.
    pub async fn json(
        &self,
        method: &'static str,
        path: &str,
        body: Option<Value>,
        with_directory: bool,
    ) -> Result<Value, HttpError> {
        let (status, text) = self.call(method, path, body, with_directory).await?;
        if status != 200 {
            return Err(HttpError::Status {
                method,
                path: path.to_string(),
                status,
                body: crate::framing::truncate_utf8(&text, 512).to_string(),
            });
        }
        serde_json::from_str(&text).map_err(|error| HttpError::NotJson {
            method,
            path: path.to_string(),
            message: error.to_string(),
        })
    }

    /// Opens `GET /event` and forwards its events until it ends.
    pub fn start_event_stream(&self) -> mpsc::Receiver<StreamItem> {
        let (sender, receiver) = mpsc::channel(256);
        let client = self.clone();
        std::thread::Builder::new()
            .name("opencode-events".to_string())
            .spawn(move || {
                let response = client
                    .streaming_agent
                    .get(client.url("/event", false))
                    .header("Authorization", &client.authorization)
                    .header("Accept", "text/event-stream")
                    .call();
                let end = match response {
                    Err(error) => Some(format!("GET /event failed: {error}")),
                    Ok(response) if response.status().as_u16() != 200 => Some(format!(
                        "GET /event answered HTTP {}",
                        response.status().as_u16()
                    )),
                    Ok(response) => forward_events(response.into_body().into_reader(), &sender),
                };
                let _ = sender.blocking_send(StreamItem::Ended(end));
            })
            .expect("spawning the event thread");
        receiver
    }
}

/// Reads SSE lines (each bounded by the frame limit) and forwards complete events.
fn forward_events(reader: impl Read, sender: &mpsc::Sender<StreamItem>) -> Option<String> {
    let mut reader = BufReader::new(reader);
    let mut assembler = SseAssembler::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_FRAME_BYTES as u64 + 1)
            .read_until(b'\n', &mut line);
        match read {
            Ok(0) => return None,
            Ok(_) => {}
            Err(error) => return Some(format!("the event stream broke: {error}")),
        }
        if line.len() > MAX_FRAME_BYTES && line.last() != Some(&b'\n') {
            let _ = sender.blocking_send(StreamItem::TooLong);
            return Some("an event exceeded the frame limit".to_string());
        }
        let text = String::from_utf8_lossy(&line);
        if let Some(data) = assembler.push_line(text.trim_end_matches('\n')) {
            if data.len() > MAX_FRAME_BYTES {
                let _ = sender.blocking_send(StreamItem::TooLong);
                return Some("an event exceeded the frame limit".to_string());
            }
            if sender.blocking_send(StreamItem::Event(data)).is_err() {
                return None;
            }
        }
    }
}
