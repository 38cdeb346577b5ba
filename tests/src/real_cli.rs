//! The real provider CLIs, offline: where `.ci/install-providers` puts them, and the
//! environment that makes each one talk only to our mock model with throwaway state dirs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

pub fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives inside the repository")
        .to_owned()
}

/// The installed CLI at the newest supported version, or `None` after reporting it missing
/// (which fails the test under CI).
pub fn installed_cli(name: &str) -> Option<PathBuf> {
    installed_cli_in(".tools/npm", name)
}

/// The installed CLI at the oldest supported version (`.tools/npm-oldest`, from
/// `tests/fixtures/providers/oldest`), or `None` after reporting it missing.
pub fn installed_oldest_cli(name: &str) -> Option<PathBuf> {
    installed_cli_in(".tools/npm-oldest", name)
}

fn installed_cli_in(prefix: &str, name: &str) -> Option<PathBuf> {
    let path = repository_root()
        .join(prefix)
        .join("node_modules/.bin")
        .join(name);
    if path.exists() {
        Some(path)
    } else {
        crate::harness::missing_prerequisite(
            &format!("the real {name} CLI"),
            &format!(
                "it is not installed at {} (run .ci/install-providers)",
                path.display()
            ),
        );
        None
    }
}

/// Which real provider a mission runs, and how its config entry looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RealProvider {
    Codex,
    ClaudeCode,
    OpenCode,
    /// `opencode acp` as the ACP agent.
    OpenCodeAcp,
}

impl RealProvider {
    pub fn wire_name(self) -> &'static str {
        match self {
            RealProvider::Codex => "codex",
            RealProvider::ClaudeCode => "claude_code",
            RealProvider::OpenCode => "open_code",
            RealProvider::OpenCodeAcp => "acp",
        }
    }

    pub fn cli_name(self) -> &'static str {
        match self {
            RealProvider::Codex => "codex",
            RealProvider::ClaudeCode => "claude",
            RealProvider::OpenCode | RealProvider::OpenCodeAcp => "opencode",
        }
    }
}

/// The throwaway state directories of one test's CLI, all inside the test's temp dir and
/// outside the repository (so the read-only confinement may let the CLI write them).
pub struct CliHome {
    pub home: PathBuf,
}

impl CliHome {
    pub fn new(root: &Path) -> CliHome {
        let home = root.join("cli-home");
        for directory in [
            ".codex",
            ".claude",
            ".config",
            ".local/share",
            ".local/state",
            ".cache",
        ] {
            std::fs::create_dir_all(home.join(directory)).expect("create the CLI's state dirs");
        }
        CliHome { home }
    }

    /// The environment that makes a CLI offline and isolated: its state under `home`, its
    /// model at the mock.
    pub fn env(&self, provider: RealProvider, mock_base_url: &str) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        env.insert("HOME".to_string(), self.home.display().to_string());
        match provider {
            RealProvider::Codex => {
                env.insert(
                    "CODEX_HOME".to_string(),
                    self.home.join(".codex").display().to_string(),
                );
            }
            RealProvider::ClaudeCode => {
                env.insert(
                    "CLAUDE_CONFIG_DIR".to_string(),
                    self.home.join(".claude").display().to_string(),
                );
                env.insert("ANTHROPIC_BASE_URL".to_string(), mock_base_url.to_string());
                env.insert("ANTHROPIC_API_KEY".to_string(), "dummy".to_string());
                env.insert("DISABLE_TELEMETRY".to_string(), "1".to_string());
                env.insert(
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_string(),
                    "1".to_string(),
                );
            }
            RealProvider::OpenCode | RealProvider::OpenCodeAcp => {
                for (name, directory) in [
                    ("XDG_CONFIG_HOME", ".config"),
                    ("XDG_DATA_HOME", ".local/share"),
                    ("XDG_CACHE_HOME", ".cache"),
                    ("XDG_STATE_HOME", ".local/state"),
                ] {
                    env.insert(
                        name.to_string(),
                        self.home.join(directory).display().to_string(),
                    );
                }
                env.insert(
                    "OPENCODE_CONFIG_CONTENT".to_string(),
                    opencode_config(mock_base_url),
                );
                for flag in [
                    "OPENCODE_DISABLE_MODELS_FETCH",
                    "OPENCODE_DISABLE_AUTOUPDATE",
                    "OPENCODE_DISABLE_LSP_DOWNLOAD",
                    "OPENCODE_DISABLE_DEFAULT_PLUGINS",
                    "OPENCODE_DISABLE_SHARE",
                ] {
                    env.insert(flag.to_string(), "1".to_string());
                }
                // Nothing may be fetched from a package registry.
                env.insert(
                    "npm_config_registry".to_string(),
                    "http://127.0.0.1:9/".to_string(),
                );
            }
        }
        env
    }
}

/// OpenCode's inline config: one OpenAI-compatible provider at the mock.
pub fn opencode_config(mock_base_url: &str) -> String {
    json!({
        "provider": {"mock": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Mock",
            "options": {"baseURL": format!("{mock_base_url}/v1"), "apiKey": "dummy"},
            "models": {"mock-1": {"name": "Mock 1", "tool_call": true, "limit": {"context": 128000, "output": 4096}}}
        }},
        "model": "mock/mock-1",
        "small_model": "mock/mock-1",
        "autoupdate": false,
        "share": "disabled"
    })
    .to_string()
}

/// Codex `-c` overrides that point it at the mock's Responses API.
pub fn codex_overrides(mock_base_url: &str) -> Vec<String> {
    let mut args = Vec::new();
    for setting in [
        "model_provider=mock".to_string(),
        "model_providers.mock.name=mock".to_string(),
        format!("model_providers.mock.base_url={mock_base_url}/v1"),
        "model_providers.mock.wire_api=responses".to_string(),
        "model_providers.mock.stream_max_retries=0".to_string(),
        "model=gpt-5.5".to_string(),
    ] {
        args.push("-c".to_string());
        args.push(setting);
    }
    args
}
