//! The attach (session) protocol on real panes.

use base64::Engine as _;
use nagi_schema::pane::ReadSource;
use nagi_schema::session_protocol::{
    SessionClientMessage, SessionFramePayload, SessionRole, SessionServerMessage,
};

use super::*;
use crate::{PaneError, SessionFrameReceiver, handle_session_message};

fn decode(data: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("frames carry base64")
}

async fn next_frame(frames: &mut SessionFrameReceiver) -> Option<SessionFramePayload> {
    tokio::time::timeout(PATIENCE, frames.recv())
        .await
        .expect("a frame arrives in time")
        .map(|frame| frame.payload.clone())
}

/// Renders frames into a terminal the way an attach client would, until `done` holds.
async fn mirror_until(
    frames: &mut SessionFrameReceiver,
    rows: u16,
    cols: u16,
    done: impl Fn(&str) -> bool,
) -> String {
    let mut mirror = vt100::Parser::new(rows.try_into().unwrap(), cols.try_into().unwrap(), 0);
    loop {
        match next_frame(frames).await.expect("the stream stays open") {
            SessionFramePayload::Keyframe { data, .. }
            | SessionFramePayload::Output { data, .. } => mirror.process(&decode(&data)),
            SessionFramePayload::Resize { cols, rows } => {
                mirror.set_size(rows.try_into().unwrap(), cols.try_into().unwrap())
            }
            _ => {}
        }
        let contents = mirror.screen().contents();
        if done(&contents) {
            return contents;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_observer_gets_the_current_screen_from_a_keyframe() {
    let host = test_host();
    let pane = run_script(
        &host,
        r#"printf '\033[2J\033[5;10Hplaced text\033[1;1Htop left'; sleep 60"#,
    );
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.contains("placed text")
    })
    .await;
    let mut observer = host
        .session_join(&pane.terminal_id, SessionRole::Observer, None, "late")
        .unwrap();
    assert_eq!(observer.joined.role, SessionRole::Observer);
    assert_eq!(observer.joined.session_id, pane.terminal_id);
    let first = next_frame(&mut observer.frames).await.unwrap();
    let SessionFramePayload::Keyframe { data, cols, rows } = first else {
        panic!("replay starts with a keyframe, got {first:?}")
    };
    assert_eq!((cols, rows), (Some(80), Some(24)));
    let mut mirror = vt100::Parser::new(24.try_into().unwrap(), 80.try_into().unwrap(), 0);
    mirror.process(&decode(&data));
    let rows: Vec<String> = mirror.screen().rows(0, 80).collect();
    assert_eq!(rows[0], "top left");
    assert_eq!(rows[4], "         placed text");
    assert!(matches!(
        next_frame(&mut observer.frames).await,
        Some(SessionFramePayload::RoleAssigned {
            role: SessionRole::Observer
        })
    ));
    assert!(matches!(
        next_frame(&mut observer.frames).await,
        Some(SessionFramePayload::MembershipChanged { .. })
    ));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_controller_observers_cannot_type_and_small_resizes_are_refused() {
    let host = test_host();
    let (_, _, pane) = host.create_workspace(WorkspaceCreate::default()).unwrap();
    let session = pane.terminal_id.clone();
    let mut controller = host
        .session_join(&session, SessionRole::Controller, None, "alice")
        .unwrap();
    assert_eq!(controller.joined.role, SessionRole::Controller);
    let mut second = host
        .session_join(&session, SessionRole::Controller, None, "bob")
        .unwrap();
    assert_eq!(
        second.joined.role,
        SessionRole::Observer,
        "a second controller is downgraded"
    );
    let mut saw_downgrade = false;
    while let Ok(frame) = second.frames.try_recv() {
        saw_downgrade |= frame.payload
            == SessionFramePayload::RoleAssigned {
                role: SessionRole::Observer,
            };
    }
    assert!(
        saw_downgrade,
        "role_assigned tells the client it is an observer"
    );

    let refused = host
        .session_input(&session, "bob", "echo observer-typed\n")
        .await
        .unwrap_err();
    assert!(matches!(refused, PaneError::NotController { .. }));
    assert_eq!(refused.code().as_str(), "not_controller");
    for (cols, rows) in [(19, 10), (80, 4), (0, 0)] {
        let error = host
            .session_resize(&session, "alice", cols, rows)
            .unwrap_err();
        assert_eq!(error.code().as_str(), "resize_too_small", "{cols}x{rows}");
    }
    assert_eq!(
        host.session_resize(&session, "bob", 100, 30)
            .unwrap_err()
            .code()
            .as_str(),
        "not_controller"
    );
    assert_eq!(
        host.pane_info(&pane.pane_id)
            .unwrap()
            .scroll
            .unwrap()
            .viewport_rows,
        24,
        "nothing was resized"
    );

    host.session_resize(&session, "alice", 100, 30).unwrap();
    host.session_input(&session, "alice", "stty size; echo controller-typed\n")
        .await
        .unwrap();
    let screen = mirror_until(&mut controller.frames, 24, 80, |screen| {
        screen.lines().any(|line| line == "controller-typed")
    })
    .await;
    assert!(
        screen.contains("30 100"),
        "the program sees the new size:\n{screen}"
    );
    assert!(
        !screen.contains("observer-typed"),
        "the observer's input was not written:\n{screen}"
    );

    // The controller leaves; the slot is free for the next controller request.
    let reply = handle_session_message(
        &host,
        "alice",
        SessionClientMessage::LeaveSession {
            session_id: session.clone(),
        },
    )
    .await;
    assert!(matches!(
        reply.message,
        Some(SessionServerMessage::SessionLeft(_))
    ));
    let reply = handle_session_message(
        &host,
        "carol",
        SessionClientMessage::JoinSession {
            session_id: session.clone(),
            role: SessionRole::Controller,
            replay_from: None,
            terminal: None,
        },
    )
    .await;
    assert!(
        matches!(reply.message, Some(SessionServerMessage::SessionJoined(joined)) if joined.role == SessionRole::Controller)
    );
    let reply = handle_session_message(
        &host,
        "bob",
        SessionClientMessage::SessionInput {
            session_id: session.clone(),
            data: "x".into(),
        },
    )
    .await;
    assert!(
        matches!(reply.message, Some(SessionServerMessage::Error { code, .. }) if code == "not_controller")
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_observer_is_evicted_and_does_not_slow_the_pane() {
    let host = PaneHost::new(PaneHostConfig {
        observer_queue_capacity: 16,
        ..test_config()
    });
    // 300 separate bursts of output: far more frames than the queue holds.
    let pane = run_script(
        &host,
        r#"read go; i=0; while [ $i -lt 300 ]; do echo "line $i"; sleep 0.01; i=$((i+1)); done; echo final-marker; sleep 60"#,
    );
    // Never read from this one.
    let mut stalled = host
        .session_join(&pane.terminal_id, SessionRole::Observer, None, "stalled")
        .unwrap();
    let mut reader = host
        .session_join(&pane.terminal_id, SessionRole::Observer, None, "reader")
        .unwrap();
    let drain = tokio::spawn(async move {
        let mut errors = 0;
        let mut frames = 0;
        while let Some(frame) = reader.frames.recv().await {
            frames += 1;
            errors += usize::from(matches!(frame.payload, SessionFramePayload::Error { .. }));
        }
        (frames, errors)
    });
    host.send_text(&pane.pane_id, "go\n").await.unwrap();
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.lines().any(|line| line == "final-marker")
    })
    .await;
    let mut payloads = Vec::new();
    while let Ok(frame) = stalled.frames.try_recv() {
        payloads.push(frame.payload.clone());
    }
    let last = payloads.last().expect("the stalled member got frames");
    let SessionFramePayload::Error { message } = last else {
        panic!("the last frame is the lag error, got {last:?}")
    };
    assert!(
        message.contains("lagged") && message.contains("replay_from"),
        "{message}"
    );
    assert_eq!(
        payloads
            .iter()
            .filter(|payload| matches!(payload, SessionFramePayload::Error { .. }))
            .count(),
        1
    );
    assert!(
        payloads.len() <= 17,
        "the queue stayed bounded: {} frames",
        payloads.len()
    );
    assert!(stalled.frames.recv().await.is_none(), "its stream ended");
    host.shutdown().await;
    let (frames, errors) = drain.await.unwrap();
    assert_eq!(errors, 0, "the reading observer was never evicted");
    assert!(
        frames > 100,
        "the reading observer saw the bursts: {frames} frames"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejoining_with_replay_from_continues_without_a_gap() {
    let host = test_host();
    let (_, _, pane) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["cat"])),
            ..WorkspaceCreate::default()
        })
        .unwrap();
    let mut first = host
        .session_join(&pane.terminal_id, SessionRole::Observer, None, "client")
        .unwrap();
    host.send_text(&pane.pane_id, "before\n").await.unwrap();
    let mut last_seq = 0;
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains("before\r\nbefore\r\n") {
        let frame = tokio::time::timeout(PATIENCE, first.frames.recv())
            .await
            .unwrap()
            .unwrap();
        if let SessionFramePayload::Output { data, .. } = &frame.payload {
            seen.extend(decode(data));
            last_seq = frame.seq;
        }
    }
    host.session_leave(&pane.terminal_id, "client").unwrap();
    host.send_text(&pane.pane_id, "while away\n").await.unwrap();
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.contains("while away\nwhile away")
    })
    .await;
    let mut second = host
        .session_join(
            &pane.terminal_id,
            SessionRole::Observer,
            Some(last_seq + 1),
            "client",
        )
        .unwrap();
    let mut replayed = Vec::new();
    loop {
        match next_frame(&mut second.frames).await.unwrap() {
            SessionFramePayload::Output { data, .. } => replayed.extend(decode(&data)),
            SessionFramePayload::RoleAssigned { .. } => break,
            other => panic!("replay_from replays output only here, got {other:?}"),
        }
    }
    // The screen can show the second line before the pane has read its line end, so the
    // replay may stop short of it; the live frames after the role must then carry the rest,
    // with nothing lost and nothing sent twice.
    let expected = "while away\r\nwhile away\r\n";
    while replayed.len() < expected.len() {
        if let SessionFramePayload::Output { data, .. } =
            next_frame(&mut second.frames).await.unwrap()
        {
            replayed.extend(decode(&data));
        }
    }
    assert_eq!(String::from_utf8_lossy(&replayed), expected);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_get_a_closed_frame_with_the_exit_code() {
    let host = test_host();
    let pane = run_script(&host, "read line; echo bye; exit 5");
    let mut member = host
        .session_join(&pane.terminal_id, SessionRole::Controller, None, "watcher")
        .unwrap();
    host.session_input(&pane.terminal_id, "watcher", "go\n")
        .await
        .unwrap();
    let mut output = Vec::new();
    loop {
        match next_frame(&mut member.frames)
            .await
            .expect("the stream stays open until the pane closes")
        {
            SessionFramePayload::Output { data, .. } => output.extend(decode(&data)),
            SessionFramePayload::Closed { exit_code } => {
                assert_eq!(exit_code, Some(5));
                break;
            }
            _ => {}
        }
    }
    assert!(
        String::from_utf8_lossy(&output).contains("bye"),
        "the output came before the closed frame"
    );
    let error = host
        .session_input(&pane.terminal_id, "watcher", "late\n")
        .await
        .unwrap_err();
    assert_eq!(error.code().as_str(), "pane_exited");
    host.shutdown().await;
}
