//! The consent dialog: every line of the server's preview, the recipe's full scope
//! (setup, services with their ports and health checks, copied files, cleanup), and the
//! digest the decision will carry.

use nagi_schema::cockpit::{CockpitDecision, CockpitPreview, RecipeScopeView};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use super::attention::{risk_name, risk_style};
use super::{fit_height, paragraph, popup, spinner_frame};
use crate::state::consent::ConsentDialog;
use crate::state::{App, ConsentPermission};

fn argv(command: &[String]) -> String {
    command
        .iter()
        .map(|part| {
            if part.contains(' ') {
                format!("{part:?}")
            } else {
                part.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn recipe_lines(recipe: &RecipeScopeView) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(
        format!("Project recipe {}", recipe.path),
        Style::new().bold().underlined(),
    )];
    match &recipe.setup {
        Some(setup) => lines.push(Line::raw(format!("  setup runs: {}", argv(setup)))),
        None => lines.push(Line::raw("  no setup command")),
    }
    if recipe.services.is_empty() {
        lines.push(Line::raw("  no services"));
    }
    for service in &recipe.services {
        lines.push(Line::raw(format!(
            "  service {} starts: {}",
            service.id,
            argv(&service.command)
        )));
        lines.push(Line::raw(format!(
            "    port in ${}, healthy when {} answers",
            service.port_env, service.health
        )));
    }
    if recipe.copy_ignored.is_empty() {
        lines.push(Line::raw("  copies no ignored files"));
    }
    for path in &recipe.copy_ignored {
        lines.push(Line::raw(format!("  copies ignored file {path}")));
    }
    for command in &recipe.cleanup {
        lines.push(Line::raw(format!("  cleanup runs: {}", argv(command))));
    }
    lines.push(Line::raw(format!("  scope digest {}", recipe.scope_digest)));
    lines
}

pub fn preview_lines(preview: &CockpitPreview) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::from(vec![
            Span::styled(
                format!("[{}] ", risk_name(preview.risk)),
                risk_style(preview.risk),
            ),
            Span::styled(preview.title.clone(), Style::new().bold()),
        ]),
        Line::raw(""),
    ];
    lines.extend(
        preview
            .lines
            .iter()
            .map(|line| Line::raw(format!("• {line}"))),
    );
    if let Some(recipe) = &preview.recipe {
        lines.push(Line::raw(""));
        lines.extend(recipe_lines(recipe));
    }
    lines.push(Line::raw(""));
    lines.push(Line::from(vec![
        Span::styled("digest ", Style::new().bold()),
        Span::raw(preview.digest.clone()),
    ]));
    lines
}

pub fn draw(frame: &mut Frame, app: &App, dialog: &ConsentDialog, area: Rect) {
    let body_lines = dialog
        .preview
        .as_ref()
        .map_or(1, |preview| preview_lines(preview).len());
    let status = status_lines(app, dialog);
    // As wide as the terminal allows (a refusal's message is long), and the status area as
    // tall as its wrapped lines, so that nothing is cut off.
    let width = area.width.saturating_sub(4).clamp(40, 160);
    let text_width = usize::from(width.saturating_sub(2).max(1));
    let status_rows: u16 = status
        .iter()
        .map(|line| line.width().div_ceil(text_width).max(1) as u16)
        .sum::<u16>()
        .max(1);
    let status_rows = status_rows.min(area.height.saturating_sub(10).max(2));
    let inner = popup(
        frame,
        area,
        width,
        fit_height(
            body_lines,
            4 + status_rows,
            area.height.saturating_sub(2).max(10),
        ),
        "Consent — read what this authorises",
    );
    let [top, body, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(status_rows),
    ])
    .areas(inner);
    if let Some(note) = &dialog.note {
        frame.render_widget(
            Span::styled(note.clone(), Style::new().fg(Color::Yellow)),
            top,
        );
    }
    match &dialog.preview {
        Some(preview) => paragraph(frame, preview_lines(preview), body, dialog.scroll),
        None if dialog.error.is_none() => paragraph(
            frame,
            vec![Line::raw(format!(
                "{} asking the server what this covers…",
                spinner_frame(app)
            ))],
            body,
            0,
        ),
        None => {}
    }
    paragraph(frame, status, bottom, 0);
}

fn status_lines(app: &App, dialog: &ConsentDialog) -> Vec<Line<'static>> {
    let mut status = Vec::new();
    if let Some(error) = &dialog.error {
        status.push(Line::styled(error.clone(), Style::new().fg(Color::Red)));
    }
    if let ConsentPermission::Refused(reason) = &app.consent {
        status.push(Line::styled(
            format!("the server will refuse consent from this terminal: {reason}"),
            Style::new().fg(Color::Red),
        ));
    }
    match dialog.deciding {
        Some(CockpitDecision::Approve) => status.push(Line::raw(format!("{} approving…", spinner_frame(app)))),
        Some(CockpitDecision::Deny) => status.push(Line::raw(format!("{} denying…", spinner_frame(app)))),
        None if dialog.preview.is_some() => status.push(Line::styled(
            "y approves exactly this (the digest above) · n denies and records the refusal · Esc goes back",
            Style::new().bold(),
        )),
        None => {}
    }
    status
}
