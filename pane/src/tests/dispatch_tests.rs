//! The JSON method dispatcher, as the socket server will call it.

use serde_json::json;

use super::*;
use crate::{PaneError, dispatch, unimplemented_pane_methods};

async fn call(
    host: &Arc<PaneHost>,
    method: &str,
    params: serde_json::Value,
) -> Result<serde_json::Value, PaneError> {
    dispatch(host, method, params)
        .await
        .unwrap_or_else(|| panic!("{method} is a pane method"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_create_read_wait_and_close_through_json() {
    let host = test_host();
    let created = call(
        &host,
        "workspace.create",
        json!({"label": "api", "command": ["cat"], "cwd": "/tmp"}),
    )
    .await
    .unwrap();
    assert_eq!(created["type"], "workspace_created");
    assert_eq!(created["workspace"]["label"], "api");
    assert_eq!(created["root_pane"]["pane_id"], "w1:p1");
    assert_eq!(created["root_pane"]["cwd"], "/tmp");
    let pane_id = created["root_pane"]["pane_id"]
        .as_str()
        .unwrap()
        .to_string();

    let sent = call(
        &host,
        "pane.send_input",
        json!({"pane_id": pane_id, "text": "compile step 12 done", "keys": ["enter"]}),
    )
    .await
    .unwrap();
    assert_eq!(sent, json!({"type": "ok"}));
    let matched = call(
        &host,
        "pane.wait_for_output",
        json!({"pane_id": pane_id, "source": "recent", "match": {"type": "regex", "value": r"step (\d+) done"}, "timeout_ms": 30000}),
    )
    .await
    .unwrap();
    assert_eq!(matched["type"], "output_matched");
    assert_eq!(matched["matched_line"], "compile step 12 done");
    assert_eq!(matched["read"]["source"], "recent");

    let timeout = call(
        &host,
        "pane.wait_for_output",
        json!({"pane_id": pane_id, "source": "visible", "match": {"type": "substring", "value": "never"}, "timeout_ms": 100}),
    )
    .await
    .unwrap_err();
    assert_eq!(timeout.code().as_str(), "timeout");

    let read = call(
        &host,
        "pane.read",
        json!({"pane_id": pane_id, "source": "recent_unwrapped", "lines": 5}),
    )
    .await
    .unwrap();
    assert_eq!(read["type"], "pane_read");
    assert_eq!(read["read"]["format"], "text");
    assert!(
        read["read"]["text"]
            .as_str()
            .unwrap()
            .contains("compile step 12 done\ncompile step 12 done")
    );

    let listed = call(&host, "pane.list", json!({})).await.unwrap();
    assert_eq!(listed["panes"].as_array().unwrap().len(), 1);
    let tabs = call(&host, "tab.list", json!({"workspace_id": "w1"}))
        .await
        .unwrap();
    assert_eq!(tabs["tabs"][0]["tab_id"], "w1:t1");
    let snapshot = call(&host, "session.snapshot", json!({})).await.unwrap();
    assert_eq!(snapshot["type"], "session_snapshot");
    assert_eq!(snapshot["snapshot"]["focused_pane_id"], pane_id.as_str());
    assert_eq!(snapshot["snapshot"]["layouts"][0]["area"]["width"], 80);
    let process = call(&host, "pane.process_info", json!({})).await.unwrap();
    assert_eq!(
        process["process_info"]["foreground_processes"][0]["name"],
        "cat"
    );

    let finished = call(
        &host,
        "workspace.create",
        json!({"command": ["sh", "-c", "echo short-lived"]}),
    )
    .await
    .unwrap();
    let finished_id = finished["root_pane"]["pane_id"].as_str().unwrap();
    let error = call(&host, "pane.wait_for_output", json!({"pane_id": finished_id, "source": "recent", "match": {"type": "substring", "value": "never"}}))
        .await
        .unwrap_err();
    assert_eq!(
        error.code().as_str(),
        "pane_exited",
        "a wait on a finished pane ends instead of hanging"
    );
    let matched = call(&host, "pane.wait_for_output", json!({"pane_id": finished_id, "source": "recent", "match": {"type": "substring", "value": "short-lived"}}))
        .await
        .unwrap();
    assert_eq!(
        matched["matched_line"], "short-lived",
        "output of a finished pane still matches"
    );
    call(&host, "pane.close", json!({"pane_id": finished_id}))
        .await
        .unwrap();

    assert_eq!(
        call(&host, "pane.close", json!({"pane_id": pane_id}))
            .await
            .unwrap(),
        json!({"type": "ok"})
    );
    let workspaces = call(&host, "workspace.list", json!({})).await.unwrap();
    assert_eq!(
        workspaces,
        json!({"type": "workspace_list", "workspaces": []})
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_params_unknown_and_unoffered_methods() {
    let host = test_host();
    assert!(
        dispatch(&host, "mission.create", json!({})).await.is_none(),
        "not a pane method"
    );
    assert!(dispatch(&host, "ping", json!({})).await.is_none());
    let error = call(&host, "pane.read", json!({"pane_id": "w1:p1"}))
        .await
        .unwrap_err();
    assert_eq!(error.code().as_str(), "invalid_params");
    assert!(
        error.to_string().contains("source"),
        "the serde message names the field: {error}"
    );
    let error = call(
        &host,
        "pane.read",
        json!({"pane_id": "w1:p1", "source": "everything"}),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code().as_str(), "invalid_params");
    let error = call(
        &host,
        "pane.send_keys",
        json!({"pane_id": "w1:p1", "keys": ["a"]}),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code().as_str(), "pane_not_found");
    for method in unimplemented_pane_methods() {
        let error = call(&host, method, json!({})).await.unwrap_err();
        assert_eq!(error.code().as_str(), "feature_unavailable");
        assert!(error.to_string().contains(method), "{error}");
    }
    assert!(unimplemented_pane_methods().any(|method| method == "pane.split"));
    let error = call(
        &host,
        "pane.report_metadata",
        json!({"pane_id": "w1:p1", "source": "s", "ttl_ms": 0}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        error.code().as_str(),
        "pane_not_found",
        "the pane is looked up first"
    );
    host.shutdown().await;
}
