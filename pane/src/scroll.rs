//! The view of a pane's history: where a `session_scroll` moves it, and how it is drawn.
//!
//! The server keeps one view per pane (its offset lives in the pane's session state,
//! `attach::SessionState`): `offset` rows above the bottom of the live screen, 0 being the
//! live screen itself. The attach controller moves it a page at a time; every attached
//! screen is sent a keyframe that draws it. While output arrives the view stays on the
//! same rows, so a person reading the history is not pulled away from it; typing returns
//! it to the live screen, as terminals and tmux do.
//!
//! Why the view is drawn here rather than with vt100's `set_scrollback`: a pane's vt100
//! parser keeps no scrollback of its own (its rows go to the compact `Scrollback`, see
//! `screen`). So the view is composed from those rows and the live screen, on a small
//! vt100 parser of the screen's size whose redraw is what the members receive: its
//! `contents_formatted` gets wide characters, colours and blank cells right, which a
//! drawing of our own would have to do all over again.

use std::io::Write as _;
use std::num::NonZeroU16;

use nagi_schema::session_protocol::SessionScrollStep;

use super::screen::Terminal;

/// How far one page moves the view: the screen's rows less one, so that one row of the
/// previous view stays in sight and the reader keeps their place.
pub fn page_rows(rows: u16) -> usize {
    usize::from(rows).saturating_sub(1).max(1)
}

/// The offset a step leads to from `current`, at most `limit` (the rows the history holds).
pub fn stepped_offset(step: SessionScrollStep, current: usize, limit: usize, rows: u16) -> usize {
    match step {
        SessionScrollStep::PageUp => current.saturating_add(page_rows(rows)).min(limit),
        SessionScrollStep::PageDown => current.saturating_sub(page_rows(rows)),
        SessionScrollStep::Bottom => 0,
    }
}

/// The offset that keeps a view on the rows it showed after output pushed `pushed` rows
/// into the history, as far as the history still holds them (`limit`). A view on the
/// live screen stays there.
pub fn anchored_offset(current: usize, pushed: u64, limit: usize) -> usize {
    if current == 0 {
        return 0;
    }
    let pushed = usize::try_from(pushed).unwrap_or(usize::MAX);
    current.saturating_add(pushed).min(limit)
}

/// The label in the view's top right corner: how far up the view is, of how far it can go.
fn position_label(offset: usize, limit: usize) -> String {
    format!("[{offset}/{limit}]")
}

/// Escape sequences that draw the view `offset` rows above the live screen's bottom
/// (clamped to the history), with its position label in the top right corner and the
/// cursor hidden: what a member's screen shows while the view is in the history.
pub fn draw_view(terminal: &Terminal, offset: usize) -> Vec<u8> {
    let (rows, cols) = terminal.size();
    let limit = terminal.scroll_limit();
    let offset = offset.min(limit);
    let screen_rows = usize::from(rows);
    let non_zero = |value: u16| NonZeroU16::new(value.max(1)).expect("at least 1");
    let mut canvas = vt100::Parser::new(non_zero(rows), non_zero(cols), 0);
    if offset < screen_rows {
        // The top of the live screen, lowered by `offset` rows (CSI T scrolls the canvas
        // down, dropping the live screen's bottom rows).
        canvas.process(&terminal.keyframe());
        canvas.process(format!("\x1b[{offset}T").as_bytes());
    }
    // The history rows above it, from the top of the view. Each stored row starts from
    // default attributes; positioning every row keeps a short row from wrapping into the
    // next.
    let history_rows = offset.min(screen_rows);
    let first = terminal.scrollback_len() - offset;
    let mut drawing = Vec::new();
    for (index, row) in terminal
        .stored_scrollback_rows(first)
        .take(history_rows)
        .enumerate()
    {
        let _ = write!(drawing, "\x1b[{};1H\x1b[m\x1b[2K", index + 1);
        drawing.extend_from_slice(row.formatted.as_bytes());
    }
    let label = position_label(offset, limit);
    let label_width = label.chars().count();
    if label_width <= usize::from(cols) {
        let column = usize::from(cols) - label_width + 1;
        let _ = write!(drawing, "\x1b[1;{column}H\x1b[0;7m{label}");
    }
    drawing.extend_from_slice(b"\x1b[m\x1b[?25l");
    canvas.process(&drawing);
    canvas.screen().contents_formatted().into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_keep_one_row_in_sight_and_stop_at_both_ends() {
        use SessionScrollStep::*;
        assert_eq!(stepped_offset(PageUp, 0, 100, 24), 23);
        assert_eq!(
            stepped_offset(PageUp, 90, 100, 24),
            100,
            "the top of the history"
        );
        assert_eq!(stepped_offset(PageUp, 0, 0, 24), 0, "no history: no move");
        assert_eq!(stepped_offset(PageDown, 30, 100, 24), 7);
        assert_eq!(stepped_offset(PageDown, 7, 100, 24), 0, "the live screen");
        assert_eq!(stepped_offset(Bottom, 77, 100, 24), 0);
        assert_eq!(page_rows(1), 1, "a one-row screen still moves");
    }

    #[test]
    fn output_keeps_the_view_on_its_rows_until_the_history_lets_them_go() {
        assert_eq!(anchored_offset(23, 5, 1_000), 28);
        assert_eq!(
            anchored_offset(990, 50, 1_000),
            1_000,
            "the oldest rows left the history"
        );
        assert_eq!(anchored_offset(0, 50, 1_000), 0, "a live view stays live");
    }

    fn screen_lines(drawing: &[u8], rows: u16, cols: u16) -> Vec<String> {
        let mut mirror = vt100::Parser::new(
            NonZeroU16::new(rows).unwrap(),
            NonZeroU16::new(cols).unwrap(),
            0,
        );
        mirror.process(drawing);
        assert!(mirror.screen().hide_cursor(), "the view hides the cursor");
        mirror
            .screen()
            .rows(0, cols)
            .map(|row| row.trim_end().to_string())
            .collect()
    }

    #[test]
    fn a_view_shows_history_rows_above_the_top_of_the_live_screen() {
        let mut terminal = Terminal::new(4, 30, 100);
        for index in 1..=10 {
            terminal.process(format!("line {index}\r\n").as_bytes());
        }
        terminal.process(b"prompt");
        // The live screen shows lines 8, 9, 10 and the prompt; lines 1–7 are history.
        assert_eq!(terminal.scrollback_len(), 7);
        let lines = screen_lines(&draw_view(&terminal, 2), 4, 30);
        assert_eq!(lines[0], format!("line 6{}[2/7]", " ".repeat(30 - 6 - 5)));
        assert_eq!(lines[1..], ["line 7", "line 8", "line 9"]);
        let top = screen_lines(&draw_view(&terminal, 7), 4, 30);
        assert!(top[0].starts_with("line 1 "), "{top:?}");
        assert!(top[0].ends_with("[7/7]"), "{top:?}");
        assert_eq!(top[1..], ["line 2", "line 3", "line 4"]);
    }

    #[test]
    fn colours_and_wide_characters_of_history_rows_survive_the_view() {
        let mut terminal = Terminal::new(3, 20, 100);
        terminal.process("\x1b[32mgreen ✓\x1b[m 日本\r\nplain\r\nnext\r\nlast".as_bytes());
        assert_eq!(terminal.scrollback_len(), 1);
        let drawing = draw_view(&terminal, 1);
        let mut mirror =
            vt100::Parser::new(NonZeroU16::new(3).unwrap(), NonZeroU16::new(20).unwrap(), 0);
        mirror.process(&drawing);
        let screen = mirror.screen();
        assert_eq!(screen.cell(0, 0).unwrap().fgcolor(), vt100::Color::Idx(2));
        assert_eq!(screen.cell(0, 8).unwrap().fgcolor(), vt100::Color::Default);
        let top = screen.rows(0, 20).next().unwrap();
        assert!(top.starts_with("green ✓ 日本"), "{top:?}");
        assert!(top.ends_with("[1/1]"), "{top:?}");
        assert!(screen.cell(0, 8).unwrap().is_wide());
    }
}
