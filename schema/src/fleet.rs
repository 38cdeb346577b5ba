//! What hosts of a fleet send each other through a mission's workflow (fleet mode): a
//! request for the mission's own host and its answer. These travel in Temporal's workflow
//! history, not on the socket, but they are wire types all the same: an older host of the
//! fleet must read what a newer one sends.

use serde::{Deserialize, Serialize};

/// A request a host received for a mission pinned to another host, as it is carried to
/// that host: the method, its params exactly as the client sent them once decoded, and
/// who asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutedRequest {
    /// The `mission.*` or `cockpit.*` method.
    pub method: String,
    /// The params, which the mission's host decodes again by the method's own rules.
    pub params: serde_json::Value,
    /// The host that received the request.
    pub origin_host: String,
    /// The uid of the client on the origin host.
    pub origin_uid: u32,
    /// For `cockpit.*`: the origin host judged its peer by its own consent rule and it was
    /// allowed. Without it the mission's host refuses a consent (`consent_forbidden`).
    #[serde(default)]
    pub consent_checked: bool,
}

/// What the mission's host answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum RoutedAnswer {
    /// The method's result object, `type` included.
    Answered { result: serde_json::Value },
    /// The method failed on that host: its stable code and message.
    Refused { code: String, message: String },
}

/// A mission handed from a host that is gone to another host of the fleet
/// (`mission.handoff.preview`/`start` with `host`): what the workflow carries to the new
/// host, all of it as the gone host last reported it. The new host clones `remote_url`,
/// makes the mission again from `view` and `checks`, and starts its run from the artifact
/// it builds of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Relocation {
    /// The host the mission was pinned to, which is gone.
    pub from_host: String,
    /// The mission as that host last reported it.
    pub view: crate::mission::MissionViewV1,
    /// Its closure plan, frozen before its first run: the new host configures it as it was.
    pub checks: Vec<crate::mission::MissionCheck>,
    /// The URL of the repository's remote (`origin`) on the gone host.
    pub remote_url: String,
    /// The provider the mission goes on with.
    pub to: crate::mission::MissionProvider,
    /// The preview's timestamp, for a start (a preview takes the new host's clock).
    pub generated_at_millis: Option<u64>,
    /// The digest of the inspected preview, for a start: the new host starts only if the
    /// artifact it builds again has this digest.
    pub artifact_sha256: Option<String>,
    /// The host that received the request, and its client's uid.
    pub origin_host: String,
    pub origin_uid: u32,
}

/// A `mission.handoff.preview` or `start` with `host`, as the host that received it asks
/// the mission's workflow: the workflow adds what the gone host last reported
/// ([`Relocation`]) and has `host` serve it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelocationRequest {
    /// The host that takes the mission over.
    pub host: String,
    pub to: crate::mission::MissionProvider,
    /// For a start: the inspected preview's timestamp and digest.
    pub generated_at_millis: Option<u64>,
    pub artifact_sha256: Option<String>,
    pub origin_host: String,
    pub origin_uid: u32,
}
