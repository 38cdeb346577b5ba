//! `[notify]` in config.toml: which notifications fire and where they go.
//!
//! ```toml
//! [notify]
//! enabled = true                      # false: none at all
//! desktop = true                      # the freedesktop Notifications service, when a session bus exists
//! command = ["ntfy", "publish", "me"] # run with the notification as JSON on stdin
//! kinds = ["attention", "review_required", "ready_to_close", "failed", "blocked"]
//! ```

use serde::{Deserialize, Serialize};

/// What a notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotifyKind {
    /// An attention item opened: a provider asks for a decision, or a security warning.
    Attention,
    ReviewRequired,
    ReadyToClose,
    Failed,
    Blocked,
    /// `notification.show`.
    Message,
}

impl NotifyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NotifyKind::Attention => "attention",
            NotifyKind::ReviewRequired => "review_required",
            NotifyKind::ReadyToClose => "ready_to_close",
            NotifyKind::Failed => "failed",
            NotifyKind::Blocked => "blocked",
            NotifyKind::Message => "message",
        }
    }
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifySettings {
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default = "yes")]
    pub desktop: bool,
    /// A program and its arguments (no shell), run once per notification.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// The kinds that notify (default: every kind).
    #[serde(default)]
    pub kinds: Option<Vec<NotifyKind>>,
}

impl Default for NotifySettings {
    fn default() -> Self {
        NotifySettings {
            enabled: true,
            desktop: true,
            command: None,
            kinds: None,
        }
    }
}

impl NotifySettings {
    pub fn wants(&self, kind: NotifyKind) -> bool {
        self.enabled
            && self
                .kinds
                .as_ref()
                .is_none_or(|kinds| kinds.contains(&kind))
    }

    /// Whether a notification could go anywhere: on, and a session bus for the desktop or a
    /// command.
    pub fn has_a_sink(&self) -> bool {
        self.enabled
            && ((self.desktop && std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some())
                || self.command.is_some())
    }

    /// A command that cannot run is a config error, found when the file is read.
    pub fn check(&self) -> Result<(), String> {
        match &self.command {
            Some(command) if command.is_empty() || command[0].trim().is_empty() => {
                Err("[notify] command must name a program".into())
            }
            Some(command) if command.iter().any(|arg| arg.contains('\0')) => {
                Err("[notify] command arguments must not contain NUL".into())
            }
            _ => Ok(()),
        }
    }
}
