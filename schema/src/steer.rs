//! Steering a mission's run (nagi extensions): a follow-up turn (`mission.send`), an
//! interrupt of the turn in progress (`mission.interrupt`) and a stop of the provider
//! (`mission.stop`). None of them grants authority: a follow-up runs under the sandbox the
//! run was started with.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::ID_PATTERN;

/// The longest follow-up text, in bytes (the mission objective's limit).
pub const MAX_FOLLOW_UP_BYTES: usize = 8192;

/// `mission.send`: the next turn of the mission's run, in the same native session.
/// Unknown fields are rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionSendParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
    /// What to tell the agent (1–8192 bytes, not blank).
    #[schemars(length(min = 1, max = 8192))]
    pub text: String,
    /// The model from this turn on (only when the follow-up starts the provider again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The reasoning effort from this turn on (as `model`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
}

/// `mission.interrupt` and `mission.stop`. Unknown fields are rejected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MissionSteerParams {
    #[schemars(length(min = 1, max = 128), regex(pattern = ID_PATTERN))]
    pub mission_id: String,
}

/// How a follow-up reaches the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FollowUpDelivery {
    /// A turn is running: the text is the next turn, sent when this one completes.
    Queued,
    /// The run had ended: the provider was started again on its stored session, and the
    /// text is its turn.
    Resumed,
}

/// Who steered a run: the connection's peer as the server saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunActorV1 {
    pub uid: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// The peer's controlling terminal is one of this server's managed panes.
    pub managed_pane: bool,
    /// The peer is a process the server started (a pane, a provider, a check) or one of
    /// their descendants.
    pub started_by_server: bool,
}

impl RunActorV1 {
    /// The actor in words, for status reasons and transcripts.
    pub fn describe(&self) -> String {
        let mut words = format!("uid {}", self.uid);
        if let Some(pid) = self.pid {
            words.push_str(&format!(" pid {pid}"));
        }
        if self.managed_pane {
            words.push_str(" in a managed pane");
        } else if self.started_by_server {
            words.push_str(" started by the server");
        }
        words
    }
}

/// The run's native session, so a person can resume it by hand with the vendor's CLI
/// (`mission.session`; never in the mission view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProviderSessionV1 {
    pub id: String,
    /// The vendor's command that resumes it in the run's worktree, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_command: Option<String>,
}
