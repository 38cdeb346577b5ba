//! Drawing the state: the main screen (missions, their detail or a watched pane, the
//! attention queue), one popup per form or dialog, and the help overlay. Every screen
//! names its keys in the key bar at the bottom.

mod answer;
mod attention;
mod consent;
mod detail;
mod diff;
mod forms;
mod handoff;
mod help;
mod missions;
pub mod pane;

#[cfg(test)]
mod tests;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};

use crate::state::{App, Connection, ConsentPermission, Screen};

/// Braille spinner frames for long operations.
const SPINNER: [&str; 8] = ["⣾", "⣽", "⣻", "⢿", "⡿", "⣟", "⣯", "⣷"];

/// A wire enum as the CLI and the JSON show it (`manual_missing`, not `ManualMissing`):
/// one vocabulary in everything a person reads.
pub(crate) fn wire_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        Ok(other) => other.to_string(),
        Err(_) => "?".to_string(),
    }
}

pub fn spinner_frame(app: &App) -> &'static str {
    SPINNER[(app.spinner / 2) % SPINNER.len()]
}

/// Draws the whole cockpit. `pane` is the watched pane's mirrored screen, if any.
pub fn draw(frame: &mut Frame, app: &App, pane: Option<&vt100::Screen>) {
    let [header, body, notice, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(5),
        Constraint::Length(1),
        Constraint::Length(2),
    ])
    .areas(frame.area());
    draw_header(frame, app, header);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(38), Constraint::Percentage(62)]).areas(body);
    let [mission_area, attention_area] =
        Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(left);
    missions::draw_list(frame, app, mission_area);
    attention::draw_queue(frame, app, attention_area);
    match (&app.watching, pane) {
        (Some(watching), screen) => pane::draw_watch(frame, watching, screen, right),
        (None, _) => detail::draw(frame, app, right),
    }
    draw_notice(frame, app, notice);
    draw_keys(frame, key_hints(app), keys);
    match &app.screen {
        Screen::Main => {}
        Screen::Start(form) => forms::draw_start(frame, form, frame.area()),
        Screen::Evidence(form) => forms::draw_evidence(frame, form, frame.area()),
        Screen::Dismiss(form) => forms::draw_dismiss(frame, form, frame.area()),
        Screen::Close(confirm) => forms::draw_close(frame, confirm, frame.area()),
        Screen::Answer(form) => answer::draw(frame, form, frame.area()),
        Screen::Handoff(form) => handoff::draw(frame, form, frame.area()),
        Screen::Consent(dialog) => consent::draw(frame, app, dialog, frame.area()),
        Screen::Diff(view) => diff::draw(frame, view, frame.area()),
    }
    if app.help_open {
        help::draw(frame, frame.area());
    }
}

fn draw_header(frame: &mut Frame, app: &App, area: Rect) {
    let mut spans = vec![
        Span::styled(" nagi cockpit ", Style::new().bold().reversed()),
        Span::raw("  "),
    ];
    spans.push(match &app.connection {
        Connection::Connecting => Span::raw("connecting…"),
        Connection::Connected => Span::styled("server connected", Style::new().fg(Color::Green)),
        Connection::Unreachable(message) => Span::styled(
            format!("server unreachable: {message}"),
            Style::new().fg(Color::Red),
        ),
    });
    spans.push(Span::raw("  "));
    spans.push(match &app.consent {
        ConsentPermission::Unknown => Span::raw(""),
        ConsentPermission::Allowed => {
            Span::styled("consent can be given here", Style::new().fg(Color::Green))
        }
        ConsentPermission::Refused(reason) => Span::styled(
            format!("this terminal cannot give consent: {reason}"),
            Style::new().fg(Color::Red).bold(),
        ),
    });
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_notice(frame: &mut Frame, app: &App, area: Rect) {
    let Some(notice) = &app.notice else { return };
    let style = if notice.is_error {
        Style::new().fg(Color::Red)
    } else {
        Style::new().fg(Color::Cyan)
    };
    frame.render_widget(
        Paragraph::new(Span::styled(notice.text.clone(), style)),
        area,
    );
}

/// The key bar: `key label` pairs.
fn draw_keys(frame: &mut Frame, hints: Vec<(&'static str, &'static str)>, area: Rect) {
    let mut spans = Vec::new();
    for (key, label) in hints {
        spans.push(Span::styled(format!(" {key} "), Style::new().reversed()));
        spans.push(Span::raw(format!(" {label}  ")));
    }
    frame.render_widget(
        Paragraph::new(Line::from(spans)).wrap(Wrap { trim: true }),
        area,
    );
}

/// The keys of the current screen, as the key bar shows them.
pub fn key_hints(app: &App) -> Vec<(&'static str, &'static str)> {
    if app.help_open {
        return vec![("any key", "close help")];
    }
    match &app.screen {
        Screen::Main => {
            let mut hints = vec![
                ("↑↓", "select"),
                ("Tab", "missions/attention"),
                ("Enter", "answer"),
            ];
            hints.extend([
                ("s", "start"),
                ("e", "evidence"),
                ("h", "handoff"),
                ("v", "verify"),
                ("d", "diff"),
                ("c", "close"),
                ("L", "land"),
                ("S", "sync"),
                ("w", "watch pane"),
            ]);
            hints.extend([
                ("x", "dismiss"),
                ("r", "refresh"),
                ("?", "help"),
                ("q", "quit"),
            ]);
            hints
        }
        Screen::Start(_) | Screen::Evidence(_) => {
            vec![
                ("↑↓", "field"),
                ("←→ Space", "change"),
                ("type", "edit"),
                ("Enter", "preview consent"),
                ("Esc", "back"),
            ]
        }
        Screen::Dismiss(_) => vec![
            ("type", "reason"),
            ("Enter", "preview consent"),
            ("Esc", "back"),
        ],
        Screen::Close(_) => vec![("y", "close the mission"), ("n Esc", "back")],
        Screen::Answer(form) => answer::key_hints(form),
        Screen::Handoff(form) => handoff::key_hints(form),
        Screen::Diff(_) => vec![
            ("↑↓ PgUp PgDn", "scroll"),
            ("Home End", "top, end"),
            ("Esc", "back"),
        ],
        Screen::Consent(_) => vec![
            ("y", "approve"),
            ("n", "deny"),
            ("↑↓ PgUp PgDn", "scroll"),
            ("Esc", "back, nothing decided"),
        ],
    }
}

/// A centred popup of at most `width` × `height`, cleared, with a titled border; returns
/// the inner area.
pub(crate) fn popup(frame: &mut Frame, area: Rect, width: u16, height: u16, title: &str) -> Rect {
    let width = width.min(area.width.saturating_sub(2)).max(10);
    let height = height.min(area.height.saturating_sub(2)).max(5);
    let rect = area.centered(Constraint::Length(width), Constraint::Length(height));
    frame.render_widget(Clear, rect);
    let block = Block::bordered().title(Span::styled(format!(" {title} "), Style::new().bold()));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    inner
}

/// A popup height that fits `lines` of content plus `chrome` rows, at most `max`.
pub(crate) fn fit_height(lines: usize, chrome: u16, max: u16) -> u16 {
    (lines.min(usize::from(max)) as u16)
        .saturating_add(chrome)
        .min(max)
}

/// Renders wrapped lines into an area, scrolled by `scroll` rows.
pub(crate) fn paragraph(frame: &mut Frame, lines: Vec<Line<'static>>, area: Rect, scroll: u16) {
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0)),
        area,
    );
}

/// A `label: value` line.
pub(crate) fn field_line(label: &str, value: impl Into<String>) -> Line<'static> {
    Line::from(vec![
        Span::styled(
            format!("{label}: "),
            Style::new().add_modifier(Modifier::BOLD),
        ),
        Span::raw(value.into()),
    ])
}

/// A form row: a cursor mark when focused, the label and the value.
pub(crate) fn form_row(focused: bool, label: &str, value: String) -> Line<'static> {
    let mark = if focused { "› " } else { "  " };
    let style = if focused {
        Style::new().fg(Color::Yellow).bold()
    } else {
        Style::new()
    };
    Line::from(vec![
        Span::styled(format!("{mark}{label:<22}"), style),
        Span::raw(value),
    ])
}

pub(crate) fn checkbox(on: bool) -> &'static str {
    if on { "[x]" } else { "[ ]" }
}
