//! A service's health check: `GET` of the rendered `health` URL on loopback until it
//! answers with a `2xx` status (contract §11).
//!
//! The URL is checked again after rendering (scheme `http`, host `127.0.0.1` or
//! `localhost`, port equal to the lease), so a template that slipped past validation can
//! never make the server call elsewhere. The HTTP client (ureq) uses no proxy (a loopback
//! check must not leave the machine because `HTTP_PROXY` is set) and follows no redirect
//! (a `3xx` is not healthy). Blocking; call it from `spawn_blocking`.

use std::time::{Duration, Instant};

/// Longest wait for one health request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// Pause between health requests.
const POLL_INTERVAL: Duration = Duration::from_millis(150);

/// Replaces `{port}` and verifies the result names `port` on the loopback host.
pub fn render_health_url(template: &str, port: u16) -> Result<String, String> {
    let url = template.replacen("{port}", &port.to_string(), 1);
    let uri: ureq::http::Uri = url
        .parse()
        .map_err(|error| format!("health URL {url} is not a valid URL: {error}"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!("health URL {url} must use http"));
    }
    if !matches!(uri.host(), Some("127.0.0.1" | "localhost")) {
        return Err(format!("health URL {url} must name 127.0.0.1 or localhost"));
    }
    if uri.port_u16() != Some(port) {
        return Err(format!("health URL {url} must use the leased port {port}"));
    }
    Ok(url)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .proxy(None)
        .max_redirects(0)
        .http_status_as_error(false)
        .timeout_global(Some(REQUEST_TIMEOUT))
        .build()
        .new_agent()
}

/// One health request: `Ok(status)` for a `2xx` answer, `Err(what happened)` otherwise.
pub fn probe_once(url: &str) -> Result<u16, String> {
    probe_with(&agent(), url)
}

fn probe_with(agent: &ureq::Agent, url: &str) -> Result<u16, String> {
    match agent.get(url).call() {
        Ok(response) if response.status().is_success() => Ok(response.status().as_u16()),
        Ok(response) => Err(format!("{url} answered {}", response.status())),
        Err(error) => Err(format!("{url}: {error}")),
    }
}

/// Why a service did not become healthy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HealthFailure {
    /// The process ended first (how, in words).
    Exited(String),
    /// The deadline passed; the last answer or error.
    TimedOut {
        timeout: Duration,
        last_problem: String,
    },
}

/// Polls `url` until it answers `2xx` (returns how long that took), the process ends
/// (`exited` returns how), or `timeout` passes.
pub fn wait_until_healthy(
    url: &str,
    timeout: Duration,
    exited: &dyn Fn() -> Option<String>,
) -> Result<Duration, HealthFailure> {
    let agent = agent();
    let started = Instant::now();
    let deadline = started + timeout;
    loop {
        if let Some(how) = exited() {
            return Err(HealthFailure::Exited(how));
        }
        let last_problem = match probe_with(&agent, url) {
            Ok(_) => return Ok(started.elapsed()),
            Err(problem) => problem,
        };
        let now = Instant::now();
        if now >= deadline {
            // One last look: a process that died during the request is reported as such.
            if let Some(how) = exited() {
                return Err(HealthFailure::Exited(how));
            }
            return Err(HealthFailure::TimedOut {
                timeout,
                last_problem,
            });
        }
        std::thread::sleep(POLL_INTERVAL.min(deadline - now));
    }
}

impl std::fmt::Display for HealthFailure {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HealthFailure::Exited(how) => write!(formatter, "the process {how}"),
            HealthFailure::TimedOut {
                timeout,
                last_problem,
            } => {
                write!(
                    formatter,
                    "no 2xx answer within {} s (last: {last_problem})",
                    timeout.as_secs()
                )
            }
        }
    }
}
