//! The Claude Code adapter against `fake_claude`, which speaks stream-json.

mod adapter_support;

use std::collections::BTreeMap;

use adapter_support::{Fixture, Run, program, wait_until_gone};
use nagi_providers::{
    FailureKind, ProviderCommand, ProviderEvent, ProviderKind, RequestClass, Response, Sandbox,
    TranscriptLine, TurnOutcome,
};

fn fake() -> String {
    program(env!("CARGO_BIN_EXE_fake_claude"))
}

fn started_args(fixture: &Fixture) -> Vec<String> {
    let started = &fixture.logged("started")[0];
    started["args"]
        .as_array()
        .expect("args")
        .iter()
        .skip(1)
        .map(|arg| arg.as_str().expect("str").to_string())
        .collect()
}

#[tokio::test]
async fn read_only_run_uses_plan_mode_and_binds_the_init_session() {
    let fixture = Fixture::new();
    let script = r#"[{"text":"hello from claude"},{"tool":"ls","output":"README"}]"#;
    let mut run = Run::launch(fixture.spec(ProviderKind::ClaudeCode, &fake(), script));
    assert_eq!(run.session_bound().await, "fake-session-1");
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    assert!(run.agent_texts().contains(&"hello from claude".to_string()));
    // Streamed first (`--include-partial-messages`), then whole.
    assert_eq!(run.streamed_text(), "hello from claude");
    assert!(run.saw(|event| matches!(event, ProviderEvent::Transcript(TranscriptLine::ToolCall(c)) if c.starts_with("Bash"))));
    assert!(run.saw(|event| matches!(event, ProviderEvent::Transcript(TranscriptLine::ToolResult { title, output }) if title == "Bash [completed]" && output == "README")), "a result is shown under its tool's name");
    run.shutdown().await;

    let args = started_args(&fixture);
    let joined = args.join(" ");
    assert!(
        joined.contains("--permission-mode plan --permission-prompt-tool stdio"),
        "{joined}"
    );
    assert!(joined.contains("--safe-mode --strict-mcp-config --mcp-config {\"mcpServers\":{}} --tools Read,Glob,Grep,AskUserQuestion"), "{joined}");
    assert!(!joined.contains("--resume"));
    assert_eq!(
        fixture.logged("started")[0]["cwd"],
        fixture.worktree.path().display().to_string()
    );
    assert_eq!(
        fixture.received("control_request")[0]["request"]["subtype"],
        "initialize"
    );
    assert_eq!(fixture.logged("prompt")[0]["text"], "Objective: say hello");
}

#[tokio::test]
async fn a_read_only_run_whose_init_frame_offers_more_tools_fails_closed() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::ClaudeCode, &fake(), r#"[{"text":"hi"}]"#);
    spec.env
        .insert("NAGI_FAKE_IGNORE_FLAGS".to_string(), "1".to_string());
    let mut run = Run::launch(spec);
    run.stopped().await;
    let (kind, reason) = run.transport_failure().expect("failure");
    assert_eq!(kind, FailureKind::Protocol);
    assert!(reason.contains("permission mode"), "{reason}");
    assert!(!run.saw(|event| matches!(event, ProviderEvent::SessionBound { .. })));
}

#[tokio::test]
async fn a_question_is_answered_by_question_text() {
    let fixture = Fixture::new();
    let script =
        r#"[{"ask":{"question":"Which color?","header":"Color","options":["Red","Blue"]}}]"#;
    let mut run = Run::launch(fixture.spec(ProviderKind::ClaudeCode, &fake(), script));
    let question = run.attention().await;
    assert_eq!(question.class, RequestClass::UserInput);
    assert_eq!(question.request_key, "string:perm-1");
    assert_eq!(question.questions[0].id, "Which color?");
    assert_eq!(question.questions[0].options[1].description, "choose Blue");
    let answers = BTreeMap::from([("Which color?".to_string(), vec!["Blue".to_string()])]);
    run.respond(&question.request_key, Response::Answers(answers))
        .await;
    run.until("resolved", |event| {
        matches!(event, ProviderEvent::ResponseResolved { .. })
    })
    .await;
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    assert!(run.agent_texts().contains(&"answer: Blue".to_string()));
    run.shutdown().await;
}

#[tokio::test]
async fn a_tool_permission_in_a_read_only_run_is_denied_and_the_turn_goes_on() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(
        ProviderKind::ClaudeCode,
        &fake(),
        r#"[{"approve_command":"cat /etc/hostname"},{"text":"read what I could"}]"#,
    ));
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    assert!(
        run.transport_failure().is_none(),
        "{:?}",
        run.transport_failure()
    );
    assert!(!run.saw(|event| matches!(event, ProviderEvent::AttentionRequested(_))));
    assert!(run.saw(|event| matches!(
        event,
        ProviderEvent::Transcript(TranscriptLine::Info(line)) if line.contains("denied Bash: the run is read-only")
    )));
    let decisions = fixture.logged("decision");
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(
        decisions[0]["decision"], "deny",
        "the request is denied, not allowed"
    );
}

#[tokio::test]
async fn write_run_approvals_map_to_allow_deny_and_session_rules() {
    let fixture = Fixture::new();
    let script = r#"[{"approve_command":"make test"},{"approve_file":"src/main.rs"},{"approve_permission":"https://example.invalid"}]"#;
    let mut spec = fixture.spec(ProviderKind::ClaudeCode, &fake(), script);
    spec.sandbox = Sandbox::WorkspaceWrite;
    let mut run = Run::launch(spec);

    let command = run.attention().await;
    assert_eq!(command.class, RequestClass::CommandApproval);
    assert_eq!(command.action, "make test");
    assert!(
        command.session_approval_available,
        "one suggestion is session-scoped"
    );
    run.respond(&command.request_key, Response::ApproveForSession)
        .await;

    let file = run.attention().await;
    assert_eq!(file.class, RequestClass::FileChangeApproval);
    assert!(file.action.contains("src/main.rs"));
    run.respond(&file.request_key, Response::Decline).await;

    let permission = run.attention().await;
    assert_eq!(permission.class, RequestClass::PermissionApproval);
    assert!(!permission.session_approval_available);
    run.respond(&permission.request_key, Response::Approve)
        .await;

    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    assert_eq!(
        run.agent_texts(),
        vec![
            "decision: allow_session",
            "decision: deny",
            "decision: allow"
        ]
    );
    run.shutdown().await;

    let decisions = fixture.logged("decision");
    // Only the session-scoped suggestion may be applied: never one that writes settings files.
    let applied = decisions[0]["response"]["updatedPermissions"]
        .as_array()
        .expect("rules")
        .clone();
    assert_eq!(applied.len(), 1);
    assert_eq!(applied[0]["destination"], "session");
    assert_eq!(
        decisions[0]["response"]["decisionClassification"],
        "user_permanent"
    );
    assert_eq!(
        decisions[1]["response"]["decisionClassification"],
        "user_reject"
    );
    assert_eq!(
        decisions[2]["response"]["decisionClassification"],
        "user_temporary"
    );
    let joined = started_args(&fixture).join(" ");
    assert!(joined.contains("--permission-mode default"), "{joined}");
    assert!(!joined.contains("--tools"), "{joined}");
}

#[tokio::test]
async fn crash_mid_turn_is_a_transport_failure() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(
        ProviderKind::ClaudeCode,
        &fake(),
        r#"[{"text":"working"},"crash"]"#,
    ));
    assert_eq!(run.stopped().await, Some(3));
    assert_eq!(
        run.transport_failure().map(|failure| failure.0),
        Some(FailureKind::Disconnected)
    );
    assert!(run.saw(|event| matches!(event, ProviderEvent::Transcript(TranscriptLine::Stderr(line)) if line.contains("simulated crash"))));
}

#[tokio::test]
async fn interrupt_ends_the_turn_as_interrupted() {
    let fixture = Fixture::new();
    let mut run =
        Run::launch(fixture.spec(ProviderKind::ClaudeCode, &fake(), r#"["wait_interrupt"]"#));
    run.until("Working", |event| matches!(event, ProviderEvent::Working))
        .await;
    run.command(ProviderCommand::Interrupt).await;
    assert_eq!(run.turn_completed().await, TurnOutcome::Interrupted);
    run.shutdown().await;
    let interrupts = fixture.received("control_request");
    assert!(
        interrupts
            .iter()
            .any(|frame| frame["request"]["subtype"] == "interrupt")
    );
}

#[tokio::test]
async fn hang_then_shutdown_ends_the_process_group() {
    let fixture = Fixture::new();
    let mut run = Run::launch(fixture.spec(ProviderKind::ClaudeCode, &fake(), r#"["hang"]"#));
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
    let mut run = Run::launch(fixture.spec(ProviderKind::ClaudeCode, &fake(), r#"["garbage"]"#));
    run.stopped().await;
    assert_eq!(
        run.transport_failure().map(|failure| failure.0),
        Some(FailureKind::Protocol)
    );
}

#[tokio::test]
async fn resume_binds_the_stored_session_and_sends_no_prompt() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::ClaudeCode, &fake(), r#"[{"text":"x"}]"#);
    spec.resume_session_id = Some("stored-session-9".to_string());
    spec.initial_input = None;
    let mut run = Run::launch(spec);
    assert_eq!(run.session_bound().await, "stored-session-9");
    run.shutdown().await;
    assert!(
        started_args(&fixture)
            .join(" ")
            .contains("--resume stored-session-9")
    );
    assert!(
        fixture.received("user").is_empty(),
        "a resume must not replay the prompt"
    );
    assert!(fixture.logged("prompt").is_empty());
}

#[tokio::test]
async fn a_resumed_session_continues_with_a_new_turn() {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::ClaudeCode, &fake(), r#"[{"text":"first"}]"#);
    spec.resume_session_id = Some("stored-session-9".to_string());
    spec.initial_input = None;
    let mut run = Run::launch(spec);
    assert_eq!(run.session_bound().await, "stored-session-9");
    run.command(ProviderCommand::SendTurn("continue please".to_string()))
        .await;
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    run.shutdown().await;
    assert_eq!(fixture.logged("prompt").len(), 1);
    assert_eq!(fixture.logged("prompt")[0]["text"], "continue please");
}

#[tokio::test]
async fn the_model_and_effort_are_claude_flags_and_the_result_frame_gives_the_turns_usage_and_cost()
{
    let fixture = Fixture::new();
    let mut spec = fixture.spec(ProviderKind::ClaudeCode, &fake(), r#"["complete"]"#);
    spec.model = Some("claude-sonnet-4-5".into());
    spec.reasoning_effort = Some("high".into());
    let mut run = Run::launch(spec);
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    run.shutdown().await;
    let args = fixture.logged("started")[0]["args"].clone();
    let args: Vec<&str> = args
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|arg| arg.as_str())
        .collect();
    let flag = |name: &str| {
        args.iter()
            .position(|arg| *arg == name)
            .map(|at| args[at + 1])
    };
    assert_eq!(flag("--model"), Some("claude-sonnet-4-5"), "{args:?}");
    assert_eq!(flag("--effort"), Some("high"), "{args:?}");
    // Anthropic counts cache reads apart from input; nagi's input includes them. A fresh
    // session's first total is its first turn's cost.
    assert_eq!(
        run.usage_reports(),
        vec![Run::fake_turn_usage(Some(12_300))]
    );
}
