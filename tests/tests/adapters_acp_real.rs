//! Our ACP adapter against a real ACP agent: `opencode acp` (the pinned OpenCode that
//! `.ci/install-providers` installs), offline against our mock model server. The agent is
//! launched through `nagi_providers::launch` with workspace-write consent, as a cockpit-consented
//! ACP run would be: initialize, `session/new`, a prompt turn whose read tool reaches the mock,
//! then a write turn that lands inside the worktree and an outside write that is refused.
//!
//! Skips (printing why) only when OpenCode is not installed.

mod adapter_support;

use std::path::Path;
use std::time::Duration;

use adapter_support::{Run, wait_until_gone};
use nagi_providers::{
    LaunchSpec, ProviderCommand, ProviderEvent, ProviderKind, Response, Sandbox, Timeouts,
    TranscriptLine, TurnOutcome,
};
use nagi_tests::mock_model::{MockModelConfig, MockModelServer, Scenario};
use nagi_tests::real_cli::{CliHome, RealProvider, installed_cli};
use serde_json::json;

const SECRET_WORD: &str = "tamarind";

struct AcpFixture {
    _temp: tempfile::TempDir,
    worktree: std::path::PathBuf,
    outside: std::path::PathBuf,
    home: CliHome,
}

impl AcpFixture {
    fn new() -> AcpFixture {
        let temp = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(temp.path()).expect("canonical temp dir");
        let worktree = root.join("worktree");
        let outside = root.join("outside");
        std::fs::create_dir_all(&worktree).expect("worktree");
        std::fs::create_dir_all(&outside).expect("outside dir");
        std::fs::write(
            worktree.join("README.md"),
            format!("The secret word is {SECRET_WORD}.\n"),
        )
        .expect("README");
        let home = CliHome::new(&root);
        AcpFixture {
            _temp: temp,
            worktree,
            outside,
            home,
        }
    }

    fn spec(&self, opencode: &Path, mock: &MockModelServer, first_turn: &str) -> LaunchSpec {
        LaunchSpec {
            kind: ProviderKind::Acp,
            program: opencode.to_path_buf(),
            leading_args: vec!["acp".to_string()],
            worktree: self.worktree.clone(),
            env: self.home.env(RealProvider::OpenCodeAcp, &mock.base_url()),
            extra_args: Vec::new(),
            sandbox: Sandbox::WorkspaceWrite,
            confinement: None,
            resume_session_id: None,
            initial_input: Some(first_turn.to_string()),
            model: None,
            reasoning_effort: None,
            // OpenCode answers initialize after 4–7 s and session/new after 3–5 s on a quiet
            // machine; two busy cores can double that.
            timeouts: Timeouts {
                request: Duration::from_secs(90),
                startup: Duration::from_secs(90),
                turn_idle: Duration::from_secs(180),
            },
        }
    }
}

fn start_mock(scenario: serde_json::Value) -> MockModelServer {
    let scenario = Scenario::from_json(&scenario.to_string()).expect("a valid scenario");
    MockModelServer::start(MockModelConfig {
        scenario,
        log_dir: None,
        port: 0,
    })
    .expect("start the mock model")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_acp_reads_writes_inside_the_worktree_and_is_refused_outside() {
    let Some(opencode) = installed_cli("opencode") else {
        return;
    };
    let fixture = AcpFixture::new();
    let outside_file = fixture.outside.join("escaped.txt");
    let mock = start_mock(json!({
        "workspace": fixture.worktree,
        "title": "Mock session",
        "steps": [
            {"call": {"read": {"path": "README.md"}}},
            {"text": "ACP read: the README was read."},
            {"call": {"write": {"path": "inside.txt", "content": "written by the agent\n"}}},
            {"text": "ACP write: inside.txt is written."},
            {"call": {"write": {"path": outside_file, "content": "must not land\n"}}},
            {"text": "ACP outside write: done."}
        ]
    }));
    let mut run = Run::launch(fixture.spec(&opencode, &mock, "Read the README."));

    // initialize + session/new: the session id is OpenCode's own.
    let session_id = run.session_bound().await;
    assert!(
        session_id.starts_with("ses_"),
        "unexpected session id {session_id}"
    );

    // A prompt turn against the mock: the read result reaches the model, the text reaches us.
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    assert!(
        run.agent_texts()
            .iter()
            .any(|text| text.contains("ACP read: the README was read.")),
        "agent texts: {:?}",
        run.agent_texts()
    );
    assert!(run.saw(|event| matches!(
        event,
        ProviderEvent::Transcript(TranscriptLine::ToolCall(_))
    )));
    let read_result = mock
        .main_requests()
        .iter()
        .flat_map(|request| request.tool_results())
        .find(|result| result.call_id == "call_mock_0")
        .expect("a request carried the read result");
    assert!(
        read_result.content.contains(SECRET_WORD),
        "the read result should hold the README: {read_result:?}"
    );

    // A write turn: with write consent the file lands inside the worktree.
    run.command(ProviderCommand::SendTurn("Write inside.txt.".to_string()))
        .await;
    assert_eq!(run.turn_completed().await, TurnOutcome::Completed);
    assert_eq!(
        std::fs::read_to_string(fixture.worktree.join("inside.txt"))
            .ok()
            .as_deref(),
        Some("written by the agent\n")
    );

    // A write outside the worktree asks for permission; declining it keeps the file out.
    run.command(ProviderCommand::SendTurn(
        "Write a file outside.".to_string(),
    ))
    .await;
    let request = run.attention().await;
    assert!(
        request.action.contains("outside") || request.action.contains("escaped"),
        "the permission request should name the outside path: {request:?}"
    );
    run.respond(&request.request_key, Response::Decline).await;
    let outcome = run.turn_completed().await;
    assert_eq!(outcome, TurnOutcome::Completed);
    assert!(
        !outside_file.exists(),
        "a declined outside write must not land"
    );
    let entries: Vec<_> = std::fs::read_dir(&fixture.outside)
        .expect("read outside dir")
        .collect();
    assert!(
        entries.is_empty(),
        "nothing was written outside: {entries:?}"
    );

    let pid = run.handle.pid;
    run.shutdown().await;
    assert!(
        wait_until_gone(pid).await,
        "opencode acp is gone after shutdown"
    );
}
