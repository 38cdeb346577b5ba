//! The mission list: id, status (with a spinner while something long runs) and open
//! attention count.

use nagi_schema::mission::MissionStatus;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, List, ListItem, ListState};

use super::spinner_frame;
use crate::state::{App, Focus};

pub fn status_color(status: MissionStatus) -> Color {
    match status {
        MissionStatus::Draft => Color::Gray,
        MissionStatus::Preparing | MissionStatus::Active => Color::Cyan,
        MissionStatus::ReviewRequired => Color::Yellow,
        MissionStatus::ReadyToClose => Color::Green,
        MissionStatus::Blocked | MissionStatus::Failed => Color::Red,
        MissionStatus::Archived => Color::DarkGray,
    }
}

pub fn draw_list(frame: &mut Frame, app: &App, area: Rect) {
    let focused = app.focus == Focus::Missions && app.watching.is_none();
    let title = format!(" Missions ({}) ", app.missions.len());
    let block = if focused {
        Block::bordered()
            .title(title)
            .border_style(Style::new().fg(Color::Yellow))
    } else {
        Block::bordered().title(title)
    };
    let items: Vec<ListItem> = app
        .missions
        .iter()
        .map(|mission| {
            let mut spans = vec![
                Span::raw(format!("{:<16} ", mission.mission_id)),
                Span::styled(
                    mission.status.as_str().to_string(),
                    Style::new().fg(status_color(mission.status)),
                ),
            ];
            if app.busy_with(mission).is_some() {
                spans.push(Span::raw(format!(" {}", spinner_frame(app))));
            }
            if mission.unresolved_attention_count > 0 {
                spans.push(Span::styled(
                    format!("  ⚑ {}", mission.unresolved_attention_count),
                    Style::new().fg(Color::Magenta).bold(),
                ));
            }
            ListItem::new(Line::from(spans))
        })
        .collect();
    let empty = items.is_empty();
    let list = List::new(items)
        .block(block)
        .highlight_symbol("› ")
        .highlight_style(Style::new().reversed());
    let mut state = ListState::default().with_selected(app.selected_mission_index());
    frame.render_stateful_widget(list, area, &mut state);
    if empty {
        let inner = Rect {
            x: area.x + 2,
            y: area.y + 1,
            width: area.width.saturating_sub(4),
            height: 1,
        };
        frame.render_widget(Span::raw("no missions yet (nagi mission create)"), inner);
    }
}
