//! The diff view: the selected mission's change against its base, coloured as `git diff`
//! colours it, in a popup as large as the screen allows.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::popup;
use crate::state::diff::DiffView;

fn styled(line: &str) -> Line<'static> {
    let style = if line.starts_with("diff --git")
        || line.starts_with("+++")
        || line.starts_with("---")
        || line.starts_with("index ")
    {
        Style::default().add_modifier(Modifier::BOLD)
    } else if line.starts_with("@@") {
        Style::default().fg(Color::Cyan)
    } else if line.starts_with('+') {
        Style::default().fg(Color::Green)
    } else if line.starts_with('-') {
        Style::default().fg(Color::Red)
    } else {
        Style::default()
    };
    Line::from(Span::styled(line.to_string(), style))
}

pub fn draw(frame: &mut Frame, view: &DiffView, area: Rect) {
    let title = format!("Diff of {}", view.mission_id);
    let inner = popup(frame, area, area.width, area.height, &title);
    let lines: Vec<Line<'static>> = match &view.lines {
        None => vec![Line::from("asking the server for the diff…")],
        Some(lines) => lines
            .iter()
            .skip(view.scroll)
            .take(inner.height as usize)
            .map(|line| styled(line))
            .collect(),
    };
    frame.render_widget(Paragraph::new(lines), inner);
}
