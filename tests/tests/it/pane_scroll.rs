//! Scrolling a pane's history through the real `nagi pane attach`, driven in tmux:
//! Shift+PageUp shows older lines and `pane.get` says how far up the view is, output keeps
//! the view on the same lines, Shift+PageDown and typing bring it back to the live screen,
//! and a subscriber of `pane.scroll_changed` hears of every move.

use std::io::BufReader;
use std::os::unix::net::UnixStream;

use nagi_tests::*;
use serde_json::{Value, json};

use crate::panes::{
    eventually, next_event, ok_valid, pane_id, start_shell, subscribe, wait_for_read,
};
use crate::tmux::Tmux;

/// Shift+PageUp and Shift+PageDown as xterm-style terminals send them.
const SHIFT_PAGE_UP: [&str; 6] = ["1b", "5b", "35", "3b", "32", "7e"];
const SHIFT_PAGE_DOWN: [&str; 6] = ["1b", "5b", "36", "3b", "32", "7e"];

fn press(tmux: &Tmux, bytes: &[&str]) {
    let mut args = vec!["send-keys", "-t", "t", "-H"];
    args.extend_from_slice(bytes);
    tmux.run(&args);
}

fn scroll(env: &TestEnv, pane_id: &str) -> Value {
    ok_valid(env, "pane.get", json!({"pane_id": pane_id}))["pane"]["scroll"].clone()
}

fn offset(env: &TestEnv, pane_id: &str) -> u64 {
    scroll(env, pane_id)["offset_from_bottom"]
        .as_u64()
        .expect("an offset")
}

/// The next `pane.scroll_changed` whose offset satisfies `accept` (output may move the
/// view in more than one step); each event is validated against both schemas.
fn scroll_changed(
    events: &mut BufReader<UnixStream>,
    pane_id: &str,
    accept: impl Fn(u64) -> bool,
) -> Value {
    next_event(events, |event| {
        event["event"] == "pane.scroll_changed"
            && event["data"]["pane_id"] == pane_id
            && event["data"]["scroll"]["offset_from_bottom"]
                .as_u64()
                .is_some_and(&accept)
    })
}

fn screen_lines(screen: &str) -> Vec<&str> {
    screen.lines().map(str::trim_end).collect()
}

#[test]
fn nagi_pane_attach_scrolls_the_history_with_shift_page_keys_and_typing_returns_to_live() {
    let mut env = TestEnv::new();
    env.start_server();
    let Some(tmux) = Tmux::start(&env.root()) else {
        return;
    };
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    let mut events = subscribe(
        &env,
        json!([{"type": "pane.scroll_changed", "pane_id": id}]),
    );

    tmux.open_shell(&env.config_dir);
    tmux.run(&[
        "send-keys",
        "-t",
        "t",
        &format!("{} pane attach {id}", nagi_binary().display()),
        "Enter",
    ]);
    eventually("the pane takes the tmux window's 30 rows", || {
        scroll(&env, &id)["viewport_rows"] == 30
    });
    tmux.run(&["send-keys", "-t", "t", "seq -f history-%g 1 300", "Enter"]);
    // The live screen's last rows: history-300, the prompt `sh$ `, the empty cursor row;
    // so its top row is history-273.
    tmux.wait_for("t", "the end of the output and the prompt", |screen| {
        let lines = screen_lines(screen);
        lines.len() == 30 && lines[27] == "history-300" && lines[28] == "sh$"
    });
    assert_eq!(offset(&env, &id), 0);

    // Shift+PageUp: 29 rows up (a page less one row); the history appears, with the
    // position in the top right corner.
    press(&tmux, &SHIFT_PAGE_UP);
    let changed = scroll_changed(&mut events, &id, |offset| offset == 29);
    let limit = changed["data"]["scroll"]["max_offset_from_bottom"]
        .as_u64()
        .unwrap();
    assert!(
        limit >= 272,
        "every line above the screen is history: {changed}"
    );
    assert_eq!(changed["data"]["scroll"]["viewport_rows"], 30);
    let view = tmux.wait_for("t", "the page above the live screen", |screen| {
        let lines = screen_lines(screen);
        lines
            .first()
            .is_some_and(|top| top.starts_with("history-244 "))
            && lines.last() == Some(&"history-273")
    });
    assert!(
        screen_lines(&view)[0].ends_with(&format!("[29/{limit}]")),
        "the position is shown:\n{view}"
    );
    assert!(!view.contains("history-300"), "{view}");
    assert_eq!(offset(&env, &id), 29);

    // Output that does not come from the person's keyboard keeps the view where it is:
    // the echoed command, 40 lines and the prompt scroll 42 rows into the history, and the
    // view goes up with them.
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": id, "text": "seq -f more-%g 1 40", "keys": ["enter"]}),
    );
    scroll_changed(&mut events, &id, |offset| offset > 29);
    // The view follows each batch of output in the same step as the screen, so once the
    // screen shows the prompt after the output, the offset is final.
    wait_for_read(&env, &id, "visible", None, |text| {
        text.trim_end().ends_with("more-40\nsh$")
    });
    let after = scroll(&env, &id);
    assert_eq!(after["offset_from_bottom"], 29 + 42, "{after}");
    assert_eq!(after["max_offset_from_bottom"], limit + 42, "{after}");
    let kept = tmux.wait_for("t", "the same page, further up", |screen| {
        let lines = screen_lines(screen);
        lines.first().is_some_and(|top| {
            top.starts_with("history-244 ") && top.ends_with(&format!("[71/{}]", limit + 42))
        }) && lines.last() == Some(&"history-273")
    });
    assert!(!kept.contains("more-"), "{kept}");

    // Shift+PageDown: a page toward the live screen, which is still further down.
    press(&tmux, &SHIFT_PAGE_DOWN);
    scroll_changed(&mut events, &id, |offset| offset == 71 - 29);
    tmux.wait_for("t", "the next page down", |screen| {
        screen_lines(screen)
            .first()
            .is_some_and(|top| top.starts_with("history-273 "))
    });

    // Typing returns to the live screen, where the typed command's output appears.
    tmux.run(&["send-keys", "-t", "t", "echo back-$((6*7))", "Enter"]);
    scroll_changed(&mut events, &id, |offset| offset == 0);
    let live = tmux.wait_for("t", "the live screen with the echo", |screen| {
        screen_lines(screen).contains(&"back-42")
    });
    assert!(!live.contains("history-2"), "{live}");
    assert!(!screen_lines(&live)[0].contains('['), "{live}");
    assert_eq!(offset(&env, &id), 0);

    // Detach: the pane goes on, live.
    tmux.run(&["send-keys", "-t", "t", "-H", "1c"]);
    tmux.wait_for("t", "the detach message", |screen| {
        screen.contains(&format!("nagi: detached from {id}"))
    });
}
