//! Notifications: a person is told when something waits for them — an attention item opens,
//! or a mission needs review, is ready to close, failed or is blocked — and when a client
//! asks (`notification.show`). They go to the freedesktop Notifications service on the
//! session bus (`desktop.rs`) and to a configured command (`command.rs`); attached cockpits
//! ring and raise their own terminal's notification from the mission events they follow.
//!
//! The server's follower (`daemon::spawn_notifier`) reads the durable log after the head it
//! started at, so a notification is about something committed, and a restart does not
//! repeat old ones; with no sink it reads nothing, and it parses only the kinds that
//! notify ([`may_notify`]).

pub mod command;
pub mod desktop;
pub mod settings;

use nagi_mission::{MissionEvent, StoredEvent};
use nagi_schema::mission::MissionStatus;
use serde::Serialize;

use settings::{NotifyKind, NotifySettings};

/// The longest title and body, in characters (as seed 001's `notification.show`).
pub const MAX_TITLE_CHARS: usize = 80;
pub const MAX_BODY_CHARS: usize = 240;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Notification {
    pub kind: NotifyKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mission_id: Option<String>,
    pub title: String,
    pub body: String,
}

/// Control characters, tabs and newlines become spaces, runs of spaces one, and the text is
/// cut at `max` characters.
pub fn sanitize(text: &str, max: usize) -> String {
    let spaced: String = text
        .chars()
        .map(|character| {
            if character.is_control() {
                ' '
            } else {
                character
            }
        })
        .collect();
    spaced
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(max)
        .collect()
}

impl Notification {
    pub fn new(
        kind: NotifyKind,
        mission_id: Option<&str>,
        title: &str,
        body: &str,
    ) -> Notification {
        Notification {
            kind,
            mission_id: mission_id.map(str::to_string),
            title: sanitize(title, MAX_TITLE_CHARS),
            body: sanitize(body, MAX_BODY_CHARS),
        }
    }
}

/// The event kinds (the log's `kind` column) that [`for_event`] may turn into a notification:
/// the others are not even parsed.
pub fn may_notify(kind: &str) -> bool {
    matches!(
        kind,
        "attention_opened" | "status_changed" | "mission_sealed"
    )
}

/// The notification a committed event calls for, if any.
pub fn for_event(mission_id: &str, stored: &StoredEvent) -> Option<Notification> {
    match &stored.event {
        MissionEvent::AttentionOpened { attention, .. } => Some(Notification::new(
            NotifyKind::Attention,
            Some(mission_id),
            &format!("nagi: mission {mission_id} needs you"),
            &format!(
                "{} — answer it in the cockpit (nagi cockpit)",
                attention.requested_action
            ),
        )),
        MissionEvent::MissionSealed { receipt, .. }
            if receipt.decision == nagi_schema::proof::ProofClosureDecisionV1::ReadyToClose =>
        {
            Some(Notification::new(
                NotifyKind::ReadyToClose,
                Some(mission_id),
                &format!("nagi: mission {mission_id} is ready_to_close"),
                &format!(
                    "the proof verified: close it with `nagi mission close {mission_id}`, or land it with `nagi mission land {mission_id}`"
                ),
            ))
        }
        MissionEvent::StatusChanged { status, reason, .. } => {
            let kind = match status {
                MissionStatus::ReviewRequired => NotifyKind::ReviewRequired,
                MissionStatus::ReadyToClose => NotifyKind::ReadyToClose,
                MissionStatus::Failed => NotifyKind::Failed,
                MissionStatus::Blocked => NotifyKind::Blocked,
                _ => return None,
            };
            Some(Notification::new(
                kind,
                Some(mission_id),
                &format!("nagi: mission {mission_id} is {}", status.as_str()),
                reason.as_deref().unwrap_or_default(),
            ))
        }
        _ => None,
    }
}

/// Where a notification went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delivered {
    pub desktop: bool,
    pub command: bool,
}

impl Delivered {
    pub fn any(self) -> bool {
        self.desktop || self.command
    }
}

/// Sends one notification to every sink the settings turn on. Failures are logged, never
/// raised: a notification is a courtesy, not a mission step.
pub async fn deliver(settings: &NotifySettings, notification: &Notification) -> Delivered {
    let mut delivered = Delivered::default();
    if settings.desktop {
        match desktop::show(notification).await {
            Ok(()) => delivered.desktop = true,
            Err(error) => tracing::debug!(%error, "no desktop notification"),
        }
    }
    if let Some(command) = &settings.command {
        match command::run(command, notification).await {
            Ok(()) => delivered.command = true,
            Err(error) => tracing::warn!(%error, "the [notify] command failed"),
        }
    }
    delivered
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_one_line_without_controls_and_cut_to_its_limit() {
        assert_eq!(
            sanitize("  build\tfailed\n\x1b[31m  again ", 80),
            "build failed [31m again"
        );
        assert_eq!(sanitize(&"é".repeat(100), 80).chars().count(), 80);
        assert_eq!(sanitize("\n\t ", 80), "");
    }

    #[test]
    fn kinds_can_be_chosen_and_everything_switched_off() {
        let mut settings = NotifySettings::default();
        assert!(settings.wants(NotifyKind::Blocked));
        settings.kinds = Some(vec![NotifyKind::Attention]);
        assert!(settings.wants(NotifyKind::Attention) && !settings.wants(NotifyKind::Blocked));
        settings.enabled = false;
        assert!(!settings.wants(NotifyKind::Attention));
    }
}
