//! The scripted behaviour of the mock model: a flat list of model responses ("steps").
//!
//! See the module documentation of [`crate::mock_model`] for the JSON format.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// A whole scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Model responses, in conversation order across all user turns of one session.
    pub steps: Vec<Step>,
    /// Directory that relative `path`s in tool calls are resolved against. Claude Code's
    /// `Read`/`Write` and OpenCode's `read`/`write` want absolute paths; Codex runs `cat` in
    /// its own working directory, so it gets the path exactly as written when this is absent.
    #[serde(default)]
    pub workspace: Option<PathBuf>,
    /// Answer to auxiliary requests (OpenCode's session-title call, which carries no tools).
    #[serde(default = "default_title")]
    pub title: String,
}

fn default_title() -> String {
    "Mock session".to_owned()
}

/// One model response.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// Assistant text. A step without `call` ends the model turn with this text; a step with a
    /// `call` sends the text first, then the tool call.
    #[serde(default)]
    pub text: Option<String>,
    /// A tool call the model makes; the CLI runs it and sends the result in its next request.
    #[serde(default)]
    pub call: Option<ToolCall>,
    /// Milliseconds to wait after the first event of the stream before sending the rest. Lets a
    /// test observe a turn in flight (and interrupt it).
    #[serde(default)]
    pub delay_ms: u64,
    /// Makes this reply fail on purpose, to test how a CLI (and our adapters) handle a broken
    /// model. The mock stays stateless, so a CLI that retries gets the same fault again.
    #[serde(default)]
    pub fault: Option<Fault>,
}

/// A deliberate failure of one model reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// HTTP 500 with the API's error body.
    ServerError,
    /// The stream ends without its completion events (`response.completed`; `message_delta` /
    /// `message_stop`; the `finish_reason` chunk, usage chunk and `[DONE]`).
    TruncatedStream,
    /// Messages API only: the stream lacks `message_start`. Claude Code then retries the request
    /// without streaming, which the mock answers normally with one JSON message.
    NoMessageStart,
}

/// A tool call, written once and rendered in each CLI's own tool vocabulary.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ToolCall {
    /// Read a file. Codex: `exec_command {"cmd":"cat PATH"}`; Claude: `Read {file_path}`;
    /// OpenCode: `read {filePath}`.
    Read { path: String },
    /// Create or overwrite a file. Codex: `apply_patch` (an `*** Add File` patch); Claude:
    /// `Write {file_path, content}`; OpenCode: `write {filePath, content}`.
    Write { path: String, content: String },
    /// Replace text in a file. Codex: `apply_patch` (an `*** Update File` hunk); Claude:
    /// `Edit {file_path, old_string, new_string}`; OpenCode: `edit {filePath, oldString,
    /// newString}`.
    Edit {
        path: String,
        old: String,
        new: String,
    },
    /// Run a shell command. Codex: `exec_command {"cmd"}`; Claude: `Bash {command}`;
    /// OpenCode: `bash {command, description}`.
    Shell { command: String },
    /// Ask the user a question. Codex: `request_user_input`; Claude: `AskUserQuestion`;
    /// OpenCode: `question`.
    Ask(AskCall),
    /// A literal tool call, sent as written to whichever CLI asks.
    Raw {
        name: String,
        arguments: serde_json::Value,
    },
}

/// A question for the user, with its choices.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskCall {
    pub question: String,
    #[serde(default = "default_header")]
    pub header: String,
    pub options: Vec<AskOption>,
    #[serde(default)]
    pub multi_select: bool,
}

fn default_header() -> String {
    "Question".to_owned()
}

/// One choice of an [`AskCall`].
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskOption {
    pub label: String,
    #[serde(default)]
    pub description: String,
}

/// Why a scenario file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("cannot read scenario file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("scenario file {path} is not a valid scenario: {source}")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("scenario step {index} has neither `text` nor `call`")]
    EmptyStep { index: usize },
    #[error(
        "scenario steps {first} and {second} end a turn with the same text {text:?}; \
         the mock finds its place in a conversation by these texts, so they must differ"
    )]
    DuplicateFinalText {
        first: usize,
        second: usize,
        text: String,
    },
    #[error("scenario workspace {path} is not an absolute path")]
    RelativeWorkspace { path: PathBuf },
}

impl Scenario {
    /// Reads and validates a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
            path: path.to_owned(),
            source,
        })?;
        let scenario: Scenario =
            serde_json::from_str(&text).map_err(|source| ScenarioError::Parse {
                path: path.to_owned(),
                source,
            })?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Parses and validates a scenario given as JSON text (for in-process use by tests).
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let scenario: Scenario =
            serde_json::from_str(text).map_err(|source| ScenarioError::Parse {
                path: PathBuf::from("<inline>"),
                source,
            })?;
        scenario.validate()?;
        Ok(scenario)
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        if let Some(workspace) = &self.workspace
            && !workspace.is_absolute()
        {
            return Err(ScenarioError::RelativeWorkspace {
                path: workspace.clone(),
            });
        }
        let mut final_texts: Vec<(usize, &str)> = Vec::new();
        for (index, step) in self.steps.iter().enumerate() {
            match (&step.text, &step.call) {
                (None, None) => return Err(ScenarioError::EmptyStep { index }),
                (Some(text), None) => {
                    if let Some((first, _)) = final_texts
                        .iter()
                        .find(|(_, seen)| seen.trim() == text.trim())
                    {
                        return Err(ScenarioError::DuplicateFinalText {
                            first: *first,
                            second: index,
                            text: text.clone(),
                        });
                    }
                    final_texts.push((index, text));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The path a tool call should name: relative paths are joined to the workspace, if any.
    pub fn resolve_path(&self, path: &str) -> String {
        match &self.workspace {
            Some(workspace) if !Path::new(path).is_absolute() => {
                workspace.join(path).to_string_lossy().into_owned()
            }
            _ => path.to_owned(),
        }
    }
}

/// The tool-call id the mock gives step `index`; the CLI echoes it in the tool result, which is
/// how the mock recognises that the step was answered.
pub fn call_id_for_step(index: usize) -> String {
    format!("call_mock_{index}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_final_texts_are_rejected() {
        let error = Scenario::from_json(r#"{"steps":[{"text":"done"},{"text":" done "}]}"#)
            .expect_err("two turns ending with the same text must be rejected");
        assert!(matches!(
            error,
            ScenarioError::DuplicateFinalText {
                first: 0,
                second: 1,
                ..
            }
        ));
    }

    #[test]
    fn relative_paths_resolve_against_the_workspace() {
        let scenario = Scenario::from_json(
            r#"{"workspace":"/w","steps":[{"call":{"read":{"path":"a.txt"}}},{"text":"ok"}]}"#,
        )
        .expect("valid scenario");
        assert_eq!(scenario.resolve_path("a.txt"), "/w/a.txt");
        assert_eq!(scenario.resolve_path("/abs/b.txt"), "/abs/b.txt");
    }

    #[test]
    fn steps_need_text_or_call() {
        let error = Scenario::from_json(r#"{"steps":[{"delay_ms":5}]}"#)
            .expect_err("a step with nothing to say must be rejected");
        assert!(matches!(error, ScenarioError::EmptyStep { index: 0 }));
    }
}
