//! The start, manual-evidence, dismiss and close popups.

use nagi_schema::mission::MissionProvider;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;

use super::{checkbox, form_row, paragraph, popup};
use crate::state::forms::{
    CloseConfirm, DismissForm, EVIDENCE_FIELDS, EvidenceField, EvidenceForm, START_FIELDS,
    StartField, StartForm,
};

pub fn start_lines(form: &StartForm) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::raw(format!(
            "Start a run of {} in a managed pane.",
            form.mission_id
        )),
        Line::raw(""),
    ];
    for (index, field) in START_FIELDS.iter().enumerate() {
        let focused = index == form.field;
        let line = match field {
            StartField::Provider => form_row(
                focused,
                "provider",
                format!("‹ {} ›", form.provider.as_str()),
            ),
            StartField::RunId => form_row(focused, "run id", format!("{}▏", form.run_id.text)),
            StartField::WorktreePath => {
                let shown = if form.worktree_path.text.is_empty() && form.in_place {
                    "(the repository's checkout)".to_string()
                } else if form.worktree_path.text.is_empty() {
                    "(the mission's own worktree, branch mission/<id>)".to_string()
                } else {
                    form.worktree_path.text.clone()
                };
                form_row(focused, "worktree", format!("{shown}▏"))
            }
            StartField::InPlace => form_row(
                focused,
                "in place",
                format!(
                    "{} run in the repository's checkout, not the mission's worktree",
                    checkbox(form.in_place)
                ),
            ),
            StartField::WriteScope if form.provider == MissionProvider::Acp => form_row(
                focused,
                "write scope",
                "[x] always, for an ACP agent".into(),
            ),
            StartField::WriteScope => form_row(
                focused,
                "write scope",
                format!(
                    "{} the provider may write in the worktree",
                    checkbox(form.write_scope)
                ),
            ),
            StartField::ProjectRecipe => form_row(
                focused,
                "project recipe",
                format!(
                    "{} run .nagi/project.toml setup and services",
                    checkbox(form.execute_project_recipe)
                ),
            ),
            StartField::DeclaredChecks => form_row(
                focused,
                "declared checks",
                format!(
                    "{} run the mission's command checks after the turn",
                    checkbox(form.execute_declared_checks)
                ),
            ),
        };
        lines.push(line);
    }
    lines.push(Line::raw(""));
    lines.push(Line::raw(
        "Enter asks the server for a preview of exactly what this start authorises.",
    ));
    lines
}

pub fn draw_start(frame: &mut Frame, form: &StartForm, area: Rect) {
    let inner = popup(frame, area, 100, 16, "Start a run");
    paragraph(frame, start_lines(form), inner, 0);
}

pub fn evidence_lines(form: &EvidenceForm) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::raw(format!(
            "Record manual evidence for {} as a listed reviewer.",
            form.mission_id
        )),
        Line::raw(""),
    ];
    for (index, field) in EVIDENCE_FIELDS.iter().enumerate() {
        let focused = index == form.field;
        lines.push(match field {
            EvidenceField::Check => form_row(
                focused,
                "check",
                format!("‹ {} ›", form.check_ids[form.check]),
            ),
            EvidenceField::Reviewer => {
                form_row(focused, "reviewer", format!("{}▏", form.reviewer.text))
            }
            EvidenceField::Reason => form_row(focused, "reason", format!("{}▏", form.reason.text)),
            EvidenceField::Override => form_row(
                focused,
                "override",
                format!(
                    "{} pass it even though it is not met (only where the check allows it)",
                    checkbox(form.is_override)
                ),
            ),
        });
    }
    lines.push(Line::raw(""));
    lines.push(Line::raw(
        "The server accepts only a reviewer the check lists; the preview says who.",
    ));
    lines
}

pub fn draw_evidence(frame: &mut Frame, form: &EvidenceForm, area: Rect) {
    let inner = popup(frame, area, 100, 14, "Manual evidence");
    paragraph(frame, evidence_lines(form), inner, 0);
}

pub fn draw_dismiss(frame: &mut Frame, form: &DismissForm, area: Rect) {
    let inner = popup(frame, area, 100, 10, "Dismiss an attention item");
    let lines = vec![
        Line::raw(form.about.clone()),
        Line::raw(""),
        form_row(true, "reason", format!("{}▏", form.reason.text)),
        Line::raw(""),
        Line::raw(
            "Enter asks the server for a preview; nothing is dismissed before you approve it.",
        ),
    ];
    paragraph(frame, lines, inner, 0);
}

pub fn draw_close(frame: &mut Frame, confirm: &CloseConfirm, area: Rect) {
    let inner = popup(frame, area, 90, 9, "Close the mission");
    let lines = vec![
        Line::styled(
            format!("Close {} — {}?", confirm.mission_id, confirm.title),
            Style::new().bold(),
        ),
        Line::raw(""),
        Line::raw("The server runs the declared command checks again, and archives the mission"),
        Line::raw("only if the proof still verifies. Services stop and cleanup runs."),
        Line::raw(""),
        Line::raw("y closes · n or Esc goes back"),
    ];
    paragraph(frame, lines, inner, 0);
}
