//! `opencode acp` as the ACP agent of a mission: an ACP run needs the cockpit's consent, so
//! the public socket refuses to start it and nothing is written or launched. (The ACP adapter
//! itself is tested against the real `opencode acp` in `tests/tests/adapters_acp_real.rs`.)

use serde_json::json;

use super::*;

const PROVIDER: RealProvider = RealProvider::OpenCodeAcp;

#[test]
fn an_opencode_acp_mission_start_over_the_public_socket_needs_interactive_consent() {
    let Some(cli) = installed_cli(PROVIDER.cli_name()) else {
        return;
    };
    let mut session = RealSession::new(PROVIDER, &cli, |workspace| {
        read_write_scenario(
            workspace,
            json!({"write": {"path": WRITTEN_FILE, "content": "x\n"}}),
            "ACP mission: never said.",
            0,
        )
    });
    session.start_server();
    session.create_configured_mission("acp-m");
    let before_store = session.env.store_fingerprint();
    let before_workspace = snapshot(&session.repo.path);
    let code = session
        .env
        .error_code("mission.start", session.start_params("acp-m", "run-1"));
    assert_eq!(code, "interactive_consent_required");
    assert_eq!(
        session.env.store_fingerprint(),
        before_store,
        "a refused start writes nothing"
    );
    let mission = session.mission("acp-m");
    assert_eq!(mission["status"], "draft", "{mission}");
    assert!(
        mission.get("run").is_none_or(Value::is_null),
        "no run was recorded: {mission}"
    );
    // Nothing was launched: the agent never reached the model, and the checkout is unclaimed
    // and unchanged.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        session.mock.requests().is_empty(),
        "opencode acp must not have been started"
    );
    assert_eq!(snapshot(&session.repo.path), before_workspace);
}
