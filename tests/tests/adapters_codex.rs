//! The Codex adapter against `fake_codex`, which speaks the app-server protocol.

mod adapter_support;

use std::collections::BTreeMap;

use adapter_support::{Fixture, Run, program, wait_until_gone};
use nagi_providers::{
    FailureKind, ProviderCommand, ProviderEvent, ProviderKind, RequestClass, Response, Sandbox,
    TranscriptLine, TurnOutcome,
};

fn fake() -> String {
    program(env!("CARGO_BIN_EXE_fake_codex"))
}

#[tokio::test]
async fn fresh_thread_binds_session_streams_transcript_and_completes() {
    let fixture = Fixture::new();
    let script =
        r#"[{"text":"hello from codex"},{"tool":"cat README","output":"readme text"},"complete"]"#;
    let mut run = Run::launch(fixture.spec(ProviderKind::Codex, &fake(), script));
    assert_eq!(run.session_bound().await, "fake-session-1");
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    assert!(run.agent_texts().contains(&"hello from codex".to_string()));
    assert_eq!(
        run.streamed_text(),
        "hello from codex",
        "item/agentMessage/delta"
    );
    assert!(run.saw(|event| matches!(event, ProviderEvent::Working)));
    assert!(run.saw(|event| matches!(event, ProviderEvent::Transcript(TranscriptLine::ToolCall(c)) if c == "cat README")));
    assert!(run.saw(|event| matches!(event, ProviderEvent::Transcript(TranscriptLine::ToolResult { output, .. }) if output.contains("readme text"))));
    run.shutdown().await;

    let start = &fixture.received("thread/start")[0]["params"];
    assert_eq!(start["sandbox"], "read-only");
    assert_eq!(start["approvalPolicy"], "on-request");
    assert_eq!(start["ephemeral"], false);
    assert_eq!(start["cwd"], fixture.worktree.path().display().to_string());
    assert_eq!(fixture.received("initialized").len(), 1);
    assert_eq!(fixture.logged("prompt")[0]["text"], "Objective: say hello");
}

#[tokio::test]
async fn workspace_write_asks_codex_for_the_write_sandbox() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::Codex, &fake(), r#"["complete"]"#);
    spec.sandbox = Sandbox::WorkspaceWrite;
    let mut run = Run::launch(spec);
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    run.shutdown().await;
    assert_eq!(
        fixture.received("thread/start")[0]["params"]["sandbox"],
        "workspace-write"
    );
}

#[tokio::test]
async fn approvals_are_surfaced_answered_and_resolved() {
    let fixture = Fixture::new();
    let script = r#"[{"approve_command":"rm -rf build"},{"approve_file":"src/lib.rs"},{"approve_permission":"write /etc"}]"#;
    let mut run = Run::launch(fixture.spec(ProviderKind::Codex, &fake(), script));

    let command = run.attention().await;
    assert_eq!(command.class, RequestClass::CommandApproval);
    assert_eq!(command.action, "rm -rf build");
    assert_eq!(command.request_key, "number:0");
    assert!(command.session_approval_available);
    run.respond(&command.request_key, Response::Approve).await;
    run.until("resolved", |event| matches!(event, ProviderEvent::ResponseResolved { request_key } if request_key == "number:0")).await;

    let file = run.attention().await;
    assert_eq!(file.class, RequestClass::FileChangeApproval);
    assert_eq!(file.request_key, "string:fc-1");
    assert!(
        file.action.contains("src/lib.rs"),
        "action names the file: {}",
        file.action
    );
    run.respond(&file.request_key, Response::Decline).await;
    run.until("resolved", |event| matches!(event, ProviderEvent::ResponseResolved { request_key } if request_key == "string:fc-1")).await;

    let permission = run.attention().await;
    assert_eq!(permission.class, RequestClass::PermissionApproval);
    assert!(!permission.session_approval_available);
    run.respond(&permission.request_key, Response::Approve)
        .await;

    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    let texts = run.agent_texts();
    assert_eq!(
        texts,
        vec!["decision: accept", "decision: decline", "decision: accept"]
    );
    run.shutdown().await;
    let decisions: Vec<_> = fixture
        .logged("decision")
        .iter()
        .map(|entry| entry["decision"].clone())
        .collect();
    assert_eq!(decisions, vec!["accept", "decline", "accept"]);
}

#[tokio::test]
async fn a_question_is_answered_with_the_chosen_option() {
    let fixture = Fixture::new();
    let script =
        r#"[{"ask":{"question":"Which branch?","header":"Branch","options":["main","dev"]}}]"#;
    let mut run = Run::launch(fixture.spec(ProviderKind::Codex, &fake(), script));
    let question = run.attention().await;
    assert_eq!(question.class, RequestClass::UserInput);
    assert_eq!(question.questions.len(), 1);
    assert_eq!(question.questions[0].id, "q1");
    assert_eq!(question.questions[0].header, "Branch");
    assert_eq!(question.questions[0].options.len(), 2);
    let answers = BTreeMap::from([("q1".to_string(), vec!["dev".to_string()])]);
    run.respond(&question.request_key, Response::Answers(answers))
        .await;
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    assert!(run.agent_texts().contains(&"answer: dev".to_string()));
    run.shutdown().await;
}

#[tokio::test]
async fn approving_a_question_fails_closed() {
    let fixture = Fixture::new();
    let script = r#"[{"ask":{"question":"Which?","options":["a"]}}]"#;
    let mut run = Run::launch(fixture.spec(ProviderKind::Codex, &fake(), script));
    let question = run.attention().await;
    run.respond(&question.request_key, Response::Approve).await;
    run.stopped().await;
    assert_eq!(
        run.transport_failure().map(|failure| failure.0),
        Some(FailureKind::CommandRejected)
    );
}

#[tokio::test]
async fn crash_mid_turn_is_a_transport_failure_with_the_exit_code() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(
        ProviderKind::Codex,
        &fake(),
        r#"[{"text":"working"},"crash"]"#,
    ));
    let exit = run.stopped().await;
    assert_eq!(exit, Some(3));
    let (kind, reason) = run.transport_failure().expect("transport failure");
    assert_eq!(kind, FailureKind::Disconnected);
    assert!(reason.contains("code 3"), "reason: {reason}");
    assert!(run.saw(|event| matches!(event, ProviderEvent::Transcript(TranscriptLine::Stderr(line)) if line.contains("simulated crash"))));
    assert!(!run.saw(|event| matches!(event, ProviderEvent::TurnCompleted(_))));
}

#[tokio::test]
async fn hang_then_interrupt_and_shutdown_end_the_process_group() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(ProviderKind::Codex, &fake(), r#"["hang"]"#));
    run.until("Working", |event| matches!(event, ProviderEvent::Working))
        .await;
    // The fake logs its grandchild before it stops answering.
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
        "the provider's grandchild {child_pid} survived shutdown"
    );
    assert!(adapter_support::process_is_gone(run.handle.pid));
}

#[tokio::test]
async fn an_interrupted_turn_reports_interrupted() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(ProviderKind::Codex, &fake(), r#"["wait_interrupt"]"#));
    run.until("Working", |event| matches!(event, ProviderEvent::Working))
        .await;
    run.command(ProviderCommand::Interrupt).await;
    assert_eq!(run.turn_completed().await, TurnOutcome::Interrupted);
    run.shutdown().await;
}

#[tokio::test]
async fn garbage_output_fails_closed() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(
        ProviderKind::Codex,
        &fake(),
        r#"["garbage",{"text":"never trusted"}]"#,
    ));
    run.stopped().await;
    assert_eq!(
        run.transport_failure().map(|failure| failure.0),
        Some(FailureKind::Protocol)
    );
    assert!(!run.saw(|event| matches!(event, ProviderEvent::TurnCompleted(_))));
}

#[tokio::test]
async fn an_oversized_frame_fails_closed() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(ProviderKind::Codex, &fake(), r#"["huge_frame"]"#));
    run.stopped().await;
    let (kind, reason) = run.transport_failure().expect("failure");
    assert_eq!(kind, FailureKind::Protocol);
    assert!(reason.contains("bytes"), "reason: {reason}");
}

#[tokio::test]
async fn resume_binds_the_stored_thread_and_sends_no_prompt() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::Codex, &fake(), r#"["complete"]"#);
    spec.resume_session_id = Some("thread-stored-7".to_string());
    spec.initial_input = None;
    let mut run = Run::launch(spec);
    assert_eq!(run.session_bound().await, "thread-stored-7");
    run.shutdown().await;
    assert_eq!(
        fixture.received("thread/resume")[0]["params"]["threadId"],
        "thread-stored-7"
    );
    assert!(fixture.received("thread/start").is_empty());
    assert!(
        fixture.received("turn/start").is_empty(),
        "a resume must not replay the prompt"
    );
    assert!(!run.saw(|event| matches!(event, ProviderEvent::Working)));
}

#[tokio::test]
async fn a_provider_that_exits_at_start_is_reported() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::Codex, &fake(), r#"["complete"]"#);
    spec.env
        .insert("NAGI_FAKE_STARTUP".to_string(), "exit".to_string());
    let mut run = Run::launch(spec);
    assert_eq!(run.stopped().await, Some(0));
    assert_eq!(
        run.transport_failure().map(|failure| failure.0),
        Some(FailureKind::Disconnected)
    );
}

#[tokio::test]
async fn a_missing_program_is_a_synchronous_launch_error() {
    let fixture = Fixture::new();
    let spec = fixture.spec(ProviderKind::Codex, "/nonexistent/codex", "[]");
    assert!(matches!(
        nagi_providers::launch(spec),
        Err(nagi_providers::LaunchError::Spawn(..))
    ));
}

#[tokio::test]
async fn kernel_confinement_keeps_a_read_only_worktree_unwritten() {
    if nagi_providers::landlock_abi_version().is_none() {
        nagi_tests::missing_prerequisite(
            "kernel_confinement_keeps_a_read_only_worktree_unwritten",
            "this kernel offers no Landlock",
        );
        return;
    }
    let fixture = Fixture::new();
    let mut spec = fixture.spec(
        ProviderKind::Codex,
        &fake(),
        r#"[{"write_file":{"path":"sneaky.txt","content":"x"}}]"#,
    );
    let log_dir = fixture.log_path.parent().expect("log dir").to_path_buf();
    spec.confinement = Some(nagi_providers::Confinement {
        read_paths: vec![std::path::PathBuf::from("/")],
        write_paths: vec![log_dir, std::path::PathBuf::from("/dev/null")],
    });
    let mut run = Run::launch(spec);
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    run.shutdown().await;
    assert!(
        !fixture.path("sneaky.txt").exists(),
        "the confined provider wrote the worktree"
    );
    assert!(
        run.agent_texts()
            .iter()
            .any(|text| text.starts_with("write failed")),
        "{:?}",
        run.agent_texts()
    );
}

#[tokio::test]
async fn the_model_and_effort_go_on_every_turn_and_the_turns_usage_is_reported_without_stale_reports()
 {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::Codex, &fake(), r#"["complete"]"#);
    spec.model = Some("gpt-5.4".into());
    spec.reasoning_effort = Some("high".into());
    let mut run = Run::launch(spec);
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    run.shutdown().await;
    let turn = &fixture.received("turn/start")[0]["params"];
    assert_eq!(turn["model"], "gpt-5.4", "{turn}");
    assert_eq!(turn["effort"], "high", "{turn}");
    // The fake first re-sends a stale report under an earlier turn's id (as codex does after
    // a resume); only the running turn's report counts.
    assert_eq!(run.usage_reports(), vec![Run::fake_turn_usage(None)]);
}
