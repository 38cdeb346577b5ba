//! Workspaces, tabs and panes: ids, events, focus, renames, closes, metadata, matches.

use nagi_schema::pane::{
    AgentStatus, OutputMatch, PaneAgentState, PaneReportAgentParams, ReadSource,
};
use nagi_schema::pane_events::{
    OutputMatchedSubscription, PaneEventData, PaneEventEnvelope, PaneSubscription,
    PaneSubscriptionEnvelope, subscription_matches,
};

use super::*;
use crate::TabCreate;

fn lifecycle_names(events: &mut broadcast::Receiver<PaneEventEnvelope>) -> Vec<String> {
    let mut names = Vec::new();
    while let Ok(event) = events.try_recv() {
        // `pane_exited` comes from the pane's waiter thread, in no fixed order with the
        // close events.
        if let PaneEventEnvelope::Lifecycle(envelope) = event
            && envelope.event != "pane_exited"
        {
            names.push(envelope.event);
        }
    }
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_count_up_and_are_never_reused() {
    let host = test_host();
    let mut events = host.subscribe_events();
    let (first, tab, pane) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["sleep", "1000"])),
            ..WorkspaceCreate::default()
        })
        .unwrap();
    assert_eq!(
        (
            first.workspace_id.as_str(),
            tab.tab_id.as_str(),
            pane.pane_id.as_str()
        ),
        ("w1", "w1:t1", "w1:p1")
    );
    assert!(
        first.focused && tab.focused && pane.focused,
        "the first workspace takes the focus"
    );
    assert!(pane.terminal_id.starts_with("term_"));
    let (second_tab, second_pane) = host
        .create_tab(TabCreate {
            workspace_id: Some("w1".into()),
            command: Some(argv(&["sleep", "1000"])),
            label: Some("logs".into()),
            ..TabCreate::default()
        })
        .unwrap();
    assert_eq!(
        (
            second_tab.tab_id.as_str(),
            second_pane.pane_id.as_str(),
            second_tab.label.as_str()
        ),
        ("w1:t2", "w1:p2", "logs")
    );
    assert!(
        !second_pane.focused,
        "a new tab only takes the focus when asked"
    );
    assert_eq!(
        lifecycle_names(&mut events),
        [
            "workspace_created",
            "tab_created",
            "pane_created",
            "workspace_focused",
            "tab_focused",
            "pane_focused",
            "tab_created",
            "pane_created"
        ]
    );
    host.close_tab("w1:t2").await.unwrap();
    assert_eq!(lifecycle_names(&mut events), ["pane_closed", "tab_closed"]);
    let (third_tab, third_pane) = host
        .create_tab(TabCreate {
            command: Some(argv(&["sleep", "1000"])),
            focus: true,
            ..TabCreate::default()
        })
        .unwrap();
    assert_eq!(
        (third_tab.tab_id.as_str(), third_pane.pane_id.as_str()),
        ("w1:t3", "w1:p3"),
        "numbers are not reused"
    );
    assert!(third_pane.focused);
    assert_eq!(host.current_pane(None).unwrap().pane_id, "w1:p3");
    assert_eq!(host.current_pane(Some("w1:p1")).unwrap().pane_id, "w1:p1");
    host.close_workspace("w1").await.unwrap();
    let (next, _, _) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["sleep", "1000"])),
            ..WorkspaceCreate::default()
        })
        .unwrap();
    assert_eq!(next.workspace_id, "w2");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renames_moves_and_closing_the_last_pane_close_its_tab_and_workspace() {
    let host = test_host();
    let (_, _, pane) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["sleep", "1000"])),
            label: Some("api".into()),
            ..WorkspaceCreate::default()
        })
        .unwrap();
    let (_, _, other) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["sleep", "1000"])),
            ..WorkspaceCreate::default()
        })
        .unwrap();
    let mut events = host.subscribe_events();
    assert_eq!(
        host.rename_workspace("w1", "  backend ").unwrap().label,
        "backend"
    );
    assert_eq!(
        host.rename_workspace("w1", "   ")
            .unwrap_err()
            .code()
            .as_str(),
        "invalid_params"
    );
    assert_eq!(host.rename_tab("w1:t1", "shell").unwrap().label, "shell");
    assert_eq!(
        host.rename_pane(&pane.pane_id, Some("main"))
            .unwrap()
            .label
            .as_deref(),
        Some("main")
    );
    assert_eq!(host.rename_pane(&pane.pane_id, None).unwrap().label, None);
    let order: Vec<String> = host
        .move_workspace("w2", 0)
        .unwrap()
        .into_iter()
        .map(|workspace| workspace.workspace_id)
        .collect();
    assert_eq!(order, ["w2", "w1"]);
    assert_eq!(host.workspace_info("w2").unwrap().number, 1);
    assert!(host.focus_pane(&other.pane_id).unwrap().focused);
    assert!(!host.pane_info(&pane.pane_id).unwrap().focused);
    host.close_pane(&pane.pane_id).await.unwrap();
    assert_eq!(
        lifecycle_names(&mut events),
        [
            "workspace_renamed",
            "tab_renamed",
            "pane_updated",
            "pane_updated",
            "workspace_moved",
            "workspace_focused",
            "tab_focused",
            "pane_focused",
            "pane_closed",
            "tab_closed",
            "workspace_closed"
        ]
    );
    assert_eq!(host.list_workspaces().len(), 1);
    assert_eq!(
        host.workspace_info("w1").unwrap_err().code().as_str(),
        "workspace_not_found"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_reports_change_the_status_and_emit_both_event_forms() {
    let host = test_host();
    let (_, _, pane) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["sleep", "1000"])),
            ..WorkspaceCreate::default()
        })
        .unwrap();
    let mut events = host.subscribe_events();
    let report = PaneReportAgentParams {
        pane_id: pane.pane_id.clone(),
        source: "custom:docs".into(),
        agent: "docs-bot".into(),
        state: PaneAgentState::Blocked,
        message: Some("needs input".into()),
        agent_session_id: Some("session-1".into()),
        agent_session_path: None,
        seq: Some(2),
    };
    host.report_agent(&report).unwrap();
    let subscription = PaneSubscription::PaneAgentStatusChanged {
        pane_id: pane.pane_id.clone(),
        agent_status: Some(AgentStatus::Blocked),
    };
    let event = next_event(&mut events, |event| {
        subscription_matches(&subscription, event)
    })
    .await;
    let value = serde_json::to_value(&event).unwrap();
    assert_eq!(value["event"], "pane.agent_status_changed");
    assert_eq!(value["data"]["agent"], "docs-bot");
    let info = host.pane_info(&pane.pane_id).unwrap();
    assert_eq!(info.agent_status, AgentStatus::Blocked);
    assert_eq!(info.agent_session.unwrap().value, "session-1");
    assert_eq!(
        host.workspace_info("w1").unwrap().agent_status,
        AgentStatus::Blocked,
        "the workspace rolls up its panes"
    );
    // An older seq from the same source is accepted and ignored.
    host.report_agent(&PaneReportAgentParams {
        state: PaneAgentState::Idle,
        seq: Some(1),
        ..report.clone()
    })
    .unwrap();
    assert_eq!(
        host.pane_info(&pane.pane_id).unwrap().agent_status,
        AgentStatus::Blocked
    );
    let bad = PaneReportAgentParams {
        source: "bad source!".into(),
        ..report
    };
    assert_eq!(
        host.report_agent(&bad).unwrap_err().code().as_str(),
        "invalid_params"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_tokens_expire_and_announce_it() {
    let host = test_host();
    let (_, _, pane) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["sleep", "1000"])),
            ..WorkspaceCreate::default()
        })
        .unwrap();
    let mut events = host.subscribe_events();
    let params = serde_json::from_value(serde_json::json!({
        "pane_id": pane.pane_id, "source": "user:hook", "title": "Refactor auth", "tokens": {"summary": "short-lived"}, "ttl_ms": 200
    }))
    .unwrap();
    host.report_metadata(&params).unwrap();
    let info = host.pane_info(&pane.pane_id).unwrap();
    assert_eq!(info.tokens["summary"], "short-lived");
    assert_eq!(info.title.as_deref(), Some("Refactor auth"));
    next_event(&mut events, |event| matches!(event, PaneEventEnvelope::Lifecycle(envelope) if matches!(&envelope.data, PaneEventData::PaneUpdated { pane } if pane.tokens.is_empty())))
        .await;
    let info = host.pane_info(&pane.pane_id).unwrap();
    assert!(info.tokens.is_empty() && info.title.is_none(), "{info:?}");
    let workspace = host
        .report_workspace_metadata(
            "w1",
            "user:jj",
            &[("jj_status".to_string(), Some("2 changes".to_string()))].into(),
            None,
            None,
        )
        .unwrap();
    assert_eq!(workspace.tokens["jj_status"], "2 changes");
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_watches_fire_for_new_matches_of_their_own_pattern() {
    let host = test_host();
    let (_, _, pane) = host
        .create_workspace(WorkspaceCreate {
            command: Some(argv(&["cat"])),
            ..WorkspaceCreate::default()
        })
        .unwrap();
    let subscription = |value: &str| OutputMatchedSubscription {
        pane_id: pane.pane_id.clone(),
        source: ReadSource::Recent,
        output_match: OutputMatch::Regex {
            value: value.into(),
        },
        lines: Some(50),
        strip_ansi: true,
    };
    let build = subscription(r"build (ok|failed) \d+");
    let other = subscription("never printed");
    let mut events = host.subscribe_events();
    let _build_guard = host.watch_output(&build).unwrap();
    let _other_guard = host.watch_output(&other).unwrap();
    host.send_text(&pane.pane_id, "build ok 7\n").await.unwrap();
    let wanted = PaneSubscription::PaneOutputMatched(build.clone());
    let event = next_event(&mut events, |event| subscription_matches(&wanted, event)).await;
    let PaneEventEnvelope::Subscription(PaneSubscriptionEnvelope::OutputMatched(matched)) = &event
    else {
        unreachable!()
    };
    assert_eq!(matched.matched_line, "build ok 7");
    assert!(!subscription_matches(
        &PaneSubscription::PaneOutputMatched(other),
        &event
    ));
    host.send_text(&pane.pane_id, "build failed 8\n")
        .await
        .unwrap();
    // The terminal echo and cat's copy are two occurrences; wait for the new pattern.
    let failed = |event: &PaneEventEnvelope| {
        subscription_matches(&wanted, event)
            && matches!(event, PaneEventEnvelope::Subscription(PaneSubscriptionEnvelope::OutputMatched(matched)) if matched.matched_line == "build failed 8")
    };
    let event = next_event(&mut events, failed).await;
    let PaneEventEnvelope::Subscription(PaneSubscriptionEnvelope::OutputMatched(matched)) = &event
    else {
        unreachable!()
    };
    assert!(
        matched
            .read
            .text
            .contains("build ok 7\nbuild ok 7\nbuild failed 8"),
        "{}",
        matched.read.text
    );
    host.shutdown().await;
}
