//! A scripted mock of three model APIs, so the real Codex, Claude Code and OpenCode CLIs can run
//! whole agent turns offline. The scenario format is documented at the top of
//! `tests/src/bin/mock_model.rs`; the binary is a thin wrapper around [`MockModelServer`].
//!
//! The mock is stateless per request: it finds the next step from the conversation history the
//! CLI sends (see [`position`]), so retries, resumed sessions and restarts of the CLI or of the
//! mock all land on the right step.

pub mod conversation;
pub mod position;
pub mod replies;
pub mod request_log;
pub mod scenario;
pub mod server;
pub mod vocabulary;

pub use conversation::{ConversationDigest, ModelApi, ToolResult};
pub use request_log::{LoggedRequest, RequestKind, RequestLogError, read_request_log};
pub use scenario::{
    AskCall, AskOption, Fault, Scenario, ScenarioError, Step, ToolCall, call_id_for_step,
};
pub use server::{MockModelConfig, MockModelError, MockModelServer};
