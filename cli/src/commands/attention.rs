//! `nagi attention list|get`.

use clap::Subcommand;
use serde_json::{Value, json};

use crate::CommandResult;
use crate::context::Context;
use crate::output;

#[derive(Debug, Subcommand)]
pub enum AttentionCommand {
    /// Unresolved attention items (all items with --all).
    List {
        #[arg(long, value_name = "MISSION")]
        mission: Option<String>,
        /// Include resolved, dismissed and expired items.
        #[arg(long)]
        all: bool,
    },
    /// One attention item.
    Get {
        attention_id: String,
        /// The item's mission: in a fleet, its host is asked (attention ids are facts of
        /// the host that raised the item).
        #[arg(long, value_name = "MISSION")]
        mission: Option<String>,
    },
}

pub fn run(context: &Context, command: AttentionCommand) -> CommandResult {
    match command {
        AttentionCommand::List { mission, all } => {
            let result = context.request(
                "attention.list",
                json!({"mission_id": mission, "include_closed": all}),
            )?;
            context.print(&result, |result| {
                let items = result
                    .get("items")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                if items.is_empty() {
                    return "no attention items\n".into();
                }
                items
                    .iter()
                    .map(output::attention_item)
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        }
        AttentionCommand::Get {
            attention_id,
            mission,
        } => {
            let mut params = json!({"attention_id": attention_id});
            if let Some(mission) = mission {
                params["mission_id"] = json!(mission);
            }
            let result = context.request("attention.get", params)?;
            context.print(&result, |result| {
                output::attention_item(result.get("item").unwrap_or(&Value::Null))
            })
        }
    }
}
