//! `nagi events subscribe`: follow mission events, resuming after a sequence number; with
//! `--host NAME`, those of another host of the fleet, through the socket
//! `[fleet.hosts.NAME]` names (hosts do not relay each other's events).

use clap::Subcommand;
use serde_json::{Value, json};

use crate::CommandResult;
use crate::connect::remote;
use crate::context::Context;
use crate::exit::EXIT_OK;
use crate::output;

#[derive(Debug, Subcommand)]
pub enum EventsCommand {
    /// Print mission events as they happen (Ctrl-C to stop).
    Subscribe {
        /// Only this mission's events.
        #[arg(long, value_name = "MISSION")]
        mission: Option<String>,
        /// Only these kinds (e.g. mission_status_changed); repeatable.
        #[arg(long = "kind", value_name = "KIND")]
        kinds: Vec<String>,
        /// Replay logged events after this sequence number first.
        #[arg(long, value_name = "SEQ")]
        after: Option<u64>,
        /// Follow the events of this host of the fleet, through the socket
        /// `[fleet.hosts.NAME] socket` names (a socket forwarded from it over SSH).
        #[arg(long, value_name = "NAME")]
        host: Option<String>,
    },
}

pub fn run(context: &Context, command: EventsCommand) -> CommandResult {
    let EventsCommand::Subscribe {
        mission,
        kinds,
        after,
        host,
    } = command;
    let mut client = match host.as_deref() {
        None => context.client()?,
        Some(host) => {
            let socket = crate::attach::remote::host_socket(context, host)?;
            crate::attach::remote::connect(&socket, host)?
        }
    };
    let params = json!({
        "subscriptions": [{"type": "mission", "mission_id": mission, "kinds": kinds}],
        "after_seq": after,
    });
    let ack = client.request("events.subscribe", params).map_err(remote)?;
    if !context.json {
        let on_host = host
            .map(|host| format!(" on host {host}"))
            .unwrap_or_default();
        eprintln!(
            "nagi: subscribed{on_host} (log head #{}); waiting for events",
            ack.get("head_seq").and_then(Value::as_u64).unwrap_or(0)
        );
    }
    loop {
        let event = match client.read_value() {
            Ok(event) => event,
            Err(nagi_schema::client::ClientError::Closed) => return Ok(EXIT_OK),
            Err(error) => return Err(remote(error)),
        };
        if context.json {
            println!("{event}");
        } else {
            println!("{}", output::event_line(&event));
        }
    }
}
