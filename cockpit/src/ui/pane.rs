//! A watched pane, live: the mirrored vt100 screen drawn cell by cell into a panel. When
//! the pane is larger than the panel, the rows around the cursor are shown (that is where
//! a transcript grows) and columns past the panel's width are cut.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Widget};

use crate::state::{WatchState, Watching};

fn color(color: vt100::Color) -> Color {
    match color {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(index) => Color::Indexed(index),
        vt100::Color::Rgb(red, green, blue) => Color::Rgb(red, green, blue),
    }
}

fn cell_style(cell: &vt100::Cell) -> Style {
    let mut style = Style::new()
        .fg(color(cell.fgcolor()))
        .bg(color(cell.bgcolor()));
    let mut modifiers = Modifier::empty();
    if cell.bold() {
        modifiers |= Modifier::BOLD;
    }
    if cell.dim() {
        modifiers |= Modifier::DIM;
    }
    if cell.italic() {
        modifiers |= Modifier::ITALIC;
    }
    if cell.underline() {
        modifiers |= Modifier::UNDERLINED;
    }
    if cell.inverse() {
        modifiers |= Modifier::REVERSED;
    }
    style.add_modifier = modifiers;
    style
}

/// The first pane row to show in `height` rows so that the cursor row is visible.
pub fn first_visible_row(pane_rows: u16, cursor_row: u16, height: u16) -> u16 {
    if pane_rows <= height {
        return 0;
    }
    let lowest_start = pane_rows - height;
    (cursor_row + 1).saturating_sub(height).min(lowest_start)
}

/// Draws a vt100 screen into an area.
pub struct PaneScreen<'a> {
    pub screen: &'a vt100::Screen,
}

impl Widget for PaneScreen<'_> {
    fn render(self, area: Rect, buffer: &mut Buffer) {
        let (rows, cols) = self.screen.size();
        let (cursor_row, _) = self.screen.cursor_position();
        let start = first_visible_row(rows.get(), cursor_row, area.height);
        for offset in 0..area.height.min(rows.get() - start) {
            let row = start + offset;
            for col in 0..area.width.min(cols.get()) {
                let Some(cell) = self.screen.cell(row, col) else {
                    continue;
                };
                if cell.is_wide_continuation() {
                    continue;
                }
                let symbol = if cell.has_contents() {
                    cell.contents()
                } else {
                    " "
                };
                if let Some(target) = buffer.cell_mut((area.x + col, area.y + offset)) {
                    target.set_symbol(symbol).set_style(cell_style(cell));
                }
            }
        }
    }
}

pub fn draw_watch(
    frame: &mut Frame,
    watching: &Watching,
    screen: Option<&vt100::Screen>,
    area: Rect,
) {
    let state = match &watching.state {
        WatchState::Joining => "joining…".to_string(),
        WatchState::Live => "live".to_string(),
        WatchState::Ended(reason) => reason.clone(),
    };
    let title = format!(
        " Pane {} of {} — {state} (w or Esc stops watching) ",
        watching.pane_id, watching.mission_id
    );
    let block = Block::bordered().title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    match screen {
        Some(screen) => frame.render_widget(PaneScreen { screen }, inner),
        None => frame.render_widget(
            Paragraph::new(Line::raw("waiting for the pane's first frame…")),
            inner,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_row_stays_visible_in_a_short_panel() {
        assert_eq!(first_visible_row(10, 3, 20), 0);
        assert_eq!(first_visible_row(40, 5, 10), 0);
        assert_eq!(first_visible_row(40, 30, 10), 21);
        assert_eq!(first_visible_row(40, 39, 10), 30);
    }

    #[test]
    fn cells_keep_their_text_and_colours() {
        let mut parser = vt100::Parser::new(5.try_into().unwrap(), 20.try_into().unwrap(), 0);
        parser.process(b"plain \x1b[31mred\x1b[0m\r\nsecond");
        let mut buffer = Buffer::empty(Rect::new(0, 0, 12, 3));
        PaneScreen {
            screen: parser.screen(),
        }
        .render(buffer.area, &mut buffer);
        let first: String = (0..12)
            .map(|x| buffer[(x, 0)].symbol().to_string())
            .collect();
        assert_eq!(first, "plain red   ");
        assert_eq!(buffer[(6, 0)].fg, Color::Indexed(1));
        let second: String = (0..6)
            .map(|x| buffer[(x, 1)].symbol().to_string())
            .collect();
        assert_eq!(second, "second");
    }
}
