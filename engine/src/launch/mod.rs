//! From a run to a `LaunchSpec`: which executable (config file or `PATH`), which arguments
//! and environment, which sandbox, and which kernel confinement the run gets.

pub mod scratch;
pub mod version;

use std::collections::BTreeMap;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nagi_providers::{Confinement, LaunchSpec, ProviderKind, Sandbox, Timeouts};
use nagi_schema::mission::MissionProvider;

use crate::config::{EngineConfig, ProviderConfig};
use nagi_mission::model::SandboxGrant;

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

/// The folders of the person's home where a vendor CLI keeps its own state (login, session
/// files, caches), relative to HOME or to an XDG base folder. A confined provider may write
/// these and nothing else of the home.
fn vendor_state_paths(
    provider: MissionProvider,
    home: Option<&Path>,
    variable: &dyn Fn(&str) -> Option<PathBuf>,
) -> Vec<PathBuf> {
    let under_home = |relative: &str| home.map(|home| home.join(relative));
    let xdg = |name: &str, fallback: &str| variable(name).or_else(|| under_home(fallback));
    let cache = xdg("XDG_CACHE_HOME", ".cache");
    let data = xdg("XDG_DATA_HOME", ".local/share");
    let state = xdg("XDG_STATE_HOME", ".local/state");
    let config = xdg("XDG_CONFIG_HOME", ".config");
    let mut paths: Vec<Option<PathBuf>> = Vec::new();
    match provider {
        MissionProvider::Codex => {
            paths.push(variable("CODEX_HOME").or_else(|| under_home(".codex")));
        }
        MissionProvider::ClaudeCode => {
            paths.push(variable("CLAUDE_CONFIG_DIR").or_else(|| under_home(".claude")));
            paths.push(under_home(".claude.json"));
            paths.push(under_home(".claude.json.backup"));
            paths.push(cache.map(|dir| dir.join("claude-cli-nodejs")));
            paths.push(data.map(|dir| dir.join("claude")));
            paths.push(state.map(|dir| dir.join("claude")));
        }
        MissionProvider::OpenCode => {
            for base in [cache, data, state, config] {
                paths.push(base.map(|dir| dir.join("opencode")));
            }
        }
        // Any ACP agent: its caches and data, not the config folder (nagi's own config
        // lives there by default) and not the home itself.
        MissionProvider::Acp => paths.extend([cache, data, state]),
    }
    paths.into_iter().flatten().collect()
}

/// Paths a confined read-only provider may write beneath: `/dev`, its scratch folder,
/// `/tmp` when it holds none of the protected folders, and its vendor's state folders.
/// No path that contains or lies inside the worktree or a protected folder (nagi's config
/// and data folders) is ever granted: Landlock grants by folder, so a grant of a parent
/// would reach them.
fn writable_paths(
    provider: MissionProvider,
    worktree: &Path,
    private_tmp: &Path,
    env: &BTreeMap<String, String>,
    extra: &[PathBuf],
    protected: &[PathBuf],
) -> Vec<PathBuf> {
    let variable = |name: &str| {
        env.get(name)
            .cloned()
            .or_else(|| std::env::var(name).ok())
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    let home = variable("HOME");
    let mut candidates: Vec<PathBuf> = vec![
        PathBuf::from("/dev"),
        PathBuf::from("/tmp"),
        private_tmp.to_path_buf(),
    ];
    candidates.extend(variable("TMPDIR"));
    // A vendor's state folder that does not exist yet could not be granted (Landlock needs
    // an open path) and the CLI could not make it; it is made here, private. Its files
    // (`~/.claude.json`) are left to the CLI.
    for path in vendor_state_paths(provider, home.as_deref(), &variable) {
        let is_file = path
            .extension()
            .is_some_and(|extension| extension == "json" || extension == "backup");
        if !is_file && !path.exists() {
            let _ = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&path);
        }
        candidates.push(path);
    }
    candidates.extend(extra.iter().cloned());
    let mut fenced: Vec<PathBuf> = vec![worktree.to_path_buf()];
    fenced.extend(
        protected
            .iter()
            .map(|path| std::fs::canonicalize(path).unwrap_or_else(|_| path.clone())),
    );
    let mut writable = Vec::new();
    for candidate in candidates {
        let Ok(canonical) = std::fs::canonicalize(&candidate) else {
            continue;
        };
        let overlaps = fenced
            .iter()
            .any(|fence| fence.starts_with(&canonical) || canonical.starts_with(fence));
        if !overlaps && !writable.contains(&canonical) {
            writable.push(canonical);
        }
    }
    writable
}

/// Everything the supervisor needs to launch.
pub struct LaunchPlan {
    pub spec: LaunchSpec,
    /// Which read-only enforcement applies, for the run view.
    pub enforcement: Enforcement,
}

pub struct LaunchInputs<'a> {
    pub config: &'a EngineConfig,
    pub provider: MissionProvider,
    pub resolved: ResolvedProvider,
    pub worktree: &'a Path,
    pub sandbox: SandboxGrant,
    pub resume_session_id: Option<String>,
    pub initial_input: Option<String>,
    /// The run's model and reasoning effort (`None`: the provider's defaults).
    pub model: Option<String>,
    pub reasoning_effort: Option<String>,
    /// A private temp dir for this run.
    pub private_tmp: PathBuf,
    /// Folders no provider may write or learn of: nagi's config and data folders.
    pub protected: Vec<PathBuf>,
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

/// The Landlock ABI a run of `provider` with `sandbox` is confined with, or `None` when the
/// kernel does not keep it from writing the worktree (write scope, Codex, Landlock turned
/// off in the config or missing from the kernel).
pub fn landlock_version_for(
    config: &EngineConfig,
    provider: MissionProvider,
    sandbox: SandboxGrant,
) -> Option<u32> {
    if sandbox != SandboxGrant::ReadOnly
        || !config.user.sandbox.landlock
        || !kernel_confinement_compatible(provider)
    {
        return None;
    }
    nagi_providers::landlock_abi_version()
}

/// What keeps a run from doing more than it was granted, as the run view names it
/// (`enforcement`): the grant itself for a write run; for a read-only run the provider's
/// own sandbox, the kernel's Landlock confinement when it applies, and the workspace
/// fingerprint compared at every end when one was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    WorkspaceWrite,
    ReadOnly {
        landlock_abi: Option<u32>,
        workspace_digest: bool,
    },
}

impl Enforcement {
    /// The same enforcement without the workspace fingerprint (none could be taken).
    pub fn without_workspace_digest(self) -> Enforcement {
        match self {
            Enforcement::WorkspaceWrite => Enforcement::WorkspaceWrite,
            Enforcement::ReadOnly { landlock_abi, .. } => Enforcement::ReadOnly {
                landlock_abi,
                workspace_digest: false,
            },
        }
    }
}

impl std::fmt::Display for Enforcement {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Enforcement::WorkspaceWrite => formatter.write_str("workspace_write"),
            Enforcement::ReadOnly {
                landlock_abi,
                workspace_digest,
            } => {
                formatter.write_str("provider_sandbox")?;
                if let Some(version) = landlock_abi {
                    write!(formatter, "+landlock_v{version}")?;
                }
                if *workspace_digest {
                    formatter.write_str("+workspace_digest")?;
                }
                Ok(())
            }
        }
    }
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
        model,
        reasoning_effort,
        private_tmp,
        protected,
    } = inputs;
    let mut env = resolved.env.clone();
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&private_tmp);
    // Every run gets its own temp folder: `/tmp` may hold nagi's folders or the worktree
    // (then it is not writable at all), and a shared one would mix runs.
    if !env.contains_key("TMPDIR") {
        env.insert("TMPDIR".into(), private_tmp.display().to_string());
    }
    let (sandbox, confinement, enforcement) = match sandbox {
        SandboxGrant::WorkspaceWrite => {
            (Sandbox::WorkspaceWrite, None, Enforcement::WorkspaceWrite)
        }
        SandboxGrant::ReadOnly => {
            match landlock_version_for(config, provider, SandboxGrant::ReadOnly) {
                Some(version) => (
                    Sandbox::ReadOnly,
                    Some(Confinement {
                        read_paths: vec![PathBuf::from("/")],
                        write_paths: writable_paths(
                            provider,
                            worktree,
                            &private_tmp,
                            &env,
                            &config.user.sandbox.writable,
                            &protected,
                        ),
                    }),
                    Enforcement::ReadOnly {
                        landlock_abi: Some(version),
                        workspace_digest: true,
                    },
                ),
                None => (
                    Sandbox::ReadOnly,
                    None,
                    Enforcement::ReadOnly {
                        landlock_abi: None,
                        workspace_digest: true,
                    },
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
            model,
            reasoning_effort,
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
            data_dir: config_dir.clone(),
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
                model: None,
                reasoning_effort: None,
                private_tmp: root.join("tmp"),
                protected: vec![config_dir.clone()],
            })
        };
        let codex = plan_for(MissionProvider::Codex);
        assert_eq!(codex.spec.confinement, None);
        assert_eq!(codex.spec.sandbox, Sandbox::ReadOnly);
        assert_eq!(
            codex.enforcement.to_string(),
            "provider_sandbox+workspace_digest"
        );
        if nagi_providers::landlock_abi_version().is_some() {
            let claude = plan_for(MissionProvider::ClaudeCode);
            assert!(claude.spec.confinement.is_some());
            assert!(
                claude.enforcement.to_string().contains("+landlock_v"),
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
        for provider in [
            MissionProvider::Codex,
            MissionProvider::ClaudeCode,
            MissionProvider::OpenCode,
            MissionProvider::Acp,
        ] {
            let writable = writable_paths(
                provider,
                &worktree,
                &private_tmp.join("tmp-run"),
                &env,
                &[],
                &[],
            );
            assert!(
                writable.iter().all(|path| !worktree.starts_with(path)),
                "{writable:?}"
            );
            assert!(writable.contains(&PathBuf::from("/dev")));
        }
    }

    /// The security review's finding: HOME, `~/.config` and the XDG folders were writable,
    /// and nagi's database and config lie inside them. Only the vendor's own state folders
    /// of the home are granted now, and never one that holds nagi's folders.
    #[test]
    fn a_read_only_provider_can_write_neither_the_home_nor_nagis_folders() {
        let dir = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap();
        let nagi_config = home.join(".config").join("nagi");
        let worktree = home.join("repo");
        let scratch = home.join("scratch");
        for folder in [
            &nagi_config,
            &worktree,
            &scratch,
            &home.join(".claude"),
            &home.join(".codex"),
            &home.join(".cache/opencode"),
            &home.join(".local/share/opencode"),
            &home.join(".config/opencode"),
            &home.join(".local/share/agent"),
        ] {
            std::fs::create_dir_all(folder).unwrap();
        }
        std::fs::write(home.join(".claude.json"), "{}").unwrap();
        let mut env = BTreeMap::new();
        env.insert("HOME".to_string(), home.display().to_string());
        for name in [
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "XDG_CACHE_HOME",
            "XDG_STATE_HOME",
            "TMPDIR",
            "CODEX_HOME",
            "CLAUDE_CONFIG_DIR",
        ] {
            env.insert(name.to_string(), String::new());
        }
        let protected = [nagi_config.clone()];
        let granted = |provider| {
            writable_paths(
                provider,
                &worktree,
                &scratch,
                &env,
                &[home.join(".config")],
                &protected,
            )
        };
        for provider in [
            MissionProvider::Codex,
            MissionProvider::ClaudeCode,
            MissionProvider::OpenCode,
            MissionProvider::Acp,
        ] {
            let writable = granted(provider);
            for path in &writable {
                assert!(
                    !nagi_config.starts_with(path) && !path.starts_with(&nagi_config),
                    "{provider:?} may write {path:?}, which reaches nagi's config {nagi_config:?}"
                );
                assert_ne!(path, &home, "{provider:?} may write all of HOME");
            }
            assert!(writable.contains(&scratch), "{provider:?}: {writable:?}");
        }
        let claude = granted(MissionProvider::ClaudeCode);
        assert!(claude.contains(&home.join(".claude")), "{claude:?}");
        assert!(claude.contains(&home.join(".claude.json")), "{claude:?}");
        let opencode = granted(MissionProvider::OpenCode);
        assert!(
            opencode.contains(&home.join(".local/share/opencode")),
            "{opencode:?}"
        );
        // `~/.config/opencode` lies beside nagi's config folder, not above it.
        assert!(
            opencode.contains(&home.join(".config/opencode")),
            "{opencode:?}"
        );
        // A configured folder that holds nagi's config is not granted.
        assert!(!opencode.contains(&home.join(".config")), "{opencode:?}");
    }
}
