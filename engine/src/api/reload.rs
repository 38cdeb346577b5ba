//! `server.reload_config`: reads `config.toml` again and puts it in place for everything
//! that reads the configuration per request — providers (commands, arguments,
//! environment), `[sandbox]`, `[worktree]`, and `[server]`'s provider start timeout and
//! archived pane linger. The settings the server fixed at its start (reply polling, the
//! partial-line budget, the integrity check) take effect at the next start, and the answer
//! says so (`partial`). A file that does not load changes nothing (`failed`, with why).

use std::sync::Arc;

use nagi_schema::results::{ConfigReloadStatus, ResponseResult};

use crate::config::{ServerSettings, UserConfig};
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
            "ignored the sections [{}]: nagi reads only [providers], [sandbox], [server], [worktree] and [notify]",
            loaded.ignored_sections.join("], [")
        ));
    }
    let restart_needed = fixed_at_start(&engine.config.current().user.server, &loaded.server);
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
