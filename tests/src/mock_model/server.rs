//! The HTTP side of the mock model: a `tiny_http` server on 127.0.0.1 that routes each request
//! to its model API, answers from the scenario, and logs it.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

use super::conversation::{ConversationDigest, ModelApi};
use super::position::next_step_index;
use super::replies::{Answer, Reply, build_reply};
use super::request_log::{LoggedRequest, RequestKind, RequestLogError, write_logged_request};
use super::scenario::Scenario;

/// How to run the mock.
#[derive(Debug, Clone)]
pub struct MockModelConfig {
    pub scenario: Scenario,
    /// Where to write one JSON file per request; `None` keeps the log in memory only.
    pub log_dir: Option<PathBuf>,
    /// Port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
}

/// Why the mock could not start.
#[derive(Debug, thiserror::Error)]
pub enum MockModelError {
    #[error("cannot listen on 127.0.0.1:{port}: {message}")]
    Bind { port: u16, message: String },
    #[error("cannot create request log directory {path}: {source}")]
    LogDir {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// State shared by the request threads.
struct Shared {
    scenario: Scenario,
    log_dir: Option<PathBuf>,
    requests: Mutex<Vec<LoggedRequest>>,
    next_sequence: AtomicU64,
    /// When each scenario step's reply started to go out (its first streamed token), in
    /// the order they went.
    replies_sent: Mutex<Vec<(usize, std::time::Instant)>>,
}

/// A running mock model server. Dropping it stops accepting requests.
pub struct MockModelServer {
    address: SocketAddr,
    server: Arc<tiny_http::Server>,
    shared: Arc<Shared>,
    accept_thread: Option<JoinHandle<()>>,
}

impl MockModelServer {
    /// Binds 127.0.0.1 and starts serving on a background thread.
    pub fn start(config: MockModelConfig) -> Result<MockModelServer, MockModelError> {
        if let Some(log_dir) = &config.log_dir {
            std::fs::create_dir_all(log_dir).map_err(|source| MockModelError::LogDir {
                path: log_dir.clone(),
                source,
            })?;
        }
        let server = tiny_http::Server::http(("127.0.0.1", config.port)).map_err(|error| {
            MockModelError::Bind {
                port: config.port,
                message: error.to_string(),
            }
        })?;
        let address = server
            .server_addr()
            .to_ip()
            .expect("a server bound to 127.0.0.1 has an IP address");
        let server = Arc::new(server);
        let shared = Arc::new(Shared {
            scenario: config.scenario,
            log_dir: config.log_dir,
            requests: Mutex::new(Vec::new()),
            next_sequence: AtomicU64::new(1),
            replies_sent: Mutex::new(Vec::new()),
        });
        let accept_thread = {
            let server = Arc::clone(&server);
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("mock-model-accept".into())
                .spawn(move || {
                    for request in server.incoming_requests() {
                        let shared = Arc::clone(&shared);
                        // One thread per request: a step may be delayed, and CLIs open several
                        // connections at once.
                        std::thread::spawn(move || handle_request(&shared, request));
                    }
                })
                .expect("spawning the accept thread")
        };
        Ok(MockModelServer {
            address,
            server,
            shared,
            accept_thread: Some(accept_thread),
        })
    }

    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// `http://127.0.0.1:<port>` (no trailing slash, no `/v1`).
    /// When each answered scenario step's reply started to go out: (step index, instant).
    pub fn replies_sent(&self) -> Vec<(usize, std::time::Instant)> {
        self.shared
            .replies_sent
            .lock()
            .expect("reply log lock")
            .clone()
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.address.port())
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<LoggedRequest> {
        let mut requests = self
            .shared
            .requests
            .lock()
            .expect("request log lock")
            .clone();
        requests.sort_by_key(|request| request.sequence);
        requests
    }

    /// Model requests answered with a scenario step (not title calls or health checks).
    pub fn main_requests(&self) -> Vec<LoggedRequest> {
        self.requests()
            .into_iter()
            .filter(|request| request.kind == RequestKind::Main)
            .collect()
    }

    /// Blocks until the server stops (used by the binary, which runs until killed).
    pub fn wait(mut self) {
        if let Some(thread) = self.accept_thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for MockModelServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.accept_thread.take() {
            let _ = thread.join();
        }
    }
}

fn route(method: &str, path: &str) -> (Option<ModelApi>, RequestKind) {
    match (method, path) {
        ("POST", "/v1/responses" | "/responses") => (Some(ModelApi::Responses), RequestKind::Main),
        ("POST", "/v1/messages" | "/messages") => (Some(ModelApi::Messages), RequestKind::Main),
        ("POST", "/v1/chat/completions" | "/chat/completions") => {
            (Some(ModelApi::ChatCompletions), RequestKind::Main)
        }
        ("GET", "/health")
        | ("POST", "/v1/messages/count_tokens")
        | ("GET", "/v1/models" | "/models") => (None, RequestKind::Service),
        _ => (None, RequestKind::Unknown),
    }
}

fn service_reply(path: &str) -> Reply {
    let body = match path {
        "/health" => json!({"status": "ok"}),
        "/v1/messages/count_tokens" => json!({"input_tokens": 10}),
        _ => json!({"object": "list", "data": []}),
    };
    Reply {
        status: 200,
        content_type: "application/json",
        body: body.to_string().into_bytes(),
    }
}

fn handle_request(shared: &Shared, mut request: tiny_http::Request) {
    let sequence = shared.next_sequence.fetch_add(1, Ordering::SeqCst);
    let method = request.method().as_str().to_owned();
    let url = request.url().to_owned();
    let (path, query) = match url.split_once('?') {
        Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
        None => (url.clone(), None),
    };
    let headers: BTreeMap<String, String> = request
        .headers()
        .iter()
        .map(|header| {
            (
                header.field.as_str().as_str().to_ascii_lowercase(),
                header.value.as_str().to_owned(),
            )
        })
        .collect();
    let mut raw_body = Vec::new();
    let body: Value = match request.as_reader().read_to_end(&mut raw_body) {
        Ok(_) => serde_json::from_slice(&raw_body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&raw_body).into_owned())),
        Err(error) => Value::String(format!("<body unreadable: {error}>")),
    };

    let (api, mut kind) = route(&method, &path);
    let mut step_index = None;
    let mut delay = Duration::ZERO;
    let reply = match api {
        Some(api) => {
            let digest = ConversationDigest::read(api, &body);
            let answer = if digest.tool_names.is_empty() {
                kind = RequestKind::Auxiliary;
                Answer::Auxiliary {
                    text: &shared.scenario.title,
                }
            } else {
                match next_step_index(&shared.scenario, &digest) {
                    Some(index) => {
                        let step = &shared.scenario.steps[index];
                        step_index = Some(index);
                        delay = Duration::from_millis(step.delay_ms);
                        Answer::Step { index, step }
                    }
                    None => Answer::Exhausted,
                }
            };
            build_reply(api, &shared.scenario, answer, &digest, &body, sequence)
        }
        None if kind == RequestKind::Service => service_reply(&path),
        None => Reply {
            status: 404,
            content_type: "application/json",
            body:
                json!({"error": {"message": format!("mock model: no route for {method} {path}")}})
                    .to_string()
                    .into_bytes(),
        },
    };

    let logged = LoggedRequest {
        sequence,
        method,
        path,
        query,
        headers,
        api,
        kind,
        step: step_index,
        status: reply.status,
        body,
    };
    if let Some(log_dir) = &shared.log_dir
        && let Err(error) = write_logged_request(log_dir, &logged)
    {
        report_log_failure(&error);
    }
    shared
        .requests
        .lock()
        .expect("request log lock")
        .push(logged);

    if !delay.is_zero() {
        std::thread::sleep(delay);
    }
    let content_type = tiny_http::Header::from_bytes("Content-Type", reply.content_type)
        .expect("static content type is a valid header");
    if let Some(index) = step_index {
        shared
            .replies_sent
            .lock()
            .expect("reply log lock")
            .push((index, std::time::Instant::now()));
    }
    let response = tiny_http::Response::from_data(reply.body)
        .with_status_code(reply.status)
        .with_header(content_type);
    // The client may have gone away (an interrupted turn); nothing to do about it then.
    let _ = request.respond(response);
}

fn report_log_failure(error: &RequestLogError) {
    eprintln!("mock model: {error}");
}
