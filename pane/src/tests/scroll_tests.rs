//! Scrolling a pane's view of its history through the session protocol, on real panes:
//! what the attached screens show, what `pane.get` reports, and `pane.scroll_changed`.

use nagi_schema::pane::{PaneScrollInfo, ReadSource};
use nagi_schema::pane_events::{PaneEventEnvelope, PaneSubscriptionEnvelope};
use nagi_schema::session_protocol::{
    SessionClientMessage, SessionFramePayload, SessionRole, SessionScrollStep, SessionServerMessage,
};
use tokio::sync::broadcast;

use super::*;
use crate::{SessionFrameReceiver, handle_session_message};

/// A screen that renders a member's frames, as an attach client's terminal does.
struct Mirror {
    parser: vt100::Parser,
    frames: SessionFrameReceiver,
}

impl Mirror {
    fn new(frames: SessionFrameReceiver) -> Mirror {
        Mirror {
            parser: vt100::Parser::new(24.try_into().unwrap(), 80.try_into().unwrap(), 0),
            frames,
        }
    }

    fn rows(&self) -> Vec<String> {
        self.parser
            .screen()
            .rows(0, 80)
            .map(|row| row.trim_end().to_string())
            .collect()
    }

    /// Applies frames until the screen satisfies `accept`; returns its rows.
    async fn until(&mut self, what: &str, accept: impl Fn(&[String]) -> bool) -> Vec<String> {
        use base64::Engine as _;
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let rows = self.rows();
            if accept(&rows) {
                return rows;
            }
            let frame = tokio::time::timeout_at(deadline, self.frames.recv())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "the screen never showed {what}; it shows:\n{}",
                        rows.join("\n")
                    )
                })
                .expect("the member's stream stays open");
            match &frame.payload {
                SessionFramePayload::Keyframe { data, .. }
                | SessionFramePayload::Output { data, .. } => self.parser.process(
                    &base64::engine::general_purpose::STANDARD
                        .decode(data)
                        .expect("frames carry base64"),
                ),
                SessionFramePayload::Resize { cols, rows } => self
                    .parser
                    .screen_mut()
                    .set_size((*rows).try_into().unwrap(), (*cols).try_into().unwrap()),
                _ => {}
            }
        }
    }
}

async fn send(host: &Arc<PaneHost>, client_id: &str, message: SessionClientMessage) {
    let reply = handle_session_message(host, client_id, message).await;
    assert!(
        reply.message.is_none(),
        "{client_id}'s message was refused: {:?}",
        reply.message
    );
}

fn scroll(session_id: &str, step: SessionScrollStep) -> SessionClientMessage {
    SessionClientMessage::SessionScroll {
        session_id: session_id.to_string(),
        scroll: step,
    }
}

fn scroll_info(host: &PaneHost, pane_id: &str) -> PaneScrollInfo {
    host.pane_info(pane_id)
        .expect("the pane exists")
        .scroll
        .expect("panes report their scroll metrics")
}

/// The next `pane.scroll_changed` whose offset is `offset`, skipping earlier ones (output
/// may move the view in more than one batch).
async fn scroll_changed_to(
    events: &mut broadcast::Receiver<PaneEventEnvelope>,
    pane_id: &str,
    offset: u64,
) -> PaneScrollInfo {
    let event = next_event(events, |event| {
        matches!(
            event,
            PaneEventEnvelope::Subscription(PaneSubscriptionEnvelope::ScrollChanged(changed))
                if changed.pane_id == pane_id && changed.scroll.offset_from_bottom == offset
        )
    })
    .await;
    match event {
        PaneEventEnvelope::Subscription(PaneSubscriptionEnvelope::ScrollChanged(changed)) => {
            changed.scroll
        }
        _ => unreachable!("only scroll_changed events are accepted"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_scrolls_the_history_output_keeps_the_view_and_typing_returns_to_live() {
    let host = test_host();
    let pane = run_script(
        &host,
        r#"seq -f 'line-%g' 1 200; while read word; do seq -f "$word-%g" 1 30; done"#,
    );
    let pane_id = pane.pane_id.clone();
    let session_id = pane.terminal_id.clone();
    wait_for_text(&host, &pane_id, ReadSource::Visible, |text| {
        text.contains("line-200")
    })
    .await;
    // 24 rows: the screen shows line-178 … line-200 and the shell's empty row; the 177
    // lines above are history.
    assert_eq!(
        scroll_info(&host, &pane_id),
        PaneScrollInfo {
            offset_from_bottom: 0,
            max_offset_from_bottom: 177,
            viewport_rows: 24
        }
    );
    let mut events = host.subscribe_events();
    let person = host
        .session_join(&session_id, SessionRole::Controller, None, "person")
        .unwrap();
    let watcher = host
        .session_join(&session_id, SessionRole::Observer, None, "watcher")
        .unwrap();
    let mut person = Mirror::new(person.frames);
    let mut watcher = Mirror::new(watcher.frames);
    person
        .until("the live screen", |rows| rows[22] == "line-200")
        .await;

    // Shift+PageUp: one page (23 rows) up; both screens show the older lines.
    send(
        &host,
        "person",
        scroll(&session_id, SessionScrollStep::PageUp),
    )
    .await;
    let changed = scroll_changed_to(&mut events, &pane_id, 23).await;
    assert_eq!(changed.max_offset_from_bottom, 177);
    let answer = crate::dispatch(&host, "pane.get", serde_json::json!({"pane_id": pane_id}))
        .await
        .expect("a pane method")
        .expect("pane.get answers");
    assert_eq!(answer["pane"]["scroll"]["offset_from_bottom"], 23);
    let view_is_up_one_page = |rows: &[String]| {
        rows[0].starts_with("line-155 ") && rows[0].ends_with("[23/177]") && rows[23] == "line-178"
    };
    let shown = person.until("the page above", view_is_up_one_page).await;
    assert_eq!(shown[1], "line-156");
    assert!(!shown.iter().any(|row| row == "line-200"), "{shown:?}");
    watcher.until("the page above", view_is_up_one_page).await;
    assert_eq!(
        read_text(&host, &pane_id, ReadSource::Visible, None)
            .lines()
            .nth(22),
        Some("line-200"),
        "reads still see the live screen"
    );

    // An observer cannot move the view.
    let refused = handle_session_message(
        &host,
        "watcher",
        scroll(&session_id, SessionScrollStep::PageUp),
    )
    .await;
    assert!(
        matches!(&refused.message, Some(SessionServerMessage::Error { code, .. }) if code == "not_controller"),
        "{:?}",
        refused.message
    );
    assert_eq!(scroll_info(&host, &pane_id).offset_from_bottom, 23);

    // Output while the view is up (input from a script, not the controller's typing): 31
    // rows scroll into the history ("more" echoed, then more-1 … more-30), and the view
    // stays on the rows it showed.
    host.send_text(&pane_id, "more\n").await.unwrap();
    let changed = scroll_changed_to(&mut events, &pane_id, 54).await;
    assert_eq!(changed.max_offset_from_bottom, 208);
    let kept = person
        .until("the same page, 54 rows up", |rows| {
            rows[0].starts_with("line-155 ") && rows[0].ends_with("[54/208]")
        })
        .await;
    assert_eq!(kept[23], "line-178");
    assert!(!kept.iter().any(|row| row.starts_with("more-")), "{kept:?}");

    // Shift+PageDown: a page toward the live screen.
    send(
        &host,
        "person",
        scroll(&session_id, SessionScrollStep::PageDown),
    )
    .await;
    scroll_changed_to(&mut events, &pane_id, 31).await;
    person
        .until("the page below", |rows| {
            rows[0].starts_with("line-178 ") && rows[0].ends_with("[31/208]")
        })
        .await;

    // Typing returns to the live screen, where its output appears.
    send(
        &host,
        "person",
        SessionClientMessage::SessionInput {
            session_id: session_id.clone(),
            data: "typed\n".into(),
        },
    )
    .await;
    scroll_changed_to(&mut events, &pane_id, 0).await;
    let live = person
        .until("the live screen with the typed word's output", |rows| {
            rows.iter().any(|row| row == "typed-30")
        })
        .await;
    assert!(!live[0].contains('['), "no position label: {live:?}");
    watcher
        .until("the live screen", |rows| {
            rows.iter().any(|row| row == "typed-30")
        })
        .await;
    assert_eq!(scroll_info(&host, &pane_id).offset_from_bottom, 0);

    // Up again, then straight back to the bottom.
    send(
        &host,
        "person",
        scroll(&session_id, SessionScrollStep::PageUp),
    )
    .await;
    scroll_changed_to(&mut events, &pane_id, 23).await;
    send(
        &host,
        "person",
        scroll(&session_id, SessionScrollStep::Bottom),
    )
    .await;
    scroll_changed_to(&mut events, &pane_id, 0).await;
    person
        .until("the live screen again", |rows| {
            rows[22] == "typed-30" && !rows[0].contains('[')
        })
        .await;
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_joiner_sees_the_view_and_the_alternate_screen_brings_it_back_to_live() {
    let host = test_host();
    let pane = run_script(
        &host,
        r#"seq -f 'line-%g' 1 100; read go; printf '\033[?1049h\033[HFULL SCREEN'; sleep 60"#,
    );
    let (pane_id, session_id) = (pane.pane_id.clone(), pane.terminal_id.clone());
    wait_for_text(&host, &pane_id, ReadSource::Visible, |text| {
        text.contains("line-100")
    })
    .await;
    let mut events = host.subscribe_events();
    let _person = host
        .session_join(&session_id, SessionRole::Controller, None, "person")
        .unwrap();
    send(
        &host,
        "person",
        scroll(&session_id, SessionScrollStep::PageUp),
    )
    .await;
    send(
        &host,
        "person",
        scroll(&session_id, SessionScrollStep::PageUp),
    )
    .await;
    scroll_changed_to(&mut events, &pane_id, 46).await;

    // A member that joins now gets the replay of the live screen, then the view.
    let late = host
        .session_join(&session_id, SessionRole::Observer, None, "late")
        .unwrap();
    let mut late = Mirror::new(late.frames);
    let shown = late
        .until("the view two pages up", |rows| {
            rows[0].starts_with("line-32 ") && rows[0].ends_with("[46/77]")
        })
        .await;
    assert_eq!(shown[23], "line-55");

    // The program takes the alternate screen: it has no history, so the view is live.
    host.send_text(&pane_id, "go\n").await.unwrap();
    scroll_changed_to(&mut events, &pane_id, 0).await;
    late.until("the full-screen program", |rows| rows[0] == "FULL SCREEN")
        .await;
    assert_eq!(
        scroll_info(&host, &pane_id),
        PaneScrollInfo {
            offset_from_bottom: 0,
            max_offset_from_bottom: 0,
            viewport_rows: 24
        }
    );
    send(
        &host,
        "person",
        scroll(&session_id, SessionScrollStep::PageUp),
    )
    .await;
    assert_eq!(
        scroll_info(&host, &pane_id).offset_from_bottom,
        0,
        "nothing to scroll in the alternate screen"
    );
    host.shutdown().await;
}
