//! What the pure state asks the outside world to do ([`Request`]), and what the outside
//! world tells it ([`ServerUpdate`]). The state never talks to the socket itself: the
//! client threads in `client/` carry these across.

use nagi_schema::attention::AttentionItemV1;
use nagi_schema::cockpit::{CockpitAction, CockpitDecision, CockpitOutcome, CockpitPreview};
use nagi_schema::events::MissionEventV1;
use nagi_schema::handoff::MissionHandoffArtifactV1;
use nagi_schema::mission::{MissionProvider, MissionViewV1};

/// A request for the client worker (or, for the pane watch, the main loop).
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Read missions and open attention items again now.
    Refresh,
    /// `cockpit.preview`: what would this action authorise?
    Preview(CockpitAction),
    /// `cockpit.decide` with the digest of the preview the person saw.
    Decide {
        action: CockpitAction,
        shown_digest: String,
        decision: CockpitDecision,
    },
    /// `mission.handoff.preview` (public; no authority).
    HandoffPreview {
        mission_id: String,
        to: MissionProvider,
    },
    /// `mission.close` (public; re-verifies and archives).
    Close { mission_id: String },
    /// `mission.diff` (public; reads only).
    Diff { mission_id: String },
    /// `mission.verify` with the declared checks consented (the person pressed the key).
    Verify { mission_id: String },
    /// Join the pane's session as an observer and mirror it in a panel.
    Watch { pane_id: String },
    /// Leave the watched pane's session.
    StopWatching,
}

/// Something the server said, or that happened to a connection.
#[derive(Debug, Clone, PartialEq)]
#[expect(
    clippy::large_enum_variant,
    reason = "one per server message, passed through one channel; boxing would only add an allocation"
)]
pub enum ServerUpdate {
    /// `cockpit.hello`: whether this terminal may grant consent.
    Hello {
        consent_allowed: bool,
        reason: Option<String>,
    },
    /// A fresh read of every mission and every unresolved attention item.
    Snapshot {
        missions: Vec<MissionViewV1>,
        attention: Vec<AttentionItemV1>,
    },
    Previewed {
        action: CockpitAction,
        preview: CockpitPreview,
    },
    Decided {
        action: CockpitAction,
        outcome: CockpitOutcome,
    },
    HandoffPreviewed {
        mission_id: String,
        to: MissionProvider,
        artifact: MissionHandoffArtifactV1,
    },
    CloseAccepted {
        mission: MissionViewV1,
    },
    DiffShown {
        diff: nagi_schema::worktree::MissionDiffV1,
    },
    VerifyAccepted {
        mission: MissionViewV1,
    },
    /// A request failed; `code` is the wire error code when the server answered one.
    Failed {
        request: Request,
        code: Option<String>,
        message: String,
    },
    /// The server cannot be reached (it is retried on every refresh).
    Unreachable {
        message: String,
    },
    /// A durable mission event from the `events.subscribe` connection.
    MissionEvent(MissionEventV1),
    /// What happened to the watched pane's session.
    Watch(WatchStatus),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchStatus {
    Joined {
        pane_id: String,
    },
    /// The pane's process ended.
    Closed {
        pane_id: String,
        exit_code: Option<i32>,
    },
    Failed {
        pane_id: String,
        message: String,
    },
}
