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
use nagi_schema::fleet::{Relocation, RelocationRequest, RoutedAnswer, RoutedRequest};
use nagi_schema::mission::{MissionCheck, MissionCreateParams, MissionSummary, MissionViewV1};
use serde::{Deserialize, Serialize};
use temporalio_common::RetryPolicy;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::CancellableFuture;
use temporalio_sdk::workflows::select;
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
    /// The mission's closure plan and its repository's remote, as the host last reported
    /// them: what another host needs to take the mission over once this one is gone.
    #[serde(default)]
    pub checks: Vec<MissionCheck>,
    #[serde(default)]
    pub remote_url: Option<String>,
    /// The hosts the mission was pinned to before, each gone when it was handed on.
    #[serde(default)]
    pub relocated_from: Vec<String>,
    /// The host a handoff start is taking the mission to now.
    #[serde(default)]
    pub relocating_to: Option<String>,
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

/// A take-over: the new host must take it within [`HOST_PICKUP_TIMEOUT`]; each of its
/// steps is one a retry finds done, so a failed attempt is tried again twice.
fn relocate_options(host: &str) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(Duration::from_secs(600))
        .task_queue(crate::host_queue(host))
        .schedule_to_start_timeout(HOST_PICKUP_TIMEOUT)
        .retry_policy(
            RetryPolicy::builder()
                .initial_interval(Duration::from_secs(1))
                .maximum_attempts(3)
                .build(),
        )
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
                checks: Vec::new(),
                remote_url: None,
                relocated_from: Vec::new(),
                relocating_to: None,
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
            // The pinned host changes when the mission is handed on from a host that is
            // gone (`relocate`): its follow is cancelled, and the new host's begins.
            let host = ctx.state(|s| s.state.host.clone());
            let followed = {
                let follow = ctx.execute_activity(
                    HostActivities::follow_mission,
                    mission_id.clone(),
                    follow_options(&host, gone_after),
                );
                let pinned = host.clone();
                let moved = ctx.wait_condition(move |w: &Self| w.state.host != pinned);
                let mut follow = std::pin::pin!(follow);
                let mut moved = std::pin::pin!(moved);
                let outcome = select! {
                    result = follow.as_mut() => Some(result),
                    _ = moved.as_mut() => None,
                };
                if outcome.is_none() {
                    follow.cancel();
                    let _ = follow.await;
                }
                outcome
            };
            let Some(followed) = followed else {
                continue;
            };
            match followed {
                Ok(end) => break end.unwrap_or(FollowEnd::Archived),
                Err(_) if ctx.state(|s| s.state.host != host) => continue,
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

    /// A handoff preview or start that names another host, for a mission whose host is
    /// gone: the new host builds the artifact from what the gone host last reported, and a
    /// start makes the mission there (`HostActivities::relocate_mission`) and pins it to
    /// the new host. The request, its digest included, stays in the workflow's history.
    #[update]
    pub async fn relocate(
        ctx: &mut WorkflowContext<Self>,
        request: RelocationRequest,
    ) -> RoutedAnswer {
        let state = ctx.state(|s| s.state.clone());
        let relocation = match relocation_of(&state, &request) {
            Ok(relocation) => relocation,
            Err(refusal) => return refusal,
        };
        let (mission_id, from_host, to_host) = (
            state.mission_id.clone(),
            state.host.clone(),
            request.host.clone(),
        );
        let starting = request.artifact_sha256.is_some();
        let answer = if starting {
            ctx.state_mut(|s| s.state.relocating_to = Some(to_host.clone()));
            let answer = ctx
                .execute_activity(
                    HostActivities::relocate_mission,
                    relocation,
                    relocate_options(&to_host),
                )
                .await;
            ctx.state_mut(|s| s.state.relocating_to = None);
            answer
        } else {
            ctx.execute_activity(
                HostActivities::relocation_preview,
                relocation,
                act_options(&to_host),
            )
            .await
        };
        match answer {
            Ok(RoutedAnswer::Answered { result }) if starting => {
                let view = result
                    .get("mission")
                    .and_then(|view| serde_json::from_value::<MissionViewV1>(view.clone()).ok());
                ctx.state_mut(|s| {
                    s.state.relocated_from.push(from_host.clone());
                    s.state.host = to_host.clone();
                    s.state.phase = Phase::Created;
                    s.state.error = None;
                    if let Some(view) = view {
                        s.state.summary = Some(summary_of_view(&view));
                        s.state.view = Some(view);
                    }
                });
                RoutedAnswer::Answered { result }
            }
            Ok(answer) => answer,
            Err(error) => RoutedAnswer::Refused {
                code: ErrorCode::ServerUnavailable.as_str().to_string(),
                message: format!(
                    "host {to_host} did not take mission {mission_id} over ({error}); it stays \
                     pinned to host {from_host}"
                ),
            },
        }
    }

    /// The pinned host reports what its store holds now.
    #[signal]
    pub fn observed(&mut self, _ctx: &mut SyncWorkflowContext<Self>, report: ObservedMission) {
        // A host the mission was handed away from may report late (cut off from the
        // service rather than gone): only the pinned host's reports count.
        if report
            .host
            .as_ref()
            .is_some_and(|host| host != &self.state.host)
        {
            return;
        }
        self.state.summary = Some(report.summary);
        self.state.view = Some(report.view);
        self.state.checks = report.checks;
        self.state.remote_url = report.remote_url;
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

/// What a handoff to `request.host` carries, or why it cannot be made now.
fn relocation_of(
    state: &LifecycleState,
    request: &RelocationRequest,
) -> Result<Relocation, RoutedAnswer> {
    let (host, mission_id) = (&state.host, &state.mission_id);
    let refused = |code: ErrorCode, message: String| RoutedAnswer::Refused {
        code: code.as_str().to_string(),
        message,
    };
    if state.phase != Phase::HostGone {
        if let Some(refusal) = not_servable(state.phase, host, mission_id) {
            return Err(refusal);
        }
        return Err(refused(
            ErrorCode::InvalidHandoffState,
            format!(
                "host {host}, which holds mission {mission_id}, is in the fleet: hand the \
                 mission off there (without a host); another host takes a mission over only \
                 from a host that is gone"
            ),
        ));
    }
    if let Some(other) = &state.relocating_to {
        return Err(refused(
            ErrorCode::MissionBusy,
            format!("mission {mission_id} is being handed to host {other}; wait for it"),
        ));
    }
    if &request.host == host {
        return Err(refused(
            ErrorCode::InvalidHandoffState,
            format!("mission {mission_id} is pinned to host {host} already"),
        ));
    }
    let Some(view) = state.view.clone() else {
        return Err(refused(
            ErrorCode::InvalidHandoffState,
            format!(
                "host {host} never reported mission {mission_id}, so nothing can go on from it"
            ),
        ));
    };
    let Some(remote_url) = state.remote_url.clone() else {
        return Err(refused(
            ErrorCode::InvalidHandoffState,
            format!(
                "host {host} reported no remote for the repository of mission {mission_id} \
                 ({}): another host takes a mission over by cloning the repository's remote",
                view.repository_path
            ),
        ));
    };
    Ok(Relocation {
        from_host: host.clone(),
        view,
        checks: state.checks.clone(),
        remote_url,
        to: request.to,
        generated_at_millis: request.generated_at_millis,
        artifact_sha256: request.artifact_sha256.clone(),
        origin_host: request.origin_host.clone(),
        origin_uid: request.origin_uid,
    })
}

/// The summary a view gives, for a host that has not reported one yet.
pub fn summary_of_view(view: &MissionViewV1) -> MissionSummary {
    MissionSummary {
        mission_id: view.mission_id.clone(),
        title: view.title.clone(),
        repository_path: view.repository_path.clone(),
        status: view.status,
        unresolved_attention_count: u64::from(view.unresolved_attention_count),
        updated_at_millis: view.updated_at_millis,
        host: None,
    }
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
