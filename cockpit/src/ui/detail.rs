//! The selected mission in full: status and what it waits for, criteria, checks,
//! evidence, the run (provider, pane, enforcement, worktree) and earlier runs.

use nagi_schema::mission::{MissionEvidenceSummaryV1, MissionRunViewV1, MissionViewV1};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Block;

use super::missions::status_color;
use super::wire_name;
use super::{field_line, paragraph, spinner_frame};
use crate::state::App;

fn section(title: &str) -> Line<'static> {
    Line::from(Span::styled(
        title.to_string(),
        Style::new().bold().underlined(),
    ))
}

fn short(revision: &str) -> String {
    revision.chars().take(12).collect()
}

fn evidence_line(evidence: &MissionEvidenceSummaryV1) -> Line<'static> {
    let mut text = format!(
        "  {:<18} {} {}",
        evidence.check_id,
        wire_name(&evidence.kind),
        wire_name(&evidence.assessment)
    );
    if let Some(code) = evidence.exit_code {
        text.push_str(&format!("  exit {code}"));
    }
    if let Some(millis) = evidence.duration_millis {
        text.push_str(&format!("  {:.1}s", millis as f64 / 1000.0));
    }
    if let Some(reviewer) = &evidence.reviewer {
        text.push_str(&format!("  reviewer {reviewer}"));
    }
    if evidence.manual_override == Some(true) {
        text.push_str("  (override)");
    }
    if let Some(detail) = &evidence.detail {
        text.push_str(&format!("  — {detail}"));
    }
    Line::raw(text)
}

fn run_lines(run: &MissionRunViewV1, lines: &mut Vec<Line<'static>>) {
    let live = match run.live {
        Some(true) => "live",
        Some(false) => "ended",
        None => "?",
    };
    lines.push(Line::raw(format!(
        "  {} · {} · {} · {live}",
        run.run_id,
        run.provider.as_str(),
        wire_name(&run.mode)
    )));
    lines.push(Line::raw(format!(
        "  pane {} · {}",
        run.pane_id.as_deref().unwrap_or("none"),
        run.enforcement.as_deref().unwrap_or("enforcement unknown")
    )));
    lines.push(Line::raw(format!(
        "  worktree {} @ {}",
        run.worktree_path,
        short(&run.base_revision)
    )));
    let mut consents = Vec::new();
    if run.execute_declared_checks {
        consents.push("declared checks");
    }
    if run.execute_project_recipe {
        consents.push("project recipe");
    }
    if !consents.is_empty() {
        lines.push(Line::raw(format!("  runs {}", consents.join(" and "))));
    }
    if let Some(source) = &run.handoff_from_run_id {
        lines.push(Line::raw(format!("  continues run {source}")));
    }
}

pub fn mission_lines(app: &App, mission: &MissionViewV1) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled(mission.mission_id.clone(), Style::new().bold()),
        Span::raw(format!(" — {}", mission.title)),
    ])];
    let mut status = vec![
        Span::raw("status: "),
        Span::styled(
            mission.status.as_str().to_string(),
            Style::new().fg(status_color(mission.status)).bold(),
        ),
    ];
    if let Some(reason) = &mission.status_reason {
        status.push(Span::raw(format!(" — {reason}")));
    }
    lines.push(Line::from(status));
    if let Some(busy) = app.busy_with(mission) {
        lines.push(Line::styled(
            format!("{} {busy}", spinner_frame(app)),
            Style::new().fg(Color::Cyan),
        ));
    }
    lines.push(field_line("repository", mission.repository_path.clone()));
    lines.push(field_line("objective", mission.objective.clone()));
    lines.push(field_line(
        "open attention",
        mission.unresolved_attention_count.to_string(),
    ));
    lines.push(section("Criteria"));
    for criterion in &mission.criteria {
        let id: String = criterion
            .criterion_id
            .clone()
            .unwrap_or_default()
            .chars()
            .take(8)
            .collect();
        lines.push(Line::raw(format!(
            "  {id:<8} [{}] {}",
            wire_name(&criterion.coverage),
            criterion.description
        )));
    }
    lines.push(section("Checks"));
    if mission.checks.is_empty() {
        lines.push(Line::raw("  no closure plan yet"));
    }
    for check in &mission.checks {
        let required = if check.required {
            "required"
        } else {
            "optional"
        };
        lines.push(Line::raw(format!(
            "  {:<18} {} {required}  {}",
            check.check_id,
            wire_name(&check.kind),
            wire_name(&check.status)
        )));
    }
    lines.push(section("Evidence"));
    if mission.evidence.is_empty() {
        lines.push(Line::raw("  none recorded"));
    }
    lines.extend(mission.evidence.iter().map(evidence_line));
    lines.push(section("Run"));
    match &mission.run {
        Some(run) => run_lines(run, &mut lines),
        None => lines.push(Line::raw("  not started (s starts a run)")),
    }
    for earlier in &mission.run_history {
        lines.push(Line::raw(format!(
            "  earlier: {} · {}",
            earlier.run_id,
            earlier.provider.as_str()
        )));
    }
    lines
}

pub fn draw(frame: &mut Frame, app: &App, area: Rect) {
    let block = Block::bordered().title(" Mission ");
    let inner = block.inner(area);
    frame.render_widget(block, area);
    match app.selected_mission() {
        Some(mission) => paragraph(frame, mission_lines(app, mission), inner, 0),
        None => paragraph(frame, vec![Line::raw("select a mission")], inner, 0),
    }
}
