//! The fleet worker: its own thread with a current-thread runtime (the SDK's worker future
//! is not `Send`), two workers on one client (`nagi-fleet` workflows, `nagi-host-<name>`
//! activities), started and stopped with the server (`ServerAttachment`).
//!
//! [`FleetWorker::connect`] reaches the Temporal service before the server writes anything:
//! an unreachable service fails the server's start with the reason.

use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use nagi_engine::daemon::ServerAttachment;
use nagi_engine::engine::Engine;
use temporalio_client::Client;
use temporalio_sdk::{Runtime, Worker, WorkerOptions};
use tokio::sync::oneshot;

use crate::activities::HostActivities;
use crate::connect::{FleetOptions, connect};
use crate::lifecycle::MissionLifecycle;
use crate::router::Router;

/// How long a stop waits for the workers before it leaves their thread behind.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an activity in flight may take to see the stop before it is cancelled.
const GRACEFUL_SHUTDOWN: Duration = Duration::from_secs(2);

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
    stop: Option<oneshot::Sender<()>>,
    done: Option<mpsc::Receiver<Result<(), String>>>,
    thread: Option<JoinHandle<()>>,
}

impl FleetWorker {
    /// Starts the worker's thread and connects to the Temporal service; the workers poll
    /// only once [`ServerAttachment::start`] hands them the engine.
    pub fn connect(options: FleetOptions) -> Result<FleetWorker, String> {
        let (ready_tx, ready_rx) = mpsc::channel::<Result<Client, String>>();
        let (command_tx, command_rx) = oneshot::channel::<Command>();
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
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
    stop: oneshot::Receiver<()>,
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
        let client = match connect(&options).await {
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
        let workflows = WorkerOptions::new(crate::FLEET_QUEUE)
            .register_workflow::<MissionLifecycle>()
            .map_err(|error| format!("cannot register the mission workflow: {error}"))?
            .graceful_shutdown_period(GRACEFUL_SHUTDOWN)
            .build();
        let activities = WorkerOptions::new(crate::host_queue(&options.host))
            .register_activities(HostActivities::new(
                engine,
                server,
                crate::lifecycle::reporter(client.clone()),
            ))
            .graceful_shutdown_period(GRACEFUL_SHUTDOWN)
            .build();
        let mut workflow_worker = Worker::new(&sdk_runtime, client.clone(), workflows)
            .map_err(|error| format!("cannot start the fleet workflow worker: {error}"))?;
        let mut activity_worker = Worker::new(&sdk_runtime, client, activities)
            .map_err(|error| format!("cannot start the host's activity worker: {error}"))?;
        let stop_workflows = workflow_worker.shutdown_handle();
        let stop_activities = activity_worker.shutdown_handle();
        let stopper = async move {
            let _ = stop.await;
            stop_workflows();
            stop_activities();
        };
        let workers = async {
            let outcome = tokio::try_join!(workflow_worker.run(), activity_worker.run());
            if let Err(error) = &outcome {
                // Logged at once: the thread itself ends only with the server's stop.
                tracing::error!(%error, "the fleet worker failed; this host serves no fleet work");
            }
            outcome
        };
        tracing::info!(queue = %crate::host_queue(&options.host), "the fleet worker is polling");
        let (outcome, ()) = tokio::join!(workers, stopper);
        outcome
            .map(|_| ())
            .map_err(|error| format!("the fleet worker failed: {error}"))
    })
}

impl ServerAttachment for FleetWorker {
    fn start(&mut self, engine: Arc<Engine>) -> Result<(), String> {
        let server = tokio::runtime::Handle::try_current()
            .map_err(|_| "the fleet worker starts from the server's runtime".to_string())?;
        let router = Router::new(
            self.client.clone(),
            self.options.host.clone(),
            self.options.host_gone_after_seconds,
        );
        if engine.fleet.set(Arc::new(router)).is_err() {
            return Err("fleet mode was set up twice".into());
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
            let _ = stop.send(());
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
