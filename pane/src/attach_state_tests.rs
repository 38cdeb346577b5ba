//! Tests of the attach registry of one pane (`attach.rs`): roles, eviction, replay and
//! the history view.

use super::*;

fn keyframe() -> KeyframeSource {
    KeyframeSource {
        data: b"SCREEN".to_vec(),
        cols: 80,
        rows: 24,
    }
}

fn drain(frames: &mut SessionFrameReceiver) -> Vec<SessionFramePayload> {
    let mut payloads = Vec::new();
    while let Ok(frame) = frames.try_recv() {
        payloads.push(frame.payload.clone());
    }
    payloads
}

#[test]
fn second_controller_is_downgraded_and_membership_is_announced() {
    let mut session = SessionState::new("term_1".into(), 1 << 20, 16, 0);
    let mut first = session.join("a", SessionRole::Controller, None, keyframe);
    assert_eq!(first.joined.role, SessionRole::Controller);
    let second = session.join("b", SessionRole::Controller, None, keyframe);
    assert_eq!(second.joined.role, SessionRole::Observer);
    assert!(session.is_controller("a"));
    assert!(!session.is_controller("b"));
    let payloads = drain(&mut first.frames);
    assert!(payloads.contains(&SessionFramePayload::MembershipChanged {
        controllers: vec!["a".into()],
        observers: vec!["b".into()]
    }));
    assert!(session.leave("a"));
    assert!(!session.leave("a"));
    let third = session.join("c", SessionRole::Controller, None, keyframe);
    assert_eq!(
        third.joined.role,
        SessionRole::Controller,
        "the slot is free again"
    );
}

#[test]
fn a_member_that_never_reads_is_evicted_with_one_error_frame() {
    let mut session = SessionState::new("term_1".into(), 1 << 20, 8, 0);
    let mut stalled = session.join("slow", SessionRole::Observer, None, keyframe);
    let mut reader = session.join("fast", SessionRole::Observer, None, keyframe);
    for index in 0..100 {
        session.record_output(format!("chunk {index}").as_bytes());
        drain(&mut reader.frames);
    }
    assert_eq!(session.member_count(), 1);
    let payloads = drain(&mut stalled.frames);
    let errors: Vec<_> = payloads
        .iter()
        .filter(|payload| matches!(payload, SessionFramePayload::Error { .. }))
        .collect();
    assert_eq!(errors.len(), 1);
    assert!(
        matches!(errors[0], SessionFramePayload::Error { message } if message.contains("replay_from"))
    );
    assert!(matches!(
        payloads.last(),
        Some(SessionFramePayload::Error { .. })
    ));
    assert!(stalled.frames.try_recv().is_err(), "the stream ended");
}

#[test]
fn replay_from_resumes_exactly_after_the_last_seen_frame() {
    let mut session = SessionState::new("term_1".into(), 1 << 20, 64, 0);
    session.record_output(b"one");
    let seen = session.current_seq();
    session.record_output(b"two");
    session.record_output(b"three");
    let mut rejoin = session.join("a", SessionRole::Observer, Some(seen + 1), keyframe);
    let payloads = drain(&mut rejoin.frames);
    let base64 = base64::engine::general_purpose::STANDARD;
    use base64::Engine as _;
    assert_eq!(
        payloads[0],
        SessionFramePayload::Output {
            stream: nagi_schema::session_protocol::OutputStream::Stdout,
            data: base64.encode("twothree")
        }
    );
    assert!(matches!(
        payloads[1],
        SessionFramePayload::RoleAssigned {
            role: SessionRole::Observer
        }
    ));
}

fn history(text: &str) -> KeyframeSource {
    KeyframeSource {
        data: text.as_bytes().to_vec(),
        cols: 80,
        rows: 24,
    }
}

fn keyframe_texts(payloads: &[SessionFramePayload]) -> Vec<String> {
    use base64::Engine as _;
    payloads
        .iter()
        .filter_map(|payload| match payload {
            SessionFramePayload::Keyframe { data, .. } => Some(
                String::from_utf8(
                    base64::engine::general_purpose::STANDARD
                        .decode(data)
                        .unwrap(),
                )
                .unwrap(),
            ),
            _ => None,
        })
        .collect()
}

#[test]
fn members_see_the_history_view_instead_of_live_output_until_it_returns() {
    let mut session = SessionState::new("term_1".into(), 1 << 20, 64, 0);
    let mut member = session.join("a", SessionRole::Controller, None, keyframe);
    drain(&mut member.frames);
    session.show_history(23, history("VIEW 23"));
    session.record_output(b"live output");
    session.show_history(23, history("VIEW 23"));
    session.record_resize(100, 30);
    let payloads = drain(&mut member.frames);
    assert_eq!(keyframe_texts(&payloads), ["VIEW 23"], "sent once");
    assert!(
        !payloads
            .iter()
            .any(|payload| matches!(payload, SessionFramePayload::Output { .. })),
        "no live output while the view is up: {payloads:?}"
    );
    assert!(
        payloads.contains(&SessionFramePayload::Resize {
            cols: 100,
            rows: 30
        }),
        "a resize still reaches the members"
    );

    // A late joiner gets the replay of the live screen, then the view over it.
    let mut late = session.join("b", SessionRole::Observer, None, keyframe);
    let payloads = drain(&mut late.frames);
    assert!(
        payloads.iter().any(
            |payload| matches!(payload, SessionFramePayload::Output { data, .. } if !data.is_empty())
        ),
        "the live output is replayed: {payloads:?}"
    );
    assert_eq!(keyframe_texts(&payloads).last().unwrap(), "VIEW 23");

    session.show_live(history("LIVE"));
    session.record_output(b"more");
    let payloads = drain(&mut member.frames);
    assert_eq!(keyframe_texts(&payloads), ["LIVE"]);
    assert!(
        payloads
            .iter()
            .any(|payload| matches!(payload, SessionFramePayload::Output { .. })),
        "live output flows again: {payloads:?}"
    );
    assert_eq!(session.view_offset(), 0);
}

#[test]
fn a_fresh_join_without_a_keyframe_gets_one_and_learns_about_exit() {
    let mut session = SessionState::new("term_1".into(), 1 << 20, 64, 0);
    session.record_output(b"old output");
    session.record_closed(Some(3));
    let mut joiner = session.join("late", SessionRole::Observer, None, keyframe);
    let payloads = drain(&mut joiner.frames);
    assert!(matches!(
        &payloads[0],
        SessionFramePayload::Keyframe {
            cols: Some(80),
            rows: Some(24),
            ..
        }
    ));
    assert_eq!(
        payloads[1],
        SessionFramePayload::Closed { exit_code: Some(3) }
    );
    assert!(joiner.joined.current_seq >= 3);
}
