//! The installed vendor CLI's version, checked against the range its adapter supports
//! before a run starts (`provider_unavailable` otherwise, naming both).
//!
//! `<command> --version` is asked once per executable file: the answer is kept, keyed by the
//! file's path, size and modification time, so an upgrade in place is noticed at the next
//! start and an unchanged CLI costs one `stat`. Only a supported answer is kept; a refusal is
//! asked again next time, so installing a supported version is seen at once.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use nagi_providers::ProviderKind;
use nagi_providers::versions::{
    SupportedVersions, Version, parse_version_output, supported_versions,
};

use super::ResolvedProvider;

/// How long `<cli> --version` may take (OpenCode needs about a second on a busy machine).
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ProbeKey {
    program: PathBuf,
    leading_args: Vec<String>,
    length: u64,
    modified: Option<SystemTime>,
}

/// The versions already found supported, by executable.
#[derive(Debug, Default)]
pub struct ProviderVersions {
    supported: Mutex<HashMap<ProbeKey, Version>>,
}

impl ProviderVersions {
    /// `Ok` with the version found (`None` for an ACP agent, which has no range), or the
    /// message of a `provider_unavailable` refusal.
    pub async fn check(
        &self,
        kind: ProviderKind,
        resolved: &ResolvedProvider,
    ) -> Result<Option<Version>, String> {
        let Some(range) = supported_versions(kind) else {
            return Ok(None);
        };
        let metadata = std::fs::metadata(&resolved.program).map_err(|error| {
            format!(
                "cannot read the {} executable {}: {error}",
                range.product,
                resolved.program.display()
            )
        })?;
        let key = ProbeKey {
            program: resolved.program.clone(),
            leading_args: resolved.leading_args.clone(),
            length: metadata.len(),
            modified: metadata.modified().ok(),
        };
        if let Some(version) = self.known(&key) {
            return Ok(Some(version));
        }
        let version = ask_version(&range, resolved).await?;
        if !range.supports(&version) {
            return Err(format!(
                "{} {version} ({}) is not supported: nagi supports {range}; install a supported version, or point the config's command at one",
                range.product,
                resolved.program.display()
            ));
        }
        self.supported
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(key, version.clone());
        Ok(Some(version))
    }

    fn known(&self, key: &ProbeKey) -> Option<Version> {
        self.supported
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(key)
            .cloned()
    }
}

/// Runs `<program> <leading args> --version` with the provider's configured environment.
async fn ask_version(
    range: &SupportedVersions,
    resolved: &ResolvedProvider,
) -> Result<Version, String> {
    let shown = command_text(resolved);
    let mut command = tokio::process::Command::new(&resolved.program);
    command
        .args(&resolved.leading_args)
        .arg("--version")
        .envs(&resolved.env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = match tokio::time::timeout(PROBE_TIMEOUT, command.output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(error)) => {
            return Err(format!(
                "cannot run `{shown}` to learn the installed {} version: {error}",
                range.product
            ));
        }
        Err(_) => {
            return Err(format!(
                "`{shown}` did not print the installed {} version within {} s",
                range.product,
                PROBE_TIMEOUT.as_secs()
            ));
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if let Some(version) = parse_version_output(&stdout).filter(|_| output.status.success()) {
        return Ok(version);
    }
    let said = stdout
        .lines()
        .chain(stderr.lines())
        .map(str::trim)
        .find(|line| !line.is_empty())
        .map(|line| line.chars().take(200).collect::<String>())
        .unwrap_or_else(|| "nothing".to_string());
    Err(format!(
        "`{shown}` gave no {} version ({}; it said: {said}); nagi supports {range}",
        range.product, output.status
    ))
}

fn command_text(resolved: &ResolvedProvider) -> String {
    std::iter::once(resolved.program.display().to_string())
        .chain(resolved.leading_args.iter().cloned())
        .chain(std::iter::once("--version".to_string()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Finds the provider's executable and checks its version: everything `mission.start`,
/// a handoff and a start preview must know before anything is written.
pub async fn resolve_supported_provider(
    config: &crate::config::EngineConfig,
    versions: &ProviderVersions,
    provider: nagi_schema::mission::MissionProvider,
) -> Result<ResolvedProvider, String> {
    let resolved = super::resolve_provider(config, provider)?;
    versions
        .check(super::provider_kind(provider), &resolved)
        .await?;
    Ok(resolved)
}
