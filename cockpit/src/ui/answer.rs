//! The answer form: the item's context, then its questions with their options and a
//! free-text row, or the approval choices.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use super::attention::{kind_name, risk_name, risk_style};
use super::{field_line, fit_height, paragraph, popup};
use crate::state::answer::{AnswerForm, AnswerMode};

pub fn key_hints(form: &AnswerForm) -> Vec<(&'static str, &'static str)> {
    match form.mode() {
        AnswerMode::Questions => vec![
            ("↑↓", "option"),
            ("Space", "choose"),
            ("type", "other answer"),
            ("Tab", "next question"),
            ("Enter", "preview consent"),
            ("Esc", "back"),
        ],
        AnswerMode::Approval => {
            vec![
                ("o Enter", "approve once"),
                ("s", "approve for the session"),
                ("d", "deny"),
                ("Esc", "back"),
            ]
        }
        AnswerMode::DismissOnly => vec![("Esc", "back")],
    }
}

pub fn form_lines(form: &AnswerForm) -> Vec<Line<'static>> {
    let item = &form.item;
    let mut lines = vec![
        Line::from(vec![
            Span::styled(
                format!("[{}] ", risk_name(item.risk)),
                risk_style(item.risk),
            ),
            Span::styled(kind_name(item.kind).to_string(), Style::new().bold()),
            Span::raw(format!(
                " from {} · mission {} · run {}",
                item.provider.as_str(),
                item.mission_id,
                item.run_id
            )),
        ]),
        field_line("requested", item.requested_action.clone()),
        field_line("scope", item.scope.clone()),
        field_line("pane", item.pane.pane_id.clone()),
    ];
    // In a fleet, the pane (and the item's ids) belong to the host that raised it.
    if let Some(host) = &item.host {
        lines.push(field_line("host", host.clone()));
    }
    lines.push(Line::raw(""));
    match form.mode() {
        AnswerMode::Approval => {
            lines.push(Line::raw("o / Enter  approve once"));
            lines.push(Line::raw("s          approve for the session"));
            lines.push(Line::raw("d          deny"));
        }
        AnswerMode::DismissOnly => lines.push(Line::raw(
            "No provider waits for an answer to this item; x on the queue dismisses it.",
        )),
        AnswerMode::Questions => {
            for (index, (question, input)) in item.questions.iter().zip(&form.inputs).enumerate() {
                let current = index == form.question;
                let style = if current {
                    Style::new().fg(Color::Yellow).bold()
                } else {
                    Style::new().bold()
                };
                let choice = if question.multiple {
                    "choose any"
                } else {
                    "choose one"
                };
                lines.push(Line::styled(
                    format!("{} — {} ({choice})", question.header, question.prompt),
                    style,
                ));
                for (option_index, option) in question.options.iter().enumerate() {
                    let chosen = input.chosen.contains(&option_index);
                    let mark = match (question.multiple, chosen) {
                        (true, true) => "[x]",
                        (true, false) => "[ ]",
                        (false, true) => "(•)",
                        (false, false) => "( )",
                    };
                    let cursor = if current && input.cursor == option_index {
                        "›"
                    } else {
                        " "
                    };
                    let mut text = format!("  {cursor} {mark} {}", option.label);
                    if !option.description.is_empty() {
                        text.push_str(&format!(" — {}", option.description));
                    }
                    lines.push(Line::raw(text));
                }
                if question.custom_allowed || question.options.is_empty() {
                    let cursor = if current && input.cursor >= question.options.len() {
                        "›"
                    } else {
                        " "
                    };
                    lines.push(Line::raw(format!(
                        "  {cursor} other: {}▏",
                        input.custom.text
                    )));
                }
                lines.push(Line::raw(""));
            }
        }
    }
    lines
}

pub fn draw(frame: &mut Frame, form: &AnswerForm, area: Rect) {
    let lines = form_lines(form);
    let inner = popup(
        frame,
        area,
        110,
        fit_height(lines.len(), 2, 40),
        "Answer the provider",
    );
    paragraph(frame, lines, inner, 0);
}
