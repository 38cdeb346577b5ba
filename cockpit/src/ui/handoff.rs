//! The handoff popup: target and write scope, then the artifact the continuation would
//! start from (changed paths, checks, warnings, its digest).

use nagi_schema::handoff::MissionHandoffArtifactV1;
use nagi_schema::mission::MissionProvider;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;

use super::wire_name;
use super::{checkbox, field_line, fit_height, form_row, paragraph, popup};
use crate::state::handoff::{HandoffField, HandoffForm};

pub fn key_hints(form: &HandoffForm) -> Vec<(&'static str, &'static str)> {
    let enter = if form.artifact.is_some() {
        "preview consent to start"
    } else {
        "preview the artifact"
    };
    vec![
        ("↑↓", "field"),
        ("←→ Space", "change"),
        ("Enter", enter),
        ("PgUp PgDn", "scroll"),
        ("Esc", "back"),
    ]
}

pub fn artifact_lines(artifact: &MissionHandoffArtifactV1) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::styled("Handoff artifact", Style::new().bold().underlined()),
        field_line(
            "from",
            format!(
                "run {} ({}) → {} as run {}",
                artifact.source_run_id,
                artifact.source_provider.as_str(),
                artifact.target_provider.as_str(),
                artifact.suggested_run_id
            ),
        ),
        field_line(
            "worktree",
            format!("{} @ {}", artifact.worktree_path, artifact.head_revision),
        ),
        field_line("objective", artifact.objective.clone()),
        field_line(
            "diff",
            format!(
                "{} ({})",
                artifact.diff.stat,
                if artifact.diff.dirty {
                    "uncommitted changes"
                } else {
                    "clean"
                }
            ),
        ),
    ];
    if artifact.diff.changed_paths.is_empty() {
        lines.push(Line::raw("  no changed paths"));
    }
    for path in &artifact.diff.changed_paths {
        lines.push(Line::raw(format!("  changed {path}")));
    }
    for check in &artifact.checks {
        lines.push(Line::raw(format!(
            "  check {} {}",
            check.check_id,
            wire_name(&check.status)
        )));
    }
    for decision in &artifact.decisions {
        lines.push(Line::raw(format!(
            "  decision {} {} by {}",
            decision.attention_id,
            wire_name(&decision.decision),
            decision.actor_id
        )));
    }
    for warning in &artifact.warnings {
        lines.push(Line::raw(format!("  warning: {warning}")));
    }
    lines.push(field_line(
        "artifact sha256",
        artifact.artifact_sha256.clone(),
    ));
    lines
}

pub fn form_lines(form: &HandoffForm) -> Vec<Line<'static>> {
    let write = if form.to == MissionProvider::Acp {
        "[x] always, for an ACP agent".to_string()
    } else {
        format!(
            "{} the new provider may write in the worktree",
            checkbox(form.write_scope)
        )
    };
    let mut lines = vec![
        Line::raw(format!(
            "Continue {} with another provider.",
            form.mission_id
        )),
        Line::raw(""),
        form_row(
            form.field == HandoffField::Target,
            "target provider",
            format!("‹ {} ›", form.to.as_str()),
        ),
        form_row(form.field == HandoffField::WriteScope, "write scope", write),
        Line::raw(""),
    ];
    match &form.artifact {
        Some(artifact) => lines.extend(artifact_lines(artifact)),
        None if form.waiting => lines.push(Line::raw("asking the server for the artifact…")),
        None => lines.push(Line::raw(
            "Enter previews the artifact the continuation would start from.",
        )),
    }
    lines
}

pub fn draw(frame: &mut Frame, form: &HandoffForm, area: Rect) {
    let lines = form_lines(form);
    let inner = popup(frame, area, 120, fit_height(lines.len(), 2, 40), "Handoff");
    paragraph(frame, lines, inner, form.scroll);
}
