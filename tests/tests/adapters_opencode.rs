//! The OpenCode adapter against `fake_opencode`, which serves HTTP + SSE.

mod adapter_support;

use adapter_support::{Fixture, Run, program, wait_until_gone};
use nagi_providers::{
    FailureKind, ProviderCommand, ProviderEvent, ProviderKind, RequestClass, Response, Sandbox,
    TranscriptLine, TurnOutcome,
};

fn fake() -> String {
    program(env!("CARGO_BIN_EXE_fake_opencode"))
}

fn requests(fixture: &Fixture, name: &str) -> Vec<serde_json::Value> {
    fixture.received(name)
}

#[tokio::test]
async fn a_session_is_created_prompted_and_completed() {
    let fixture = Fixture::new();
    let script = r#"[{"text":"hello from opencode"},{"tool":"ls","output":"README"}]"#;
    let mut run = Run::launch(fixture.spec(ProviderKind::OpenCode, &fake(), script));
    assert_eq!(run.session_bound().await, "fake-session-1");
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    assert_eq!(
        run.agent_texts(),
        vec!["hello from opencode"],
        "the prompt is not agent output"
    );
    // Streamed first (`message.part.delta`), then whole.
    assert_eq!(run.streamed_text(), "hello from opencode");
    assert!(run.saw(|event| matches!(event, ProviderEvent::Transcript(TranscriptLine::ToolCall(call)) if call.starts_with("bash"))));
    assert!(run.saw(|event| matches!(event, ProviderEvent::Transcript(TranscriptLine::ToolResult { output, .. }) if output.contains("README"))));
    assert!(run.saw(|event| matches!(event, ProviderEvent::Transcript(TranscriptLine::Info(info)) if info == "opencode server 1.18.33")));
    run.shutdown().await;
    let session = &fixture.logged("new_session")[0];
    assert_eq!(
        session["directory"],
        fixture.worktree.path().display().to_string()
    );
    assert_eq!(fixture.logged("prompt")[0]["text"], "Objective: say hello");
    let started = &fixture.logged("started")[0];
    assert_eq!(
        started["cwd"],
        fixture.worktree.path().display().to_string()
    );
    let args: Vec<String> = started["args"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        args,
        vec![
            "serve",
            "--hostname",
            "127.0.0.1",
            "--port",
            "0",
            "--no-mdns"
        ]
    );
}

#[tokio::test]
async fn read_only_runs_deny_edits_bash_and_outside_directories() {
    let fixture = Fixture::new();
    let probe = fixture.path("env.txt");
    // The fake writes nothing; we look at what the adapter put in its environment.
    let mut spec = fixture.spec(ProviderKind::OpenCode, "/bin/sh", "[]");
    spec.leading_args = vec![
        "-c".to_string(),
        format!("env > {}; exit 0", probe.display()),
        "sh".to_string(),
    ];
    let mut run = Run::launch(spec);
    run.stopped().await;
    let env = std::fs::read_to_string(&probe).expect("env written");
    assert!(
        env.contains(
            r#"OPENCODE_PERMISSION={"edit":"deny","bash":"deny","external_directory":"deny"}"#
        ),
        "{env}"
    );
    assert!(env.contains("OPENCODE_SERVER_USERNAME=opencode"));
    let password = env
        .lines()
        .find_map(|line| line.strip_prefix("OPENCODE_SERVER_PASSWORD="))
        .expect("password");
    assert_eq!(
        password.len(),
        43,
        "32 random bytes, base64url without padding"
    );
}

#[tokio::test]
async fn write_runs_have_no_permission_override() {
    let fixture = Fixture::new();
    let probe = fixture.path("env.txt");
    let mut spec = fixture.spec(ProviderKind::OpenCode, "/bin/sh", "[]");
    spec.sandbox = Sandbox::WorkspaceWrite;
    spec.leading_args = vec![
        "-c".to_string(),
        format!("env > {}; exit 0", probe.display()),
        "sh".to_string(),
    ];
    let mut run = Run::launch(spec);
    run.stopped().await;
    let env = std::fs::read_to_string(&probe).expect("env written");
    assert!(!env.contains("OPENCODE_PERMISSION="), "{env}");
}

#[tokio::test]
async fn permission_requests_are_replied_and_confirmed() {
    let fixture = Fixture::new();
    let script =
        r#"[{"approve_command":"make"},{"approve_file":"src/x.rs"},{"approve_permission":"/etc"}]"#;
    let mut run = Run::launch(fixture.spec(ProviderKind::OpenCode, &fake(), script));
    let first = run.attention().await;
    assert_eq!(first.class, RequestClass::PermissionApproval);
    assert_eq!(first.request_key, "string:per_1");
    assert_eq!(first.action, "bash: make");
    assert!(first.session_approval_available);
    run.respond(&first.request_key, Response::Approve).await;
    run.until("resolved", |event| matches!(event, ProviderEvent::ResponseResolved { request_key } if request_key == "string:per_1")).await;
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
    assert_eq!(decisions, vec!["once", "always", "reject"]);
    assert_eq!(
        run.agent_texts(),
        vec!["decision: once", "decision: always", "decision: reject"]
    );
}

#[tokio::test]
async fn a_structured_question_fails_closed_after_surfacing_it() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(
        ProviderKind::OpenCode,
        &fake(),
        r#"[{"ask":{"question":"Which?","options":["a","b"]}}]"#,
    ));
    let question = run.attention().await;
    assert_eq!(question.class, RequestClass::UserInput);
    assert_eq!(question.action, "Which?");
    run.stopped().await;
    assert_eq!(
        run.transport_failure().map(|failure| failure.0),
        Some(FailureKind::Protocol)
    );
    assert_eq!(
        fixture.logged("abort").len(),
        1,
        "the session is aborted before failing"
    );
}

#[tokio::test]
async fn abort_interrupts_the_turn() {
    let fixture = Fixture::new();
    let mut run =
        Run::launch(fixture.spec(ProviderKind::OpenCode, &fake(), r#"["wait_interrupt"]"#));
    run.until("Working", |event| matches!(event, ProviderEvent::Working))
        .await;
    run.command(ProviderCommand::Interrupt).await;
    assert_eq!(run.turn_completed().await, TurnOutcome::Interrupted);
    run.shutdown().await;
}

#[tokio::test]
async fn a_session_error_fails_the_turn() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(
        ProviderKind::OpenCode,
        &fake(),
        r#"[{"fail":"model refused"}]"#,
    ));
    match run.turn_completed().await {
        TurnOutcome::Failed(reason) => assert!(reason.contains("model refused"), "{reason}"),
        other => panic!("expected a failed turn, got {other:?}"),
    }
    run.shutdown().await;
}

#[tokio::test]
async fn crash_mid_turn_is_delivery_unknown() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(
        ProviderKind::OpenCode,
        &fake(),
        r#"[{"text":"working"},"crash"]"#,
    ));
    assert_eq!(run.stopped().await, Some(3));
    let (kind, reason) = run.transport_failure().expect("failure");
    assert_eq!(
        kind,
        FailureKind::DeliveryUnknown,
        "an event stream that ends mid-turn is ambiguous: {reason}"
    );
    assert!(reason.contains("code 3"), "{reason}");
}

#[tokio::test]
async fn hang_then_shutdown_ends_the_process_group() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(ProviderKind::OpenCode, &fake(), r#"["hang"]"#));
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
async fn garbage_events_fail_closed() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(
        ProviderKind::OpenCode,
        &fake(),
        r#"["garbage",{"text":"never"}]"#,
    ));
    run.stopped().await;
    assert_eq!(
        run.transport_failure().map(|failure| failure.0),
        Some(FailureKind::Protocol)
    );
}

#[tokio::test]
async fn an_oversized_event_fails_closed() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(ProviderKind::OpenCode, &fake(), r#"["huge_frame"]"#));
    run.stopped().await;
    assert_eq!(
        run.transport_failure().map(|failure| failure.0),
        Some(FailureKind::Protocol)
    );
}

#[tokio::test]
async fn resume_looks_up_the_session_and_sends_no_prompt() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::OpenCode, &fake(), "[]");
    spec.resume_session_id = Some("ses_stored".to_string());
    spec.initial_input = None;
    let mut run = Run::launch(spec);
    assert_eq!(run.session_bound().await, "ses_stored");
    run.shutdown().await;
    assert_eq!(fixture.logged("resume")[0]["session_id"], "ses_stored");
    assert!(fixture.logged("new_session").is_empty());
    assert!(
        fixture.logged("prompt").is_empty(),
        "a resume must not replay the prompt"
    );
    assert_eq!(
        requests(&fixture, "GET /permission").len(),
        1,
        "pending permissions are hydrated"
    );
    assert_eq!(requests(&fixture, "GET /question").len(), 1);
}

#[tokio::test]
async fn versions_outside_the_tested_range_are_refused_with_the_range() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::OpenCode, &fake(), "[]");
    spec.env.insert(
        "NAGI_FAKE_OPENCODE_VERSION".to_string(),
        "1.17.2".to_string(),
    );
    let mut run = Run::launch(spec);
    run.stopped().await;
    let (kind, reason) = run.transport_failure().expect("failure");
    assert_eq!(kind, FailureKind::Protocol);
    assert!(
        reason.contains("1.17.2") && reason.contains("1.18.0"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_missing_capability_is_named() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::OpenCode, &fake(), "[]");
    spec.env.insert(
        "NAGI_FAKE_OPENCODE_DROP_PATH".to_string(),
        "/session/{sessionID}/abort".to_string(),
    );
    let mut run = Run::launch(spec);
    run.stopped().await;
    let (_, reason) = run.transport_failure().expect("failure");
    assert!(
        reason.contains("POST /session/{sessionID}/abort"),
        "{reason}"
    );
}

#[tokio::test]
async fn the_model_goes_in_the_prompt_and_the_turns_finished_messages_give_its_usage() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::OpenCode, &fake(), r#"["complete"]"#);
    spec.model = Some("anthropic/claude-sonnet-4-5".into());
    spec.reasoning_effort = Some("high".into());
    let mut run = Run::launch(spec);
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    run.shutdown().await;
    let prompt = &fixture.logged("prompt")[0];
    assert_eq!(
        prompt["model"],
        serde_json::json!({"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}),
        "{prompt}"
    );
    assert_eq!(prompt["variant"], "high");
    // The finished message is reported twice; it counts once.
    let reports = run.usage_reports();
    assert_eq!(
        reports.last().copied(),
        Some(Run::fake_turn_usage(Some(12_300))),
        "{reports:?}"
    );
}

#[test]
fn a_model_that_is_not_provider_slash_model_is_refused_at_launch() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::OpenCode, &fake(), r#"["complete"]"#);
    spec.model = Some("claude-sonnet-4-5".into());
    let refused = nagi_providers::launch(spec).err().expect("refused");
    assert!(refused.to_string().contains("provider/model"), "{refused}");
}
