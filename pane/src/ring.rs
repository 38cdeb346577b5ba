//! The bounded ring of a pane's session frames (raw output, keyframes, resizes, closed),
//! by sequence number, from which late joiners are replayed.

use std::collections::VecDeque;

use base64::Engine as _;
use nagi_schema::session_protocol::{OutputStream, SessionFrame, SessionFramePayload};

/// Replayed output frames are merged up to this size.
const COALESCE_BYTES: usize = 64 * 1024;
/// Bytes charged for a frame without a byte payload.
const SMALL_FRAME_BYTES: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RingPayload {
    Output(Vec<u8>),
    Keyframe { data: Vec<u8>, cols: u16, rows: u16 },
    Resize { cols: u16, rows: u16 },
    Closed { exit_code: Option<i32> },
}

impl RingPayload {
    fn charged_bytes(&self) -> usize {
        match self {
            RingPayload::Output(bytes) => bytes.len().max(SMALL_FRAME_BYTES),
            RingPayload::Keyframe { data, .. } => data.len().max(SMALL_FRAME_BYTES),
            RingPayload::Resize { .. } | RingPayload::Closed { .. } => SMALL_FRAME_BYTES,
        }
    }

    pub fn to_wire(&self) -> SessionFramePayload {
        let base64 = base64::engine::general_purpose::STANDARD;
        match self {
            RingPayload::Output(bytes) => SessionFramePayload::Output {
                stream: OutputStream::Stdout,
                data: base64.encode(bytes),
            },
            RingPayload::Keyframe { data, cols, rows } => SessionFramePayload::Keyframe {
                data: base64.encode(data),
                cols: Some(*cols),
                rows: Some(*rows),
            },
            RingPayload::Resize { cols, rows } => SessionFramePayload::Resize {
                cols: *cols,
                rows: *rows,
            },
            RingPayload::Closed { exit_code } => SessionFramePayload::Closed {
                exit_code: *exit_code,
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingFrame {
    pub seq: u64,
    pub ts: u64,
    pub payload: RingPayload,
}

impl RingFrame {
    pub fn to_wire(&self, session_id: &str) -> SessionFrame {
        SessionFrame {
            session_id: session_id.to_string(),
            seq: self.seq,
            ts: self.ts,
            payload: self.payload.to_wire(),
        }
    }
}

pub struct FrameRing {
    frames: VecDeque<RingFrame>,
    bytes: usize,
    capacity_bytes: usize,
}

impl FrameRing {
    pub fn new(capacity_bytes: usize) -> FrameRing {
        FrameRing {
            frames: VecDeque::new(),
            bytes: 0,
            capacity_bytes,
        }
    }

    /// Appends a frame (sequence numbers must increase) and evicts the oldest frames
    /// beyond the byte budget; the newest frame is always kept.
    pub fn push(&mut self, frame: RingFrame) {
        debug_assert!(self.frames.back().is_none_or(|last| last.seq < frame.seq));
        self.bytes += frame.payload.charged_bytes();
        self.frames.push_back(frame);
        while self.bytes > self.capacity_bytes && self.frames.len() > 1 {
            let evicted = self.frames.pop_front().expect("more than one frame");
            self.bytes -= evicted.payload.charged_bytes();
        }
    }

    pub fn capacity_bytes(&self) -> usize {
        self.capacity_bytes
    }

    pub fn oldest_seq(&self) -> Option<u64> {
        self.frames.front().map(|frame| frame.seq)
    }

    pub fn retained_bytes(&self) -> usize {
        self.bytes
    }

    /// Index of the newest keyframe.
    fn latest_keyframe_index(&self) -> Option<usize> {
        self.frames
            .iter()
            .rposition(|frame| matches!(frame.payload, RingPayload::Keyframe { .. }))
    }

    fn index_of_seq(&self, seq: u64) -> Option<usize> {
        let oldest = self.oldest_seq()?;
        if seq < oldest {
            return None;
        }
        Some(self.frames.partition_point(|frame| frame.seq < seq))
    }

    /// Frames from the newest keyframe on, or `None` when no keyframe is retained.
    pub fn replay_from_latest_keyframe(&self) -> Option<Vec<RingFrame>> {
        self.latest_keyframe_index()
            .map(|index| self.coalesced_from(index))
    }

    /// Frames with `seq >= from`, or `None` when frames before `from` were evicted
    /// already (so the replay would have a gap).
    pub fn replay_from_seq(&self, from: u64) -> Option<Vec<RingFrame>> {
        match self.oldest_seq() {
            None => Some(Vec::new()),
            Some(oldest) if from < oldest => None,
            Some(_) => self
                .index_of_seq(from)
                .map(|index| self.coalesced_from(index)),
        }
    }

    /// Frames from `index` on, with neighbouring output frames merged up to 64 KiB. A
    /// merged frame carries the `seq` of its last part, so that `replay_from = seq + 1`
    /// continues exactly after it.
    fn coalesced_from(&self, index: usize) -> Vec<RingFrame> {
        let mut replay: Vec<RingFrame> = Vec::new();
        for frame in self.frames.range(index..) {
            if let (
                Some(RingFrame {
                    seq,
                    ts,
                    payload: RingPayload::Output(merged),
                }),
                RingPayload::Output(bytes),
            ) = (replay.last_mut(), &frame.payload)
                && merged.len() + bytes.len() <= COALESCE_BYTES
            {
                merged.extend_from_slice(bytes);
                *seq = frame.seq;
                *ts = frame.ts;
                continue;
            }
            replay.push(frame.clone());
        }
        replay
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(seq: u64, text: &str) -> RingFrame {
        RingFrame {
            seq,
            ts: seq * 10,
            payload: RingPayload::Output(text.as_bytes().to_vec()),
        }
    }

    #[test]
    fn evicts_oldest_frames_beyond_the_budget() {
        let mut ring = FrameRing::new(100);
        for seq in 1..=10 {
            ring.push(output(seq, &"x".repeat(30)));
        }
        assert_eq!(ring.oldest_seq(), Some(8));
        assert!(ring.retained_bytes() <= 100);
        assert_eq!(ring.replay_from_seq(7), None, "seq 7 was evicted");
        let replay = ring.replay_from_seq(9).unwrap();
        assert_eq!(replay.len(), 1, "outputs are merged");
        assert_eq!(replay[0].seq, 10);
        assert_eq!(
            replay[0].payload,
            RingPayload::Output("x".repeat(60).into_bytes())
        );
        assert_eq!(ring.replay_from_seq(11).unwrap(), Vec::new());
    }

    #[test]
    fn replays_from_the_latest_keyframe() {
        let mut ring = FrameRing::new(10_000);
        ring.push(output(1, "a"));
        assert_eq!(ring.replay_from_latest_keyframe(), None);
        ring.push(RingFrame {
            seq: 2,
            ts: 0,
            payload: RingPayload::Keyframe {
                data: b"K1".to_vec(),
                cols: 80,
                rows: 24,
            },
        });
        ring.push(output(3, "b"));
        ring.push(RingFrame {
            seq: 4,
            ts: 0,
            payload: RingPayload::Keyframe {
                data: b"K2".to_vec(),
                cols: 80,
                rows: 24,
            },
        });
        ring.push(output(5, "c"));
        ring.push(RingFrame {
            seq: 6,
            ts: 0,
            payload: RingPayload::Resize {
                cols: 100,
                rows: 30,
            },
        });
        ring.push(output(7, "d"));
        let replay = ring.replay_from_latest_keyframe().unwrap();
        let seqs: Vec<u64> = replay.iter().map(|frame| frame.seq).collect();
        assert_eq!(seqs, [4, 5, 6, 7]);
        let wire = replay[0].to_wire("term_1");
        assert_eq!(
            wire.payload,
            SessionFramePayload::Keyframe {
                data: "SzI=".into(),
                cols: Some(80),
                rows: Some(24)
            }
        );
    }
}
