//! Pane processes: environment, exit status, and closing whole process trees.

use std::path::Path;

use nagi_schema::pane::ReadSource;
use nagi_schema::pane_events::{PaneEventData, PaneEventEnvelope};

use super::*;
use crate::process;

fn exited_event(event: &PaneEventEnvelope, pane_id: &str) -> Option<(Option<i32>, Option<i32>)> {
    match event {
        PaneEventEnvelope::Lifecycle(envelope) => match &envelope.data {
            PaneEventData::PaneExited {
                pane_id: id,
                exit_code,
                signal,
                ..
            } if id == pane_id => Some((*exit_code, *signal)),
            _ => None,
        },
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pane_processes_get_the_nagi_environment_and_server_values_win() {
    let host = test_host();
    let mut env = std::collections::BTreeMap::new();
    env.insert("NAGI_PANE_ID".to_string(), "forged".to_string());
    env.insert("NAGI_ENV".to_string(), "0".to_string());
    env.insert("CALLER_VALUE".to_string(), "kept".to_string());
    let (workspace, tab, pane) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["sh", "-c", "env | sort; echo env-done; sleep 60"])),
            env,
            ..WorkspaceCreate::default()
        })
        .unwrap();
    let text = wait_for_text(&host, &pane.pane_id, ReadSource::RecentUnwrapped, |text| {
        text.contains("env-done")
    })
    .await;
    let lines: Vec<&str> = text.split('\n').collect();
    let has = |entry: &str| lines.contains(&entry);
    assert!(has(&format!("NAGI_PANE_ID={}", pane.pane_id)), "{text}");
    assert!(has(&format!("NAGI_TAB_ID={}", tab.tab_id)));
    assert!(has(&format!(
        "NAGI_WORKSPACE_ID={}",
        workspace.workspace_id
    )));
    assert!(has("NAGI_ENV=1"));
    assert!(has("NAGI_SOCKET_PATH=/tmp/nagi-test/nagi.sock"));
    assert!(has(&format!("NAGI_TERMINAL_ID={}", pane.terminal_id)));
    assert!(has("CALLER_VALUE=kept"));
    assert!(has("TERM=xterm-256color"));
    assert!(!text.contains("NAGI_PANE_ID=forged"));
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_exit_status_reaches_the_exit_event_and_the_pane_stays_readable() {
    let host = test_host();
    let mut events = host.subscribe_events();
    let pane = run_script(&host, "echo last words; exit 3");
    let event = next_event(&mut events, |event| {
        exited_event(event, &pane.pane_id).is_some()
    })
    .await;
    assert_eq!(exited_event(&event, &pane.pane_id), Some((Some(3), None)));
    let info = host.pane_info(&pane.pane_id).unwrap();
    assert_eq!(info.exit_status.unwrap().exit_code, Some(3));
    assert!(
        read_text(&host, &pane.pane_id, ReadSource::Visible, None).starts_with("last words"),
        "output before the exit is kept"
    );
    let error = host.send_text(&pane.pane_id, "too late").await.unwrap_err();
    assert_eq!(error.code().as_str(), "pane_exited");
    host.close_pane(&pane.pane_id).await.unwrap();
    assert!(host.list_panes(None).unwrap().is_empty());
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_process_reports_its_signal() {
    let host = test_host();
    let mut events = host.subscribe_events();
    let pane = run_script(&host, "kill -9 $$");
    let event = next_event(&mut events, |event| {
        exited_event(event, &pane.pane_id).is_some()
    })
    .await;
    assert_eq!(exited_event(&event, &pane.pane_id), Some((None, Some(9))));
    host.shutdown().await;
}

fn read_pid(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_pane_ends_double_forked_setsid_daemons() {
    let host = test_host();
    let directory = tempfile::tempdir().unwrap();
    let dir = directory.path().display();
    // A daemon: a subshell starts `setsid sh` in the background and exits at once, so the
    // new session leader is orphaned (re-parented to us, the subreaper); it starts a
    // sleeper of its own. The pane shell also has a plain background job.
    let script = format!(
        r#"( setsid sh -c 'sleep 1000 & echo $! > {dir}/daemon_child; echo $$ > {dir}/daemon; wait' & ); sleep 1000 & echo $! > {dir}/job; echo started; wait"#
    );
    let pane = run_script(&host, &script);
    let files = ["daemon", "daemon_child", "job"].map(|name| directory.path().join(name));
    eventually("every process wrote its pid", || {
        files.iter().all(|file| read_pid(file).is_some())
    })
    .await;
    let mut pids: Vec<i32> = files.iter().map(|file| read_pid(file).unwrap()).collect();
    pids.push(pane.pid.unwrap() as i32);
    let daemon = process::read_stat(pids[0]).expect("the daemon runs");
    assert_ne!(
        daemon.session,
        pane.pid.unwrap() as i32,
        "the daemon left the pane's session"
    );
    assert_eq!(
        daemon.ppid,
        std::process::id() as i32,
        "the orphan was re-parented to the subreaper"
    );
    for pid in &pids {
        assert!(
            !process::process_is_gone(*pid),
            "{pid} runs before the close"
        );
    }
    let mut events = host.subscribe_events();
    host.close_pane(&pane.pane_id).await.unwrap();
    next_event(&mut events, |event| matches!(event, PaneEventEnvelope::Lifecycle(envelope) if envelope.event == "pane_closed")).await;
    eventually("every process of the pane is gone and reaped", || {
        pids.iter()
            .all(|pid| !Path::new(&format!("/proc/{pid}")).exists())
    })
    .await;
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_cannot_start_is_a_spawn_error_and_registers_nothing() {
    let host = test_host();
    let error = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["/nonexistent/program"])),
            ..WorkspaceCreate::default()
        })
        .unwrap_err();
    assert_eq!(error.code().as_str(), "pane_spawn_failed");
    assert!(
        error.to_string().contains("/nonexistent/program"),
        "{error}"
    );
    for (cwd, command) in [
        (Some("relative/dir"), None),
        (Some("/definitely/not/here"), None),
        (None, Some(vec![])),
    ] {
        let error = host
            .create_workspace(WorkspaceCreate {
                cwd: cwd.map(str::to_string),
                command,
                ..WorkspaceCreate::default()
            })
            .unwrap_err();
        assert_eq!(error.code().as_str(), "invalid_params", "{error}");
    }
    assert!(host.list_workspaces().is_empty());
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_every_pane_and_refuses_new_ones() {
    let host = test_host();
    let first = run_script(&host, "sleep 1000");
    let second = run_script(&host, "sleep 1000");
    let pids = [first.pid.unwrap() as i32, second.pid.unwrap() as i32];
    host.shutdown().await;
    eventually("pane processes are gone", || {
        pids.iter()
            .all(|pid| !Path::new(&format!("/proc/{pid}")).exists())
    })
    .await;
    assert!(host.list_workspaces().is_empty());
    assert_eq!(
        host.create_workspace(WorkspaceCreate::default())
            .unwrap_err()
            .code()
            .as_str(),
        "server_unavailable"
    );
}
