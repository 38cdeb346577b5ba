//! Token usage and cost: what each provider reports for a turn is recorded with the turn,
//! summed per run and per mission in the mission view, and over missions by
//! `mission.usage` / `nagi usage`. The fakes report 100 input tokens (40 cached), 20 output
//! (5 reasoning) and, where their protocol carries a cost, $0.0123 per turn.

use nagi_tests::*;
use serde_json::{Value, json};

use crate::runs::{runs_with, start_params, status_is};

fn usage(input: u64, cached: u64, output: u64, reasoning: u64, cost: Option<f64>) -> Value {
    let mut usage = json!({
        "input_tokens": input,
        "cached_input_tokens": cached,
        "output_tokens": output,
        "reasoning_output_tokens": reasoning,
    });
    if let Some(cost) = cost {
        usage["cost_usd"] = json!(cost);
    }
    usage
}

#[test]
fn each_providers_reported_usage_is_recorded_per_turn_and_summed_per_run_mission_and_window() {
    // Claude Code prices a turn by the growth of its session's total; the first turn after
    // a resume has no earlier total in that process, so only the first turn's cost is known.
    for (provider, first_cost, both_costs) in [
        ("codex", None, None),
        ("claude_code", Some(0.0123), Some(0.0123)),
        ("open_code", Some(0.0123), Some(0.0246)),
    ] {
        let runs = runs_with(json!([{"text": "done"}]), &[]);
        runs.env.ok("mission.start", start_params(provider, "r1"));
        let first = wait_for_mission(
            &runs.env,
            "m1",
            "ready_to_close",
            status_is("ready_to_close"),
        );
        assert_eq!(
            first["run"]["usage"],
            usage(100, 40, 20, 5, first_cost),
            "{provider}: {first}"
        );
        assert_eq!(first["usage"], first["run"]["usage"], "{provider}");

        runs.env.ok(
            "mission.send",
            json!({"mission_id": "m1", "text": "once more"}),
        );
        let second = wait_for_mission(
            &runs.env,
            "m1",
            "ready_to_close after the follow-up",
            |mission| mission["status"] == "ready_to_close" && mission["run"]["turns"] == 2,
        );
        let both = usage(200, 80, 40, 10, both_costs);
        assert_eq!(second["run"]["usage"], both, "{provider}: {second}");
        assert_eq!(second["usage"], both, "{provider}");

        let report = runs.env.ok("mission.usage", json!({}));
        assert_eq!(report["usage"], both, "{provider}: {report}");
        assert_eq!(report["missions"][0]["mission_id"], "m1");
        assert_eq!(report["missions"][0]["turns"], 2, "{report}");
        let future = nagi_mission::clock::now_millis() + 3_600_000;
        let empty = runs
            .env
            .ok("mission.usage", json!({"since_millis": future}));
        assert_eq!(empty["missions"], json!([]), "{empty}");
        assert_eq!(empty["usage"], usage(0, 0, 0, 0, None));

        let printed = runs.env.nagi_ok(&["usage", "--since", "1h"]);
        assert!(
            printed
                .stdout
                .contains("200 in (80 cached), 40 out (10 reasoning)"),
            "{provider}: {}",
            printed.describe()
        );
        let shown = runs.env.nagi_ok(&["mission", "get", "m1"]);
        assert!(
            shown.stdout.contains("run usage   200 in (80 cached)"),
            "{}",
            shown.describe()
        );
    }
}

#[test]
fn a_usage_report_is_refused_for_bad_input_before_anything_is_read() {
    let runs = runs_with(json!([{"text": "done"}]), &[]);
    assert_eq!(
        runs.env
            .error_code("mission.usage", json!({"mission_id": "nope"})),
        "mission_not_found"
    );
    assert_eq!(
        runs.env
            .error_code("mission.usage", json!({"since": "yesterday"})),
        "invalid_request"
    );
    let refused = runs.env.nagi(&["usage", "--since", "the other day"]);
    assert_ne!(refused.status, 0);
    assert!(refused.stderr.contains("--since"), "{}", refused.describe());
}
