//! The run's console (`nagi run console`, what a run's pane runs) as a person sees it:
//! attached with the real `nagi pane attach` in tmux, the captured screen shows the agent's
//! streamed text wrapped under its gutter, a tool call with its output folded, the turn's
//! diff stat and usage, and the turn's end.

use nagi_tests::*;
use serde_json::json;

use crate::runs::{runs_with, start_params, status_is};

/// A line longer than any pane is wide, so the console must wrap it.
const LONG_WORDS: &str = "This sentence is long on purpose so that the console has to wrap it under its gutter instead of letting the terminal cut it at the edge of the pane.";

#[test]
fn the_console_draws_streamed_text_folded_tool_output_the_diff_stat_and_the_turns_usage() {
    let output: Vec<String> = (1..=12).map(|line| format!("entry-{line:02}")).collect();
    let runs = runs_with(
        json!([
            {"text": LONG_WORDS},
            {"tool": "ls -1", "output": output.join("\n")},
            {"text": "All done."}
        ]),
        &[],
    );
    // What the checkout holds changed against the run's base when the turn ends.
    runs.repo.write("README.md", "# demo\n\nOne more line.\n");
    runs.repo.write("notes.txt", "first\nsecond\nthird\n");
    runs.env.ok("mission.start", start_params("codex", "r1"));
    let done = wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close",
        status_is("ready_to_close"),
    );
    let pane = done["run"]["pane_id"].as_str().unwrap().to_string();
    let Some(tmux) = crate::tmux::Tmux::start(&runs.env.root()) else {
        return;
    };
    tmux.attach_pane(&runs.env, &pane, 100, 50);
    let screen = tmux.wait_for("t", "the end of the run's first turn", |screen| {
        screen.contains("── turn 1 completed")
    });
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let row_of = |wanted: &str| {
        rows.iter()
            .position(|row| row.contains(wanted))
            .unwrap_or_else(|| panic!("{wanted:?} is not on the console:\n{screen}"))
    };

    // The streamed text, wrapped under its gutter: every row fits the pane, and the words
    // read back whole when the rows are joined.
    let first = row_of("  agent │ This sentence is long");
    let mut joined = String::new();
    let mut row = first;
    while let Some(text) = rows[row]
        .strip_prefix("  agent │ ")
        .or_else(|| rows[row].strip_prefix("        │ "))
    {
        joined.push_str(text);
        row += 1;
    }
    assert!(row > first + 1, "the long text wraps:\n{screen}");
    assert_eq!(
        joined.replace(' ', ""),
        LONG_WORDS.replace(' ', ""),
        "{screen}"
    );

    // The tool call, its status line and its output folded after four lines.
    let call = row_of("   tool │ $ ls -1");
    assert!(rows[call + 1].starts_with(" result │ ls -1"), "{screen}");
    assert_eq!(rows[call + 2], "        │ entry-01");
    assert_eq!(rows[call + 5], "        │ entry-04");
    assert_eq!(
        rows[call + 6],
        "        │ … 8 more lines (all of it is in the transcript)"
    );
    assert!(!screen.contains("entry-05"), "{screen}");

    // The turn's end: the diff stat against the run's base, the usage the provider
    // reported, and a rule.
    let files = row_of("  files │ 2 files changed, +5 -0");
    assert_eq!(rows[files + 1], "        │ README.md  +2 -0");
    assert_eq!(rows[files + 2], "        │ notes.txt  +3 -0");
    row_of("  usage │ 100 in (40 cached) · 20 out (5 reasoning)");
    let rule = row_of("── turn 1 completed");
    assert!(rule > files, "{screen}");
    assert!(row_of("  agent │ All done.") < files, "{screen}");
}

#[test]
fn the_runs_pane_names_the_console_in_its_terminal_and_the_provider_as_its_agent_process() {
    let go = tempfile::tempdir().unwrap();
    let go_path = go.path().join("go");
    let runs = runs_with(
        json!([{"text": "working on it"}, {"wait_file": go_path}, {"text": "done"}]),
        &[],
    );
    runs.env.ok("mission.start", start_params("codex", "r1"));
    let live = wait_for_mission(&runs.env, "m1", "a live run with its pane", |mission| {
        mission["status"] == "active" && mission["run"]["pane_id"].is_string()
    });
    let pane = live["run"]["pane_id"].as_str().unwrap().to_string();
    let info = |accept: &dyn Fn(&serde_json::Value) -> bool| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let info = crate::panes::ok_valid(
                &runs.env,
                "pane.process_info",
                json!({"pane_id": pane}),
            )["process_info"]
                .clone();
            if accept(&info) {
                return info;
            }
            assert!(std::time::Instant::now() < deadline, "{info}");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    let working = info(&|info| {
        info["agent_processes"]
            .as_array()
            .is_some_and(|list| !list.is_empty())
            && info["foreground_processes"]
                .as_array()
                .is_some_and(|list| !list.is_empty())
    });
    let console = &working["foreground_processes"][0];
    assert!(
        console["cmdline"]
            .as_str()
            .unwrap()
            .contains(" run console m1"),
        "the pane's terminal runs the run's console: {working}"
    );
    let provider = &working["agent_processes"][0];
    assert_eq!(provider["name"], "fake_codex", "{working}");
    assert!(
        provider["cmdline"].as_str().unwrap().contains("app-server"),
        "{working}"
    );

    // The CLI says the same for a person.
    let shown = runs.env.nagi_ok(&["pane", "processes", &pane]);
    assert!(
        shown.stdout.contains("terminal") && shown.stdout.contains(" run console m1"),
        "{}",
        shown.describe()
    );
    assert!(
        shown
            .stdout
            .lines()
            .any(|line| line.starts_with("agent") && line.contains("fake_codex app-server")),
        "{}",
        shown.describe()
    );

    std::fs::write(&go_path, "").unwrap();
    wait_for_mission(
        &runs.env,
        "m1",
        "ready_to_close",
        status_is("ready_to_close"),
    );
    // The provider is shut down after its turn: the pane names no agent process then.
    info(&|info| info.get("agent_processes").is_none());
}
