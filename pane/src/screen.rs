//! A pane's terminal state: the vt100 screen, the compact scrollback it scrolls into, and
//! the reads (`visible`, `recent`, `recent_unwrapped`, text or ANSI).
//!
//! vt100 runs with a scrollback capacity of 0; rows that leave the top of the main screen
//! reach [`Capture::on_scroll`], which stores them in [`Scrollback`]. Rows scrolled off the
//! alternate screen are dropped, as terminals do. After a resize to a taller screen vt100
//! inserts blank rows at the top instead of pulling rows back from scrollback; the rows
//! stay readable through the `recent` sources.

use std::num::NonZeroU16;

use nagi_schema::pane::ReadSource;

use super::fast_forward::{
    MIN_MIDDLE_BYTES, StreamTracker, plan_skip, render_plain_rows, render_start,
};
use super::scrollback::{Scrollback, ScrollbackRow};

/// Longest terminal title kept, in characters.
const MAX_TITLE_CHARS: usize = 256;

/// The vt100 callbacks: stores scrolled-off rows and the window title.
pub struct Capture {
    pub scrollback: Scrollback,
    scratch: String,
    title: Option<String>,
    title_changed: bool,
}

/// A `fmt::Write` that records whether the first thing written is a newline, then stops.
/// Writing a row a second time with the same capture state tells whether the row was
/// soft-wrapped: vt100 starts the next row with `\n` exactly when it was not.
struct NewlineProbe {
    starts_with_newline: bool,
}

impl std::fmt::Write for NewlineProbe {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.starts_with_newline = text.starts_with('\n');
        Err(std::fmt::Error)
    }
}

impl vt100::Callbacks for Capture {
    fn on_scroll(&mut self, contents: vt100::capture::RowContents<'_>, alternate_screen: bool) {
        if alternate_screen {
            return;
        }
        self.scratch.clear();
        let mut state = vt100::capture::BasicFormattedCaptureState::new();
        let _ = contents.write_formatted_basic(&mut self.scratch, &mut state);
        let mut probe = NewlineProbe {
            starts_with_newline: false,
        };
        let _ = contents.write_formatted_basic(&mut probe, &mut state);
        self.scrollback
            .push(&self.scratch, !probe.starts_with_newline);
    }

    fn set_window_title(&mut self, _screen: &mut vt100::Screen, title: &[u8]) {
        let text: String = String::from_utf8_lossy(title)
            .chars()
            .filter(|character| !character.is_control())
            .collect();
        let text: String = text.trim().chars().take(MAX_TITLE_CHARS).collect();
        let title = (!text.is_empty()).then_some(text);
        if title != self.title {
            self.title = title;
            self.title_changed = true;
        }
    }
}

/// One line of a read, with a stable id: the absolute row number of its first row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadLine {
    pub id: u64,
    pub text: String,
}

/// The outcome of a read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadLines {
    pub lines: Vec<ReadLine>,
    /// More lines were available than asked for.
    pub truncated: bool,
}

impl ReadLines {
    pub fn text(&self, ansi: bool) -> String {
        let mut text = String::new();
        for (index, line) in self.lines.iter().enumerate() {
            if index > 0 {
                text.push('\n');
            }
            text.push_str(&line.text);
        }
        if ansi && text.contains('\x1b') {
            text.push_str("\x1b[m");
        }
        text
    }
}

struct Row {
    id: u64,
    text: String,
    wrapped: bool,
}

pub struct Terminal {
    parser: vt100::Parser<Capture>,
    tracker: StreamTracker,
    skipped_bytes: u64,
    min_middle_bytes: usize,
    /// `attributes_formatted()` of a screen with default attributes.
    default_attributes: String,
}

fn non_zero(value: u16) -> NonZeroU16 {
    NonZeroU16::new(value.max(1)).expect("at least 1")
}

fn plain_text(row: &ScrollbackRow<'_>) -> String {
    if row.has_escapes {
        vt100::capture::basic_formatted_to_plain(row.formatted).collect()
    } else {
        row.formatted.to_string()
    }
}

fn trim_unless_wrapped(mut text: String, wrapped: bool) -> String {
    if !wrapped {
        let trimmed = text.trim_end_matches(' ').len();
        text.truncate(trimmed);
    }
    text
}

impl Terminal {
    pub fn new(rows: u16, cols: u16, scrollback_rows: usize) -> Terminal {
        Terminal::with_min_middle_bytes(rows, cols, scrollback_rows, MIN_MIDDLE_BYTES)
    }

    /// A terminal that fast-forwards plain middles of at least `min_middle_bytes`
    /// (`usize::MAX`: never).
    pub fn with_min_middle_bytes(
        rows: u16,
        cols: u16,
        scrollback_rows: usize,
        min_middle_bytes: usize,
    ) -> Terminal {
        let capture = Capture {
            scrollback: Scrollback::new(scrollback_rows),
            scratch: String::new(),
            title: None,
            title_changed: false,
        };
        let parser = vt100::Parser::new_with_callbacks(non_zero(rows), non_zero(cols), 0, capture);
        let default_attributes = parser.screen().attributes_formatted();
        Terminal {
            parser,
            tracker: StreamTracker::new(rows.max(1)),
            skipped_bytes: 0,
            min_middle_bytes,
            default_attributes,
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.parser.process(bytes);
        self.tracker.observe(bytes);
    }

    /// Whether the current SGR attributes are the defaults (plain rows carry no escapes).
    fn default_attributes(&self) -> bool {
        self.parser.screen().attributes_formatted() == self.default_attributes
    }

    /// Feeds output, rendering the middle of long plain runs with the cheap exact model
    /// of `fast_forward` instead of vt100.
    pub fn process(&mut self, bytes: &[u8]) {
        let (rows, cols) = self.size();
        let mut position = 0;
        while position < bytes.len() {
            let Some(plan) = plan_skip(bytes, position, rows, self.min_middle_bytes) else {
                self.feed(&bytes[position..]);
                return;
            };
            self.feed(&bytes[position..plan.middle_start]);
            let eligible = self
                .tracker
                .eligible(self.parser.screen().alternate_screen())
                && self.default_attributes();
            let middle = &bytes[plan.middle_start..plan.middle_end];
            if eligible {
                // Push the rows above the (fresh) cursor row, as the middle would have.
                self.feed(&vec![b'\n'; usize::from(rows) - 1]);
                let capacity = self.parser.callbacks().scrollback.capacity();
                let start = render_start(middle, capacity);
                let scrollback = &mut self.parser.callbacks_mut().scrollback;
                render_plain_rows(&middle[start..], cols, |text, wrapped| {
                    scrollback.push(text, wrapped)
                });
                self.feed(b"\x1b[H");
                self.skipped_bytes += middle.len() as u64;
            } else {
                self.feed(middle);
            }
            position = plan.middle_end;
        }
    }

    /// Bytes skipped by fast-forwarding since the start.
    pub fn skipped_bytes(&self) -> u64 {
        self.skipped_bytes
    }

    /// (rows, cols)
    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.parser.screen().size();
        (rows.get(), cols.get())
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.set_size(non_zero(rows), non_zero(cols));
        self.tracker.on_resize(rows.max(1));
    }

    /// Escape sequences that redraw the whole screen and restore its modes.
    pub fn keyframe(&self) -> Vec<u8> {
        self.parser.screen().state_formatted().into_bytes()
    }

    pub fn application_cursor(&self) -> bool {
        self.parser.screen().application_cursor()
    }

    pub fn title(&self) -> Option<&str> {
        self.parser.callbacks().title.as_deref()
    }

    /// Whether the title changed since the last call.
    pub fn take_title_change(&mut self) -> bool {
        std::mem::take(&mut self.parser.callbacks_mut().title_changed)
    }

    pub fn scrollback_len(&self) -> usize {
        self.parser.callbacks().scrollback.len()
    }

    /// Rows pushed into the scrollback since the start (evicted ones included): the
    /// difference over a batch is how far the output moved the screen's contents up.
    pub fn pushed_rows(&self) -> u64 {
        self.parser.callbacks().scrollback.pushed_total()
    }

    /// How far a view of the history can go above the live screen: every scrollback row,
    /// or none while the alternate screen is active (a full-screen program's screen has
    /// no history, and the main screen's rows would not belong above it).
    pub fn scroll_limit(&self) -> usize {
        if self.parser.screen().alternate_screen() {
            0
        } else {
            self.scrollback_len()
        }
    }

    /// The scrollback rows from index `start` (0 = the oldest retained), as stored.
    pub fn stored_scrollback_rows(
        &self,
        start: usize,
    ) -> impl Iterator<Item = ScrollbackRow<'_>> + '_ {
        self.parser.callbacks().scrollback.rows_from(start)
    }

    pub fn scrollback_heap_bytes(&self) -> usize {
        self.parser.callbacks().scrollback.heap_bytes()
    }

    fn screen_rows(&self, ansi: bool) -> Vec<Row> {
        let screen = self.parser.screen();
        let (rows, cols) = self.size();
        let first_id = self.parser.callbacks().scrollback.pushed_total();
        let texts: Vec<String> = if ansi {
            let mut capture = String::new();
            let mut state = vt100::capture::BasicFormattedCaptureState::new();
            let _ = screen.write_contents_formatted_basic(
                &mut capture,
                vt100::capture::BasicFormattedCaptureRange::Full(&mut state),
            );
            let mut texts: Vec<String> = vt100::capture::basic_formatted_rows(&capture, cols)
                .map(str::to_string)
                .collect();
            texts.resize(usize::from(rows), String::new());
            texts
        } else {
            screen.rows(0, cols).collect()
        };
        texts
            .into_iter()
            .enumerate()
            .map(|(index, text)| {
                let wrapped = screen.row_wrapped(index as u16);
                Row {
                    id: first_id + index as u64,
                    text: trim_unless_wrapped(text, wrapped),
                    wrapped,
                }
            })
            .collect()
    }

    fn scrollback_rows(&self, start: usize, ansi: bool) -> Vec<Row> {
        let scrollback = &self.parser.callbacks().scrollback;
        let first_id = scrollback.pushed_total() - scrollback.len() as u64;
        scrollback
            .rows_from(start)
            .enumerate()
            .map(|(offset, row)| {
                let text = if ansi {
                    let mut text = row.formatted.to_string();
                    if row.has_escapes {
                        text.push_str("\x1b[m");
                    }
                    text
                } else {
                    plain_text(&row)
                };
                Row {
                    id: first_id + (start + offset) as u64,
                    text: trim_unless_wrapped(text, row.wrapped),
                    wrapped: row.wrapped,
                }
            })
            .collect()
    }

    /// Screen rows that hold something: up to the last non-empty row or the cursor row.
    fn used_screen_rows(&self, ansi: bool) -> Vec<Row> {
        let mut rows = self.screen_rows(ansi);
        let (cursor_row, _) = self.parser.screen().cursor_position();
        let last_text = rows
            .iter()
            .rposition(|row| !row.text.is_empty())
            .map_or(0, |index| index + 1);
        rows.truncate(last_text.max(usize::from(cursor_row) + 1).min(rows.len()));
        rows
    }

    /// Reads a source. `lines` must already be validated (1..=10000).
    pub fn read(&self, source: ReadSource, lines: Option<u32>, ansi: bool) -> ReadLines {
        match source {
            ReadSource::Visible | ReadSource::Detection => {
                let rows = self.screen_rows(ansi);
                let wanted = lines
                    .map_or(rows.len(), |lines| lines as usize)
                    .min(rows.len());
                let truncated = wanted < rows.len();
                let lines = rows[rows.len() - wanted..]
                    .iter()
                    .map(|row| ReadLine {
                        id: row.id,
                        text: row.text.clone(),
                    })
                    .collect();
                ReadLines { lines, truncated }
            }
            ReadSource::Recent => {
                let wanted = lines.unwrap_or(DEFAULT_RECENT_LINES) as usize;
                let screen_rows = self.used_screen_rows(ansi);
                let scrollback_len = self.scrollback_len();
                let from_scrollback = wanted.saturating_sub(screen_rows.len()).min(scrollback_len);
                let mut rows = self.scrollback_rows(scrollback_len - from_scrollback, ansi);
                rows.extend(screen_rows);
                let truncated = rows.len() > wanted || scrollback_len > from_scrollback;
                let skip = rows.len().saturating_sub(wanted);
                let lines = rows
                    .into_iter()
                    .skip(skip)
                    .map(|row| ReadLine {
                        id: row.id,
                        text: row.text,
                    })
                    .collect();
                ReadLines { lines, truncated }
            }
            ReadSource::RecentUnwrapped => {
                let wanted = lines.unwrap_or(DEFAULT_RECENT_LINES) as usize;
                let scrollback = &self.parser.callbacks().scrollback;
                let screen_rows = self.used_screen_rows(ansi);
                // Find where the wanted logical lines start, counting from the end over the
                // wrap flags only, then fetch the text of those rows.
                let wraps: Vec<bool> = scrollback
                    .rows_from(0)
                    .map(|row| row.wrapped)
                    .chain(screen_rows.iter().map(|row| row.wrapped))
                    .collect();
                let mut logical = 0;
                let mut start = wraps.len();
                while start > 0 {
                    let previous_continues = start >= 2 && wraps[start - 2];
                    if !previous_continues {
                        logical += 1;
                        if logical == wanted {
                            start -= 1;
                            break;
                        }
                    }
                    start -= 1;
                }
                let truncated = start > 0;
                let mut rows = if start < scrollback.len() {
                    self.scrollback_rows(start, ansi)
                } else {
                    Vec::new()
                };
                let screen_skip = start.saturating_sub(scrollback.len());
                rows.extend(screen_rows.into_iter().skip(screen_skip));
                let mut lines: Vec<ReadLine> = Vec::new();
                let mut continuing = false;
                for row in rows {
                    match lines.last_mut() {
                        Some(line) if continuing => line.text.push_str(&row.text),
                        _ => lines.push(ReadLine {
                            id: row.id,
                            text: row.text,
                        }),
                    }
                    continuing = row.wrapped;
                }
                if lines.len() > wanted {
                    lines.drain(..lines.len() - wanted);
                }
                ReadLines { lines, truncated }
            }
        }
    }
}

/// Lines the `recent` sources return without `lines`.
pub const DEFAULT_RECENT_LINES: u32 = 100;

#[cfg(test)]
mod tests {
    use super::*;

    fn text(terminal: &Terminal, source: ReadSource, lines: Option<u32>) -> String {
        terminal.read(source, lines, false).text(false)
    }

    #[test]
    fn cursor_movement_and_overwrites_render_like_a_terminal() {
        let mut terminal = Terminal::new(5, 20, 100);
        terminal.process(b"hello world\r\nsecond\x1b[1;7HWORLD\x1b[3;3Hthird\r\n\x1b[2K");
        assert_eq!(
            text(&terminal, ReadSource::Visible, None),
            "hello WORLD\nsecond\n  third\n\n"
        );
    }

    #[test]
    fn rows_scroll_into_scrollback_and_recent_reads_them() {
        let mut terminal = Terminal::new(3, 20, 100);
        for index in 0..10 {
            terminal.process(format!("line {index}\r\n").as_bytes());
        }
        assert_eq!(terminal.scrollback_len(), 8);
        // The screen shows the last two lines and the (empty) cursor row.
        assert_eq!(
            text(&terminal, ReadSource::Visible, None),
            "line 8\nline 9\n"
        );
        assert_eq!(
            text(&terminal, ReadSource::Recent, Some(4)),
            "line 7\nline 8\nline 9\n"
        );
        let read = terminal.read(ReadSource::Recent, Some(4), false);
        assert!(read.truncated);
        let ids: Vec<u64> = read.lines.iter().map(|line| line.id).collect();
        assert_eq!(ids, [7, 8, 9, 10]);
        let all = text(&terminal, ReadSource::Recent, Some(10_000));
        assert!(all.starts_with("line 0\nline 1\n"), "{all:?}");
        assert!(
            !terminal
                .read(ReadSource::Recent, Some(10_000), false)
                .truncated
        );
    }

    #[test]
    fn recent_unwrapped_joins_soft_wrapped_rows_across_the_scrollback_boundary() {
        let mut terminal = Terminal::new(3, 10, 100);
        terminal.process(b"short\r\nabcdefghijKLMNOPQRSTuvw\r\nend");
        assert_eq!(terminal.scrollback_len(), 2);
        assert_eq!(
            text(&terminal, ReadSource::Recent, Some(5)),
            "short\nabcdefghij\nKLMNOPQRST\nuvw\nend"
        );
        assert_eq!(
            text(&terminal, ReadSource::RecentUnwrapped, Some(3)),
            "short\nabcdefghijKLMNOPQRSTuvw\nend"
        );
        assert_eq!(
            text(&terminal, ReadSource::RecentUnwrapped, Some(2)),
            "abcdefghijKLMNOPQRSTuvw\nend"
        );
        assert!(
            terminal
                .read(ReadSource::RecentUnwrapped, Some(2), false)
                .truncated
        );
        assert!(
            !terminal
                .read(ReadSource::RecentUnwrapped, Some(3), false)
                .truncated
        );
    }

    #[test]
    fn ansi_reads_keep_colours_and_text_reads_drop_them() {
        let mut terminal = Terminal::new(3, 20, 100);
        terminal.process(b"\x1b[31mred\x1b[m plain\r\nnext\r\nmore\r\nlast");
        assert_eq!(
            text(&terminal, ReadSource::Recent, Some(4)),
            "red plain\nnext\nmore\nlast"
        );
        let ansi = terminal.read(ReadSource::Recent, Some(4), true).text(true);
        assert!(ansi.starts_with("\x1b[31mred\x1b[m plain"), "{ansi:?}");
        assert!(
            ansi.ends_with("last\x1b[m"),
            "attributes are reset at the end: {ansi:?}"
        );
    }

    #[test]
    fn alternate_screen_rows_do_not_reach_scrollback() {
        let mut terminal = Terminal::new(3, 20, 100);
        terminal.process(b"before\r\n");
        terminal.process(b"\x1b[?1049h");
        for index in 0..10 {
            terminal.process(format!("alt {index}\r\n").as_bytes());
        }
        assert_eq!(terminal.scrollback_len(), 0);
        terminal.process(b"\x1b[?1049l");
        assert_eq!(text(&terminal, ReadSource::Visible, None), "before\n\n");
    }

    #[test]
    fn titles_are_normalised() {
        let mut terminal = Terminal::new(3, 20, 10);
        terminal.process(b"\x1b]2;  build \x01running  \x07");
        assert!(terminal.take_title_change());
        assert_eq!(terminal.title(), Some("build running"));
        assert!(!terminal.take_title_change());
    }

    fn log(count: usize, from: usize) -> Vec<u8> {
        let mut bytes = Vec::new();
        for index in from..from + count {
            bytes.extend_from_slice(
                format!("log line {index:07} with some words in it\r\n").as_bytes(),
            );
        }
        bytes
    }

    /// Fast-forwarding must not change anything a reader can see.
    #[test]
    fn fast_forward_leaves_the_same_screen_and_scrollback() {
        let mut prefix = b"\x1b[1mbold prompt\x1b[m $ cat log\r\n".to_vec();
        prefix.extend_from_slice(&log(30_000, 0));
        prefix.extend_from_slice(b"\x1b[32mgreen tail\x1b[m\r\n");
        prefix.extend_from_slice(&log(3, 30_000));
        prefix.extend_from_slice(b"partial");

        let mut fast = Terminal::new(24, 80, 1_000);
        fast.process(&prefix);
        assert!(fast.skipped_bytes() > 0, "the long run was fast-forwarded");

        let mut slow = Terminal::with_min_middle_bytes(24, 80, 1_000, usize::MAX);
        slow.process(&prefix);
        assert_eq!(slow.skipped_bytes(), 0, "vt100 rendered everything");

        for source in [
            ReadSource::Visible,
            ReadSource::Recent,
            ReadSource::RecentUnwrapped,
        ] {
            for ansi in [false, true] {
                let fast_read = fast.read(source, Some(10_000), ansi);
                let slow_read = slow.read(source, Some(10_000), ansi);
                assert_eq!(
                    fast_read.text(ansi),
                    slow_read.text(ansi),
                    "{source:?} ansi={ansi}"
                );
            }
        }
        assert_eq!(fast.keyframe(), slow.keyframe());
        assert_eq!(
            fast.parser.screen().cursor_position(),
            slow.parser.screen().cursor_position()
        );
    }

    #[test]
    fn fast_forward_is_not_used_inside_a_scroll_region() {
        let mut bytes = b"\x1b[2;10r".to_vec();
        bytes.extend_from_slice(&log(30_000, 0));
        let mut terminal = Terminal::new(24, 80, 1_000);
        terminal.process(&bytes);
        assert_eq!(terminal.skipped_bytes(), 0);
    }

    mod equivalence {
        use super::*;
        use proptest::prelude::*;

        const FRAGMENTS: &[&[u8]] = &[
            b"\x1b[31m",
            b"\x1b[m",
            b"\x1b[1;4m",
            b"\x1b[2J",
            b"\x1b[5;3H",
            b"\x1b[?1049h",
            b"\x1b[?1049l",
            b"\x1b[2;4r",
            b"\x1b[r",
            b"text",
            b"\r\n",
            b"\n",
            b"\x1b]0;title\x07",
            b"\x1b[3",
            b"\x1b",
            b"\t",
            b"\x08",
            b"\x1b[1b",
            b"\x1bc",
        ];

        fn fragments() -> impl Strategy<Value = Vec<u8>> {
            proptest::collection::vec(0..FRAGMENTS.len(), 0..6).prop_map(|picks| {
                picks
                    .into_iter()
                    .flat_map(|pick| FRAGMENTS[pick].to_vec())
                    .collect()
            })
        }

        fn plain_lines(cols: usize) -> impl Strategy<Value = Vec<u8>> {
            let byte = prop_oneof![
                20 => b'a'..=b'z',
                4 => Just(b' '),
                1 => Just(b'\t'),
                1 => Just(0x08u8),
                1 => Just(b'\r'),
                2 => b'0'..=b'9',
            ];
            let line = (
                proptest::collection::vec(byte, 0..cols * 2 + 2),
                prop_oneof![8 => Just(b"\r\n".to_vec()), 1 => Just(b"\n".to_vec())],
            );
            proptest::collection::vec(line, 0..300).prop_map(|lines| {
                lines
                    .into_iter()
                    .flat_map(|(mut text, end)| {
                        text.extend(end);
                        text
                    })
                    .collect()
            })
        }

        fn stream() -> impl Strategy<Value = (u16, u16, usize, Vec<u8>, Vec<usize>)> {
            (3u16..26, 10u16..90, 0usize..250).prop_flat_map(|(rows, cols, capacity)| {
                let body = (
                    fragments(),
                    plain_lines(cols as usize),
                    fragments(),
                    plain_lines(cols as usize),
                    fragments(),
                );
                let splits = proptest::collection::vec(1usize..5_000, 0..8);
                (Just(rows), Just(cols), Just(capacity), body, splits).prop_map(
                    |(rows, cols, capacity, (a, b, c, d, e), splits)| {
                        let bytes = [a, b, c, d, e].concat();
                        (rows, cols, capacity, bytes, splits)
                    },
                )
            })
        }

        fn assert_same(fast: &Terminal, slow: &Terminal) {
            for source in [
                ReadSource::Visible,
                ReadSource::Recent,
                ReadSource::RecentUnwrapped,
            ] {
                for ansi in [false, true] {
                    assert_eq!(
                        fast.read(source, Some(10_000), ansi).text(ansi),
                        slow.read(source, Some(10_000), ansi).text(ansi),
                        "{source:?} ansi={ansi}"
                    );
                }
            }
            assert_eq!(fast.keyframe(), slow.keyframe());
            assert_eq!(
                fast.parser.screen().cursor_position(),
                slow.parser.screen().cursor_position()
            );
            assert_eq!(fast.scrollback_len(), slow.scrollback_len());
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

            /// Fast-forwarding (with the smallest middle allowed) never changes what a
            /// reader sees, whole or in arbitrary chunks.
            #[test]
            fn fast_forward_matches_vt100((rows, cols, capacity, bytes, splits) in stream()) {
                let mut slow = Terminal::with_min_middle_bytes(rows, cols, capacity, usize::MAX);
                slow.process(&bytes);
                let mut whole = Terminal::with_min_middle_bytes(rows, cols, capacity, 1);
                whole.process(&bytes);
                assert_same(&whole, &slow);
                let mut chunked = Terminal::with_min_middle_bytes(rows, cols, capacity, 1);
                let mut rest = bytes.as_slice();
                for split in splits {
                    let (head, tail) = rest.split_at(split.min(rest.len()));
                    chunked.process(head);
                    rest = tail;
                }
                chunked.process(rest);
                assert_same(&chunked, &slow);
            }
        }
    }
}
