//! `nagi cockpit`: the consent cockpit in this terminal (see the `nagi-cockpit` crate).
//! Like every command it starts a server when none answers; the cockpit itself holds no
//! authority and asks the server for every consent.

use std::time::Duration;

use clap::Args;
use nagi_cockpit::{CockpitConfig, CockpitExit};

use crate::CommandResult;
use crate::connect::{connect_or_start, session_paths};
use crate::context::Context;
use crate::exit::{CliError, EXIT_OK};

pub const COCKPIT_LONG_HELP: &str = "The consent cockpit: a full-screen view of missions, their runs and evidence, and the queue \
of attention items, in this terminal.

It is the only place that grants authority: starting a run with write scope, an ACP agent or the \
project recipe; answering a provider; recording manual evidence; handoffs with write scope. For each, \
the server shows exactly what it covers and its digest, and nothing happens until you press y. \
The server refuses consent from a terminal that is one of its own managed panes. Press ? for the keys.";

#[derive(Debug, Args)]
pub struct CockpitArgs {
    /// How often to read a full snapshot, in milliseconds (events also refresh at once).
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub refresh_ms: u64,
}

/// Whether stdin and stdout are both terminals.
fn is_interactive() -> bool {
    // SAFETY: isatty only inspects the descriptors.
    unsafe { libc::isatty(0) == 1 && libc::isatty(1) == 1 }
}

pub fn run(context: &Context, args: CockpitArgs) -> CommandResult {
    if !is_interactive() {
        return Err(CliError::Usage(
            "nagi cockpit needs a terminal on stdin and stdout".into(),
        ));
    }
    let paths = session_paths(context.session.as_deref())?;
    // Start a server now if none answers, so the cockpit opens on a live one.
    drop(connect_or_start(&paths, context.session.as_deref())?);
    let mut config = CockpitConfig::new(paths.socket_path.clone());
    config.refresh_interval = Duration::from_millis(args.refresh_ms.max(100));
    match nagi_cockpit::run(config) {
        Ok(CockpitExit::Quit) => Ok(EXIT_OK),
        Ok(CockpitExit::Signal(signal)) => {
            eprintln!("nagi: the cockpit ended by signal {signal}");
            Ok(128 + signal)
        }
        Err(error) => Err(CliError::Usage(error.to_string())),
    }
}
