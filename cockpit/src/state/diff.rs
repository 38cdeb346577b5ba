//! The diff view of the selected mission (`d`): the mission's change against its base, as
//! `mission.diff` returns it, one screen line per line of text, scrolled with the keys.

use nagi_schema::worktree::MissionDiffV1;
use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::forms::FormOutcome;

/// Lines scrolled by PgUp / PgDn.
pub const PAGE: usize = 20;

#[derive(Debug, Clone, PartialEq)]
pub struct DiffView {
    pub mission_id: String,
    /// `None` until the server answered.
    pub lines: Option<Vec<String>>,
    /// The first line shown.
    pub scroll: usize,
}

impl DiffView {
    pub fn new(mission_id: &str) -> DiffView {
        DiffView {
            mission_id: mission_id.to_string(),
            lines: None,
            scroll: 0,
        }
    }

    /// Fills the view with the server's answer.
    pub fn show(&mut self, diff: &MissionDiffV1) {
        self.lines = Some(diff_lines(diff));
        self.scroll = 0;
    }

    fn last_line(&self) -> usize {
        self.lines
            .as_ref()
            .map_or(0, |lines| lines.len().saturating_sub(1))
    }

    pub fn handle_key(&mut self, key: KeyEvent) -> FormOutcome {
        let last = self.last_line();
        self.scroll = match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('d') => return FormOutcome::Cancel,
            KeyCode::Up | KeyCode::Char('k') => self.scroll.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => (self.scroll + 1).min(last),
            KeyCode::PageUp => self.scroll.saturating_sub(PAGE),
            KeyCode::PageDown | KeyCode::Char(' ') => (self.scroll + PAGE).min(last),
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last,
            _ => self.scroll,
        };
        FormOutcome::Continue
    }
}

/// The text of the view: a summary, one line per file, then the hunks.
pub fn diff_lines(diff: &MissionDiffV1) -> Vec<String> {
    use nagi_schema::worktree::DiffFileStatus;
    let base = &diff.base_revision[..diff.base_revision.len().min(12)];
    let mut lines = vec![format!(
        "{} against {base}{}",
        diff.worktree_path,
        if diff.branch.is_empty() {
            String::new()
        } else {
            format!(" (branch {})", diff.branch)
        }
    )];
    if diff.files.is_empty() {
        lines.push("no changes".into());
        return lines;
    }
    lines.push(format!(
        "{} file{} changed, +{} -{}",
        diff.files.len(),
        if diff.files.len() == 1 { "" } else { "s" },
        diff.additions,
        diff.deletions
    ));
    for file in &diff.files {
        let status = match file.status {
            DiffFileStatus::Added => "A",
            DiffFileStatus::Modified => "M",
            DiffFileStatus::Deleted => "D",
            DiffFileStatus::TypeChanged => "T",
        };
        let counts = match (file.additions, file.deletions) {
            (Some(added), Some(deleted)) => format!("+{added} -{deleted}"),
            _ => "binary".into(),
        };
        let untracked = if file.untracked { "  (untracked)" } else { "" };
        lines.push(format!(" {status} {counts:<12} {}{untracked}", file.path));
    }
    lines.push(String::new());
    lines.extend(diff.patch.lines().map(str::to_string));
    if diff.omitted_patch_bytes > 0 {
        lines.push(format!(
            "[{} more bytes of hunks left out: nagi mission diff {} shows them all]",
            diff.omitted_patch_bytes, diff.mission_id
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use nagi_schema::worktree::{DiffFileStatus, MissionDiffFileV1};
    use ratatui::crossterm::event::KeyModifiers;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn sample() -> MissionDiffV1 {
        MissionDiffV1 {
            mission_id: "m1".into(),
            worktree_path: "/trees/repo/m1".into(),
            branch: "mission/m1".into(),
            base_revision: "a".repeat(40),
            files: vec![MissionDiffFileV1 {
                path: "README.md".into(),
                status: DiffFileStatus::Modified,
                additions: Some(1),
                deletions: Some(0),
                binary: false,
                untracked: false,
            }],
            additions: 1,
            deletions: 0,
            patch: (0..50).map(|line| format!("+line {line}\n")).collect(),
            omitted_patch_bytes: 0,
        }
    }

    #[test]
    fn the_view_lists_the_files_then_the_hunks_and_scrolls_within_them() {
        let mut view = DiffView::new("m1");
        view.show(&sample());
        let lines = view.lines.clone().unwrap();
        assert_eq!(lines[1], "1 file changed, +1 -0");
        assert_eq!(lines[2], " M +1 -0        README.md");
        assert_eq!(lines[4], "+line 0");
        view.handle_key(key(KeyCode::PageDown));
        assert_eq!(view.scroll, PAGE);
        view.handle_key(key(KeyCode::End));
        assert_eq!(view.scroll, lines.len() - 1);
        view.handle_key(key(KeyCode::Down));
        assert_eq!(view.scroll, lines.len() - 1, "never past the end");
        view.handle_key(key(KeyCode::Home));
        view.handle_key(key(KeyCode::Up));
        assert_eq!(view.scroll, 0);
        assert_eq!(view.handle_key(key(KeyCode::Esc)), FormOutcome::Cancel);
    }
}
