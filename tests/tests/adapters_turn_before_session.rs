//! Every adapter keeps a turn that the engine sends before the provider's session is bound:
//! the engine launches with no initial input and sends the mission prompt as soon as its
//! read-only guard has fingerprinted the workspace, which is usually before the handshake is
//! over. (The Codex adapter once dropped such a turn: it was popped from the queue while the
//! thread was not open yet, and the run waited forever.)

mod adapter_support;

use adapter_support::{Fixture, Run, program};
use nagi_providers::{ProviderCommand, ProviderKind, TurnOutcome};

async fn turn_sent_at_once_is_run_after_the_handshake(kind: ProviderKind, fake: &str) {
    let fixture = Fixture::new();
    let mut spec = fixture.spec(kind, &program(fake), r#"[{"text":"the early turn ran"}]"#);
    spec.initial_input = None;
    let mut run = Run::launch(spec);
    // Sent right away: the provider has not even answered `initialize` yet.
    run.command(ProviderCommand::SendTurn(
        "Objective: the early turn".to_string(),
    ))
    .await;
    assert_eq!(run.session_bound().await, "fake-session-1");
    assert_eq!(
        run.turn_completed().await,
        TurnOutcome::Completed,
        "events: {:#?}",
        run.seen
    );
    assert!(
        run.agent_texts()
            .iter()
            .any(|text| text.contains("the early turn ran")),
        "agent texts: {:?}",
        run.agent_texts()
    );
    run.shutdown().await;
    let prompts = fixture.logged("prompt");
    assert_eq!(
        prompts.len(),
        1,
        "exactly one turn reached the provider: {prompts:?}"
    );
    assert!(
        prompts[0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("Objective: the early turn"),
        "{prompts:?}"
    );
}

#[tokio::test]
async fn codex_keeps_a_turn_sent_before_the_thread_is_open() {
    turn_sent_at_once_is_run_after_the_handshake(
        ProviderKind::Codex,
        env!("CARGO_BIN_EXE_fake_codex"),
    )
    .await;
}

#[tokio::test]
async fn claude_keeps_a_turn_sent_before_initialize_is_answered() {
    turn_sent_at_once_is_run_after_the_handshake(
        ProviderKind::ClaudeCode,
        env!("CARGO_BIN_EXE_fake_claude"),
    )
    .await;
}

#[tokio::test]
async fn opencode_keeps_a_turn_sent_before_the_server_listens() {
    turn_sent_at_once_is_run_after_the_handshake(
        ProviderKind::OpenCode,
        env!("CARGO_BIN_EXE_fake_opencode"),
    )
    .await;
}

#[tokio::test]
async fn acp_keeps_a_turn_sent_before_the_session_exists() {
    turn_sent_at_once_is_run_after_the_handshake(ProviderKind::Acp, env!("CARGO_BIN_EXE_fake_acp"))
        .await;
}
