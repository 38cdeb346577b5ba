//! The record of every request the mock received, kept in memory and (optionally) as one JSON
//! file per request in a log directory, so tests can assert what a CLI sent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::conversation::{ConversationDigest, ModelApi, ToolResult};

/// How the mock classified a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// A model call that offers tools: answered with a scenario step.
    Main,
    /// A model call without tools (a title or quota call): answered with the scenario title.
    Auxiliary,
    /// A helper endpoint (`/health`, `count_tokens`, model lists).
    Service,
    /// Anything else: answered with 404.
    Unknown,
}

/// One received request, as logged. Files in the log directory are named
/// `<sequence, 4 digits>-<route>.json` and hold exactly this structure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoggedRequest {
    pub sequence: u64,
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub query: Option<String>,
    /// Header names lower-cased.
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub api: Option<ModelApi>,
    pub kind: RequestKind,
    /// The scenario step that answered it (main requests only; absent when exhausted).
    #[serde(default)]
    pub step: Option<usize>,
    pub status: u16,
    /// The body as JSON when it parses, else as a string.
    pub body: Value,
}

impl LoggedRequest {
    /// The conversation the request carried (empty for non-model requests).
    pub fn digest(&self) -> ConversationDigest {
        match self.api {
            Some(api) => ConversationDigest::read(api, &self.body),
            None => ConversationDigest::default(),
        }
    }

    /// Tool results the request carried back to the model.
    pub fn tool_results(&self) -> Vec<ToolResult> {
        self.digest().tool_results
    }

    /// User-role texts in the request (prompts, plus whatever context the CLI injects as user
    /// messages).
    pub fn user_texts(&self) -> Vec<String> {
        self.digest().user_texts
    }

    /// The whole body as one string, for "does it mention X anywhere" assertions.
    pub fn body_text(&self) -> String {
        self.body.to_string()
    }

    fn file_name(&self) -> String {
        let route = match (self.api, self.kind) {
            (Some(ModelApi::Responses), _) => "responses",
            (Some(ModelApi::Messages), _) => "messages",
            (Some(ModelApi::ChatCompletions), _) => "chat-completions",
            (None, RequestKind::Service) => "service",
            (None, _) => "unknown",
        };
        format!("{:04}-{route}.json", self.sequence)
    }
}

/// Why the request log could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum RequestLogError {
    #[error("cannot write request log file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read request log directory {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("request log file {path} is not a logged request: {source}")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
}

/// Writes one request into the log directory. The file is written under a temporary name and
/// renamed, so a reader never sees half a file.
pub fn write_logged_request(
    log_dir: &Path,
    request: &LoggedRequest,
) -> Result<(), RequestLogError> {
    let path = log_dir.join(request.file_name());
    let temporary_path = log_dir.join(format!(".{}.tmp", request.file_name()));
    let text = serde_json::to_string_pretty(request).expect("a logged request always serialises");
    std::fs::write(&temporary_path, text)
        .and_then(|()| std::fs::rename(&temporary_path, &path))
        .map_err(|source| RequestLogError::Write { path, source })
}

/// Reads every logged request in a log directory, in arrival order.
pub fn read_request_log(log_dir: &Path) -> Result<Vec<LoggedRequest>, RequestLogError> {
    let entries = std::fs::read_dir(log_dir).map_err(|source| RequestLogError::Read {
        path: log_dir.to_owned(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|extension| extension == "json")
                && !path
                    .file_name()
                    .is_some_and(|name| name.to_string_lossy().starts_with('.'))
        })
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).map_err(|source| RequestLogError::Read {
                path: path.clone(),
                source,
            })?;
            serde_json::from_str(&text).map_err(|source| RequestLogError::Parse { path, source })
        })
        .collect()
}
