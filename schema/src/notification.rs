//! `notification.show` (seed 001): tell a person something, through the server's configured
//! notification sinks (`[notify]`: the desktop's Notifications service, a command).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ToastNagiPosition {
    TopLeft,
    TopRight,
    BottomLeft,
    BottomRight,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NotificationShowSound {
    #[default]
    None,
    Done,
    Request,
}

/// Unknown fields are ignored. `position` places an in-app toast, which nagi has none of,
/// and `sound` is accepted and not played: both are taken and have no effect.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NotificationShowParams {
    /// Visible text is required; control characters and runs of white space become one
    /// space, and it is cut at 80 characters.
    pub title: String,
    /// Cut at 240 characters the same way.
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub position: Option<ToastNagiPosition>,
    #[serde(default)]
    pub sound: NotificationShowSound,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NotificationShowReason {
    Shown,
    Disabled,
    RateLimited,
    NoForegroundClient,
    Busy,
}
