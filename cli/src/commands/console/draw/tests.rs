use super::*;

/// What a terminal `width` columns wide shows after the records are drawn, row by row
/// (trailing blanks trimmed).
fn screen(width: u16, records: &[ConsoleRecord]) -> Vec<String> {
    let mut drawer = Drawer::default();
    let mut parser = vt100::Parser::new(
        std::num::NonZero::new(40).unwrap(),
        std::num::NonZero::new(width).unwrap(),
        0,
    );
    for record in records {
        parser.process(drawer.draw(record, usize::from(width)).as_bytes());
    }
    parser
        .screen()
        .rows(0, width)
        .map(|row| row.trim_end().to_string())
        .collect()
}

fn delta(text: &str) -> ConsoleRecord {
    ConsoleRecord::AgentDelta { text: text.into() }
}

#[test]
fn streamed_text_is_drawn_as_it_comes_and_its_whole_message_is_not_drawn_again() {
    let rows = screen(
        60,
        &[
            delta("The secret word "),
            delta("is pomegranate."),
            ConsoleRecord::AgentText {
                text: "The secret word is pomegranate.".into(),
            },
            ConsoleRecord::Nagi {
                text: "the turn ended".into(),
            },
        ],
    );
    assert_eq!(rows[0], "  agent │ The secret word is pomegranate.");
    assert_eq!(rows[1], "   nagi │ the turn ended");
    assert_eq!(
        rows.iter()
            .filter(|row| row.contains("pomegranate"))
            .count(),
        1,
        "{rows:#?}"
    );
}

#[test]
fn a_whole_message_that_adds_to_what_was_streamed_draws_only_the_rest() {
    let rows = screen(
        60,
        &[
            delta("Half of "),
            ConsoleRecord::AgentText {
                text: "Half of it came late.".into(),
            },
        ],
    );
    assert_eq!(rows[0], "  agent │ Half of it came late.");
    assert_eq!(rows[1], "");
}

#[test]
fn a_whole_message_unlike_the_stream_ends_the_stream_and_is_drawn_whole() {
    let rows = screen(
        60,
        &[
            delta("draft"),
            ConsoleRecord::AgentText {
                text: "Final answer.".into(),
            },
        ],
    );
    assert_eq!(rows[0], "  agent │ draft");
    assert_eq!(rows[1], "  agent │ Final answer.");
}

#[test]
fn text_wraps_at_the_pane_width_under_the_gutter() {
    // 30 columns: 10 of gutter, 20 of text.
    let rows = screen(
        30,
        &[
            delta("abcdefghijklmnopqrstuvwxyz"),
            ConsoleRecord::Info {
                text: "0123456789012345678901234".into(),
            },
        ],
    );
    assert_eq!(rows[0], "  agent │ abcdefghijklmnopqrst");
    assert_eq!(rows[1], "        │ uvwxyz");
    assert_eq!(rows[2], "   info │ 01234567890123456789");
    assert_eq!(rows[3], "        │ 01234");
}

#[test]
fn wide_characters_wrap_by_their_columns() {
    // Each of these takes two columns: ten of them fill the 20-column text.
    let rows = screen(30, &[delta("漢字漢字漢字漢字漢字漢字")]);
    assert_eq!(rows[0], "  agent │ 漢字漢字漢字漢字漢字");
    assert_eq!(rows[1], "        │ 漢字");
}

#[test]
fn a_long_tool_output_is_folded_after_a_few_lines() {
    let output: Vec<String> = (1..=10).map(|line| format!("line {line}")).collect();
    let rows = screen(
        60,
        &[
            ConsoleRecord::ToolCall {
                title: "cargo test".into(),
            },
            ConsoleRecord::ToolResult {
                title: "cargo test [completed, exit 101]".into(),
                output: output.join("\n"),
            },
        ],
    );
    assert_eq!(rows[0], "   tool │ $ cargo test");
    assert_eq!(rows[1], " result │ cargo test [completed, exit 101]");
    assert_eq!(rows[2], "        │ line 1");
    assert_eq!(rows[5], "        │ line 4");
    assert_eq!(
        rows[6],
        "        │ … 6 more lines (all of it is in the transcript)"
    );
    assert!(!rows.iter().any(|row| row.contains("line 5")), "{rows:#?}");
}

#[test]
fn an_output_one_line_past_the_fold_is_shown_whole() {
    let output: Vec<String> = (1..=FOLDED_OUTPUT_LINES + 1)
        .map(|line| format!("line {line}"))
        .collect();
    let rows = screen(
        60,
        &[ConsoleRecord::ToolResult {
            title: "ls".into(),
            output: output.join("\n"),
        }],
    );
    assert!(rows.iter().any(|row| row.ends_with("line 5")), "{rows:#?}");
    assert!(
        !rows.iter().any(|row| row.contains("more line")),
        "{rows:#?}"
    );
}

#[test]
fn a_turn_ends_with_its_diff_stat_its_usage_and_a_rule() {
    let rows = screen(
        50,
        &[ConsoleRecord::TurnEnded {
            turn: 2,
            outcome: "completed".into(),
            usage: Some(TokenUsage {
                input_tokens: 1200,
                cached_input_tokens: 400,
                output_tokens: 80,
                reasoning_output_tokens: 16,
                cost_micro_usd: Some(12_300),
            }),
            files: vec![
                FileStat {
                    path: "src/lib.rs".into(),
                    added: Some(10),
                    removed: Some(3),
                },
                FileStat {
                    path: "logo.png".into(),
                    added: None,
                    removed: None,
                },
            ],
        }],
    );
    assert_eq!(rows[0], "  files │ 2 files changed, +10 -3");
    assert_eq!(rows[1], "        │ src/lib.rs  +10 -3");
    assert_eq!(rows[2], "        │ logo.png  binary");
    assert_eq!(
        rows[3],
        "  usage │ 1200 in (400 cached) · 80 out (16 reasoning) · $0.0123"
            .chars()
            .take(50)
            .collect::<String>()
    );
    let rule = rows
        .iter()
        .find(|row| row.starts_with("── turn 2 completed ─"))
        .unwrap();
    assert_eq!(rule.chars().count(), 50, "{rule}");
}

#[test]
fn a_follow_up_turn_starts_with_a_rule_and_the_text_sent() {
    let rows = screen(
        40,
        &[ConsoleRecord::TurnStarted {
            turn: 3,
            text: Some("and now the tests".into()),
        }],
    );
    assert!(rows[0].starts_with("── turn 3 ──"), "{rows:#?}");
    assert_eq!(rows[1], "    you │ and now the tests");
}

#[test]
fn a_waiting_approval_says_where_to_answer_it() {
    let rows = screen(
        80,
        &[ConsoleRecord::Waiting {
            attention_id: "attention-1".into(),
            summary: "run `rm -rf target`".into(),
        }],
    );
    assert_eq!(rows[0], "waiting │ waiting for you: run `rm -rf target`");
    assert_eq!(
        rows[1],
        "        │ answer it in `nagi cockpit` (attention attention-1)"
    );
}
