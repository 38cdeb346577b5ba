//! The engine's `FleetRouter`: what a host asks of the fleet, through the Temporal client.
//!
//! `mission.list` is a list of the `MissionLifecycle` workflows plus one `state` query per
//! mission, rather than a custom search attribute: it needs no namespace setup (a search
//! attribute must be registered on the service first), and the query answers the latest
//! status the pinned host reported, which visibility records would not carry. Its cost is
//! one query per mission; a fleet with many missions wants a search attribute later.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use nagi_engine::errors::EngineError;
use nagi_engine::fleet::{FleetFuture, FleetMission, FleetRouter};
use nagi_schema::codes::ErrorCode;
use nagi_schema::fleet::{RelocationRequest, RoutedAnswer, RoutedRequest};
use nagi_schema::mission::{MissionCreateParams, MissionStatus, MissionSummary, MissionViewV1};
use temporalio_client::errors::{WorkflowQueryError, WorkflowStartError, WorkflowUpdateError};
use temporalio_client::grpc::WorkflowService;
use temporalio_client::tonic::{self, IntoRequest};
use temporalio_client::{
    Client, NamespacedClient, WorkflowExecuteUpdateOptions, WorkflowExecutionStatus,
    WorkflowListOptions, WorkflowQueryOptions, WorkflowStartOptions,
};
use temporalio_common::protos::temporal::api::common::v1::WorkflowExecution;
use temporalio_common::protos::temporal::api::workflowservice::v1::ResetStickyTaskQueueRequest;

use crate::lifecycle::{
    HOST_PICKUP_TIMEOUT, LifecycleInput, LifecycleState, MissionLifecycle, Phase,
};

/// How often a create looks whether its host has answered.
const CREATE_POLL: Duration = Duration::from_millis(50);

/// How many missions' workflows `mission.list` asks for their state at once: one query
/// after another made a fleet's list take one round trip to Temporal per mission.
const STATE_QUERIES_AT_ONCE: usize = 16;

pub struct Router {
    client: Client,
    host: String,
    /// `[fleet] host_gone_after_seconds`, which this host gives the missions it creates.
    host_gone_after_seconds: u64,
}

impl Router {
    pub fn new(client: Client, host: String, host_gone_after_seconds: u64) -> Self {
        Router {
            client,
            host,
            host_gone_after_seconds,
        }
    }

    async fn state(&self, mission_id: &str) -> Result<Option<LifecycleState>, EngineError> {
        let handle = self
            .client
            .get_workflow_handle::<MissionLifecycle>(mission_id.to_string());
        match handle
            .query(MissionLifecycle::state, (), WorkflowQueryOptions::default())
            .await
        {
            Ok(state) => Ok(Some(state)),
            Err(WorkflowQueryError::NotFound(_)) => Ok(None),
            Err(error) => Err(unavailable(format!(
                "cannot read mission {mission_id}'s workflow: {error}"
            ))),
        }
    }

    /// Unbinds the mission's workflow from the worker that last ran it (Temporal's sticky
    /// queue), so that its next query or task goes to the shared queue. A query of a
    /// workflow bound to a worker that is gone (this host's previous process) otherwise
    /// waits out the sticky queue's timeout before any other worker may answer.
    async fn forget_sticky_worker(&self, mission_id: &str) {
        let request = ResetStickyTaskQueueRequest {
            namespace: self.client.namespace(),
            execution: Some(WorkflowExecution {
                workflow_id: mission_id.to_string(),
                run_id: String::new(),
            }),
        };
        let mut client = self.client.clone();
        if let Err(status) =
            WorkflowService::reset_sticky_task_queue(&mut client, request.into_request()).await
            && status.code() != tonic::Code::NotFound
        {
            tracing::debug!(%mission_id, %status, "cannot unbind the mission's workflow from its last worker");
        }
    }

    async fn create_mission(
        &self,
        params: MissionCreateParams,
        host: String,
    ) -> Result<(MissionViewV1, bool), EngineError> {
        let mission_id = params.mission_id.clone();
        let input = LifecycleInput {
            mission_id: mission_id.clone(),
            host: host.clone(),
            create: params.clone(),
            host_gone_after_seconds: self.host_gone_after_seconds,
        };
        let options = WorkflowStartOptions::new(crate::FLEET_QUEUE, mission_id.clone()).build();
        let fresh = match self
            .client
            .start_workflow(MissionLifecycle::run, input, options)
            .await
        {
            Ok(_) => true,
            Err(WorkflowStartError::AlreadyStarted { .. }) => false,
            Err(error) => {
                return Err(unavailable(format!(
                    "cannot start mission {mission_id}'s workflow: {error}; nothing was created"
                )));
            }
        };
        let deadline = Instant::now() + HOST_PICKUP_TIMEOUT + Duration::from_secs(10);
        loop {
            let Some(state) = self.state(&mission_id).await? else {
                return Err(unavailable(format!(
                    "mission {mission_id}'s workflow vanished while it was created"
                )));
            };
            if !fresh && (state.host != host || state.create != params) {
                return Err(EngineError::Fleet {
                    code: ErrorCode::MissionConflict,
                    message: format!(
                        "mission {mission_id} already exists on host {} with a different host, \
                         title, repository, objective or criteria",
                        state.host
                    ),
                });
            }
            match state.phase {
                Phase::Creating if Instant::now() < deadline => {
                    tokio::time::sleep(CREATE_POLL).await;
                }
                Phase::Creating => {
                    return Err(EngineError::Timeout(format!(
                        "host {host} has not created mission {mission_id} yet; its workflow \
                         goes on, and mission.get answers once it has"
                    )));
                }
                Phase::Created | Phase::Ended | Phase::HostGone => {
                    let view = state.view.or(state.created_view).ok_or_else(|| {
                        unavailable(format!("mission {mission_id}'s workflow holds no view"))
                    })?;
                    return Ok((view, fresh && state.created));
                }
                Phase::Refused | Phase::Blocked => {
                    let error = state
                        .error
                        .unwrap_or_else(|| crate::lifecycle::LifecycleError {
                            code: ErrorCode::ServerUnavailable.as_str().into(),
                            message: format!("host {host} did not create mission {mission_id}"),
                        });
                    let code =
                        ErrorCode::from_wire(&error.code).unwrap_or(ErrorCode::MissionRuntimeError);
                    return Err(EngineError::Fleet {
                        code,
                        message: format!("host {host}: {}", error.message),
                    });
                }
            }
        }
    }

    async fn act_on_mission(
        &self,
        mission_id: String,
        request: RoutedRequest,
    ) -> Result<RoutedAnswer, EngineError> {
        let method = request.method.clone();
        let handle = self
            .client
            .get_workflow_handle::<MissionLifecycle>(mission_id.clone());
        match handle
            .execute_update(
                MissionLifecycle::act,
                request,
                WorkflowExecuteUpdateOptions::default(),
            )
            .await
        {
            Ok(answer) => Ok(answer),
            Err(error) => Err(update_failed(&mission_id, &method, error)),
        }
    }

    async fn relocate_mission(
        &self,
        mission_id: String,
        request: RelocationRequest,
    ) -> Result<RoutedAnswer, EngineError> {
        let method = if request.artifact_sha256.is_some() {
            "mission.handoff.start"
        } else {
            "mission.handoff.preview"
        };
        let handle = self
            .client
            .get_workflow_handle::<MissionLifecycle>(mission_id.clone());
        match handle
            .execute_update(
                MissionLifecycle::relocate,
                request,
                WorkflowExecuteUpdateOptions::default(),
            )
            .await
        {
            Ok(answer) => Ok(answer),
            Err(error) => Err(update_failed(&mission_id, method, error)),
        }
    }

    async fn list_missions(&self) -> Result<Vec<MissionSummary>, EngineError> {
        let mut executions = self.client.list_workflows(
            "WorkflowType = 'MissionLifecycle'",
            WorkflowListOptions::default(),
        );
        // One entry per mission: a running workflow wins over closed runs of the same id.
        let mut ids: BTreeMap<String, bool> = BTreeMap::new();
        while let Some(execution) = executions.next().await {
            let execution = execution.map_err(|error| {
                unavailable(format!("cannot list the fleet's missions: {error}"))
            })?;
            let running = execution.status() == WorkflowExecutionStatus::Running;
            let entry = ids.entry(execution.id().to_string()).or_insert(running);
            *entry |= running;
        }
        // The queries go out together, a bounded number at a time, and their answers are
        // kept in the order of the ids.
        let states: Vec<Option<LifecycleState>> = futures::stream::iter(ids.into_keys())
            .map(|mission_id| async move { self.state(&mission_id).await })
            .buffered(STATE_QUERIES_AT_ONCE)
            .try_collect()
            .await?;
        Ok(states.iter().flatten().filter_map(summary_of).collect())
    }

    async fn get_mission(&self, mission_id: String) -> Result<Option<FleetMission>, EngineError> {
        let Some(state) = self.state(&mission_id).await? else {
            return Ok(None);
        };
        if state.deleted {
            return Ok(None);
        }
        let gone = gone_reason(&state);
        Ok(state.view.or(state.created_view).map(|mut view| {
            if let Some(reason) = gone {
                view.status = MissionStatus::Blocked;
                view.status_reason = Some(reason);
            }
            FleetMission {
                host: state.host,
                view,
            }
        }))
    }
}

/// A mission's summary as its workflow last recorded it, with its host; `None` when the
/// workflow never created it, or its host deleted it.
fn summary_of(state: &LifecycleState) -> Option<MissionSummary> {
    if state.deleted {
        return None;
    }
    let mut summary = match (&state.summary, &state.created_view) {
        (Some(summary), _) => summary.clone(),
        (None, Some(view)) => crate::lifecycle::summary_of_view(view),
        (None, None) => return None,
    };
    match state.phase {
        Phase::Ended => summary.status = MissionStatus::Archived,
        Phase::HostGone => summary.status = MissionStatus::Blocked,
        _ => {}
    }
    summary.host = Some(state.host.clone());
    Some(summary)
}

/// Why the mission shows `blocked` while its host is gone.
fn gone_reason(state: &LifecycleState) -> Option<String> {
    (state.phase == Phase::HostGone).then(|| {
        state
            .error
            .as_ref()
            .map(|error| error.message.clone())
            .unwrap_or_else(|| format!("host {} is gone", state.host))
    })
}

fn update_failed(mission_id: &str, method: &str, error: WorkflowUpdateError) -> EngineError {
    match error {
        WorkflowUpdateError::NotFound(_) => {
            EngineError::Mission(nagi_mission::MissionError::NotFound(format!(
                "mission {mission_id} has no running workflow in the fleet"
            )))
        }
        error => unavailable(format!(
            "cannot send {method} to mission {mission_id}'s host through its workflow: \
             {error}; if it arrived, it may have been done: look with mission.get"
        )),
    }
}

fn unavailable(message: String) -> EngineError {
    EngineError::ServerUnavailable(message)
}

impl FleetRouter for Router {
    fn host(&self) -> &str {
        &self.host
    }

    fn create(
        &self,
        params: MissionCreateParams,
        host: String,
    ) -> FleetFuture<'_, (MissionViewV1, bool)> {
        Box::pin(self.create_mission(params, host))
    }

    fn list(&self) -> FleetFuture<'_, Vec<MissionSummary>> {
        Box::pin(self.list_missions())
    }

    fn get(&self, mission_id: String) -> FleetFuture<'_, Option<FleetMission>> {
        Box::pin(self.get_mission(mission_id))
    }

    fn get_after_restart(&self, mission_id: String) -> FleetFuture<'_, Option<FleetMission>> {
        Box::pin(async move {
            self.forget_sticky_worker(&mission_id).await;
            self.get_mission(mission_id).await
        })
    }

    fn act(&self, mission_id: String, request: RoutedRequest) -> FleetFuture<'_, RoutedAnswer> {
        Box::pin(self.act_on_mission(mission_id, request))
    }

    fn relocate(
        &self,
        mission_id: String,
        request: RelocationRequest,
    ) -> FleetFuture<'_, RoutedAnswer> {
        Box::pin(self.relocate_mission(mission_id, request))
    }
}
