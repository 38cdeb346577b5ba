//! The ACP adapter against `fake_acp`, an agent built on the SDK's agent side.

mod adapter_support;

use adapter_support::{Fixture, Run, program, wait_until_gone};
use nagi_providers::{
    FailureKind, ProviderCommand, ProviderEvent, ProviderKind, RequestClass, Response, Sandbox,
    TranscriptLine, TurnOutcome,
};

fn fake() -> String {
    program(env!("CARGO_BIN_EXE_fake_acp"))
}

#[tokio::test]
async fn new_session_streams_text_and_tools_and_completes() {
    let fixture = Fixture::new();
    let script = r#"[{"text":"hello from acp"},{"tool":"grep main","output":"2 hits"}]"#;
    let mut run = Run::launch(fixture.spec(ProviderKind::Acp, &fake(), script));
    assert_eq!(run.session_bound().await, "fake-session-1");
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    assert!(
        run.agent_texts().contains(&"hello from acp".to_string()),
        "chunks are joined: {:?}",
        run.agent_texts()
    );
    assert_eq!(
        run.streamed_text(),
        "hello from acp",
        "each chunk is streamed"
    );
    assert!(run.saw(|event| matches!(event, ProviderEvent::Transcript(TranscriptLine::ToolCall(title)) if title == "grep main")));
    assert!(run.saw(|event| matches!(event, ProviderEvent::Transcript(TranscriptLine::ToolResult { title, output }) if title.contains("2 hits") || output.contains("2 hits"))));
    run.shutdown().await;
    let initialize = &fixture.logged("initialize")[0];
    assert_eq!(
        initialize["write"], false,
        "a read-only run does not offer fs writes"
    );
    assert_eq!(initialize["read"], true);
    assert_eq!(initialize["terminal"], false);
    let session = &fixture.logged("new_session")[0];
    assert_eq!(
        session["cwd"],
        fixture.worktree.path().display().to_string()
    );
    assert_eq!(session["mcp_servers"], 0);
    assert_eq!(
        fixture.logged("started")[0]["cwd"],
        fixture.worktree.path().display().to_string()
    );
}

#[tokio::test]
async fn permission_requests_choose_options_by_kind() {
    let fixture = Fixture::new();
    let script =
        r#"[{"approve_command":"make"},{"approve_file":"a.rs"},{"approve_permission":"net"}]"#;
    let mut run = Run::launch(fixture.spec(ProviderKind::Acp, &fake(), script));
    let first = run.attention().await;
    assert_eq!(first.class, RequestClass::PermissionApproval);
    assert_eq!(first.action, "run make");
    assert!(first.session_approval_available);
    assert!(
        first.request_key.starts_with("number:") || first.request_key.starts_with("string:"),
        "{}",
        first.request_key
    );
    run.respond(&first.request_key, Response::Approve).await;
    run.until("resolved", |event| {
        matches!(event, ProviderEvent::ResponseResolved { .. })
    })
    .await;
    let second = run.attention().await;
    run.respond(&second.request_key, Response::ApproveForSession)
        .await;
    let third = run.attention().await;
    run.respond(&third.request_key, Response::Decline).await;
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    run.shutdown().await;
    let decisions: Vec<_> = fixture
        .logged("decision")
        .iter()
        .map(|entry| entry["decision"].clone())
        .collect();
    assert_eq!(decisions, vec!["allow-once", "allow-always", "reject-once"]);
}

#[tokio::test]
async fn a_read_only_run_refuses_agent_writes() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(
        ProviderKind::Acp,
        &fake(),
        r#"[{"write_file":{"path":"out.txt","content":"x"}}]"#,
    ));
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    run.shutdown().await;
    assert!(
        !fixture.path("out.txt").exists(),
        "the read-only run let the agent write"
    );
    assert_eq!(fixture.logged("write")[0]["ok"], false);
    assert!(
        run.agent_texts()
            .iter()
            .any(|text| text.contains("read-only")),
        "{:?}",
        run.agent_texts()
    );
}

#[tokio::test]
async fn a_write_run_serves_writes_inside_the_worktree_only() {
    let fixture = Fixture::new();
    let outside = tempfile::tempdir().expect("outside dir");
    let escape = outside.path().join("escape.txt");
    let script = format!(
        r#"[{{"write_file":{{"path":"out.txt","content":"written"}}}},{{"write_file":{{"path":"{}","content":"x"}}}}]"#,
        escape.display()
    );
    let mut spec = fixture.spec(ProviderKind::Acp, &fake(), &script);
    spec.sandbox = Sandbox::WorkspaceWrite;
    let mut run = Run::launch(spec);
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    run.shutdown().await;
    assert_eq!(
        std::fs::read_to_string(fixture.path("out.txt")).expect("written"),
        "written"
    );
    assert!(!escape.exists(), "a write outside the worktree was served");
    assert_eq!(fixture.logged("initialize")[0]["write"], true);
}

#[tokio::test]
async fn cancel_interrupts_the_turn() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(ProviderKind::Acp, &fake(), r#"["wait_interrupt"]"#));
    run.until("Working", |event| matches!(event, ProviderEvent::Working))
        .await;
    run.command(ProviderCommand::Interrupt).await;
    assert_eq!(run.turn_completed().await, TurnOutcome::Interrupted);
    run.shutdown().await;
    assert_eq!(fixture.logged("cancel").len(), 1);
}

#[tokio::test]
async fn a_failed_prompt_is_a_failed_turn() {
    let fixture = Fixture::new();
    let mut run =
        Run::launch(fixture.spec(ProviderKind::Acp, &fake(), r#"[{"fail":"model exploded"}]"#));
    assert!(matches!(run.turn_completed().await, TurnOutcome::Failed(_)));
    run.shutdown().await;
}

#[tokio::test]
async fn crash_mid_turn_is_a_transport_failure() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(
        ProviderKind::Acp,
        &fake(),
        r#"[{"text":"working"},"crash"]"#,
    ));
    assert_eq!(run.stopped().await, Some(3));
    assert_eq!(
        run.transport_failure().map(|failure| failure.0),
        Some(FailureKind::Disconnected)
    );
    assert!(!run.saw(|event| matches!(event, ProviderEvent::TurnCompleted(_))));
}

#[tokio::test]
async fn hang_then_shutdown_ends_the_process_group() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(ProviderKind::Acp, &fake(), r#"["hang"]"#));
    run.until("Working", |event| matches!(event, ProviderEvent::Working))
        .await;
    let child_pid = loop {
        if let Some(entry) = fixture.logged("child").first() {
            break entry["pid"].as_u64().expect("pid") as u32;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    run.command(ProviderCommand::Interrupt).await;
    run.shutdown().await;
    assert!(
        wait_until_gone(child_pid).await,
        "grandchild {child_pid} survived"
    );
}

#[tokio::test]
async fn garbage_output_fails_closed() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(
        ProviderKind::Acp,
        &fake(),
        r#"["garbage",{"text":"never"}]"#,
    ));
    run.stopped().await;
    assert_eq!(
        run.transport_failure().map(|failure| failure.0),
        Some(FailureKind::Protocol)
    );
    assert!(
        !run.saw(|event| matches!(event, ProviderEvent::TurnCompleted(TurnOutcome::Completed)))
    );
}

#[tokio::test]
async fn resume_uses_session_resume_and_sends_no_prompt() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::Acp, &fake(), "[]");
    spec.resume_session_id = Some("acp-stored-3".to_string());
    spec.initial_input = None;
    let mut run = Run::launch(spec);
    assert_eq!(run.session_bound().await, "acp-stored-3");
    run.shutdown().await;
    assert_eq!(fixture.logged("resume")[0]["session_id"], "acp-stored-3");
    assert!(fixture.logged("new_session").is_empty());
    assert!(
        fixture.logged("prompt").is_empty(),
        "a resume must not replay the prompt"
    );
}

#[tokio::test]
async fn resume_falls_back_to_session_load() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::Acp, &fake(), "[]");
    spec.env
        .insert("NAGI_FAKE_ACP_RESUME".to_string(), "load".to_string());
    spec.resume_session_id = Some("acp-stored-4".to_string());
    spec.initial_input = None;
    let mut run = Run::launch(spec);
    assert_eq!(run.session_bound().await, "acp-stored-4");
    run.shutdown().await;
    assert_eq!(fixture.logged("load")[0]["session_id"], "acp-stored-4");
}

#[tokio::test]
async fn resume_without_agent_support_fails_closed() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::Acp, &fake(), "[]");
    spec.env
        .insert("NAGI_FAKE_ACP_RESUME".to_string(), "none".to_string());
    spec.resume_session_id = Some("acp-stored-5".to_string());
    spec.initial_input = None;
    let mut run = Run::launch(spec);
    run.stopped().await;
    assert_eq!(
        run.transport_failure().map(|failure| failure.0),
        Some(FailureKind::Protocol)
    );
    assert!(!run.saw(|event| matches!(event, ProviderEvent::SessionBound { .. })));
}

#[test]
fn choosing_a_model_for_an_acp_agent_is_refused_with_the_reason() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::Acp, &fake(), r#"["complete"]"#);
    spec.model = Some("some-model".into());
    let refused = nagi_providers::launch(spec).err().expect("refused");
    assert!(
        refused.to_string().contains("not supported for ACP agents"),
        "{refused}"
    );
}
