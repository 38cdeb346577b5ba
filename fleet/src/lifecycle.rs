//! `MissionLifecycle`: one workflow per mission (workflow id = mission id), run by any host
//! from the shared `nagi-fleet` queue. Its activities run on the pinned host's own queue
//! (`nagi-host-<name>`), so the host's store stays the truth for the mission's local facts
//! while the workflow's history records where the mission lives and how far its lifecycle
//! got.
//!
//! The first slice has two steps: `create_mission` (the engine's own create, idempotent),
//! then `follow_mission`, a heartbeating activity that signals each status the host's store
//! reaches back to the workflow (`observed`) until the mission is archived, so that every
//! host can answer `mission.list`/`mission.get` for it. Every branch comes from activity
//! results and signals: no clock, no I/O in this file.

use std::time::Duration;

use nagi_schema::codes::ErrorCode;
use nagi_schema::fleet::{RoutedAnswer, RoutedRequest};
use nagi_schema::mission::{MissionCreateParams, MissionSummary, MissionViewV1};
use serde::{Deserialize, Serialize};
use temporalio_common::RetryPolicy;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{
    ActivityOptions, SyncWorkflowContext, WorkflowContext, WorkflowContextView, WorkflowResult,
};

use crate::activities::{CreateOutcome, FollowEnd, HostActivities, ObservedMission, Reporter};

/// How long a create may wait for its host to take it: past this the host is taken for
/// gone and the workflow ends `blocked`.
pub const HOST_PICKUP_TIMEOUT: Duration = Duration::from_secs(20);
/// The heartbeat of `follow_mission`: a host that stops heartbeating for this long (killed,
/// say) gets the activity again when it is back.
pub const FOLLOW_HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LifecycleInput {
    pub mission_id: String,
    pub host: String,
    pub create: MissionCreateParams,
    /// How long the pinned host may take no work of this mission before the mission is
    /// shown `blocked` as gone (`[fleet] host_gone_after_seconds` of the host that created
    /// it).
    #[serde(default = "default_host_gone_after_seconds")]
    pub host_gone_after_seconds: u64,
}

/// A host that takes no work of its missions for this long is taken for gone: ten minutes,
/// so that a restart within minutes resumes its runs without anyone seeing it gone.
pub const DEFAULT_HOST_GONE_AFTER_SECONDS: u64 = 600;

fn default_host_gone_after_seconds() -> u64 {
    DEFAULT_HOST_GONE_AFTER_SECONDS
}

/// Where the lifecycle is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The create activity has not answered yet.
    Creating,
    /// The mission exists on its host, which reports its status.
    Created,
    /// The host refused the create (`error` says why, with the engine's code).
    Refused,
    /// No worker of the host took the create in time, or it kept failing.
    Blocked,
    /// The host reported the mission archived, or deleted (`deleted`): the lifecycle is
    /// over.
    Ended,
    /// The mission exists, but its host has taken none of its work for
    /// `host_gone_after_seconds`: other hosts show it `blocked` (`error` says why) until
    /// the host reports again.
    HostGone,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LifecycleError {
    pub code: String,
    pub message: String,
}

/// What the `state` query answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LifecycleState {
    pub mission_id: String,
    pub host: String,
    pub create: MissionCreateParams,
    pub phase: Phase,
    pub host_gone_after_seconds: u64,
    /// The view the create answered (its `created` flag beside it).
    pub created_view: Option<MissionViewV1>,
    pub created: bool,
    /// The latest summary the host reported.
    pub summary: Option<MissionSummary>,
    /// The latest full view the host reported.
    pub view: Option<MissionViewV1>,
    pub error: Option<LifecycleError>,
    /// The host deleted the mission (a draft that never ran): no host lists or finds it.
    #[serde(default)]
    pub deleted: bool,
}

#[workflow]
pub struct MissionLifecycle {
    state: LifecycleState,
}

/// The create: a host that takes no task within [`HOST_PICKUP_TIMEOUT`] is gone; a failing
/// attempt is retried a few times (the create is idempotent on the host).
fn create_options(host: &str) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(120))
        .task_queue(crate::host_queue(host))
        .schedule_to_start_timeout(HOST_PICKUP_TIMEOUT)
        .retry_policy(
            RetryPolicy::builder()
                .initial_interval(Duration::from_secs(1))
                .maximum_interval(Duration::from_secs(5))
                .maximum_attempts(5)
                .build(),
        )
        .build()
}

/// A routed request: the pinned host must take it within [`HOST_PICKUP_TIMEOUT`], and it
/// is tried once (a request is never served twice; a lost answer is reported as lost).
/// Ten minutes covers the slowest method a host serves (a start's fingerprint of a large
/// repository, a close's checks).
fn act_options(host: &str) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(600))
        .task_queue(crate::host_queue(host))
        .schedule_to_start_timeout(HOST_PICKUP_TIMEOUT)
        .retry_policy(RetryPolicy::builder().maximum_attempts(1).build())
        .build()
}

/// The follow: as long as the mission lives; a host that stops heartbeating gets it again
/// when it is back. An attempt that no worker of the host takes within `gone_after` fails
/// the activity, and the workflow marks the host gone and follows again.
fn follow_options(host: &str, gone_after: Duration) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(365 * 24 * 3600))
        .task_queue(crate::host_queue(host))
        .schedule_to_start_timeout(gone_after)
        .heartbeat_timeout(FOLLOW_HEARTBEAT_TIMEOUT)
        .retry_policy(
            RetryPolicy::builder()
                .initial_interval(Duration::from_secs(1))
                .maximum_interval(Duration::from_secs(10))
                .build(),
        )
        .build()
}

#[workflow_methods]
impl MissionLifecycle {
    #[init]
    fn new(_ctx: &WorkflowContextView, input: LifecycleInput) -> Self {
        Self {
            state: LifecycleState {
                mission_id: input.mission_id,
                host: input.host,
                create: input.create,
                phase: Phase::Creating,
                host_gone_after_seconds: input.host_gone_after_seconds,
                created_view: None,
                created: false,
                summary: None,
                view: None,
                error: None,
                deleted: false,
            },
        }
    }

    #[run]
    pub async fn run(ctx: &mut WorkflowContext<Self>) -> WorkflowResult<LifecycleState> {
        let (host, params, mission_id) = ctx.state(|s| {
            (
                s.state.host.clone(),
                s.state.create.clone(),
                s.state.mission_id.clone(),
            )
        });
        let create = create_options(&host);
        match ctx
            .execute_activity(HostActivities::create_mission, params, create)
            .await
        {
            Ok(CreateOutcome::Created { view, created }) => ctx.state_mut(|s| {
                s.state.phase = Phase::Created;
                s.state.created = created;
                s.state.created_view = Some((*view).clone());
                s.state.view = Some(*view);
            }),
            Ok(CreateOutcome::Refused { code, message }) => {
                ctx.state_mut(|s| {
                    s.state.phase = Phase::Refused;
                    s.state.error = Some(LifecycleError { code, message });
                });
                return Ok(ctx.state(|s| s.state.clone()));
            }
            Err(error) => {
                ctx.state_mut(|s| {
                    s.state.phase = Phase::Blocked;
                    s.state.error = Some(LifecycleError {
                        code: "server_unavailable".into(),
                        message: format!(
                            "host {host} did not create mission {mission_id}: {error}; the \
                             mission's workflow is blocked (is host {host}'s nagi server running \
                             in fleet mode?)"
                        ),
                    });
                });
                return Ok(ctx.state(|s| s.state.clone()));
            }
        }
        let gone_after = Duration::from_secs(ctx.state(|s| s.state.host_gone_after_seconds).max(1));
        let end = loop {
            let follow = follow_options(&host, gone_after);
            match ctx
                .execute_activity(HostActivities::follow_mission, mission_id.clone(), follow)
                .await
            {
                Ok(end) => break end.unwrap_or(FollowEnd::Archived),
                Err(error) => ctx.state_mut(|s| {
                    s.state.phase = Phase::HostGone;
                    s.state.error = Some(LifecycleError {
                        code: ErrorCode::ServerUnavailable.as_str().into(),
                        message: format!(
                            "host {host} has taken no work of mission {mission_id} for {} s \
                             ({error}); its status is the last it reported, and it resumes \
                             when host {host}'s nagi server is back in the fleet",
                            gone_after.as_secs()
                        ),
                    });
                }),
            }
        };
        ctx.state_mut(|s| {
            s.state.phase = Phase::Ended;
            s.state.deleted = end == FollowEnd::Deleted;
        });
        // A routed request still in flight gets its answer before the workflow ends.
        let handlers = ctx.clone();
        ctx.wait_condition(move |_| handlers.all_handlers_finished())
            .await?;
        Ok(ctx.state(|s| s.state.clone()))
    }

    /// A request another host received for this mission, served by the pinned host
    /// (`HostActivities::act_on_mission`). The request, a consent's digest included, stays
    /// in the workflow's history.
    #[update]
    pub async fn act(ctx: &mut WorkflowContext<Self>, request: RoutedRequest) -> RoutedAnswer {
        let (host, phase, mission_id) = ctx.state(|s| {
            (
                s.state.host.clone(),
                s.state.phase,
                s.state.mission_id.clone(),
            )
        });
        if let Some(refusal) = not_servable(phase, &host, &mission_id) {
            return refusal;
        }
        let method = request.method.clone();
        match ctx
            .execute_activity(HostActivities::act_on_mission, request, act_options(&host))
            .await
        {
            Ok(answer) => answer,
            Err(error) => RoutedAnswer::Refused {
                code: ErrorCode::ServerUnavailable.as_str().to_string(),
                message: format!(
                    "{method} for mission {mission_id} got no answer from host {host} ({error}); \
                     if the host took it, it may have been done: look with mission.get"
                ),
            },
        }
    }

    /// The pinned host reports what its store holds now.
    #[signal]
    pub fn observed(&mut self, _ctx: &mut SyncWorkflowContext<Self>, report: ObservedMission) {
        self.state.summary = Some(report.summary);
        self.state.view = Some(report.view);
        if self.state.phase == Phase::HostGone {
            self.state.phase = Phase::Created;
            self.state.error = None;
        }
    }

    #[query]
    pub fn state(&self, _ctx: &WorkflowContextView) -> LifecycleState {
        self.state.clone()
    }
}

/// Why a routed request cannot be served in `phase`, as the refusal it answers.
fn not_servable(phase: Phase, host: &str, mission_id: &str) -> Option<RoutedAnswer> {
    let (code, message) = match phase {
        // A host gone may be back: the request is offered, and it waits for its pickup.
        Phase::Created | Phase::HostGone => return None,
        Phase::Creating => (
            ErrorCode::ServerUnavailable,
            format!("host {host} has not created mission {mission_id} yet; try again shortly"),
        ),
        Phase::Refused => (
            ErrorCode::MissionNotFound,
            format!("host {host} refused to create mission {mission_id}"),
        ),
        Phase::Blocked => (
            ErrorCode::ServerUnavailable,
            format!("mission {mission_id}'s workflow is blocked: host {host} never created it"),
        ),
        Phase::Ended => (
            ErrorCode::MissionNotFound,
            format!("mission {mission_id} has ended on host {host}"),
        ),
    };
    Some(RoutedAnswer::Refused {
        code: code.as_str().to_string(),
        message,
    })
}

/// The activities' [`Reporter`]: a report becomes the `observed` signal of the mission's
/// workflow.
pub fn reporter(client: temporalio_client::Client) -> Reporter {
    std::sync::Arc::new(move |mission_id: String, report: ObservedMission| {
        let client = client.clone();
        Box::pin(async move {
            client
                .get_workflow_handle::<MissionLifecycle>(mission_id)
                .signal(
                    MissionLifecycle::observed,
                    report,
                    temporalio_client::WorkflowSignalOptions::default(),
                )
                .await
                .map_err(|error| error.to_string())
        })
    })
}
