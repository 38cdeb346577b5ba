//! The attach protocol for panes: the formal session protocol of seed 004, carried as JSON
//! lines on the ordinary socket. A line with a `type` and no `method` is a session message.
//!
//! The `session_id` of a pane is its `terminal_id`. A client joins as controller or
//! observer; there is one controller at a time and later controller requests are
//! downgraded to observer (a `role_assigned` frame says so). Every frame of a session has
//! a `seq` that increases strictly; frames addressed to other members (such as their
//! `role_assigned`) leave gaps. A member whose queue overflows gets one `error` frame and
//! is removed; it may join again with `replay_from` set to the last `seq` it saw plus one.
//!
//! nagi extension: the controller may scroll the pane's view of its history with
//! `session_scroll`; every member is then shown that view (keyframes that draw it) instead
//! of the live output, until the view returns to the bottom.
//!
//! nagi extension: a client on a terminal may ask for `terminal: "direct"` in its
//! `join_session`. The server then opens that terminal itself (from the connection's
//! peer credentials), reads the keys from it and writes the pane's output frames to it as
//! raw bytes; the other frames still come over the socket, in order with the output. The
//! server answers `session_joined` with the mode it granted (`stream` when it cannot open
//! the terminal). Without the field the session is a stream session, as in seed 004.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Smallest size a controller may resize a session to.
pub const MIN_SESSION_COLS: u16 = 20;
pub const MIN_SESSION_ROWS: u16 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionRole {
    Controller,
    Observer,
}

/// Client → server session messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionClientMessage {
    /// Join a session. Without `replay_from` the replay starts at the latest retained
    /// keyframe (or the oldest retained frame when there is none); with it, at that
    /// sequence number when it is still retained.
    JoinSession {
        session_id: String,
        role: SessionRole,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay_from: Option<u64>,
        /// nagi extension: how the client's terminal is served (see [`SessionTerminal`]);
        /// absent means `stream`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        terminal: Option<SessionTerminal>,
    },
    LeaveSession {
        session_id: String,
    },
    /// Input for the pane's terminal (controller only).
    SessionInput {
        session_id: String,
        data: String,
    },
    /// Resize the pane's terminal (controller only, at least 20 columns by 5 rows).
    SessionResize {
        session_id: String,
        cols: u16,
        rows: u16,
    },
    /// nagi extension: move the pane's view of its history (controller only). The server
    /// keeps one view per pane and shows it to every member (see `keyframe`); `pane.get`
    /// reports it as `scroll` and `pane.scroll_changed` announces it. A step that cannot
    /// move the view (at the top of the history, already live, or in the alternate
    /// screen) changes nothing.
    SessionScroll {
        session_id: String,
        scroll: SessionScrollStep,
    },
}

/// nagi extension: how an attach client's terminal is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionTerminal {
    /// Every frame comes over the socket as a JSON line; the client writes the output to
    /// its terminal and sends the keys as `session_input`.
    Stream,
    /// The server reads the keys from the client's terminal and writes the output to it;
    /// only the other frames come over the socket. Ctrl-\ detaches (and q or Ctrl-C for
    /// an observer): the server leaves the session and answers `session_left`, after
    /// which it no longer touches the terminal.
    Direct,
}

/// How a `session_scroll` moves the view of a pane's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionScrollStep {
    /// One page back into the history: the screen's rows less one, so that one row of
    /// the previous view stays in sight.
    PageUp,
    /// One page toward the live screen.
    PageDown,
    /// Straight back to the live screen.
    Bottom,
}

impl SessionClientMessage {
    pub fn session_id(&self) -> &str {
        match self {
            SessionClientMessage::JoinSession { session_id, .. }
            | SessionClientMessage::LeaveSession { session_id }
            | SessionClientMessage::SessionInput { session_id, .. }
            | SessionClientMessage::SessionResize { session_id, .. }
            | SessionClientMessage::SessionScroll { session_id, .. } => session_id,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    Stdout,
    Stderr,
    Log,
}

/// The kind-specific part of a `session_frame`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SessionFramePayload {
    /// Raw terminal output, base64-encoded. A pane's terminal merges stdout and stderr,
    /// so `stream` is always `stdout`.
    Output {
        stream: OutputStream,
        data: String,
    },
    Resize {
        cols: u16,
        rows: u16,
    },
    /// The role this member actually holds.
    RoleAssigned {
        role: SessionRole,
    },
    /// Client ids of the members after a join or leave.
    MembershipChanged {
        controllers: Vec<String>,
        observers: Vec<String>,
    },
    /// A full-screen snapshot (escape sequences that redraw the screen, base64-encoded).
    /// `cols` and `rows` (nagi extension) give the screen size it was taken at.
    ///
    /// While the controller has scrolled the pane's view into its history
    /// (`session_scroll`), every member is sent keyframes that draw that view instead of
    /// `output` frames; they are not replayed to later joiners. The keyframe of the live
    /// screen that follows when the view returns to the bottom brings the members back.
    Keyframe {
        data: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cols: Option<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rows: Option<u16>,
    },
    /// The pane's process ended (or the pane was closed).
    Closed {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
    Error {
        message: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionFrame {
    pub session_id: String,
    pub seq: u64,
    /// Unix time in milliseconds.
    pub ts: u64,
    #[serde(flatten)]
    pub payload: SessionFramePayload,
}

/// The reply to `join_session`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionJoined {
    pub session_id: String,
    /// The role granted, which may be `observer` when `controller` was asked.
    pub role: SessionRole,
    /// The sequence number of the session's latest frame at join time; the replay that
    /// follows ends at or before it.
    pub current_seq: u64,
    /// nagi extension: the terminal mode granted, when the join asked for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<SessionTerminal>,
}

impl SessionFrame {
    /// The frame as one `session_frame` JSON line (no newline), without cloning it into a
    /// [`SessionServerMessage`] first.
    pub fn to_line(&self) -> String {
        #[derive(Serialize)]
        struct Line<'a> {
            r#type: &'static str,
            #[serde(flatten)]
            frame: &'a SessionFrame,
        }
        serde_json::to_string(&Line {
            r#type: "session_frame",
            frame: self,
        })
        .expect("session frames always serialize")
    }
}

/// The reply to `leave_session`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionLeft {
    pub session_id: String,
}

/// Server → client session messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SessionServerMessage {
    SessionJoined(SessionJoined),
    SessionLeft(SessionLeft),
    SessionFrame(SessionFrame),
    /// A session message was refused. Nothing changed.
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        code: String,
        message: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_flat_json_lines_with_type_and_kind() {
        let frame = SessionServerMessage::SessionFrame(SessionFrame {
            session_id: "term_1".into(),
            seq: 7,
            ts: 1000,
            payload: SessionFramePayload::Output {
                stream: OutputStream::Stdout,
                data: "aGk=".into(),
            },
        });
        let value = serde_json::to_value(&frame).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"type": "session_frame", "session_id": "term_1", "seq": 7, "ts": 1000, "kind": "output", "stream": "stdout", "data": "aGk="})
        );
        let back: SessionServerMessage = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(back, frame);
        let SessionServerMessage::SessionFrame(inner) = &frame else {
            unreachable!()
        };
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&inner.to_line()).unwrap(),
            value
        );
    }

    #[test]
    fn client_messages_decode() {
        let message: SessionClientMessage = serde_json::from_str(
            r#"{"type":"join_session","session_id":"term_1","role":"observer"}"#,
        )
        .unwrap();
        assert_eq!(
            message,
            SessionClientMessage::JoinSession {
                session_id: "term_1".into(),
                role: SessionRole::Observer,
                replay_from: None,
                terminal: None
            }
        );
        let direct: SessionClientMessage = serde_json::from_str(
            r#"{"type":"join_session","session_id":"term_1","role":"controller","terminal":"direct"}"#,
        )
        .unwrap();
        assert!(matches!(
            direct,
            SessionClientMessage::JoinSession {
                terminal: Some(SessionTerminal::Direct),
                ..
            }
        ));
        assert!(
            serde_json::from_str::<SessionClientMessage>(
                r#"{"type":"session_resize","session_id":"x","cols":-1,"rows":3}"#
            )
            .is_err()
        );
        let scroll: SessionClientMessage = serde_json::from_str(
            r#"{"type":"session_scroll","session_id":"term_1","scroll":"page_up"}"#,
        )
        .unwrap();
        assert_eq!(
            scroll,
            SessionClientMessage::SessionScroll {
                session_id: "term_1".into(),
                scroll: SessionScrollStep::PageUp
            }
        );
        assert!(
            serde_json::from_str::<SessionClientMessage>(
                r#"{"type":"session_scroll","session_id":"x","scroll":"sideways"}"#
            )
            .is_err()
        );
    }
}
