//! The attach registry of one pane: its session members (one controller, any number of
//! observers), the frame sequence, the replay ring and the fan-out of frames.
//!
//! While the pane's view is in its history (see `scroll`), the live screen's output and
//! keyframes are still recorded for replay but not sent: the members are shown the view
//! instead, until a keyframe of the live screen brings them back.
//!
//! A slow member never slows the pane: each member has a bounded queue, and frames are
//! offered with `try_send`. Each queue has one slot more than its configured capacity;
//! when only that slot is left, the member receives an `error` frame saying it lagged
//! (and how to rejoin) and is removed. A member whose receiver was dropped is removed
//! silently.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use nagi_schema::session_protocol::{
    SessionFrame, SessionFramePayload, SessionJoined, SessionRole,
};
use tokio::sync::mpsc;

use super::attach_direct::DirectOutput;
use super::ring::{FrameRing, RingFrame, RingPayload};

/// Receives the frames of one session membership: the replay first, then live frames.
/// The stream ends after an `error` frame (the member was removed for lagging) or when
/// the pane is closed.
pub type SessionFrameReceiver = mpsc::Receiver<Arc<SessionFrame>>;

/// Largest output frame; bigger batches are split.
const OUTPUT_FRAME_BYTES: usize = 256 * 1024;

pub fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis() as u64)
}

struct Member {
    client_id: String,
    role: SessionRole,
    sender: mpsc::Sender<Arc<SessionFrame>>,
    /// The member's terminal, when the server serves it directly (see `attach_direct`).
    direct: Option<Arc<DirectOutput>>,
}

/// What a keyframe needs from the terminal: the redraw bytes and the size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyframeSource {
    pub data: Vec<u8>,
    pub cols: u16,
    pub rows: u16,
}

pub struct SessionState {
    session_id: String,
    next_seq: u64,
    ring: FrameRing,
    members: Vec<Member>,
    queue_capacity: usize,
    keyframe_interval_bytes: usize,
    output_since_keyframe: usize,
    closed: Option<Option<i32>>,
    /// Rows the pane's view is above the live screen's bottom (0: the live screen).
    view_offset: usize,
    /// The drawing of the view the members were last sent, while the view is in the
    /// history: sent to a member that joins, and not sent again when unchanged.
    view_drawing: Option<KeyframeSource>,
}

/// The result of a join: the reply for the client and its frame stream.
pub struct SessionMembership {
    pub joined: SessionJoined,
    pub frames: SessionFrameReceiver,
}

impl SessionState {
    pub fn new(
        session_id: String,
        ring_bytes: usize,
        queue_capacity: usize,
        keyframe_interval_bytes: usize,
    ) -> SessionState {
        SessionState {
            session_id,
            next_seq: 1,
            ring: FrameRing::new(ring_bytes),
            members: Vec::new(),
            queue_capacity: queue_capacity.max(4),
            keyframe_interval_bytes,
            output_since_keyframe: 0,
            closed: None,
            view_offset: 0,
            view_drawing: None,
        }
    }

    /// Rows the pane's view is above the live screen's bottom (0: the live screen).
    pub fn view_offset(&self) -> usize {
        self.view_offset
    }

    /// The sequence number of the latest frame (0 before the first).
    pub fn current_seq(&self) -> u64 {
        self.next_seq - 1
    }

    pub fn member_count(&self) -> usize {
        self.members.len()
    }

    fn take_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    fn wire(&self, frame: &RingFrame) -> Arc<SessionFrame> {
        Arc::new(frame.to_wire(&self.session_id))
    }

    /// Appends a replayable frame to the ring and offers it to every member, unless it
    /// draws the live screen while the members are shown the history.
    fn record(&mut self, payload: RingPayload) {
        let frame = RingFrame {
            seq: self.take_seq(),
            ts: unix_millis(),
            payload,
        };
        let draws_live_screen = matches!(
            frame.payload,
            RingPayload::Output(_) | RingPayload::Keyframe { .. }
        );
        let shown = !(draws_live_screen && self.view_offset > 0);
        if shown && !self.members.is_empty() {
            match &frame.payload {
                RingPayload::Output(bytes) => self.fan_out_output(&frame, bytes),
                _ => {
                    let wire = self.wire(&frame);
                    self.fan_out(&wire);
                }
            }
        }
        self.ring.push(frame);
    }

    /// Whether enough output passed since the last keyframe that a new one is due.
    pub fn keyframe_due(&self) -> bool {
        self.keyframe_interval_bytes > 0
            && self.output_since_keyframe >= self.keyframe_interval_bytes
    }

    pub fn record_output(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.output_since_keyframe += bytes.len();
        // Very large batches are split so that one frame stays a reasonable line. With
        // nobody attached, chunks that the ring would evict at once are not copied; their
        // sequence numbers are skipped, and a later `replay_from` into them falls back to
        // a keyframe as for any evicted frame.
        let chunks: Vec<&[u8]> = bytes.chunks(OUTPUT_FRAME_BYTES).collect();
        let keep_from = if self.members.is_empty() {
            chunks.len().saturating_sub(
                self.ring
                    .capacity_bytes()
                    .div_ceil(OUTPUT_FRAME_BYTES)
                    .max(1),
            )
        } else {
            0
        };
        self.next_seq += keep_from as u64;
        for chunk in &chunks[keep_from..] {
            self.record(RingPayload::Output(chunk.to_vec()));
        }
    }

    pub fn record_keyframe(&mut self, source: KeyframeSource) {
        self.output_since_keyframe = 0;
        self.record(RingPayload::Keyframe {
            data: source.data,
            cols: source.cols,
            rows: source.rows,
        });
    }

    /// Shows every member the view `offset` rows up in the history: a keyframe of
    /// `drawing` for the members only (it is not replayed). A drawing the members were
    /// already sent is not sent again.
    pub fn show_history(&mut self, offset: usize, drawing: KeyframeSource) {
        debug_assert!(offset > 0, "offset 0 is the live screen: show_live");
        self.view_offset = offset;
        if self.view_drawing.as_ref() == Some(&drawing) {
            return;
        }
        let frame = self.direct_frame(keyframe_payload(&drawing));
        self.view_drawing = Some(drawing);
        self.fan_out(&frame);
    }

    /// Brings the members back to the live screen with `keyframe`, which is recorded (a
    /// later `replay_from` starts over from it) and sent.
    pub fn show_live(&mut self, keyframe: KeyframeSource) {
        self.view_offset = 0;
        self.view_drawing = None;
        self.record_keyframe(keyframe);
    }

    pub fn record_resize(&mut self, cols: u16, rows: u16) {
        self.record(RingPayload::Resize { cols, rows });
    }

    /// The pane's process ended; recorded once.
    pub fn record_closed(&mut self, exit_code: Option<i32>) {
        if self.closed.is_some() {
            return;
        }
        self.closed = Some(exit_code);
        self.record(RingPayload::Closed { exit_code });
    }

    /// Offers output to every member: written at once to the terminal of a direct member
    /// that has nothing queued (what the terminal did not take is queued after), queued
    /// as a frame for the others.
    fn fan_out_output(&mut self, frame: &RingFrame, bytes: &[u8]) {
        let mut wire = None;
        let mut removed_any = false;
        let mut index = 0;
        while index < self.members.len() {
            let member = &self.members[index];
            let mut queued = None;
            if let Some(direct) = member.direct.as_ref().filter(|direct| direct.idle())
                && !member.sender.is_closed()
            {
                let written = direct.write_now(bytes);
                if written == bytes.len() {
                    index += 1;
                    continue;
                }
                if written > 0 {
                    let rest = RingFrame {
                        seq: frame.seq,
                        ts: frame.ts,
                        payload: RingPayload::Output(bytes[written..].to_vec()),
                    };
                    queued = Some(self.wire(&rest));
                }
            }
            let queued =
                queued.unwrap_or_else(|| wire.get_or_insert_with(|| self.wire(frame)).clone());
            if self.offer(index, queued) {
                index += 1;
            } else {
                self.members.remove(index);
                removed_any = true;
            }
        }
        if removed_any {
            self.announce_membership();
        }
    }

    /// Serves `client_id`'s membership on its terminal from now on (see `attach_direct`);
    /// false when it is not a member.
    pub fn set_direct_output(&mut self, client_id: &str, direct: Arc<DirectOutput>) -> bool {
        let Some(member) = self
            .members
            .iter_mut()
            .find(|member| member.client_id == client_id)
        else {
            return false;
        };
        // The frames queued so far (the replay) are written by the connection's writer.
        direct.set_outstanding(member.sender.max_capacity() - member.sender.capacity());
        member.direct = Some(direct);
        true
    }

    /// Offers a frame to every member, removing the ones that lag or are gone.
    fn fan_out(&mut self, frame: &Arc<SessionFrame>) {
        let mut removed_any = false;
        let mut index = 0;
        while index < self.members.len() {
            let keep = self.offer(index, frame.clone());
            if keep {
                index += 1;
            } else {
                self.members.remove(index);
                removed_any = true;
            }
        }
        if removed_any {
            self.announce_membership();
        }
    }

    /// Offers one frame to one member; false when the member must be removed.
    fn offer(&mut self, index: usize, frame: Arc<SessionFrame>) -> bool {
        let member = &self.members[index];
        if member.sender.is_closed() {
            return false;
        }
        if member.sender.capacity() <= 1 {
            let message = format!(
                "client {} lagged: its queue of {} frames overflowed at seq {}; join again with replay_from to resume",
                member.client_id, self.queue_capacity, frame.seq
            );
            let error = self.direct_frame(SessionFramePayload::Error { message });
            send(&self.members[index], error);
            return false;
        }
        send(&self.members[index], frame)
    }

    /// A frame for one member only (not retained); it still takes a sequence number.
    fn direct_frame(&mut self, payload: SessionFramePayload) -> Arc<SessionFrame> {
        Arc::new(SessionFrame {
            session_id: self.session_id.clone(),
            seq: self.take_seq(),
            ts: unix_millis(),
            payload,
        })
    }

    fn announce_membership(&mut self) {
        if self.members.is_empty() {
            return;
        }
        let controllers = self
            .members
            .iter()
            .filter(|member| member.role == SessionRole::Controller)
            .map(|member| member.client_id.clone())
            .collect();
        let observers = self
            .members
            .iter()
            .filter(|member| member.role == SessionRole::Observer)
            .map(|member| member.client_id.clone())
            .collect();
        let frame = self.direct_frame(SessionFramePayload::MembershipChanged {
            controllers,
            observers,
        });
        self.fan_out(&frame);
    }

    pub fn is_controller(&self, client_id: &str) -> bool {
        self.members
            .iter()
            .any(|member| member.client_id == client_id && member.role == SessionRole::Controller)
    }

    /// Adds a member. A controller request is downgraded when another member controls the
    /// session. A client that is already a member is replaced (its old stream ends).
    /// `keyframe` is called when the replay needs a keyframe of the current screen.
    pub fn join(
        &mut self,
        client_id: &str,
        requested_role: SessionRole,
        replay_from: Option<u64>,
        keyframe: impl FnOnce() -> KeyframeSource,
    ) -> SessionMembership {
        self.members.retain(|member| member.client_id != client_id);
        let role = if requested_role == SessionRole::Controller
            && self
                .members
                .iter()
                .any(|member| member.role == SessionRole::Controller)
        {
            SessionRole::Observer
        } else {
            requested_role
        };
        // Room for the replay plus the history view, role_assigned and membership_changed.
        let replay_budget = self.queue_capacity.saturating_sub(3);
        let mut replay = replay_from
            .and_then(|from| self.ring.replay_from_seq(from))
            .or_else(|| self.ring.replay_from_latest_keyframe())
            .filter(|frames| frames.len() <= replay_budget);
        if replay.is_none() {
            // No usable keyframe retained (or too much to replay): take one now.
            self.record_keyframe(keyframe());
            replay = self.ring.replay_from_latest_keyframe();
        }
        let mut replay = replay.unwrap_or_default();
        let replays_closed = replay
            .iter()
            .any(|frame| matches!(frame.payload, RingPayload::Closed { .. }));
        if let (Some(exit_code), false) = (self.closed, replays_closed) {
            // The joiner must learn that the process ended even if the closed frame is
            // older than the replay.
            replay.push(RingFrame {
                seq: self.take_seq(),
                ts: unix_millis(),
                payload: RingPayload::Closed { exit_code },
            });
        }
        let (sender, frames) = mpsc::channel(self.queue_capacity + 1);
        for frame in &replay {
            let _ = sender.try_send(self.wire(frame));
        }
        // The replay draws the live screen; a view in the history is drawn over it.
        if let Some(drawing) = self.view_drawing.clone().filter(|_| self.view_offset > 0) {
            let _ = sender.try_send(self.direct_frame(keyframe_payload(&drawing)));
        }
        let role_frame = self.direct_frame(SessionFramePayload::RoleAssigned { role });
        let _ = sender.try_send(role_frame);
        let joined = SessionJoined {
            session_id: self.session_id.clone(),
            role,
            current_seq: self.current_seq(),
            terminal: None,
        };
        self.members.push(Member {
            client_id: client_id.to_string(),
            role,
            sender,
            direct: None,
        });
        self.announce_membership();
        SessionMembership { joined, frames }
    }

    /// Removes a member; false when it was not one.
    pub fn leave(&mut self, client_id: &str) -> bool {
        let before = self.members.len();
        self.members.retain(|member| member.client_id != client_id);
        let left = self.members.len() != before;
        if left {
            self.announce_membership();
        }
        left
    }

    /// Ends every membership (the pane is going away); streams end after queued frames.
    pub fn drop_members(&mut self) {
        self.members.clear();
    }
}

/// Queues a frame for a member; false when its queue took it not.
fn send(member: &Member, frame: Arc<SessionFrame>) -> bool {
    if let Some(direct) = &member.direct {
        direct.queued();
    }
    let sent = member.sender.try_send(frame).is_ok();
    if !sent && let Some(direct) = &member.direct {
        direct.unqueued();
    }
    sent
}

/// A keyframe frame's payload of `source`.
fn keyframe_payload(source: &KeyframeSource) -> SessionFramePayload {
    RingPayload::Keyframe {
        data: source.data.clone(),
        cols: source.cols,
        rows: source.rows,
    }
    .to_wire()
}

#[cfg(test)]
#[path = "attach_state_tests.rs"]
mod tests;
