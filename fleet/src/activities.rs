//! The activities of one host (queue `nagi-host-<name>`). Each delegates to the engine's own
//! operation on the server's runtime and is idempotent against this host's store: a create
//! retried after the host restarted finds the mission it created and answers it again
//! (`created: false`), a follow only reads, and a routed request is served at most once
//! (the workflow does not retry it).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use nagi_engine::engine::Engine;
use nagi_engine::errors::{EngineError, wire_error};
use nagi_schema::fleet::{Relocation, RoutedAnswer, RoutedRequest};
use nagi_schema::mission::{
    MissionCheck, MissionCreateParams, MissionStatus, MissionSummary, MissionViewV1,
};
use serde::{Deserialize, Serialize};
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};

/// How often `follow_mission` looks at the store.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(250);

/// What the pinned host's store holds of a mission now, as `follow_mission` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservedMission {
    pub summary: MissionSummary,
    pub view: MissionViewV1,
    /// The mission's frozen closure plan, as the checks that configure it: what another
    /// host configures if it takes the mission over once this one is gone.
    #[serde(default)]
    pub checks: Vec<MissionCheck>,
    /// The URL of the mission's repository's remote (`origin`), which such a host clones;
    /// `None` without one.
    #[serde(default)]
    pub remote_url: Option<String>,
    /// The host that reports (absent in histories from before hosts said so).
    #[serde(default)]
    pub host: Option<String>,
}

/// How a mission's life on its host ended, as `follow_mission` saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FollowEnd {
    /// Archived: it stays listed, `archived`, on every host.
    Archived,
    /// Deleted (`mission.delete` of a draft): no host lists it, and its id is free.
    Deleted,
}

/// Sends a report to the mission's workflow (`lifecycle::reporter`: a signal).
pub type Reporter = Arc<
    dyn Fn(String, ObservedMission) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>>
        + Send
        + Sync,
>;

/// What the host's engine answered a create: the engine's refusals are answers (the
/// workflow records them with their stable code), not failures to retry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CreateOutcome {
    Created {
        view: Box<MissionViewV1>,
        created: bool,
    },
    Refused {
        code: String,
        message: String,
    },
}

pub struct HostActivities {
    engine: Arc<Engine>,
    /// The server's runtime: the engine's operations run there, not on the worker's
    /// current-thread runtime.
    server: tokio::runtime::Handle,
    report: Reporter,
}

impl HostActivities {
    pub fn new(engine: Arc<Engine>, server: tokio::runtime::Handle, report: Reporter) -> Self {
        HostActivities {
            engine,
            server,
            report,
        }
    }
}

fn refused(error: &EngineError) -> (String, String) {
    let (code, message) = wire_error(error);
    (code.as_str().to_string(), message)
}

#[activities]
impl HostActivities {
    /// `mission.create` on this host: the engine's own create.
    #[activity]
    pub async fn create_mission(
        self: Arc<Self>,
        _ctx: ActivityContext,
        params: MissionCreateParams,
    ) -> Result<CreateOutcome, ActivityError> {
        let engine = self.engine.clone();
        let answer = self
            .server
            .spawn(async move { nagi_engine::api::missions::create_local(&engine, params).await })
            .await
            .map_err(|error| anyhow_error(format!("the create task failed: {error}")))?;
        Ok(match answer {
            Ok((view, created)) => CreateOutcome::Created {
                view: Box::new(view),
                created,
            },
            Err(error) => {
                let (code, message) = refused(&error);
                CreateOutcome::Refused { code, message }
            }
        })
    }

    /// Serves a request another host received for a mission of this host
    /// (`nagi_engine::api::fleet_route::serve_routed`). Run at most once: the workflow
    /// never retries it, so a request is never served twice.
    #[activity]
    pub async fn act_on_mission(
        self: Arc<Self>,
        _ctx: ActivityContext,
        request: RoutedRequest,
    ) -> Result<RoutedAnswer, ActivityError> {
        let engine = self.engine.clone();
        let mission_id = routed_mission_id(&request);
        let answer = self
            .server
            .spawn(
                async move { nagi_engine::api::fleet_route::serve_routed(&engine, request).await },
            )
            .await
            .map_err(|error| anyhow_error(format!("the routed request's task failed: {error}")))?;
        // What the request changed is reported before the answer goes back, so the host that
        // asked reads its own write from the workflow (a `mission.get` or a cockpit refresh
        // right after a routed configure sees the closure plan). `follow_mission` would
        // report it within its interval anyway, so a failed report is only logged.
        if let (RoutedAnswer::Answered { .. }, Some(mission_id)) = (&answer, mission_id)
            && let Some(report) = self.observe(&mission_id)
            && let Err(error) = (self.report)(mission_id.clone(), report).await
        {
            tracing::warn!(%mission_id, %error, "cannot report a routed request's effect");
        }
        Ok(answer)
    }

    /// Builds the artifact of a mission this host would take over from a host that is gone
    /// (`nagi_engine::api::fleet_relocate::preview`); writes nothing.
    #[activity]
    pub async fn relocation_preview(
        self: Arc<Self>,
        _ctx: ActivityContext,
        relocation: Relocation,
    ) -> Result<RoutedAnswer, ActivityError> {
        let engine = self.engine.clone();
        self.answer(
            async move { nagi_engine::api::fleet_relocate::preview(&engine, relocation).await },
        )
        .await
    }

    /// Takes a mission over from a host that is gone: clones its repository's remote,
    /// makes the mission here and starts its run from the artifact
    /// (`nagi_engine::api::fleet_relocate::start`). Every step is one a retry finds done.
    #[activity]
    pub async fn relocate_mission(
        self: Arc<Self>,
        _ctx: ActivityContext,
        relocation: Relocation,
    ) -> Result<RoutedAnswer, ActivityError> {
        let engine = self.engine.clone();
        self.answer(
            async move { nagi_engine::api::fleet_relocate::start(&engine, relocation).await },
        )
        .await
    }

    /// Reports each state the mission reaches in this host's store to its workflow, until
    /// it is archived or deleted. Heartbeats all along: a host killed here gets the activity
    /// again when it is back, and reports again from what its store holds. The answer is
    /// optional so that a history recorded before [`FollowEnd`] existed (`null`) still
    /// replays: `None` reads as archived.
    #[activity]
    pub async fn follow_mission(
        self: Arc<Self>,
        ctx: ActivityContext,
        mission_id: String,
    ) -> Result<Option<FollowEnd>, ActivityError> {
        let mut reported: Option<ObservedMission> = None;
        let mut remote_url: Option<Option<String>> = None;
        loop {
            if ctx.is_cancelled() {
                return Err(ActivityError::cancelled());
            }
            let report = match self.engine.missions.get_checked(&mission_id) {
                Ok(mission) => {
                    let remote_url = remote_url
                        .get_or_insert_with(|| remote_url_of(&mission))
                        .clone();
                    ObservedMission::of(&self.engine, &mission, remote_url)
                }
                Err(EngineError::Mission(nagi_mission::MissionError::NotFound(_))) => {
                    return Ok(Some(FollowEnd::Deleted));
                }
                Err(error) => return Err(anyhow_error(error.to_string())),
            };
            let archived = report.summary.status == MissionStatus::Archived;
            if reported.as_ref() != Some(&report) {
                (self.report)(mission_id.clone(), report.clone())
                    .await
                    .map_err(|error| anyhow_error(format!("cannot report the mission: {error}")))?;
                reported = Some(report);
            }
            if archived {
                return Ok(Some(FollowEnd::Archived));
            }
            ctx.record_heartbeat(())
                .await
                .map_err(|error| anyhow_error(error.to_string()))?;
            tokio::time::sleep(FOLLOW_INTERVAL).await;
        }
    }
}

impl HostActivities {
    /// Runs an engine operation on the server's runtime; its refusal is an answer, with
    /// its stable code.
    async fn answer<F>(&self, operation: F) -> Result<RoutedAnswer, ActivityError>
    where
        F: Future<Output = Result<nagi_schema::results::ResponseResult, EngineError>>
            + Send
            + 'static,
    {
        let answer = self
            .server
            .spawn(operation)
            .await
            .map_err(|error| anyhow_error(format!("the operation's task failed: {error}")))?;
        Ok(match answer {
            Ok(result) => match serde_json::to_value(result) {
                Ok(result) => RoutedAnswer::Answered { result },
                Err(error) => {
                    return Err(anyhow_error(format!("cannot encode the answer: {error}")));
                }
            },
            Err(error) => {
                let (code, message) = refused(&error);
                RoutedAnswer::Refused { code, message }
            }
        })
    }

    /// What this host's store holds of the mission now; `None` when it is gone or
    /// cannot be read (the follow reports it later).
    fn observe(&self, mission_id: &str) -> Option<ObservedMission> {
        let mission = self.engine.missions.get_checked(mission_id).ok()?;
        let remote_url = remote_url_of(&mission);
        Some(ObservedMission::of(&self.engine, &mission, remote_url))
    }
}

fn remote_url_of(mission: &nagi_mission::Mission) -> Option<String> {
    nagi_engine::worktrees::remote::remote_url(std::path::Path::new(&mission.repository_path))
}

impl ObservedMission {
    fn of(
        engine: &Engine,
        mission: &nagi_mission::Mission,
        remote_url: Option<String>,
    ) -> ObservedMission {
        ObservedMission {
            summary: nagi_engine::api::missions::summary(mission),
            view: engine.view(mission),
            checks: nagi_mission::plan::declared_checks(mission),
            remote_url,
            host: engine.fleet.get().map(|fleet| fleet.host().to_string()),
        }
    }
}

/// The mission a routed request acts on: `mission_id` of a `mission.*` method's params, or
/// of a cockpit action's.
fn routed_mission_id(request: &RoutedRequest) -> Option<String> {
    let params = &request.params;
    params
        .get("mission_id")
        .or_else(|| {
            params
                .get("action")
                .and_then(|action| action.get("mission_id"))
        })
        .and_then(|id| id.as_str())
        .map(str::to_string)
}

fn anyhow_error(message: String) -> ActivityError {
    ActivityError::from(anyhow::anyhow!(message))
}
