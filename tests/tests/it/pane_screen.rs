//! What a pane's reads show, checked against what a terminal shows: escapes and cursor
//! movement, scrollback and the `recent` and `recent_unwrapped` sources, and a full-screen
//! program on the alternate screen.

use std::path::Path;

use nagi_tests::*;
use serde_json::json;

use crate::panes::*;
use crate::tmux::Tmux;

fn write_script(dir: &Path, name: &str, script: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn escapes_and_cursor_movement_render_as_a_terminal_shows_them() {
    let mut env = TestEnv::new();
    env.start_server();
    let script = write_script(
        &env.root(),
        "screen.sh",
        concat!(
            "printf 'line one\\n\\033[31mred\\033[0m text\\n'\n",
            "printf '\\033[5;10Hplaced'\n",
            "printf '\\033[1;20Hover'\n",
            "printf '\\033[3;1Habcdef\\033[3;3H\\033[K'\n",
            "printf '\\033[8;1Hwide: \\344\\270\\255\\346\\226\\207 end'\n",
            "printf '\\033[10;1Htab\\there'\n",
            "printf '\\033[12;1Hcarriage\\rCAR'\n",
            "printf '\\033[14;1Hdel\\b\\bX'\n",
            "printf '\\033[16;1Hdone-marker'\n",
            "sleep 600\n",
        ),
    );
    let pane = start_pane(&env, &["sh", &script]);
    let id = pane_id(&pane);
    let screen = wait_for_read(&env, &id, "visible", None, |text| {
        text.contains("done-marker")
    });
    let expected = [
        "line one           over",
        "red text",
        "ab",
        "",
        "         placed",
        "",
        "",
        "wide: 中文 end",
        "",
        "tab     here",
        "",
        "CARriage",
        "",
        "dXl",
        "",
        "done-marker",
    ];
    assert_eq!(
        normalized_screen(&screen),
        expected,
        "visible screen:\n{screen}"
    );
    let colored = ok_valid(
        &env,
        "pane.read",
        json!({"pane_id": id, "source": "visible", "format": "ansi"}),
    );
    assert!(
        colored["read"]["text"]
            .as_str()
            .unwrap()
            .contains("\u{1b}[31m"),
        "the ansi read keeps the colour: {colored}"
    );

    // The same program in tmux, at the same size, shows the same screen.
    let Some(tmux) = Tmux::start(&env.root()) else {
        return;
    };
    let size =
        ok_valid(&env, "pane.get", json!({"pane_id": id}))["pane"]["scroll"]["viewport_rows"]
            .as_u64()
            .unwrap();
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "ref",
        "-x",
        "120",
        "-y",
        &size.to_string(),
        &format!("sh {script}"),
    ]);
    let reference = tmux.wait_for("ref", "the reference screen", |text| {
        text.contains("done-marker")
    });
    assert_eq!(
        normalized_screen(&screen),
        normalized_screen(&reference),
        "nagi:\n{screen}\ntmux:\n{reference}"
    );
}

#[test]
fn scrollback_recent_and_recent_unwrapped_read_as_the_seed_says() {
    let mut env = TestEnv::new();
    env.start_server();
    let long_line = "x".repeat(250);
    let script = format!(
        "i=1; while [ $i -le 300 ]; do echo \"row $i\"; i=$((i+1)); done; echo {long_line}; echo end-marker; sleep 600"
    );
    let pane = start_pane(&env, &["sh", "-c", &script]);
    let id = pane_id(&pane);
    wait_for_read(&env, &id, "visible", None, |text| {
        has_line(text, "end-marker")
    });
    let visible = read(&env, &id, "visible", None);
    let rows = ok_valid(&env, "pane.get", json!({"pane_id": id}))["pane"]["scroll"]["viewport_rows"]
        .as_u64()
        .unwrap() as usize;
    assert_eq!(
        visible.split('\n').count(),
        rows,
        "one line per screen row:\n{visible}"
    );
    assert!(
        !has_line(&visible, "row 1") && !has_line(&visible, "row 200"),
        "old rows scrolled off the screen:\n{visible}"
    );

    // recent: the last displayed rows, the long line as the three rows it wraps into.
    let recent = read(&env, &id, "recent", Some(10_000));
    let recent_lines: Vec<&str> = recent.lines().collect();
    assert_eq!(
        recent_lines.first(),
        Some(&"row 1"),
        "the scrollback keeps the first row"
    );
    let long_at = recent_lines
        .iter()
        .position(|line| line.starts_with('x'))
        .unwrap();
    assert_eq!(recent_lines[long_at - 1], "row 300");
    assert_eq!(
        recent_lines[long_at..long_at + 3],
        ["x".repeat(120), "x".repeat(120), "x".repeat(10)]
    );
    assert_eq!(recent_lines[long_at + 3], "end-marker");
    let last_three = read(&env, &id, "recent", Some(3));
    assert!(
        last_three.lines().count() <= 3,
        "lines limits the read:\n{last_three}"
    );
    let truncated = ok_valid(
        &env,
        "pane.read",
        json!({"pane_id": id, "source": "recent", "lines": 3}),
    );
    assert_eq!(truncated["read"]["truncated"], true);

    // recent_unwrapped: soft-wrapped rows joined back into the logical line.
    let unwrapped = read(&env, &id, "recent_unwrapped", Some(10_000));
    let unwrapped_lines: Vec<&str> = unwrapped.lines().collect();
    let long_at = unwrapped_lines
        .iter()
        .position(|line| line.starts_with('x'))
        .unwrap();
    assert_eq!(unwrapped_lines[long_at], long_line);
    assert_eq!(unwrapped_lines[long_at - 1], "row 300");
    assert_eq!(unwrapped_lines[long_at + 1], "end-marker");
    assert_eq!(unwrapped_lines.first(), Some(&"row 1"));

    // Out-of-range counts are refused and the pane is as it was.
    for lines in [0, 10_001] {
        assert_eq!(
            error_valid(
                &env,
                "pane.read",
                json!({"pane_id": id, "source": "recent", "lines": lines})
            ),
            "invalid_params"
        );
    }
    assert_eq!(read(&env, &id, "visible", None), visible);
}

#[test]
fn a_full_screen_program_draws_on_the_alternate_screen_and_the_shell_screen_returns() {
    let mut env = TestEnv::new();
    env.start_server();
    if std::process::Command::new("less")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: less is not installed");
        return;
    }
    let file = env.root().join("items.txt");
    std::fs::write(
        &file,
        (1..=200)
            .map(|index| format!("item {index}\n"))
            .collect::<String>(),
    )
    .unwrap();
    let pane = start_shell(&env);
    let id = pane_id(&pane);
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": id, "text": "echo before-$((6*7))", "keys": ["enter"]}),
    );
    wait_for_read(&env, &id, "visible", None, |text| {
        has_line(text, "before-42")
    });
    let command = format!("LESS= less {}", file.display());
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": id, "text": command, "keys": ["enter"]}),
    );
    let rows = ok_valid(&env, "pane.get", json!({"pane_id": id}))["pane"]["scroll"]["viewport_rows"]
        .as_u64()
        .unwrap() as usize;
    let screen = wait_for_read(&env, &id, "visible", None, |text| {
        text.starts_with("item 1\n")
    });
    let lines: Vec<&str> = screen.lines().collect();
    assert_eq!(lines.len(), rows);
    for (index, line) in lines[..rows - 1].iter().enumerate() {
        assert_eq!(
            *line,
            format!("item {}", index + 1),
            "less fills the screen but its prompt line:\n{screen}"
        );
    }
    assert!(
        !screen.contains("before-42"),
        "the program draws on the alternate screen:\n{screen}"
    );
    // Paging moves the whole screen, as a terminal shows it.
    ok_valid(
        &env,
        "pane.send_keys",
        json!({"pane_id": id, "keys": ["space"]}),
    );
    let paged = wait_for_read(&env, &id, "visible", None, |text| {
        text.starts_with(&format!("item {rows}\n"))
    });
    assert!(
        has_line(&paged, &format!("item {}", 2 * rows - 2)),
        "{paged}"
    );
    ok_valid(&env, "pane.send_text", json!({"pane_id": id, "text": "q"}));
    let back = wait_for_read(&env, &id, "visible", None, |text| {
        has_line(text, "before-42")
    });
    assert!(
        !back.contains("item 1"),
        "quitting restores the shell's screen:\n{back}"
    );
    ok_valid(
        &env,
        "pane.send_input",
        json!({"pane_id": id, "text": "echo after-$((6*7))", "keys": ["enter"]}),
    );
    wait_for_read(&env, &id, "visible", None, |text| {
        has_line(text, "after-42")
    });
}
