//! The help overlay (`?` or F1): every key of every screen, and what a consent is.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;

use super::{paragraph, popup};

pub const HELP: &[(&str, &[(&str, &str)])] = &[
    (
        "Main screen",
        &[
            ("↑ ↓ j k", "select a mission or an attention item"),
            (
                "Tab",
                "switch between the mission list and the attention queue",
            ),
            (
                "Enter",
                "answer the selected attention item (from a mission: jump to its first item)",
            ),
            (
                "s",
                "start a run: provider (ACP too), write scope, project recipe, declared checks",
            ),
            (
                "e",
                "record manual evidence for a manual check, as a listed reviewer",
            ),
            ("h", "preview a handoff to another provider, then start it"),
            ("c", "close the mission (re-verifies, then archives)"),
            (
                "v",
                "verify now: run the declared checks again (also lifts a block once the run is over)",
            ),
            (
                "d",
                "the mission's diff against its base: files, then coloured hunks (scroll; Esc back)",
            ),
            (
                "w / Esc",
                "watch the run's pane live in the right panel / stop watching",
            ),
            ("x", "dismiss the selected attention item with a reason"),
            (
                "r",
                "refresh now (the cockpit also follows the server's events)",
            ),
            ("q / Ctrl-C", "quit"),
        ],
    ),
    (
        "Forms",
        &[
            ("↑ ↓ Tab", "move between fields"),
            ("← → Space", "change a choice or toggle a box"),
            (
                "typing",
                "edits the text field under the cursor (Ctrl-U clears it)",
            ),
            ("Enter", "ask the server for the consent preview"),
            ("Esc", "back, nothing sent"),
        ],
    ),
    (
        "Answering",
        &[
            ("↑ ↓ Space", "move to an option and choose it"),
            ("typing", "on the 'other' row: a free-text answer"),
            ("Tab", "next question"),
            (
                "o / s / d",
                "approve once / approve for the session / deny an approval request",
            ),
        ],
    ),
    (
        "Consent dialog",
        &[
            (
                "y",
                "approve exactly what is shown (its digest goes to the server)",
            ),
            ("n", "deny: the refusal is recorded and nothing happens"),
            ("↑ ↓ PgUp PgDn", "scroll the preview"),
            ("Esc", "back without deciding"),
        ],
    ),
];

pub fn help_lines() -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::raw(
            "The cockpit holds no authority: the server previews every consent and names it with a digest;",
        ),
        Line::raw(
            "you read it, and only your y sends the decision. If what it covers changed, the server refuses it",
        ),
        Line::raw("as stale and the cockpit shows the new preview."),
        Line::raw(""),
    ];
    for (section, keys) in HELP {
        lines.push(Line::styled(
            (*section).to_string(),
            Style::new().bold().underlined(),
        ));
        for (key, text) in *keys {
            lines.push(Line::raw(format!("  {key:<16} {text}")));
        }
        lines.push(Line::raw(""));
    }
    lines.push(Line::raw("Any key closes this help."));
    lines
}

pub fn draw(frame: &mut Frame, area: Rect) {
    let inner = popup(frame, area, 110, 44, "Help");
    paragraph(frame, help_lines(), inner, 0);
}
