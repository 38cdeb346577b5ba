//! The fleet worker: its own thread with a current-thread runtime (the SDK's worker future
//! is not `Send`), two workers on one client (`nagi-fleet` workflows, `nagi-host-<name>`
//! activities), started and stopped with the server (`ServerAttachment`).
//!
//! [`FleetWorker::connect`] reaches the Temporal service before the server writes anything:
//! an unreachable service fails the server's start with the reason. Once started, the
//! workers outlive the service going away: the SDK retries their polls while it is
//! unreachable, and workers that fail anyway (a poll refused for good after a long outage,
//! a workflow task that breaks the worker) are built again on a new connection, with a
//! growing wait, until the server stops.

use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nagi_engine::daemon::ServerAttachment;
use nagi_engine::engine::Engine;
use temporalio_client::Client;
use temporalio_sdk::{Runtime, Worker, WorkerOptions};
use tokio::sync::{oneshot, watch};

use crate::activities::HostActivities;
use crate::connect::{FleetOptions, connect};
use crate::lifecycle::MissionLifecycle;
use crate::router::Router;

/// How long a stop waits for the workers before it leaves their thread behind.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an activity in flight may take to see the stop before it is cancelled.
const GRACEFUL_SHUTDOWN: Duration = Duration::from_secs(2);
/// How long a workflow's task or query waits for the worker the workflow is bound to (its
/// sticky queue) before any worker of the fleet may take it. The SDK's 10 s made the first
/// `mission.get` of a SIGKILLed host's mission, from any other host, wait 10 s; a live
/// worker takes its tasks within milliseconds, and a task moved on is only replayed
/// elsewhere.
const STICKY_QUEUE_TIMEOUT: Duration = Duration::from_secs(1);
/// The wait before workers that failed are built again, doubled at each failure in a row up
/// to [`MAX_RESTART_DELAY`]; workers that ran for [`HEALTHY_RUN`] start the count over.
const FIRST_RESTART_DELAY: Duration = Duration::from_secs(1);
const MAX_RESTART_DELAY: Duration = Duration::from_secs(30);
const HEALTHY_RUN: Duration = Duration::from_secs(60);

/// What the worker thread waits for once it is connected.
enum Command {
    Start {
        engine: Arc<Engine>,
        server: tokio::runtime::Handle,
    },
    Stop,
}

pub struct FleetWorker {
    options: FleetOptions,
    client: Client,
    commands: Option<oneshot::Sender<Command>>,
    stop: Option<watch::Sender<bool>>,
    done: Option<mpsc::Receiver<Result<(), String>>>,
    thread: Option<JoinHandle<()>>,
}

impl FleetWorker {
    /// Starts the worker's thread and connects to the Temporal service; the workers poll
    /// only once [`ServerAttachment::start`] hands them the engine.
    pub fn connect(options: FleetOptions) -> Result<FleetWorker, String> {
        let (ready_tx, ready_rx) = mpsc::channel::<Result<Client, String>>();
        let (command_tx, command_rx) = oneshot::channel::<Command>();
        let (stop_tx, stop_rx) = watch::channel(false);
        let (done_tx, done_rx) = mpsc::channel::<Result<(), String>>();
        let thread_options = options.clone();
        let thread = std::thread::Builder::new()
            .name("nagi-fleet".into())
            .spawn(move || {
                let outcome = run_thread(thread_options, ready_tx, command_rx, stop_rx);
                if let Err(message) = &outcome {
                    tracing::error!(%message, "the fleet worker stopped");
                }
                let _ = done_tx.send(outcome);
            })
            .map_err(|error| format!("cannot start the fleet worker's thread: {error}"))?;
        let client = match ready_rx.recv() {
            Ok(Ok(client)) => client,
            Ok(Err(message)) => {
                let _ = thread.join();
                return Err(message);
            }
            Err(_) => {
                let _ = thread.join();
                return Err("the fleet worker's thread ended before it connected".into());
            }
        };
        tracing::info!(address = %options.address, namespace = %options.namespace, host = %options.host, "connected to the fleet's Temporal service");
        Ok(FleetWorker {
            options,
            client,
            commands: Some(command_tx),
            stop: Some(stop_tx),
            done: Some(done_rx),
            thread: Some(thread),
        })
    }
}

fn run_thread(
    options: FleetOptions,
    ready: mpsc::Sender<Result<Client, String>>,
    commands: oneshot::Receiver<Command>,
    mut stop: watch::Receiver<bool>,
) -> Result<(), String> {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let message = format!("cannot start the fleet worker's runtime: {error}");
            let _ = ready.send(Err(message.clone()));
            return Err(message);
        }
    };
    runtime.block_on(async move {
        let mut client = match connect(&options).await {
            Ok(client) => client,
            Err(message) => {
                let _ = ready.send(Err(message.clone()));
                return Err(message);
            }
        };
        let _ = ready.send(Ok(client.clone()));
        let (engine, server) = match commands.await {
            Ok(Command::Start { engine, server }) => (engine, server),
            Ok(Command::Stop) | Err(_) => return Ok(()),
        };
        let sdk_runtime = Runtime::from_current_tokio(Default::default())
            .map_err(|error| format!("cannot start the Temporal runtime: {error}"))?;
        let host = Host {
            options: &options,
            sdk_runtime: &sdk_runtime,
            engine: &engine,
            server: &server,
        };
        let mut delay = FIRST_RESTART_DELAY;
        loop {
            let started = Instant::now();
            let message = match host.run_workers(client, &mut stop).await {
                Generation::Stopped => return Ok(()),
                Generation::Failed(message) => message,
            };
            if started.elapsed() >= HEALTHY_RUN {
                delay = FIRST_RESTART_DELAY;
            }
            tracing::error!(
                %message,
                retry_in_ms = delay.as_millis() as u64,
                "the fleet worker failed; it starts again on a new connection"
            );
            // A new connection: the SDK refuses a second worker of a queue on the client
            // the failed one was registered on.
            client = loop {
                if stopped_within(&mut stop, delay).await {
                    return Ok(());
                }
                delay = (delay * 2).min(MAX_RESTART_DELAY);
                match connect(&options).await {
                    Ok(client) => break client,
                    Err(message) => tracing::warn!(
                        %message,
                        retry_in_ms = delay.as_millis() as u64,
                        "the fleet worker cannot reach the Temporal service yet"
                    ),
                }
            };
        }
    })
}

/// How one generation of the workers ended.
enum Generation {
    /// The server asked them to stop.
    Stopped,
    /// They failed (or ended unasked): the thread builds new ones.
    Failed(String),
}

/// What every generation of this host's workers is built from.
struct Host<'a> {
    options: &'a FleetOptions,
    sdk_runtime: &'a Runtime,
    engine: &'a Arc<Engine>,
    server: &'a tokio::runtime::Handle,
}

impl Host<'_> {
    fn build_workers(&self, client: Client) -> Result<(Worker, Worker), String> {
        let workflows = WorkerOptions::new(crate::FLEET_QUEUE)
            .register_workflow::<MissionLifecycle>()
            .map_err(|error| format!("cannot register the mission workflow: {error}"))?
            .graceful_shutdown_period(GRACEFUL_SHUTDOWN)
            .sticky_queue_schedule_to_start_timeout(STICKY_QUEUE_TIMEOUT)
            .build();
        let activities = WorkerOptions::new(crate::host_queue(&self.options.host))
            .register_activities(HostActivities::new(
                self.engine.clone(),
                self.server.clone(),
                crate::lifecycle::reporter(client.clone()),
            ))
            .graceful_shutdown_period(GRACEFUL_SHUTDOWN)
            .build();
        let workflow_worker = Worker::new(self.sdk_runtime, client.clone(), workflows)
            .map_err(|error| format!("cannot start the fleet workflow worker: {error}"))?;
        let activity_worker = Worker::new(self.sdk_runtime, client, activities)
            .map_err(|error| format!("cannot start the host's activity worker: {error}"))?;
        Ok((workflow_worker, activity_worker))
    }

    /// Runs both workers until the server stops them, or one of them fails (then the other
    /// is shut down too, and the failure is the answer).
    async fn run_workers(&self, client: Client, stop: &mut watch::Receiver<bool>) -> Generation {
        let (mut workflow_worker, mut activity_worker) = match self.build_workers(client) {
            Ok(workers) => workers,
            Err(message) => return Generation::Failed(message),
        };
        let stop_workflows = workflow_worker.shutdown_handle();
        let stop_activities = activity_worker.shutdown_handle();
        let stop_both = move || {
            stop_workflows();
            stop_activities();
        };
        let workflows = async {
            let outcome = workflow_worker.run().await;
            if outcome.is_err() {
                stop_both();
            }
            outcome
        };
        let activities = async {
            let outcome = activity_worker.run().await;
            if outcome.is_err() {
                stop_both();
            }
            outcome
        };
        let workers = async { tokio::join!(workflows, activities) };
        tokio::pin!(workers);
        tracing::info!(queue = %crate::host_queue(&self.options.host), "the fleet worker is polling");
        let (workflows, activities) = tokio::select! {
            outcomes = &mut workers => outcomes,
            () = stopped(stop) => {
                stop_both();
                workers.await
            }
        };
        let failures: Vec<String> = [("workflow", workflows), ("activity", activities)]
            .into_iter()
            .filter_map(|(which, outcome)| {
                outcome
                    .err()
                    .map(|error| format!("the {which} worker failed: {error}"))
            })
            .collect();
        if *stop.borrow() {
            for failure in &failures {
                tracing::warn!(%failure, "the fleet worker failed while it stopped");
            }
            return Generation::Stopped;
        }
        if failures.is_empty() {
            return Generation::Failed("the workers ended without being asked to".into());
        }
        Generation::Failed(failures.join("; "))
    }
}

/// Resolves once the server asks the worker to stop (or the worker's handle is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stop| *stop).await;
}

/// Waits `delay`; true if the server asked the worker to stop meanwhile.
async fn stopped_within(stop: &mut watch::Receiver<bool>, delay: Duration) -> bool {
    tokio::select! {
        () = stopped(stop) => true,
        () = tokio::time::sleep(delay) => *stop.borrow(),
    }
}

impl ServerAttachment for FleetWorker {
    fn before_recovery(&mut self, engine: &Arc<Engine>) -> Result<(), String> {
        let router = Router::new(
            self.client.clone(),
            self.options.host.clone(),
            self.options.host_gone_after_seconds,
        );
        if engine.fleet.set(Arc::new(router)).is_err() {
            return Err("fleet mode was set up twice".into());
        }
        Ok(())
    }

    fn start(&mut self, engine: Arc<Engine>) -> Result<(), String> {
        let server = tokio::runtime::Handle::try_current()
            .map_err(|_| "the fleet worker starts from the server's runtime".to_string())?;
        if engine.fleet.get().is_none() {
            self.before_recovery(&engine)?;
        }
        let commands = self
            .commands
            .take()
            .ok_or_else(|| "the fleet worker was started twice".to_string())?;
        commands
            .send(Command::Start { engine, server })
            .map_err(|_| "the fleet worker's thread has ended".to_string())
    }

    fn stop(&mut self) {
        if let Some(commands) = self.commands.take() {
            let _ = commands.send(Command::Stop);
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        let Some(thread) = self.thread.take() else {
            return;
        };
        let finished = self.done.take().map(|done| done.recv_timeout(STOP_TIMEOUT));
        match finished {
            Some(Err(mpsc::RecvTimeoutError::Timeout)) => {
                tracing::warn!(
                    "the fleet worker did not stop within {} s; leaving it",
                    STOP_TIMEOUT.as_secs()
                );
            }
            _ => {
                let _ = thread.join();
                tracing::info!("the fleet worker stopped");
            }
        }
    }
}

impl Drop for FleetWorker {
    fn drop(&mut self) {
        self.stop();
    }
}
