//! The interface between the engine and every adapter.
//!
//! The engine builds a [`LaunchSpec`], calls [`launch`], and then owns the returned
//! [`ProviderHandle`]: it sends [`ProviderCommand`]s on `commands` and reads
//! [`ProviderEvent`]s from `events` until [`ProviderEvent::Stopped`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc;

/// Which provider protocol to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// `codex app-server --listen stdio://`: newline JSON-RPC without a `jsonrpc` field.
    Codex,
    /// `claude -p --input-format stream-json --output-format stream-json ...`.
    ClaudeCode,
    /// `opencode serve` (HTTP + SSE with basic auth).
    OpenCode,
    /// Any ACP agent over stdio (newline JSON-RPC 2.0), through `agent-client-protocol`.
    Acp,
}

impl ProviderKind {
    /// The executable looked up on `PATH` when the config names no command.
    /// ACP has no default: it must be configured.
    pub fn default_program(self) -> Option<&'static str> {
        match self {
            ProviderKind::Codex => Some("codex"),
            ProviderKind::ClaudeCode => Some("claude"),
            ProviderKind::OpenCode => Some("opencode"),
            ProviderKind::Acp => None,
        }
    }
}

/// How much the provider may touch the worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sandbox {
    /// Every run started over the public socket, and every recovered run.
    ReadOnly,
    /// Granted only through the cockpit.
    WorkspaceWrite,
}

/// Kernel confinement the engine asks the adapter to apply to the provider process tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confinement {
    /// Paths the process tree may read and execute beneath (normally `/`).
    pub read_paths: Vec<PathBuf>,
    /// Paths the process tree may also write beneath. Never an ancestor of the worktree
    /// for a read-only run.
    pub write_paths: Vec<PathBuf>,
}

/// Everything an adapter needs to start (or resume) one provider session.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    pub kind: ProviderKind,
    /// Resolved executable (absolute path). The engine resolves it before launching so that
    /// a missing executable is reported synchronously.
    pub program: PathBuf,
    /// Arguments that come before the adapter's own (ACP: the configured argv tail).
    pub leading_args: Vec<String>,
    /// The claimed checkout the provider works in.
    pub worktree: PathBuf,
    /// Extra environment for the provider process (applied over the server's own).
    pub env: BTreeMap<String, String>,
    /// Extra protocol-level settings from the config file, per provider (for example Codex
    /// `-c` overrides that point it at a model endpoint). Passed through verbatim.
    pub extra_args: Vec<String>,
    pub sandbox: Sandbox,
    /// Kernel confinement to apply, when the engine found it available.
    pub confinement: Option<Confinement>,
    /// The stored native session to resume instead of starting a fresh one.
    pub resume_session_id: Option<String>,
    /// The first turn's input. `None` (recovery) sends no turn at all: a resume never
    /// replays the mission prompt.
    pub initial_input: Option<String>,
    /// The model to use, in the provider's own spelling (`None`: its default).
    pub model: Option<String>,
    /// The reasoning effort, where the provider has one (`None`: its default).
    pub reasoning_effort: Option<String>,
    pub timeouts: Timeouts,
}

/// Protocol timeouts. The defaults follow contract §8.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Per handshake frame / per request to the provider.
    pub request: Duration,
    /// Provider start-up (OpenCode's listening line, ACP initialize).
    pub startup: Duration,
    /// A turn with no provider activity for this long fails. Suspended while attention is
    /// pending.
    pub turn_idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            request: Duration::from_secs(30),
            startup: Duration::from_secs(30),
            turn_idle: Duration::from_secs(15 * 60),
        }
    }
}

/// What kind of provider request an attention item answers. Decides which decisions are
/// valid (contract §2.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestClass {
    CommandApproval,
    FileChangeApproval,
    PermissionApproval,
    UserInput,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionOption {
    pub label: String,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The exact key the provider expects in the answers.
    pub id: String,
    pub header: String,
    pub prompt: String,
    pub options: Vec<QuestionOption>,
    pub multiple: bool,
    pub custom_allowed: bool,
}

/// A provider asked for a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttentionRequest {
    /// Stable audit id of the provider's request: `number:<n>` or `string:<s>`.
    pub request_key: String,
    pub class: RequestClass,
    /// Human description: the command line, the file path, the question text.
    pub action: String,
    pub questions: Vec<Question>,
    /// Whether "approve for session" can be delivered for this request.
    pub session_approval_available: bool,
}

/// A decision the engine delivers to the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    Approve,
    ApproveForSession,
    Decline,
    /// question id -> chosen answers
    Answers(BTreeMap<String, Vec<String>>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderCommand {
    /// Send a new turn with this text.
    SendTurn(String),
    Respond {
        request_key: String,
        response: Response,
    },
    Interrupt,
    /// Stop the provider process tree.
    Shutdown,
}

/// One line for the run's transcript pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TranscriptLine {
    /// A piece of the agent's message as the provider streams it. The run's console draws
    /// it at once; the transcript file keeps the whole message (`AgentText`), which every
    /// adapter sends when the message is complete.
    AgentDelta(String),
    AgentText(String),
    ToolCall(String),
    /// A tool's end: its status line (exit code where known) and its output.
    ToolResult {
        title: String,
        output: String,
    },
    Approval(String),
    Stderr(String),
    Info(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnOutcome {
    Completed,
    Interrupted,
    Failed(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    Spawn,
    Protocol,
    Timeout,
    Disconnected,
    CommandRejected,
    /// A write whose delivery cannot be confirmed.
    DeliveryUnknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderEvent {
    /// The provider's native session id is known (fresh or resumed).
    SessionBound {
        session_id: String,
    },
    /// The provider is working on a turn.
    Working,
    Transcript(TranscriptLine),
    AttentionRequested(AttentionRequest),
    /// The provider acknowledged the response to this request.
    ResponseResolved {
        request_key: String,
    },
    /// What the provider reported for the running turn so far (each report replaces the
    /// last: adapters sum a turn's model requests themselves).
    Usage(nagi_schema::usage::TokenUsage),
    TurnCompleted(TurnOutcome),
    TransportFailed {
        kind: FailureKind,
        reason: String,
    },
    /// The provider process is gone. Always the last event.
    Stopped {
        exit_code: Option<i32>,
    },
}

/// A running provider.
pub struct ProviderHandle {
    pub commands: mpsc::Sender<ProviderCommand>,
    pub events: mpsc::Receiver<ProviderEvent>,
    /// Pid of the provider process (leader of its own process group).
    pub pid: u32,
}

/// Why a launch could not even begin.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("provider executable {0} cannot be started: {1}")]
    Spawn(String, std::io::Error),
    #[error("provider configuration is invalid: {0}")]
    Config(String),
    /// The engine asked for kernel confinement and it could not be set up. The provider was
    /// not started: running it unconfined would be weaker than what the run view promises.
    #[error("kernel confinement cannot be applied: {0}")]
    Confinement(String),
}
