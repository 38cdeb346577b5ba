//! `server.reload_config`: reads `config.toml` again and puts it in place for everything
//! that reads the configuration per request — providers (commands, arguments,
//! environment), `[sandbox]`, `[worktree]`, and `[server]`'s provider start timeout and
//! archived pane linger. The settings the server fixed at its start (reply polling, the
//! partial-line budget, the integrity check, and `[fleet]` but for `[fleet.hosts]`) take
//! effect at the next start, and the answer says so (`partial`). A file that does not load changes nothing (`failed`, with why).

use std::sync::Arc;

use nagi_schema::results::{ConfigReloadStatus, ResponseResult};

use crate::config::{FleetSettings, ServerSettings, UserConfig};
use crate::engine::Engine;

/// The `[server]` settings that only a restart applies, by name.
fn fixed_at_start(old: &ServerSettings, new: &ServerSettings) -> Vec<&'static str> {
    let mut changed = Vec::new();
    if old.reply_poll_microseconds != new.reply_poll_microseconds {
        changed.push("server.reply_poll_microseconds");
    }
    if old.partial_line_budget_mib != new.partial_line_budget_mib {
        changed.push("server.partial_line_budget_mib");
    }
    if old.full_integrity_check != new.full_integrity_check {
        changed.push("server.full_integrity_check");
    }
    changed
}

/// The `[fleet]` settings that only a restart applies, by name: all but `[fleet.hosts]`,
/// which `nagi pane attach --host` reads at each attach.
fn fleet_fixed_at_start(old: Option<&FleetSettings>, new: Option<&FleetSettings>) -> Vec<String> {
    let default = FleetSettings::default();
    let (old, new) = (old.unwrap_or(&default), new.unwrap_or(&default));
    let fields: [(&str, bool); 8] = [
        ("address", old.address != new.address),
        ("namespace", old.namespace != new.namespace),
        ("host", old.host != new.host),
        ("api_key", old.api_key != new.api_key),
        ("tls_ca", old.tls_ca != new.tls_ca),
        ("tls_cert", old.tls_cert != new.tls_cert),
        ("tls_key", old.tls_key != new.tls_key),
        (
            "host_gone_after_seconds",
            old.host_gone_after_seconds != new.host_gone_after_seconds,
        ),
    ];
    fields
        .into_iter()
        .filter(|(_, changed)| *changed)
        .map(|(name, _)| format!("fleet.{name}"))
        .collect()
}

pub fn reload(engine: &Arc<Engine>) -> ResponseResult {
    let file = engine.config.current().paths.config_file_path();
    let loaded = match UserConfig::load(&file) {
        Ok(loaded) => loaded,
        Err(error) => {
            return ResponseResult::ConfigReload {
                status: ConfigReloadStatus::Failed,
                diagnostics: vec![format!("{error}; the configuration in use is unchanged")],
            };
        }
    };
    let mut diagnostics = vec![if file.exists() {
        format!("read {}", file.display())
    } else {
        format!("{} does not exist: the defaults apply", file.display())
    }];
    if !loaded.ignored_sections.is_empty() {
        diagnostics.push(format!(
            "ignored the sections [{}]: nagi reads only [providers], [sandbox], [server], [worktree], [notify] and [fleet]",
            loaded.ignored_sections.join("], [")
        ));
    }
    let in_use = engine.config.current();
    let mut restart_needed: Vec<String> = fixed_at_start(&in_use.user.server, &loaded.server)
        .into_iter()
        .map(str::to_string)
        .collect();
    restart_needed.extend(fleet_fixed_at_start(
        in_use.user.fleet.as_ref(),
        loaded.fleet.as_ref(),
    ));
    let previous = engine.config.replace_user(loaded);
    let current = engine.config.current();
    for (section, changed) in [
        (
            "providers",
            previous.user.providers != current.user.providers,
        ),
        ("sandbox", previous.user.sandbox != current.user.sandbox),
        ("worktree", previous.user.worktree != current.user.worktree),
        ("server", previous.user.server != current.user.server),
    ] {
        if changed {
            diagnostics.push(format!("[{section}] changed"));
        }
    }
    tracing::info!(file = %file.display(), "configuration reloaded");
    let status = if restart_needed.is_empty() {
        ConfigReloadStatus::Applied
    } else {
        diagnostics.push(format!(
            "{} changed: it takes effect at the next server start (nagi server stop)",
            restart_needed.join(", ")
        ));
        ConfigReloadStatus::Partial
    };
    ResponseResult::ConfigReload {
        status,
        diagnostics,
    }
}
