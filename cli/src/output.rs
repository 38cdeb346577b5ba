//! Human-readable rendering of results. `--json` prints the result objects as they are.

use serde_json::Value;

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

pub fn format_time(millis: u64) -> String {
    nagi_mission::clock::format_utc(millis)
}

pub fn mission(view: &Value) -> String {
    let mut out = String::new();
    let status = text(view, "status");
    out.push_str(&format!(
        "mission {}  [{}]\n",
        text(view, "mission_id"),
        status
    ));
    out.push_str(&format!("  title       {}\n", text(view, "title")));
    if let Some(reason) = view.get("status_reason").and_then(Value::as_str) {
        out.push_str(&format!("  reason      {reason}\n"));
    }
    if let Some(reason) = view.get("abandoned_reason").and_then(Value::as_str) {
        out.push_str(&format!("  abandoned   {reason}\n"));
    }
    out.push_str(&format!(
        "  repository  {}\n",
        text(view, "repository_path")
    ));
    if let Some(worktree) = view.get("worktree").filter(|worktree| worktree.is_object()) {
        let base = text(worktree, "base_revision");
        out.push_str(&format!(
            "  worktree    {} (branch {}, from {} {})",
            text(worktree, "path"),
            text(worktree, "branch"),
            text(worktree, "base_ref"),
            &base[..base.len().min(12)],
        ));
        match text(worktree, "state").as_str() {
            "present" => {}
            "kept" => out.push_str(&format!(" — kept: {}", text(worktree, "kept_reason"))),
            other => out.push_str(&format!(" — {other}")),
        }
        out.push('\n');
    }
    if let Some(landing) = view.get("landing").filter(|landing| landing.is_object()) {
        out.push_str(&landing_line(landing));
    }
    let objective = text(view, "objective");
    let mut objective_lines = objective.lines();
    out.push_str(&format!(
        "  objective   {}\n",
        objective_lines.next().unwrap_or("")
    ));
    for line in objective_lines {
        out.push_str(&format!("              {line}\n"));
    }
    out.push_str("  criteria\n");
    for (index, criterion) in view
        .get("criteria")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let checks: Vec<&str> = criterion
            .get("required_check_ids")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let coverage = if checks.is_empty() {
            "uncovered".to_string()
        } else {
            format!("covered by {}", checks.join(", "))
        };
        out.push_str(&format!(
            "    {}. {}  ({coverage})\n",
            index + 1,
            text(criterion, "description")
        ));
    }
    let checks = view
        .get("checks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if checks.is_empty() {
        out.push_str("  checks      none configured (nagi mission configure)\n");
    } else {
        out.push_str(&format!("  checks ({})\n", checks.len()));
        let evidence = view
            .get("evidence")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for check in &checks {
            let id = text(check, "check_id");
            let required = if check.get("required").and_then(Value::as_bool) == Some(true) {
                "required"
            } else {
                "optional"
            };
            out.push_str(&format!(
                "    {id:<20} {:<8} {required:<9} {}\n",
                text(check, "kind"),
                text(check, "status")
            ));
            if let Some(item) = evidence.iter().find(|item| text(item, "check_id") == id) {
                let mut facts = Vec::new();
                if let Some(code) = item.get("exit_code").and_then(Value::as_i64) {
                    facts.push(format!("exit {code}"));
                }
                if let Some(duration) = item.get("duration_millis").and_then(Value::as_u64) {
                    facts.push(format!("{duration} ms"));
                }
                if let Some(reviewer) = item.get("reviewer").and_then(Value::as_str) {
                    facts.push(format!("by {reviewer}"));
                }
                if let Some(detail) = item.get("detail").and_then(Value::as_str) {
                    facts.push(detail.to_string());
                }
                if !facts.is_empty() {
                    out.push_str(&format!("      evidence: {}\n", facts.join(", ")));
                }
            }
        }
    }
    if let Some(run) = view.get("run") {
        out.push_str(&format!("  run         {}\n", run_line(run)));
        if let Some(turns) = turns_line(run) {
            out.push_str(&format!("  turns       {turns}\n"));
        }
        if let Some(usage) = run.get("usage") {
            out.push_str(&format!("  run usage   {}\n", usage_text(usage)));
        }
    }
    for run in view
        .get("run_history")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.push_str(&format!("  earlier run {}\n", run_line(run)));
    }
    let attention = view
        .get("unresolved_attention_count")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    out.push_str(&format!(
        "  attention   {attention} unresolved{}\n",
        if attention > 0 {
            " (nagi attention list)"
        } else {
            ""
        }
    ));
    if let Some(usage) = view.get("usage") {
        out.push_str(&format!(
            "  usage       {} (all runs; nagi usage sums missions)\n",
            usage_text(usage)
        ));
    }
    if let Some(updated) = view.get("updated_at_millis").and_then(Value::as_u64) {
        out.push_str(&format!("  updated     {}\n", format_time(updated)));
    }
    out
}

/// Tokens and cost as a person reads them: `30 in (10 cached), 15 out (4 reasoning), $0.0123`.
pub fn usage_text(usage: &Value) -> String {
    let count = |field: &str| usage.get(field).and_then(Value::as_u64).unwrap_or(0);
    let mut text = format!("{} in", count("input_tokens"));
    if count("cached_input_tokens") > 0 {
        text.push_str(&format!(" ({} cached)", count("cached_input_tokens")));
    }
    text.push_str(&format!(", {} out", count("output_tokens")));
    if count("reasoning_output_tokens") > 0 {
        text.push_str(&format!(
            " ({} reasoning)",
            count("reasoning_output_tokens")
        ));
    }
    if let Some(cost) = usage.get("cost_usd").and_then(Value::as_f64) {
        text.push_str(&format!(", ${cost:.4}"));
    }
    text
}

/// How many turns the run had, how the last one ended and what is queued.
fn turns_line(run: &Value) -> Option<String> {
    let turns = run.get("turns").and_then(Value::as_u64)?;
    let mut line = turns.to_string();
    if let Some(outcome) = run.get("last_turn_outcome").and_then(Value::as_str) {
        line.push_str(&format!(", the last one ended {outcome}"));
    }
    match run.get("queued_follow_ups").and_then(Value::as_u64) {
        Some(1) => line.push_str("; 1 follow-up queued"),
        Some(queued) if queued > 1 => line.push_str(&format!("; {queued} follow-ups queued")),
        _ => {}
    }
    Some(line)
}

fn run_line(run: &Value) -> String {
    let mut line = format!(
        "{} {} {}",
        text(run, "run_id"),
        text(run, "provider"),
        text(run, "mode")
    );
    line.push_str(&format!(" in {}", text(run, "worktree_path")));
    if let Some(pane) = run.get("pane_id").and_then(Value::as_str) {
        line.push_str(&format!(", pane {pane} (nagi pane attach {pane})"));
    }
    if let Some(enforcement) = run.get("enforcement").and_then(Value::as_str) {
        line.push_str(&format!(", enforcement {enforcement}"));
    }
    if let Some(model) = run.get("model").and_then(Value::as_str) {
        line.push_str(&format!(", model {model}"));
    }
    if let Some(effort) = run.get("reasoning_effort").and_then(Value::as_str) {
        line.push_str(&format!(" ({effort} effort)"));
    }
    if run.get("live").and_then(Value::as_bool) == Some(true) {
        line.push_str(", live");
    }
    line
}

/// The mission table a person reads: archived missions are left out unless `all`, and a
/// last line says how many were.
pub fn mission_list(missions: &[Value], all: bool) -> String {
    if missions.is_empty() {
        return "no missions (nagi mission create)\n".into();
    }
    let archived = |mission: &&Value| text(mission, "status") == "archived";
    let hidden = if all {
        0
    } else {
        missions.iter().filter(archived).count()
    };
    let shown: Vec<&Value> = missions
        .iter()
        .filter(|mission| all || !archived(mission))
        .collect();
    let footer = match hidden {
        0 => String::new(),
        1 => "(1 archived mission hidden; --all shows it)\n".to_string(),
        hidden => format!("({hidden} archived missions hidden; --all shows them)\n"),
    };
    if shown.is_empty() {
        return format!("no missions that are not archived\n{footer}");
    }
    let missions = shown;
    let width = missions
        .iter()
        .map(|mission| text(mission, "mission_id").len())
        .max()
        .unwrap_or(10)
        .max(10);
    let mut out = format!(
        "{:<width$}  {:<16} {:>9}  TITLE\n",
        "MISSION", "STATUS", "ATTENTION"
    );
    for mission in missions {
        out.push_str(&format!(
            "{:<width$}  {:<16} {:>9}  {}\n",
            text(mission, "mission_id"),
            text(mission, "status"),
            mission
                .get("unresolved_attention_count")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            text(mission, "title")
        ));
    }
    out.push_str(&footer);
    out
}

pub fn attention_item(item: &Value) -> String {
    // In a fleet, the host whose ids these are.
    let host = item
        .get("host")
        .and_then(Value::as_str)
        .map(|host| format!(" on host {host}"))
        .unwrap_or_default();
    let mut out = format!(
        "{}  [{} / {} risk]  mission {} run {}{host}\n",
        text(item, "attention_id"),
        text(item, "kind"),
        text(item, "risk"),
        text(item, "mission_id"),
        text(item, "run_id")
    );
    out.push_str(&format!("  asks      {}\n", text(item, "requested_action")));
    let state = item
        .get("state")
        .map(|state| text(state, "state"))
        .unwrap_or_default();
    let delivery = item
        .get("delivery")
        .map(|delivery| text(delivery, "state"))
        .unwrap_or_default();
    out.push_str(&format!(
        "  state     {state} (delivery {delivery}, {})\n",
        text(item, "response_capability")
    ));
    for question in item
        .get("questions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.push_str(&format!(
            "  question  {} — {}\n",
            text(question, "header"),
            text(question, "prompt")
        ));
        for option in question
            .get("options")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.push_str(&format!("            • {}\n", text(option, "label")));
        }
    }
    out
}

/// `  landed      main at 1a2b3c4d5e6f (squash), pushed to origin`
fn landing_line(landing: &Value) -> String {
    let revision = text(landing, "landed_revision");
    let mut line = match landing.get("pull_request").and_then(Value::as_str) {
        Some(pull_request) => format!(
            "  landed      as a pull request into {}: {pull_request}",
            text(landing, "target_branch")
        ),
        None => format!(
            "  landed      {} at {} ({})",
            text(landing, "target_branch"),
            &revision[..revision.len().min(12)],
            text(landing, "strategy")
        ),
    };
    if let Some(remote) = landing.get("pushed_to").and_then(Value::as_str) {
        line.push_str(&format!(", pushed to {remote}"));
    }
    line.push('\n');
    line
}

pub fn receipt(receipt: &Value) -> String {
    let identity = receipt.get("identity").cloned().unwrap_or(Value::Null);
    let mut out = format!(
        "proof of mission {} ({})\n  run         {}\n  worktree    {}\n  base        {}\n  head        {}\n",
        text(&identity, "mission_id"),
        text(receipt, "decision"),
        text(&identity, "run_id"),
        text(&identity, "worktree_identity"),
        text(&identity, "base_revision"),
        text(receipt, "head_revision"),
    );
    out.push_str(&format!(
        "  workspace   {}\n  subject     {}\n  seal        {}\n",
        text(receipt, "workspace_digest"),
        text(receipt, "subject_digest"),
        text(receipt, "seal_digest")
    ));
    if let Some(landing) = receipt.get("landing").filter(|landing| landing.is_object()) {
        out.push_str(&landing_line(landing));
    }
    if let Some(verified) = receipt.get("verified_at_millis").and_then(Value::as_u64) {
        out.push_str(&format!(
            "  verified    {} (event #{})\n",
            format_time(verified),
            receipt
                .get("authority_sequence")
                .and_then(Value::as_u64)
                .unwrap_or(0)
        ));
    }
    out.push_str("  evidence\n");
    for evidence in receipt
        .get("fresh_evidence")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let source = evidence.get("source").cloned().unwrap_or(Value::Null);
        let how = match text(&source, "kind").as_str() {
            "command" => format!(
                "{} {} → exit {}",
                text(&source, "program"),
                source
                    .get("args")
                    .and_then(Value::as_array)
                    .map(|args| args
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" "))
                    .unwrap_or_default(),
                source.get("exit_code").and_then(Value::as_i64).unwrap_or(0)
            ),
            "manual" => format!("reviewed by {}", text(&source, "reviewer")),
            other => other.to_string(),
        };
        out.push_str(&format!("    {:<20} {}\n", text(evidence, "check_id"), how));
    }
    out
}

pub fn handoff_artifact(artifact: &Value) -> String {
    let diff = artifact.get("diff").cloned().unwrap_or(Value::Null);
    let mut out = format!(
        "handoff of mission {} from {} ({}) to {}\n  new run     {}\n  worktree    {}\n  base → head {} → {}\n  dirty       {}\n",
        text(artifact, "mission_id"),
        text(artifact, "source_run_id"),
        text(artifact, "source_provider"),
        text(artifact, "target_provider"),
        text(artifact, "suggested_run_id"),
        text(artifact, "worktree_path"),
        text(artifact, "base_revision"),
        text(artifact, "head_revision"),
        diff.get("dirty").and_then(Value::as_bool).unwrap_or(false),
    );
    for path in diff
        .get("changed_paths")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .take(20)
    {
        out.push_str(&format!("    {}\n", path.as_str().unwrap_or("")));
    }
    for warning in artifact
        .get("warnings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.push_str(&format!("  note: {}\n", warning.as_str().unwrap_or("")));
    }
    let generated_at = artifact
        .get("generated_at_millis")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    out.push_str(&format!(
        "\n  artifact_sha256      {}\n  generated            {}\n\nStart it with:\n  nagi mission handoff start {} --to {} --digest {} --generated-at {}\n",
        text(artifact, "artifact_sha256"),
        format_time(generated_at),
        text(artifact, "mission_id"),
        text(artifact, "target_provider"),
        text(artifact, "artifact_sha256"),
        artifact.get("generated_at_millis").and_then(Value::as_u64).unwrap_or(0),
    ));
    out
}

pub fn event_line(event: &Value) -> String {
    let data = event.get("data").cloned().unwrap_or(Value::Null);
    let seq = data
        .get("seq")
        .and_then(Value::as_u64)
        .map(|seq| format!("#{seq} "))
        .unwrap_or_default();
    let mission = text(&data, "mission_id");
    let status = text(&data, "status");
    let mut line = format!("{seq}{} {}", text(event, "event"), mission);
    if !status.is_empty() {
        line.push_str(&format!(" → {status}"));
    }
    for key in [
        "run_id",
        "attention_id",
        "check_id",
        "assessment",
        "state",
        "reason",
        "pane_id",
    ] {
        if let Some(value) = data
            .get(key)
            .and_then(Value::as_str)
            .filter(|value| !value.is_empty())
        {
            line.push_str(&format!(" {key}={value}"));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    #[test]
    fn times_render_as_utc() {
        assert_eq!(super::format_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(
            super::format_time(1_796_167_361_000),
            "2026-12-01 23:22:41 UTC"
        );
    }

    #[test]
    fn an_attention_item_names_its_host_in_a_fleet() {
        let mut item = serde_json::json!({"attention_id": "attention:1", "kind": "permission_request",
            "risk": "high", "mission_id": "m1", "run_id": "r1", "requested_action": "rm -rf build"});
        let first_line = |item: &serde_json::Value| {
            super::attention_item(item)
                .lines()
                .next()
                .unwrap()
                .to_string()
        };
        assert!(first_line(&item).ends_with("mission m1 run r1"));
        item["host"] = "b".into();
        assert!(first_line(&item).ends_with("mission m1 run r1 on host b"));
    }
}
