//! The attention queue: every unresolved item of every mission, with its risk and what
//! it asks (the question, or the requested action).

use nagi_schema::attention::{AttentionItemV1, AttentionKindV1, AttentionRiskV1, AttentionStateV1};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, List, ListItem, ListState};

use crate::state::{App, Focus};

pub fn risk_style(risk: AttentionRiskV1) -> Style {
    match risk {
        AttentionRiskV1::Low => Style::new().fg(Color::Green),
        AttentionRiskV1::Medium => Style::new().fg(Color::Yellow),
        AttentionRiskV1::High => Style::new().fg(Color::Red),
        AttentionRiskV1::Critical => Style::new().fg(Color::Red).bold().reversed(),
    }
}

pub fn risk_name(risk: AttentionRiskV1) -> &'static str {
    match risk {
        AttentionRiskV1::Low => "low",
        AttentionRiskV1::Medium => "medium",
        AttentionRiskV1::High => "high",
        AttentionRiskV1::Critical => "critical",
    }
}

pub fn kind_name(kind: AttentionKindV1) -> &'static str {
    match kind {
        AttentionKindV1::PermissionRequest => "approval",
        AttentionKindV1::ProviderQuestion => "question",
        AttentionKindV1::CommandFailed => "command failed",
        AttentionKindV1::WorktreeConflict => "worktree conflict",
        AttentionKindV1::TurnComplete => "turn complete",
        AttentionKindV1::Disconnected => "disconnected",
        AttentionKindV1::SecurityWarning => "security warning",
        AttentionKindV1::ManualVerification => "manual verification",
    }
}

/// What the item asks, in one line: the first question's prompt, or the action.
pub fn what_it_asks(item: &AttentionItemV1) -> String {
    match item.questions.first() {
        Some(question) if item.questions.len() > 1 => {
            format!("{} (+{} more)", question.prompt, item.questions.len() - 1)
        }
        Some(question) => question.prompt.clone(),
        None => item.requested_action.clone(),
    }
}

fn state_note(state: &AttentionStateV1) -> Option<&'static str> {
    match state {
        AttentionStateV1::PendingResponse { .. } => Some(" (answer on its way)"),
        AttentionStateV1::ReconciliationRequired { .. } => {
            Some(" (delivery unknown: dismiss or re-check)")
        }
        _ => None,
    }
}

pub fn draw_queue(frame: &mut Frame, app: &App, area: Rect) {
    let focused = app.focus == Focus::Attention && app.watching.is_none();
    let title = format!(" Attention ({}) ", app.attention.len());
    let block = if focused {
        Block::bordered()
            .title(title)
            .border_style(Style::new().fg(Color::Yellow))
    } else {
        Block::bordered().title(title)
    };
    let items: Vec<ListItem> = app
        .attention
        .iter()
        .map(|item| {
            let mut lines = vec![Line::from(vec![
                Span::styled(format!("[{}]", risk_name(item.risk)), risk_style(item.risk)),
                Span::raw(format!(
                    " {} · {} · {}",
                    item.mission_id,
                    kind_name(item.kind),
                    item.provider.as_str()
                )),
                // In a fleet: the host whose store and panes the item's ids belong to.
                Span::raw(
                    item.host
                        .as_ref()
                        .map(|host| format!(" · on host {host}"))
                        .unwrap_or_default(),
                ),
                Span::raw(state_note(&item.state).unwrap_or("")),
            ])];
            lines.push(Line::raw(format!("   {}", what_it_asks(item))));
            ListItem::new(lines)
        })
        .collect();
    let empty = items.is_empty();
    let list = List::new(items)
        .block(block)
        .highlight_symbol("› ")
        .highlight_style(Style::new().reversed());
    let mut state = ListState::default().with_selected(app.selected_attention_index());
    frame.render_stateful_widget(list, area, &mut state);
    if empty {
        let inner = Rect {
            x: area.x + 2,
            y: area.y + 1,
            width: area.width.saturating_sub(4),
            height: 1,
        };
        frame.render_widget(Span::raw("nothing waits for you"), inner);
    }
}
