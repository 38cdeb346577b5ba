//! The request worker: one thread with one socket connection that performs the state's
//! requests in order and reads a fresh snapshot every `refresh_interval` (and after every
//! mutation). A lost connection is reported and opened again on the next refresh; after
//! every (re)connect the worker asks `cockpit.hello` again.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use nagi_schema::attention::AttentionItemV1;
use nagi_schema::client::{Client, ClientError};
use nagi_schema::mission::{MissionStatus, MissionViewV1};
use nagi_schema::results::ResponseResult;
use serde_json::{Value, json};

use crate::request::{Request, ServerUpdate};

/// How long one request may take before the connection is given up.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

struct Worker {
    socket_path: PathBuf,
    client: Option<Client>,
    updates: Sender<ServerUpdate>,
    /// Archived missions do not change: their views are read once.
    archived: BTreeMap<String, MissionViewV1>,
}

/// Starts the worker; requests sent to the returned channel are performed in order. The
/// thread ends when that channel is dropped.
pub fn spawn(
    socket_path: PathBuf,
    refresh_interval: Duration,
    updates: Sender<ServerUpdate>,
) -> Sender<Request> {
    let (sender, receiver) = channel();
    std::thread::Builder::new()
        .name("cockpit-requests".into())
        .spawn(move || {
            Worker {
                socket_path,
                client: None,
                updates,
                archived: BTreeMap::new(),
            }
            .run(receiver, refresh_interval)
        })
        .expect("the cockpit can start a thread");
    sender
}

fn protocol(what: &str, value: &Value) -> ClientError {
    ClientError::Protocol(format!("unexpected answer to {what}: {value}"))
}

fn decode(what: &str, value: Value) -> Result<ResponseResult, ClientError> {
    serde_json::from_value(value.clone()).map_err(|_| protocol(what, &value))
}

impl Worker {
    fn run(mut self, requests: Receiver<Request>, refresh_interval: Duration) {
        let mut queued: VecDeque<Request> = VecDeque::new();
        loop {
            let next = match queued.pop_front() {
                Some(request) => request,
                None => match requests.recv_timeout(refresh_interval) {
                    Ok(request) => request,
                    Err(RecvTimeoutError::Timeout) => Request::Refresh,
                    Err(RecvTimeoutError::Disconnected) => return,
                },
            };
            if next == Request::Refresh {
                // Many refreshes asked at once (a burst of events) are one refresh.
                while let Ok(more) = requests.try_recv() {
                    if more != Request::Refresh {
                        queued.push_back(more);
                    }
                }
            }
            let alive = self.perform(next);
            if !alive {
                return;
            }
        }
    }

    fn send(&self, update: ServerUpdate) -> bool {
        self.updates.send(update).is_ok()
    }

    /// Sends one request on the connection, connecting first when needed. A transport
    /// failure drops the connection so that the next call connects again.
    fn call(&mut self, method: &str, params: Value) -> Result<Value, ClientError> {
        if self.client.is_none() {
            let client = Client::connect(&self.socket_path)?;
            client.set_read_timeout(Some(REQUEST_TIMEOUT))?;
            self.client = Some(client);
            self.greet();
        }
        let client = self.client.as_mut().expect("connected above");
        let outcome = client.request(method, params);
        if let Err(error) = &outcome
            && error.code().is_none()
        {
            self.client = None;
        }
        outcome
    }

    /// `cockpit.hello` after a connect: may this terminal give consent?
    fn greet(&mut self) {
        let client = self.client.as_mut().expect("greet runs on a connection");
        let update = match client
            .request("cockpit.hello", json!({}))
            .and_then(|value| decode("cockpit.hello", value))
        {
            Ok(ResponseResult::CockpitHello {
                consent_allowed,
                reason,
            }) => ServerUpdate::Hello {
                consent_allowed,
                reason,
            },
            Ok(other) => ServerUpdate::Hello {
                consent_allowed: false,
                reason: Some(format!("unexpected answer to cockpit.hello: {other:?}")),
            },
            Err(error) => ServerUpdate::Hello {
                consent_allowed: false,
                reason: Some(format!(
                    "this server does not offer the cockpit channel ({error})"
                )),
            },
        };
        self.send(update);
    }

    /// Performs one request; `false` when the state has gone (the cockpit is ending).
    fn perform(&mut self, request: Request) -> bool {
        let outcome = match &request {
            Request::Refresh => self.snapshot(),
            Request::Preview(action) => self
                .call("cockpit.preview", json!({"action": action}))
                .and_then(|value| match decode("cockpit.preview", value)? {
                    ResponseResult::CockpitPreview { preview } => Ok(ServerUpdate::Previewed {
                        action: action.clone(),
                        preview,
                    }),
                    other => Err(ClientError::Protocol(format!(
                        "unexpected answer to cockpit.preview: {other:?}"
                    ))),
                }),
            Request::Decide {
                action,
                shown_digest,
                decision,
            } => self
                .call(
                    "cockpit.decide",
                    json!({"action": action, "shown_digest": shown_digest, "decision": decision}),
                )
                .and_then(|value| match decode("cockpit.decide", value)? {
                    ResponseResult::CockpitDecided { outcome } => Ok(ServerUpdate::Decided {
                        action: action.clone(),
                        outcome,
                    }),
                    other => Err(ClientError::Protocol(format!(
                        "unexpected answer to cockpit.decide: {other:?}"
                    ))),
                }),
            Request::HandoffPreview { mission_id, to } => self
                .call(
                    "mission.handoff.preview",
                    json!({"mission_id": mission_id, "to": to}),
                )
                .and_then(|value| match decode("mission.handoff.preview", value)? {
                    ResponseResult::MissionHandoffPreview { artifact } => {
                        Ok(ServerUpdate::HandoffPreviewed {
                            mission_id: mission_id.clone(),
                            to: *to,
                            artifact,
                        })
                    }
                    other => Err(ClientError::Protocol(format!(
                        "unexpected answer to mission.handoff.preview: {other:?}"
                    ))),
                }),
            Request::Close { mission_id } => self
                .call("mission.close", json!({"mission_id": mission_id}))
                .and_then(|value| match decode("mission.close", value)? {
                    ResponseResult::MissionCloseAccepted { mission } => {
                        Ok(ServerUpdate::CloseAccepted { mission })
                    }
                    other => Err(ClientError::Protocol(format!(
                        "unexpected answer to mission.close: {other:?}"
                    ))),
                }),
            Request::Diff { mission_id } => self
                .call("mission.diff", json!({"mission_id": mission_id}))
                .and_then(|value| match decode("mission.diff", value)? {
                    ResponseResult::MissionDiff { diff } => Ok(ServerUpdate::DiffShown { diff }),
                    other => Err(ClientError::Protocol(format!(
                        "unexpected answer to mission.diff: {other:?}"
                    ))),
                }),
            Request::Verify { mission_id } => self
                .call(
                    "mission.verify",
                    json!({"mission_id": mission_id, "execute_declared_checks": true}),
                )
                .and_then(|value| match decode("mission.verify", value)? {
                    ResponseResult::MissionVerifyAccepted { mission } => {
                        Ok(ServerUpdate::VerifyAccepted { mission })
                    }
                    other => Err(ClientError::Protocol(format!(
                        "unexpected answer to mission.verify: {other:?}"
                    ))),
                }),
            // The pane watch has its own connection (see `watch.rs`).
            Request::Watch { .. } | Request::StopWatching => return true,
        };
        let mutation = !matches!(request, Request::Refresh | Request::Diff { .. });
        let update = match outcome {
            Ok(update) => update,
            Err(error) => match error.code() {
                Some(code) => ServerUpdate::Failed {
                    request,
                    code: Some(code.to_string()),
                    message: remote_message(&error),
                },
                None if matches!(request, Request::Refresh) => ServerUpdate::Unreachable {
                    message: error.to_string(),
                },
                None => ServerUpdate::Failed {
                    request,
                    code: None,
                    message: error.to_string(),
                },
            },
        };
        if !self.send(update) {
            return false;
        }
        // A mutation changes what the screen should show.
        if mutation {
            self.perform(Request::Refresh)
        } else {
            true
        }
    }

    /// Every mission in full and every unresolved attention item.
    fn snapshot(&mut self) -> Result<ServerUpdate, ClientError> {
        let listed = self.call("mission.list", json!({}))?;
        let ResponseResult::MissionList {
            missions: summaries,
        } = decode("mission.list", listed)?
        else {
            return Err(ClientError::Protocol(
                "mission.list did not answer a mission list".into(),
            ));
        };
        let mut missions = Vec::with_capacity(summaries.len());
        for summary in summaries {
            if let Some(view) = self.archived.get(&summary.mission_id) {
                missions.push(view.clone());
                continue;
            }
            let got = self.call("mission.get", json!({"mission_id": summary.mission_id}))?;
            let ResponseResult::MissionInfo { mission } = decode("mission.get", got)? else {
                return Err(ClientError::Protocol(
                    "mission.get did not answer a mission".into(),
                ));
            };
            if mission.status == MissionStatus::Archived {
                self.archived
                    .insert(mission.mission_id.clone(), mission.clone());
            }
            missions.push(mission);
        }
        let listed = self.call("attention.list", json!({}))?;
        let ResponseResult::AttentionList { items } = decode("attention.list", listed)? else {
            return Err(ClientError::Protocol(
                "attention.list did not answer a list".into(),
            ));
        };
        let attention: Vec<AttentionItemV1> = items
            .into_iter()
            .filter(|item| item.state.is_unresolved())
            .collect();
        Ok(ServerUpdate::Snapshot {
            missions,
            attention,
        })
    }
}

fn remote_message(error: &ClientError) -> String {
    match error {
        ClientError::Remote { message, .. } => message.clone(),
        other => other.to_string(),
    }
}
