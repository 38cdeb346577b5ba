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
