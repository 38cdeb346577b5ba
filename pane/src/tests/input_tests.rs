//! Input reaching programs: text, key combos, interrupts; and bad input changing nothing.

use nagi_schema::pane::ReadSource;

use super::*;
use crate::PaneError;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_and_keys_reach_cat() {
    let host = test_host();
    let (_, _, pane) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["cat"])),
            ..WorkspaceCreate::default()
        })
        .unwrap();
    // The terminal echoes each typed line, and cat prints it again. Each line is typed only
    // once cat has printed the one before, so the echo of one never lands in the middle of
    // cat's copy of the last.
    let twice = |needle: &'static str| move |text: &str| text.matches(needle).count() == 2;
    host.send_text(&pane.pane_id, "hello from text")
        .await
        .unwrap();
    host.send_keys(&pane.pane_id, &argv(&["enter"]))
        .await
        .unwrap();
    wait_for_text(
        &host,
        &pane.pane_id,
        ReadSource::Visible,
        twice("hello from text"),
    )
    .await;
    host.send_keys(
        &pane.pane_id,
        &argv(&["k", "e", "y", "s", "space", "minus", "1", "enter"]),
    )
    .await
    .unwrap();
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, twice("keys -1")).await;
    host.send_input(&pane.pane_id, Some("mixed"), &argv(&["period", "enter"]))
        .await
        .unwrap();
    let visible = wait_for_text(&host, &pane.pane_id, ReadSource::Visible, twice("mixed.")).await;
    let lines: Vec<&str> = visible.split('\n').collect();
    for expected in ["hello from text", "keys -1", "mixed."] {
        assert_eq!(
            lines.iter().filter(|line| **line == expected).count(),
            2,
            "{expected:?} in\n{visible}"
        );
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_interrupts_the_foreground_sleep() {
    let host = test_host();
    let (_, _, pane) = host.create_workspace(WorkspaceCreate::default()).unwrap();
    host.send_text(&pane.pane_id, "sleep 1000\n").await.unwrap();
    eventually("sleep is the foreground process", || {
        host.process_info(Some(&pane.pane_id))
            .unwrap()
            .foreground_processes
            .iter()
            .any(|process| process.name == "sleep")
    })
    .await;
    let info = host.process_info(Some(&pane.pane_id)).unwrap();
    assert_eq!(info.shell_pid, pane.pid);
    assert!(
        info.tty
            .as_deref()
            .is_some_and(|tty| tty.starts_with("/dev/pts/")),
        "{info:?}"
    );
    let sleeper = info
        .foreground_processes
        .iter()
        .find(|process| process.name == "sleep")
        .unwrap();
    assert_eq!(sleeper.argv.as_deref(), Some(&argv(&["sleep", "1000"])[..]));
    assert_ne!(
        info.foreground_process_group_id, pane.pid,
        "the job runs in its own process group"
    );
    host.send_keys(&pane.pane_id, &argv(&["ctrl+c"]))
        .await
        .unwrap();
    host.send_text(&pane.pane_id, "echo interrupted-$((40+2))\n")
        .await
        .unwrap();
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.contains("interrupted-42")
    })
    .await;
    eventually("the shell is in the foreground again", || {
        host.process_info(Some(&pane.pane_id))
            .unwrap()
            .foreground_processes
            .iter()
            .all(|process| process.name != "sleep")
    })
    .await;
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_key_combo_rejects_the_whole_request_before_writing() {
    let host = test_host();
    let (_, _, pane) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["cat"])),
            ..WorkspaceCreate::default()
        })
        .unwrap();
    for (keys, offending) in [
        (argv(&["a", "b", "ctrl+shift+q"]), "ctrl+shift+q"),
        (argv(&["a", "prefix+c"]), "prefix+c"),
        (argv(&["a", "f13"]), "f13"),
    ] {
        match host.send_keys(&pane.pane_id, &keys).await {
            Err(error @ PaneError::InvalidKey { .. }) => {
                assert_eq!(error.code().as_str(), "invalid_key");
                assert!(error.to_string().contains(offending), "{error}");
            }
            other => panic!("expected invalid_key for {keys:?}, got {other:?}"),
        }
    }
    assert!(matches!(
        host.send_input(&pane.pane_id, Some("a"), &argv(&["nope"]))
            .await,
        Err(PaneError::InvalidKey { .. })
    ));
    assert!(matches!(
        host.send_input(&pane.pane_id, None, &[]).await,
        Err(PaneError::InvalidParams(_))
    ));
    host.send_text(&pane.pane_id, "marker\n").await.unwrap();
    let visible = wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.matches("marker").count() == 2
    })
    .await;
    assert!(
        visible.starts_with("marker\nmarker"),
        "nothing from the rejected requests was written:\n{visible}"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_ids_and_bad_reads_are_clear_errors() {
    let host = test_host();
    let pane = run_script(&host, "echo ready; sleep 60");
    let missing = "w99:p1";
    assert!(
        matches!(host.pane_info(missing), Err(PaneError::PaneNotFound { pane_id }) if pane_id == missing)
    );
    assert_eq!(
        host.pane_info(missing).unwrap_err().code().as_str(),
        "pane_not_found"
    );
    assert!(matches!(
        host.send_text(missing, "x").await,
        Err(PaneError::PaneNotFound { .. })
    ));
    assert!(matches!(
        host.close_pane(missing).await,
        Err(PaneError::PaneNotFound { .. })
    ));
    assert!(matches!(
        host.tab_info("w99:t1"),
        Err(PaneError::TabNotFound { .. })
    ));
    assert!(matches!(
        host.workspace_info("w99"),
        Err(PaneError::WorkspaceNotFound { .. })
    ));
    assert!(matches!(
        host.session_join(
            "term_nope",
            nagi_schema::session_protocol::SessionRole::Observer,
            None,
            "c"
        ),
        Err(PaneError::SessionNotFound { .. })
    ));
    for lines in [0, 10_001] {
        let error = host
            .read(
                &pane.pane_id,
                ReadSource::Recent,
                Some(lines),
                nagi_schema::pane::ReadFormat::Text,
                true,
            )
            .unwrap_err();
        assert_eq!(error.code().as_str(), "invalid_params");
        assert!(error.to_string().contains(&lines.to_string()), "{error}");
    }
    let error = host
        .read(
            &pane.pane_id,
            ReadSource::Detection,
            None,
            nagi_schema::pane::ReadFormat::Text,
            true,
        )
        .unwrap_err();
    assert_eq!(error.code().as_str(), "feature_unavailable");
    let bad_regex = nagi_schema::pane_events::OutputMatchedSubscription {
        pane_id: pane.pane_id.clone(),
        source: ReadSource::Recent,
        output_match: nagi_schema::pane::OutputMatch::Regex {
            value: "[unclosed".into(),
        },
        lines: None,
        strip_ansi: true,
    };
    let error = host
        .watch_output(&bad_regex)
        .err()
        .expect("bad regex is refused");
    assert_eq!(error.code().as_str(), "invalid_regex");
    assert!(error.to_string().contains("[unclosed"), "{error}");
    // Nothing changed: the one workspace is still there and readable.
    assert_eq!(host.list_workspaces().len(), 1);
    wait_for_text(&host, &pane.pane_id, ReadSource::Visible, |text| {
        text.starts_with("ready")
    })
    .await;
    host.shutdown().await;
}
