//! Bringing one service up: its port lease, adopting the process the lease recorded when it
//! is alive and healthy, or starting it and waiting for its health URL (contract §11).
//! A service that exits early or stays unhealthy past its `timeout_seconds` is stopped and
//! its lease released.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use nagi_store::access::PortLeaseRow;

use super::health::{HealthFailure, render_health_url, wait_until_healthy};
use super::panes::{ProjectPane, open_service_tab};
use super::ports::{lease_port, port_is_free, record_service_process, release_port_lease};
use super::process::{
    ServiceLaunch, log_tail, service_process_is_alive, spawn_service, stop_service_processes,
};
use super::setup::{FAILURE_EXCERPT_CHARS, describe_command, excerpt};
use super::{RecipeExecConfig, RunTarget, service_log_path};
use crate::engine::Engine;
use crate::errors::RecipeExecError;
use crate::recipe::ServiceRecipe;

/// A healthy service of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningService {
    pub service_id: String,
    pub port: u16,
    /// The variable that received the port.
    pub port_env: String,
    /// The rendered health URL that answered `2xx`.
    pub health_url: String,
    /// Leader of the service's process group.
    pub pid: u32,
    pub lease_id: String,
    pub log_path: PathBuf,
    /// The project-pane tab following the log, when one could be opened.
    pub pane_id: Option<String>,
    /// `true` when a process that was already running was kept.
    pub adopted: bool,
}

/// What provisioning (or recovery) brought up for a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProvisionedServices {
    /// The recipe transcript the project pane follows.
    pub transcript_path: PathBuf,
    /// The project workspace and its root pane, when opened.
    pub project_pane: Option<ProjectPane>,
    /// Whether `[setup]` ran (and succeeded).
    pub setup_ran: bool,
    /// By service id.
    pub services: Vec<RunningService>,
}

/// Shows a line in the progress callback and the transcript.
pub(super) type Say<'a> = &'a (dyn Fn(&str) + Send + Sync);

fn service_failed(service_id: &str, message: impl Into<String>) -> RecipeExecError {
    RecipeExecError::ServiceFailed {
        service_id: service_id.to_owned(),
        message: message.into(),
    }
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, RecipeExecError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| RecipeExecError::Io {
            detail: format!("a recipe task failed: {error}"),
        })
}

/// Ends whatever a lease's service left running (its recorded group and its marker).
pub(super) async fn stop_lease_processes(
    lease: &PortLeaseRow,
    grace: Duration,
) -> Result<usize, RecipeExecError> {
    let (pid, start_time, lease_id, service_id) = (
        lease.pid,
        lease.process_start_time,
        lease.lease_id.clone(),
        lease.service_id.clone(),
    );
    blocking(move || stop_service_processes(pid, start_time, &lease_id, grace))
        .await?
        .map_err(|detail| RecipeExecError::StopFailed { service_id, detail })
}

/// Stops a failed start and releases its lease (problems doing so are logged: the start's
/// own failure is what the caller reports).
async fn abandon(engine: &Engine, lease: &PortLeaseRow, grace: Duration) {
    if let Err(error) = stop_lease_processes(lease, grace).await {
        tracing::warn!(service = %lease.service_id, %error, "a failed service could not be stopped; its lease is kept");
        return;
    }
    if let Err(error) = release_port_lease(engine, &lease.lease_id).await {
        tracing::warn!(service = %lease.service_id, %error, "the port lease of a failed service could not be released");
    }
}

fn health_message(service: &ServiceRecipe, url: &str, failure: HealthFailure, log: &str) -> String {
    let mut message = match failure {
        HealthFailure::Exited(how) => format!(
            "`{}` {how} before {url} answered",
            describe_command(&service.command)
        ),
        HealthFailure::TimedOut {
            timeout,
            last_problem,
        } => {
            format!(
                "{url} did not answer with a 2xx status within {} s (last: {last_problem}); the service was stopped",
                timeout.as_secs()
            )
        }
    };
    let log = excerpt(log, FAILURE_EXCERPT_CHARS);
    if !log.is_empty() {
        message.push_str(&format!("; its log ends:\n{log}"));
    }
    message
}

/// Tries to keep the process a lease recorded: alive, ours, and healthy within the
/// service's timeout. `None` when it must be (re)started.
async fn try_adopt(
    lease: &PortLeaseRow,
    service: &ServiceRecipe,
    url: &str,
    say: Say<'_>,
) -> Result<Option<u32>, RecipeExecError> {
    let (Some(pid), Some(start_time)) = (lease.pid, lease.process_start_time) else {
        return Ok(None);
    };
    let lease_id = lease.lease_id.clone();
    if !service_process_is_alive(pid, start_time, &lease_id) {
        return Ok(None);
    }
    say(&format!(
        "service {}: process {pid} is still running on port {}; checking {url}",
        lease.service_id, lease.port
    ));
    let (url, timeout) = (
        url.to_owned(),
        Duration::from_secs(u64::from(service.timeout_seconds)),
    );
    let health = blocking(move || {
        let exited =
            || (!service_process_is_alive(pid, start_time, &lease_id)).then(|| "ended".to_owned());
        wait_until_healthy(&url, timeout, &exited)
    })
    .await?;
    match health {
        Ok(_) => Ok(Some(pid)),
        Err(failure) => {
            say(&format!(
                "service {}: the running process is not healthy ({failure}); restarting it",
                lease.service_id
            ));
            Ok(None)
        }
    }
}

/// Brings `service_id` up for the run: adopts its recorded process if it is alive and
/// healthy, otherwise (re)starts it on its leased port and waits for health.
pub(super) async fn ensure_service(
    engine: &Arc<Engine>,
    target: &RunTarget,
    service_id: &str,
    service: &ServiceRecipe,
    config: &RecipeExecConfig,
    project_pane: Option<&ProjectPane>,
    say: Say<'_>,
) -> Result<RunningService, RecipeExecError> {
    let mut lease = lease_port(engine, target, service_id, config.port_range, None).await?;
    let log_path = service_log_path(engine, target, service_id);
    let open_tab = |log_path: &PathBuf| {
        project_pane.and_then(|pane| match open_service_tab(engine, pane, target, service_id, log_path) {
            Ok(pane_id) => Some(pane_id),
            Err(error) => {
                say(&format!("service {service_id}: its log pane could not be opened ({error}); the log is {}", log_path.display()));
                None
            }
        })
    };
    let url = render_health_url(&service.health, lease.port)
        .map_err(|message| service_failed(service_id, message))?;
    if let Some(pid) = try_adopt(&lease, service, &url, say).await? {
        say(&format!(
            "service {service_id}: adopted process {pid}, healthy at {url}"
        ));
        let pane_id = open_tab(&log_path);
        return Ok(RunningService {
            service_id: service_id.to_owned(),
            port: lease.port,
            port_env: service.port_env.clone(),
            health_url: url,
            pid,
            lease_id: lease.lease_id.clone(),
            log_path,
            pane_id,
            adopted: true,
        });
    }
    // Whatever the lease's last start left behind goes first.
    if lease.pid.is_some() {
        stop_lease_processes(&lease, config.stop_grace).await?;
        record_service_process(engine, &lease.lease_id, None, None).await?;
    }
    if !port_is_free(lease.port) {
        say(&format!(
            "service {service_id}: port {} is in use by another program; leasing another port",
            lease.port
        ));
        release_port_lease(engine, &lease.lease_id).await?;
        lease = lease_port(engine, target, service_id, config.port_range, None).await?;
    }
    let url = render_health_url(&service.health, lease.port)
        .map_err(|message| service_failed(service_id, message))?;
    say(&format!(
        "service {service_id}: starting `{}` with {}={}",
        describe_command(&service.command),
        service.port_env,
        lease.port
    ));
    let (worktree, argv, port_env, port, lease_id, log) = (
        target.worktree.clone(),
        service.command.clone(),
        service.port_env.clone(),
        lease.port,
        lease.lease_id.clone(),
        log_path.clone(),
    );
    let started = blocking(move || {
        spawn_service(&ServiceLaunch {
            worktree: &worktree,
            argv: &argv,
            port_env: &port_env,
            port,
            lease_id: &lease_id,
            log_path: &log,
        })
    })
    .await?;
    let started = match started {
        Ok(started) => started,
        Err(message) => {
            abandon(engine, &lease, config.stop_grace).await;
            return Err(service_failed(
                service_id,
                format!("it could not start: {message}"),
            ));
        }
    };
    lease.pid = Some(started.pid);
    lease.process_start_time = Some(started.start_time);
    if let Err(error) = record_service_process(
        engine,
        &lease.lease_id,
        Some(started.pid),
        Some(started.start_time),
    )
    .await
    {
        abandon(engine, &lease, config.stop_grace).await;
        return Err(error);
    }
    say(&format!(
        "service {service_id}: started pid {}; waiting up to {} s for {url}",
        started.pid, service.timeout_seconds
    ));
    let pane_id = open_tab(&log_path);
    let (health_url, timeout, exit) = (
        url.clone(),
        Duration::from_secs(u64::from(service.timeout_seconds)),
        started.exit.clone(),
    );
    let health =
        blocking(move || wait_until_healthy(&health_url, timeout, &|| exit.exit_description()))
            .await?;
    match health {
        Ok(elapsed) => {
            say(&format!(
                "service {service_id}: healthy at {url} after {:.1} s (pid {})",
                elapsed.as_secs_f64(),
                started.pid
            ));
            Ok(RunningService {
                service_id: service_id.to_owned(),
                port: lease.port,
                port_env: service.port_env.clone(),
                health_url: url,
                pid: started.pid,
                lease_id: lease.lease_id.clone(),
                log_path,
                pane_id,
                adopted: false,
            })
        }
        Err(failure) => {
            abandon(engine, &lease, config.stop_grace).await;
            let message = health_message(service, &url, failure, &log_tail(&log_path, 8 * 1024));
            say(&format!("service {service_id}: {message}"));
            Err(service_failed(service_id, message))
        }
    }
}
