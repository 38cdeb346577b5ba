//! The server half of the reducer: snapshots, previews, decisions, failures and events.

use nagi_schema::cockpit::CockpitDecision;
use nagi_schema::events::MissionEventDetail;

use super::{App, ChecksProgress, Connection, ConsentPermission, Screen, WatchState};
use crate::request::{Request, ServerUpdate, WatchStatus};

/// The wire code of a consent whose preview no longer matches.
pub const CONSENT_STALE: &str = "consent_stale";

impl App {
    /// Applies one update; returns what to send next.
    pub fn apply(&mut self, update: ServerUpdate) -> Vec<Request> {
        match update {
            ServerUpdate::Hello {
                consent_allowed,
                reason,
            } => {
                self.connection = Connection::Connected;
                self.consent = if consent_allowed {
                    ConsentPermission::Allowed
                } else {
                    ConsentPermission::Refused(
                        reason.unwrap_or_else(|| "the server gave no reason".into()),
                    )
                };
            }
            ServerUpdate::Snapshot {
                missions,
                attention,
            } => {
                self.connection = Connection::Connected;
                self.missions = missions;
                self.attention = attention;
                self.repair_selection();
            }
            ServerUpdate::Previewed { action, preview } => {
                if let Screen::Consent(dialog) = &mut self.screen
                    && dialog.action == action
                {
                    dialog.preview = Some(preview);
                    dialog.error = None;
                    dialog.scroll = 0;
                }
            }
            ServerUpdate::Decided { action, outcome } => {
                if let Screen::Consent(dialog) = &self.screen
                    && dialog.action == action
                {
                    self.screen = Screen::Main;
                }
                let verb = match outcome.decision {
                    CockpitDecision::Approve => "approved",
                    CockpitDecision::Deny => "denied",
                };
                self.info(format!(
                    "{verb} ({}): {}",
                    outcome.consent_id, outcome.summary
                ));
                return vec![Request::Refresh];
            }
            ServerUpdate::HandoffPreviewed {
                mission_id,
                to,
                artifact,
            } => {
                if let Screen::Handoff(form) = &mut self.screen {
                    form.accept_artifact(&mission_id, to, artifact);
                    self.notice = None;
                }
            }
            ServerUpdate::VerifyAccepted { mission } => {
                self.info(format!(
                    "{}: verifying; the checks' evidence follows in the mission's detail",
                    mission.mission_id
                ));
                return vec![Request::Refresh];
            }
            ServerUpdate::DiffShown { diff } => {
                if let Screen::Diff(view) = &mut self.screen
                    && view.mission_id == diff.mission_id
                {
                    view.show(&diff);
                }
            }
            ServerUpdate::CloseAccepted { mission } => {
                self.info(format!(
                    "{}: close accepted; re-verifying, then archiving",
                    mission.mission_id
                ));
                return vec![Request::Refresh];
            }
            ServerUpdate::Failed {
                request,
                code,
                message,
            } => return self.failed(request, code, message),
            ServerUpdate::Unreachable { message } => {
                self.connection = Connection::Unreachable(message)
            }
            ServerUpdate::MissionEvent(event) => {
                if let Some(alert) = alert_for(&event) {
                    self.alerts.push(alert);
                }
                match &event.detail {
                    MissionEventDetail::MissionChecksStarted {
                        run_id,
                        purpose,
                        check_count,
                    } => {
                        let progress = ChecksProgress {
                            run_id: run_id.clone(),
                            purpose: purpose.clone(),
                            check_count: *check_count,
                        };
                        self.checks_running
                            .insert(event.mission_id.clone(), progress);
                    }
                    MissionEventDetail::MissionChecksFinished { .. } => {
                        self.checks_running.remove(&event.mission_id);
                    }
                    _ => {}
                }
                return vec![Request::Refresh];
            }
            ServerUpdate::Watch(status) => self.watch_status(status),
        }
        Vec::new()
    }

    fn failed(&mut self, request: Request, code: Option<String>, message: String) -> Vec<Request> {
        let described = match &code {
            Some(code) => format!("{code}: {message}"),
            None => message.clone(),
        };
        match request {
            Request::Preview(action) => {
                if let Screen::Consent(dialog) = &mut self.screen
                    && dialog.action == action
                {
                    dialog.error = Some(format!("the server refused the preview: {described}"));
                    return Vec::new();
                }
                self.error(described);
            }
            Request::Decide { action, .. } => {
                if let Screen::Consent(dialog) = &mut self.screen
                    && dialog.action == action
                {
                    dialog.deciding = None;
                    if code.as_deref() == Some(CONSENT_STALE) {
                        // What the person saw is no longer what it would authorise: show
                        // the new preview; nothing was decided.
                        dialog.preview = None;
                        dialog.note = Some(format!(
                            "the preview changed since you saw it ({message}); read it again"
                        ));
                        return vec![Request::Preview(action)];
                    }
                    dialog.error = Some(format!("the server refused the decision: {described}"));
                    return Vec::new();
                }
                self.error(described);
            }
            Request::Verify { mission_id } => {
                self.error(format!("verify {mission_id}: {described}"));
            }
            Request::Diff { mission_id } => {
                if matches!(&self.screen, Screen::Diff(view) if view.mission_id == mission_id) {
                    self.screen = Screen::Main;
                }
                self.error(format!("diff of {mission_id}: {described}"));
            }
            Request::HandoffPreview { .. } => {
                if let Screen::Handoff(form) = &mut self.screen {
                    form.waiting = false;
                }
                self.error(format!("handoff preview: {described}"));
            }
            Request::Close { mission_id } => self.error(format!("close {mission_id}: {described}")),
            Request::Refresh | Request::Watch { .. } | Request::StopWatching => {
                self.error(described)
            }
        }
        Vec::new()
    }

    fn watch_status(&mut self, status: WatchStatus) {
        let Some(watching) = self.watching.as_mut() else {
            return;
        };
        match status {
            WatchStatus::Joined { pane_id } if pane_id == watching.pane_id => {
                watching.state = WatchState::Live
            }
            WatchStatus::Closed { pane_id, exit_code } if pane_id == watching.pane_id => {
                watching.state = WatchState::Ended(match exit_code {
                    Some(code) => format!("the pane's process exited with code {code}"),
                    None => "the pane's process ended".into(),
                });
            }
            WatchStatus::Failed { pane_id, message } if pane_id == watching.pane_id => {
                watching.state = WatchState::Ended(message)
            }
            _ => {}
        }
    }
}

/// What a mission event tells the person at the cockpit, if it is something they should
/// hear of now: an attention item that opened, or a mission that waits for review, is ready
/// to close, failed or is blocked.
fn alert_for(event: &nagi_schema::events::MissionEventV1) -> Option<super::Alert> {
    use nagi_schema::mission::MissionStatus;
    let mission_id = &event.mission_id;
    let waits = matches!(
        event.status,
        MissionStatus::ReviewRequired
            | MissionStatus::ReadyToClose
            | MissionStatus::Failed
            | MissionStatus::Blocked
    );
    match &event.detail {
        MissionEventDetail::MissionAttentionChanged { state, .. } if state == "open" => {
            Some(super::Alert {
                title: format!("nagi: mission {mission_id} needs you"),
                body: "an attention item opened; answer it here".into(),
            })
        }
        MissionEventDetail::MissionStatusChanged { reason } if waits => Some(super::Alert {
            title: format!("nagi: mission {mission_id} is {}", event.status.as_str()),
            body: reason.clone().unwrap_or_default(),
        }),
        MissionEventDetail::MissionProofSealed { .. } if waits => Some(super::Alert {
            title: format!("nagi: mission {mission_id} is {}", event.status.as_str()),
            body: "the proof verified".into(),
        }),
        _ => None,
    }
}
