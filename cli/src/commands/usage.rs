//! `nagi usage [--since WHEN] [--mission ID]`: the tokens and cost the providers reported,
//! per mission and in all (`mission.usage`).

use clap::Args;
use serde_json::{Value, json};

use crate::CommandResult;
use crate::context::Context;
use crate::exit::CliError;
use crate::output;

#[derive(Debug, Args)]
pub struct UsageArgs {
    /// Only turns that ended since: a span back from now (7d, 24h, 90m), a UTC date
    /// (2026-12-01) or a timestamp (2026-12-01T10:00:00Z).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only this mission.
    #[arg(long, value_name = "MISSION")]
    pub mission: Option<String>,
}

pub fn run(context: &Context, args: UsageArgs) -> CommandResult {
    let since = args
        .since
        .as_deref()
        .map(|text| nagi_mission::clock::parse_since(text, nagi_mission::clock::now_millis()))
        .transpose()
        .map_err(|error| CliError::Usage(format!("--since: {error}")))?;
    let mut params = json!({});
    if let Some(since) = since {
        params["since_millis"] = json!(since);
    }
    if let Some(mission) = &args.mission {
        params["mission_id"] = json!(mission);
    }
    let result = context.request("mission.usage", params)?;
    context.print(&result, report)
}

fn report(result: &Value) -> String {
    let missions = result["missions"].as_array().cloned().unwrap_or_default();
    let mut out = match result["since_millis"].as_u64() {
        Some(since) => format!("usage since {}\n", output::format_time(since)),
        None => "usage of every mission\n".to_string(),
    };
    if missions.is_empty() {
        out.push_str("  no turns ended in this window\n");
        return out;
    }
    let width = missions
        .iter()
        .filter_map(|mission| mission["mission_id"].as_str())
        .map(str::len)
        .max()
        .unwrap_or(7)
        .max(7);
    for mission in &missions {
        out.push_str(&format!(
            "  {:<width$}  {:>3} turn(s)  {}\n",
            mission["mission_id"].as_str().unwrap_or_default(),
            mission["turns"].as_u64().unwrap_or(0),
            output::usage_text(&mission["usage"])
        ));
    }
    out.push_str(&format!(
        "  {:<width$}  {:>3} turn(s)  {}\n",
        "total",
        missions
            .iter()
            .map(|mission| mission["turns"].as_u64().unwrap_or(0))
            .sum::<u64>(),
        output::usage_text(&result["usage"])
    ));
    out
}
