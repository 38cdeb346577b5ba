//! From a run to a `LaunchSpec`: which executable (config file or `PATH`), which arguments
//! and environment, which sandbox, and which kernel confinement the run gets.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use nagi_providers::{Confinement, LaunchSpec, ProviderKind, Sandbox, Timeouts};
use nagi_schema::mission::MissionProvider;

use crate::config::{EngineConfig, ProviderConfig};
use crate::mission::model::SandboxGrant;

pub fn provider_kind(provider: MissionProvider) -> ProviderKind {
    match provider {
        MissionProvider::Codex => ProviderKind::Codex,
        MissionProvider::ClaudeCode => ProviderKind::ClaudeCode,
        MissionProvider::OpenCode => ProviderKind::OpenCode,
        MissionProvider::Acp => ProviderKind::Acp,
    }
}

fn config_key(provider: MissionProvider) -> &'static str {
    match provider {
        MissionProvider::Codex => "providers.codex",
        MissionProvider::ClaudeCode => "providers.claude_code",
        MissionProvider::OpenCode => "providers.open_code",
        MissionProvider::Acp => "providers.acp",
    }
}

pub fn provider_config(
    config: &EngineConfig,
    provider: MissionProvider,
) -> Option<&ProviderConfig> {
    let providers = &config.user.providers;
    match provider {
        MissionProvider::Codex => providers.codex.as_ref(),
        MissionProvider::ClaudeCode => providers.claude_code.as_ref(),
        MissionProvider::OpenCode => providers.open_code.as_ref(),
        MissionProvider::Acp => providers.acp.as_ref(),
    }
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The resolved command of a provider: executable and the arguments that precede the
/// adapter's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedProvider {
    pub program: PathBuf,
    pub leading_args: Vec<String>,
    pub extra_args: Vec<String>,
    pub env: BTreeMap<String, String>,
}

/// Finds the provider's executable, so a missing one is reported before anything is
/// written (`provider_unavailable`, contract preface item 7).
pub fn resolve_provider(
    config: &EngineConfig,
    provider: MissionProvider,
) -> Result<ResolvedProvider, String> {
    let configured = provider_config(config, provider);
    let (program_text, leading_args) = match configured.and_then(|entry| entry.command.as_ref()) {
        Some(command) => (command[0].clone(), command[1..].to_vec()),
        None => match provider_kind(provider).default_program() {
            Some(program) => (program.to_string(), Vec::new()),
            None => {
                return Err(format!(
                    "no ACP agent is configured: set {}.command = [\"agent\", \"args\"...] in {}",
                    config_key(provider),
                    config.paths.config_file_path().display()
                ));
            }
        },
    };
    let program = if program_text.contains('/') {
        let path = PathBuf::from(&program_text);
        if !is_executable_file(&path) {
            return Err(format!(
                "the {} executable {program_text} ({}.command in {}) does not exist or is not executable",
                provider.as_str(),
                config_key(provider),
                config.paths.config_file_path().display()
            ));
        }
        path
    } else {
        let path_variable = std::env::var("PATH").unwrap_or_default();
        let mut searched: Vec<PathBuf> = config.extra_provider_path.clone();
        searched.extend(std::env::split_paths(&path_variable));
        match searched
            .iter()
            .map(|dir| dir.join(&program_text))
            .find(|candidate| is_executable_file(candidate))
        {
            Some(found) => found,
            None => {
                return Err(format!(
                    "the {} executable `{program_text}` is not on PATH; install it, or set {}.command in {}",
                    provider.as_str(),
                    config_key(provider),
                    config.paths.config_file_path().display()
                ));
            }
        }
    };
    Ok(ResolvedProvider {
        program,
        leading_args,
        extra_args: configured
            .map(|entry| entry.args.clone())
            .unwrap_or_default(),
        env: configured
            .map(|entry| entry.env.clone())
            .unwrap_or_default(),
    })
}

/// Paths a confined read-only provider may write beneath. None of them may contain the
/// worktree; when `/tmp` would, the run gets a private temp dir instead.
fn writable_paths(
    worktree: &Path,
    private_tmp: &Path,
    env: &BTreeMap<String, String>,
) -> Vec<PathBuf> {
    let mut candidates: Vec<PathBuf> = vec![
        PathBuf::from("/dev"),
        PathBuf::from("/tmp"),
        private_tmp.to_path_buf(),
    ];
    let home = env
        .get("HOME")
        .cloned()
        .or_else(|| std::env::var("HOME").ok());
    if let Some(home) = &home {
        let home = PathBuf::from(home);
        candidates.push(home.clone());
        for state_dir in [
            ".codex",
            ".claude",
            ".claude.json",
            ".config",
            ".local",
            ".cache",
            ".npm",
            ".opencode",
        ] {
            candidates.push(home.join(state_dir));
        }
    }
    for name in [
        "CODEX_HOME",
        "CLAUDE_CONFIG_DIR",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "XDG_STATE_HOME",
        "TMPDIR",
    ] {
        if let Some(value) = env.get(name).cloned().or_else(|| std::env::var(name).ok()) {
            candidates.push(PathBuf::from(value));
        }
    }
    let mut writable = Vec::new();
    for candidate in candidates {
        let Ok(canonical) = std::fs::canonicalize(&candidate) else {
            continue;
        };
        if worktree.starts_with(&canonical) || canonical.starts_with(worktree) {
            continue;
        }
        if !writable.contains(&canonical) {
            writable.push(canonical);
        }
    }
    writable
}

/// Everything the supervisor needs to launch.
pub struct LaunchPlan {
    pub spec: LaunchSpec,
    /// Which read-only enforcement applies, for the run view.
    pub enforcement: String,
}

pub struct LaunchInputs<'a> {
    pub config: &'a EngineConfig,
    pub provider: MissionProvider,
    pub resolved: ResolvedProvider,
    pub worktree: &'a Path,
    pub sandbox: SandboxGrant,
    pub resume_session_id: Option<String>,
    pub initial_input: Option<String>,
    /// A private temp dir for this run.
    pub private_tmp: PathBuf,
}

/// Whether the provider still works inside our Landlock domain. Codex's own read-only sandbox
/// runs every command through bubblewrap, which needs mount(2) (and writes to
/// `/proc/<pid>/uid_map`); Landlock denies filesystem-topology changes to every confined
/// thread, so under our ruleset each Codex command fails ("bwrap: Failed to make / slave:
/// Operation not permitted"), reads included, and `codex app-server` refuses its legacy
/// Landlock fallback. A read-only Codex run is therefore enforced by Codex's own sandbox plus
/// the workspace digest guard, and its run view says so.
fn kernel_confinement_compatible(provider: MissionProvider) -> bool {
    provider != MissionProvider::Codex
}

pub fn plan_launch(inputs: LaunchInputs<'_>) -> LaunchPlan {
    let LaunchInputs {
        config,
        provider,
        resolved,
        worktree,
        sandbox,
        resume_session_id,
        initial_input,
        private_tmp,
    } = inputs;
    let mut env = resolved.env.clone();
    let _ = std::fs::create_dir_all(&private_tmp);
    let tmp_contains_worktree = std::fs::canonicalize("/tmp")
        .map(|tmp| worktree.starts_with(tmp))
        .unwrap_or(false);
    if tmp_contains_worktree && !env.contains_key("TMPDIR") {
        env.insert("TMPDIR".into(), private_tmp.display().to_string());
    }
    let (sandbox, confinement, enforcement) = match sandbox {
        SandboxGrant::WorkspaceWrite => {
            (Sandbox::WorkspaceWrite, None, "workspace_write".to_string())
        }
        SandboxGrant::ReadOnly => {
            match nagi_providers::landlock_abi_version()
                .filter(|_| config.user.sandbox.landlock && kernel_confinement_compatible(provider))
            {
                Some(version) => (
                    Sandbox::ReadOnly,
                    Some(Confinement {
                        read_paths: vec![PathBuf::from("/")],
                        write_paths: writable_paths(worktree, &private_tmp, &env),
                    }),
                    format!("provider_sandbox+landlock_v{version}+workspace_digest"),
                ),
                None => (
                    Sandbox::ReadOnly,
                    None,
                    "provider_sandbox+workspace_digest".to_string(),
                ),
            }
        }
    };
    LaunchPlan {
        spec: LaunchSpec {
            kind: provider_kind(provider),
            program: resolved.program,
            leading_args: resolved.leading_args,
            worktree: worktree.to_path_buf(),
            env,
            extra_args: resolved.extra_args,
            sandbox,
            confinement,
            resume_session_id,
            initial_input,
            timeouts: Timeouts::default(),
        },
        enforcement,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_only_codex_run_gets_no_landlock_because_its_bubblewrap_sandbox_cannot_mount_inside_it()
     {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let config_dir = root.join("cfg");
        let paths = crate::paths::SessionPaths {
            config_dir: config_dir.clone(),
            socket_path: config_dir.join("nagi.sock"),
            data_dir: config_dir,
            session_name: None,
        };
        let config = EngineConfig::new(paths, Default::default());
        let plan_for = |provider| {
            plan_launch(LaunchInputs {
                config: &config,
                provider,
                resolved: ResolvedProvider {
                    program: PathBuf::from("/bin/true"),
                    leading_args: Vec::new(),
                    extra_args: Vec::new(),
                    env: BTreeMap::new(),
                },
                worktree: &root,
                sandbox: SandboxGrant::ReadOnly,
                resume_session_id: None,
                initial_input: None,
                private_tmp: root.join("tmp"),
            })
        };
        let codex = plan_for(MissionProvider::Codex);
        assert_eq!(codex.spec.confinement, None);
        assert_eq!(codex.spec.sandbox, Sandbox::ReadOnly);
        assert_eq!(codex.enforcement, "provider_sandbox+workspace_digest");
        if nagi_providers::landlock_abi_version().is_some() {
            let claude = plan_for(MissionProvider::ClaudeCode);
            assert!(claude.spec.confinement.is_some());
            assert!(
                claude.enforcement.contains("+landlock_v"),
                "{}",
                claude.enforcement
            );
        }
    }

    #[test]
    fn no_writable_path_contains_the_worktree() {
        let dir = tempfile::tempdir().unwrap();
        let worktree = std::fs::canonicalize(dir.path()).unwrap().join("repo");
        std::fs::create_dir_all(&worktree).unwrap();
        let private_tmp = std::fs::canonicalize(dir.path()).unwrap();
        let mut env = BTreeMap::new();
        env.insert("HOME".to_string(), private_tmp.display().to_string());
        let writable = writable_paths(&worktree, &private_tmp.join("tmp-run"), &env);
        assert!(
            writable.iter().all(|path| !worktree.starts_with(path)),
            "{writable:?}"
        );
        assert!(writable.contains(&PathBuf::from("/dev")));
    }
}
