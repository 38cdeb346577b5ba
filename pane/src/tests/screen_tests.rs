//! What a pane shows: escape sequences, full-screen programs, scrollback and wrapping.

use nagi_schema::pane::{ReadFormat, ReadSource};

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn printf_with_escapes_and_cursor_movement_renders_like_a_terminal() {
    let host = test_host();
    let pane = run_script(
        &host,
        r#"printf 'hello world\r\nsecond\033[1;7HWORLD\033[3;3Hthird\033[5;1H\033[31mred\033[m\033[4;1Hgone\033[2K\033[6;1Hab\bX'; sleep 60"#,
    );
    let expected_top = "hello WORLD\nsecond\n  third\n\nred\naX";
    let visible = wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.starts_with(expected_top)
    })
    .await;
    let rows: Vec<&str> = visible.split('\n').collect();
    assert_eq!(rows.len(), 24, "visible is the whole 24-row screen");
    assert!(rows[6..].iter().all(|row| row.is_empty()), "{visible}");
    let ansi = host
        .read(
            &pane.pane_id,
            ReadSource::Visible,
            None,
            ReadFormat::Ansi,
            true,
        )
        .unwrap();
    assert_eq!(ansi.format, ReadFormat::Ansi);
    assert!(ansi.text.contains("\x1b[31mred"), "{:?}", ansi.text);
    let limited = host
        .read(
            &pane.pane_id,
            ReadSource::Visible,
            Some(3),
            ReadFormat::Text,
            true,
        )
        .unwrap();
    assert_eq!(limited.text.split('\n').count(), 3);
    assert!(limited.truncated);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_screen_program_owns_the_screen_and_leaves_no_scrollback() {
    let host = test_host();
    // A tiny full-screen program: alternate screen, clear, draw, wait for a key, restore.
    let script = r#"echo before-app; printf '\033[?1049h\033[H\033[2J'; printf 'FULL SCREEN APP\033[10;5Hmiddle of screen\033[24;1Hstatus line'; i=0; while [ $i -lt 40 ]; do echo scrolled-in-app; i=$((i+1)); done; printf '\033[1;1HFULL SCREEN APP\033[10;5Hmiddle of screen'; read answer; printf '\033[?1049l'; echo after-app; sleep 60"#;
    let pane = run_script(&host, script);
    let visible = wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.contains("middle of screen") && text.starts_with("FULL SCREEN APP")
    })
    .await;
    assert!(
        !visible.contains("before-app"),
        "the alternate screen hides the shell output:\n{visible}"
    );
    host.send_keys(&pane.pane_id, &argv(&["y", "enter"]))
        .await
        .unwrap();
    let visible = wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.contains("after-app")
    })
    .await;
    assert!(
        visible.starts_with("before-app"),
        "the main screen comes back:\n{visible}"
    );
    assert!(!visible.contains("FULL SCREEN APP"));
    let recent = read_text(&host, &pane.pane_id, ReadSource::Recent, Some(10_000));
    assert!(
        !recent.contains("scrolled-in-app"),
        "rows scrolled on the alternate screen are not scrollback:\n{recent}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vi_draws_its_screen_and_quits_on_keys() {
    if !std::path::Path::new("/usr/bin/vi").exists() {
        eprintln!("skipped: /usr/bin/vi is not installed");
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let file = directory.path().join("notes.txt");
    std::fs::write(&file, "first line of the file\nsecond line\n").unwrap();
    let host = test_host();
    let (_, _, pane) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["vi", file.to_str().unwrap()])),
            cwd: Some(directory.path().to_string_lossy().into_owned()),
            ..WorkspaceCreate::default()
        })
        .unwrap();
    let visible = wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.contains("second line") && text.contains("~")
    })
    .await;
    assert!(visible.starts_with("first line of the file"), "{visible}");
    let mut events = host.subscribe_events();
    host.send_keys(&pane.pane_id, &argv(&["esc", ":", "q", "!", "enter"]))
        .await
        .unwrap();
    let exited = next_event(&mut events, |event| event.event_name() == "pane_exited").await;
    let value = serde_json::to_value(&exited).unwrap();
    assert_eq!(value["data"]["exit_code"], 0, "{value}");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scrollback_keeps_old_lines_and_recent_unwrapped_joins_wrapped_rows() {
    let host = test_host();
    let script = r#"i=0; while [ $i -lt 300 ]; do echo "line $i"; i=$((i+1)); done; printf '%0200d\n' 0 | tr 0 x; echo end-marker; sleep 60"#;
    let pane = run_script(&host, script);
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.contains("end-marker")
    })
    .await;
    let recent = read_text(&host, &pane.pane_id, ReadSource::Recent, Some(10_000));
    let lines: Vec<&str> = recent.split('\n').collect();
    let first = lines
        .iter()
        .position(|line| *line == "line 0")
        .expect("line 0 is in scrollback");
    for index in 0..300 {
        assert_eq!(lines[first + index], format!("line {index}"));
    }
    // 200 x's on an 80-column screen are three displayed rows...
    assert_eq!(lines[first + 300], "x".repeat(80));
    assert_eq!(lines[first + 301], "x".repeat(80));
    assert_eq!(lines[first + 302], "x".repeat(40));
    assert_eq!(lines[first + 303], "end-marker");
    // ...and one logical line.
    let unwrapped = read_text(
        &host,
        &pane.pane_id,
        ReadSource::RecentUnwrapped,
        Some(10_000),
    );
    let logical: Vec<&str> = unwrapped.split('\n').collect();
    let long = logical
        .iter()
        .position(|line| line.starts_with('x'))
        .unwrap();
    assert_eq!(logical[long], "x".repeat(200));
    assert_eq!(logical[long - 1], "line 299");
    assert_eq!(logical[long + 1], "end-marker");
    let last_three = read_text(&host, &pane.pane_id, ReadSource::RecentUnwrapped, Some(3));
    assert!(last_three.starts_with(&"x".repeat(200)), "{last_three:?}");
    let info = host.pane_info(&pane.pane_id).unwrap();
    let scroll = info.scroll.unwrap();
    assert_eq!(scroll.viewport_rows, 24);
    assert!(scroll.max_offset_from_bottom >= 280);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scrollback_is_bounded_by_the_configured_rows() {
    let host = PaneHost::new(PaneHostConfig {
        scrollback_lines: 50,
        ..test_config()
    });
    let pane = run_script(
        &host,
        r#"i=0; while [ $i -lt 500 ]; do echo "row $i"; i=$((i+1)); done; echo all-done; sleep 60"#,
    );
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.contains("all-done")
    })
    .await;
    let read = host
        .read(
            &pane.pane_id,
            ReadSource::Recent,
            Some(10_000),
            ReadFormat::Text,
            true,
        )
        .unwrap();
    let lines = read.text.split('\n').count();
    assert!(
        lines <= 50 + 24,
        "at most scrollback + screen rows, got {lines}"
    );
    assert!(!read.text.contains("row 100\n"));
    assert!(read.text.contains("row 499"));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_titles_are_reported_and_stripped() {
    let host = test_host();
    let mut events = host.subscribe_events();
    let pane = run_script(
        &host,
        r#"printf '\033]2;\342\240\213 building nagi\007'; sleep 60"#,
    );
    next_event(&mut events, |event| event.event_name() == "pane_updated").await;
    let info = host.pane_info(&pane.pane_id).unwrap();
    assert_eq!(info.terminal_title.as_deref(), Some("⠋ building nagi"));
    assert_eq!(
        info.terminal_title_stripped.as_deref(),
        Some("building nagi")
    );
    host.shutdown().await;
}
