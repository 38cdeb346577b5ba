//! Fast-forward through floods of plain output.
//!
//! vt100 renders plain text more slowly than a PTY can deliver it; during a
//! flood most rows scroll through the screen (and often out of the bounded scrollback)
//! before anyone can read them. This module renders the middle of a long *plain run*
//! itself, straight into the scrollback, with an exact but much cheaper model, and leaves
//! the rest to vt100.
//!
//! A plain run holds only printable ASCII, CR, LF, TAB and BS. In vt100's ground state, on
//! the main screen, with the full screen as scroll region and default attributes, such
//! bytes only print characters and move the cursor: they change no mode, attribute or
//! region, and every LF at the bottom row scrolls one row into the scrollback. So a run is
//! split into three parts, at CR LF boundaries:
//!
//! - `F`, its first `rows` lines, rendered by vt100. After `rows` LFs the cursor is on a
//!   freshly scrolled-in blank row at the bottom, in column 0.
//! - `M`, the middle. vt100 gets `rows - 1` LFs, which push the rows above the cursor into
//!   the scrollback exactly as `M` would have; then [`render_plain_rows`] turns the lines
//!   of `M` into rows (same wrapping, overwrites, tabs and backspaces as vt100) and pushes
//!   them, only as many as the scrollback keeps; then vt100 gets `CSI H`, so the cursor is
//!   at the top of a blank screen.
//! - `T`, the last `rows + 2` (or more) lines, rendered by vt100. They fill the blank
//!   screen and push the same rows, in the same order, as they would have after `M`.
//!
//! The screen, the scrollback, the cursor and `last_char` (for `CSI b`) end up exactly as
//! if vt100 had rendered everything; a property test compares both. What differs is
//! vt100's internal count of rows that ever scrolled, which only decides how many blank
//! rows a later resize to a taller screen inserts at the top, and the absolute row ids of
//! reads (they stay increasing).
//!
//! [`StreamTracker`] mirrors the state machine of the `vte` parser (0.15) that vt100
//! uses, closely enough to know whether it is in the ground state, which grid is active,
//! and whether the main grid may have a scroll region. When unsure it says "not eligible".

/// Bytes a plain run may contain.
const fn plain_table() -> [bool; 256] {
    let mut table = [false; 256];
    let mut byte = 0x20;
    while byte < 0x7f {
        table[byte] = true;
        byte += 1;
    }
    table[b'\r' as usize] = true;
    table[b'\n' as usize] = true;
    table[b'\t' as usize] = true;
    table[0x08] = true;
    table
}

static PLAIN: [bool; 256] = plain_table();

/// Middles shorter than this are left to vt100; rendering them here would save little.
pub const MIN_MIDDLE_BYTES: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VteState {
    Ground,
    Escape,
    EscapeIntermediate,
    CsiEntry,
    CsiParam,
    CsiIntermediate,
    CsiIgnore,
    /// Any DCS state: left only by ESC, CAN or SUB.
    Dcs,
    OscString,
    SosPmApcString,
}

/// Follows the bytes fed to vt100 (see the module docs).
pub struct StreamTracker {
    state: VteState,
    rows: u16,
    in_alternate: bool,
    main_region_set: bool,
    /// Collected CSI intermediates (including private markers like `?`).
    csi_intermediates: Vec<u8>,
    /// Collected CSI parameter bytes (digits, `;`, `:`).
    csi_params: Vec<u8>,
    /// Bytes of an unfinished UTF-8 character at the end of the last ground run.
    partial_utf8: bool,
}

impl StreamTracker {
    pub fn new(rows: u16) -> StreamTracker {
        StreamTracker {
            state: VteState::Ground,
            rows,
            in_alternate: false,
            main_region_set: false,
            csi_intermediates: Vec::new(),
            csi_params: Vec::new(),
            partial_utf8: false,
        }
    }

    /// vt100 resets both grids' scroll regions on resize.
    pub fn on_resize(&mut self, rows: u16) {
        self.rows = rows;
        self.main_region_set = false;
    }

    /// Whether a plain run starting now can be fast-forwarded. `alternate_screen` is
    /// vt100's own answer, which must agree with the tracked one.
    pub fn eligible(&self, alternate_screen: bool) -> bool {
        self.state == VteState::Ground
            && !self.partial_utf8
            && !self.main_region_set
            && !alternate_screen
            && !self.in_alternate
    }

    /// Follows `bytes`, which were just fed to vt100.
    pub fn observe(&mut self, bytes: &[u8]) {
        let mut index = 0;
        while index < bytes.len() {
            if self.state == VteState::Ground {
                match memchr::memchr(0x1b, &bytes[index..]) {
                    Some(offset) => {
                        self.partial_utf8 = false;
                        index += offset + 1;
                        self.state = VteState::Escape;
                    }
                    None => {
                        self.partial_utf8 = ends_with_partial_utf8(&bytes[index..]);
                        return;
                    }
                }
                continue;
            }
            self.step(bytes[index]);
            index += 1;
        }
    }

    fn enter_csi(&mut self) {
        self.csi_intermediates.clear();
        self.csi_params.clear();
        self.state = VteState::CsiEntry;
    }

    fn anywhere(&mut self, byte: u8) {
        match byte {
            0x18 | 0x1a => self.state = VteState::Ground,
            0x1b => self.state = VteState::Escape,
            _ => {}
        }
    }

    fn step(&mut self, byte: u8) {
        let is_c0 = matches!(byte, 0x00..=0x17 | 0x19 | 0x1c..=0x1f);
        match self.state {
            VteState::Ground => unreachable!("ground is handled in bulk"),
            VteState::Escape => match byte {
                _ if is_c0 => {}
                0x20..=0x2f => self.state = VteState::EscapeIntermediate,
                b'P' => self.state = VteState::Dcs,
                b'X' | b'^' | b'_' => self.state = VteState::SosPmApcString,
                b'[' => self.enter_csi(),
                b']' => self.state = VteState::OscString,
                b'c' => {
                    // RIS: vt100 builds a new screen (main grid, no regions).
                    self.in_alternate = false;
                    self.main_region_set = false;
                    self.state = VteState::Ground;
                }
                0x30..=0x7e => self.state = VteState::Ground,
                0x18 | 0x1a => self.state = VteState::Ground,
                _ => {}
            },
            VteState::EscapeIntermediate => match byte {
                _ if is_c0 => {}
                0x20..=0x2f | 0x7f => {}
                0x30..=0x7e => self.state = VteState::Ground,
                _ => self.anywhere(byte),
            },
            VteState::CsiEntry => match byte {
                _ if is_c0 => {}
                0x20..=0x2f => {
                    self.csi_intermediates.push(byte);
                    self.state = VteState::CsiIntermediate;
                }
                0x30..=0x3b => {
                    self.csi_params.push(byte);
                    self.state = VteState::CsiParam;
                }
                0x3c..=0x3f => {
                    self.csi_intermediates.push(byte);
                    self.state = VteState::CsiParam;
                }
                0x40..=0x7e => self.csi_dispatch(byte),
                _ => self.anywhere(byte),
            },
            VteState::CsiParam => match byte {
                _ if is_c0 => {}
                0x20..=0x2f => {
                    self.csi_intermediates.push(byte);
                    self.state = VteState::CsiIntermediate;
                }
                0x30..=0x3b => {
                    if self.csi_params.len() < 256 {
                        self.csi_params.push(byte);
                    }
                }
                0x3c..=0x3f => self.state = VteState::CsiIgnore,
                0x40..=0x7e => self.csi_dispatch(byte),
                0x7f => {}
                _ => self.anywhere(byte),
            },
            VteState::CsiIntermediate => match byte {
                _ if is_c0 => {}
                0x20..=0x2f => self.csi_intermediates.push(byte),
                0x30..=0x3f => self.state = VteState::CsiIgnore,
                0x40..=0x7e => self.csi_dispatch(byte),
                _ => self.anywhere(byte),
            },
            VteState::CsiIgnore => match byte {
                _ if is_c0 => {}
                0x20..=0x3f | 0x7f => {}
                0x40..=0x7e => self.state = VteState::Ground,
                _ => self.anywhere(byte),
            },
            VteState::Dcs | VteState::SosPmApcString => self.anywhere(byte),
            VteState::OscString => match byte {
                0x07 => self.state = VteState::Ground,
                _ => self.anywhere(byte),
            },
        }
    }

    /// The first value of each `;`-separated parameter (vte saturates at u16::MAX).
    fn params(&self) -> Vec<Option<u16>> {
        self.csi_params
            .split(|byte| *byte == b';')
            .map(|param| {
                let first = param.split(|byte| *byte == b':').next().unwrap_or(&[]);
                if first.is_empty() {
                    return None;
                }
                Some(first.iter().fold(0u16, |value, digit| {
                    value
                        .saturating_mul(10)
                        .saturating_add(u16::from(digit - b'0'))
                }))
            })
            .collect()
    }

    fn csi_dispatch(&mut self, final_byte: u8) {
        self.state = VteState::Ground;
        let params = self.params();
        match (self.csi_intermediates.as_slice(), final_byte) {
            ([], b'r') => {
                // vt100: top = max(p1, 1) - 1, bottom = (p2 or rows) - 1 clamped; a region
                // with top >= bottom resets to the full screen.
                let rows = self.rows.max(1);
                let top = params
                    .first()
                    .copied()
                    .flatten()
                    .filter(|value| *value != 0)
                    .unwrap_or(1)
                    - 1;
                let bottom = (params
                    .get(1)
                    .copied()
                    .flatten()
                    .filter(|value| *value != 0)
                    .unwrap_or(rows)
                    - 1)
                .min(rows - 1);
                let full = top >= bottom || (top == 0 && bottom == rows - 1);
                if !self.in_alternate {
                    self.main_region_set = !full;
                }
            }
            ([b'?'], b'h') | ([b'?'], b'l') => {
                let entering = final_byte == b'h';
                // Only parameters that are exactly 47 or 1049 switch grids in vt100; a
                // parameter with sub-parameters does not.
                for raw in self.csi_params.split(|byte| *byte == b';') {
                    if raw == b"47" || raw == b"1049" {
                        self.in_alternate = entering;
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether `bytes` ends inside a UTF-8 sequence that more bytes could complete.
fn ends_with_partial_utf8(bytes: &[u8]) -> bool {
    let tail_start = bytes.len().saturating_sub(3);
    let tail = &bytes[tail_start..];
    for (offset, byte) in tail.iter().enumerate().rev() {
        if byte & 0xc0 == 0x80 {
            continue;
        }
        let needed = match byte {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => return false,
        };
        return tail.len() - offset < needed;
    }
    false
}

/// How one plain run is split (offsets into the batch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkipPlan {
    /// Start of the plain run (`F` starts here).
    pub run_start: usize,
    /// End of `F`, start of `M`: right after a CR LF.
    pub middle_start: usize,
    /// End of `M`, start of `T`: right after a CR LF.
    pub middle_end: usize,
}

/// End of the plain run starting at `start`.
fn plain_run_end(bytes: &[u8], start: usize) -> usize {
    bytes[start..]
        .iter()
        .position(|byte| !PLAIN[*byte as usize])
        .map_or(bytes.len(), |offset| start + offset)
}

/// The first position after a CR LF at or after the `count`-th LF of `run`.
fn after_line_feeds(run: &[u8], count: usize) -> Option<usize> {
    let mut line_feeds = memchr::memchr_iter(b'\n', run);
    let mut position = line_feeds.nth(count.checked_sub(1)?)?;
    loop {
        if position > 0 && run[position - 1] == b'\r' {
            return Some(position + 1);
        }
        position = line_feeds.next()?;
    }
}

/// The last position after a CR LF that leaves at least `count` LFs and a printable byte
/// behind it in `run`.
fn before_line_feeds(run: &[u8], count: usize) -> Option<usize> {
    let mut line_feeds = memchr::memrchr_iter(b'\n', run);
    let last_needed = line_feeds.nth(count.checked_sub(1)?)?;
    let mut candidates = memchr::memrchr_iter(b'\n', &run[..last_needed]);
    let line_feed = loop {
        let position = candidates.next()?;
        if position > 0 && run[position - 1] == b'\r' {
            break position;
        }
    };
    let cut = line_feed + 1;
    run[cut..]
        .iter()
        .any(|byte| (0x21..0x7f).contains(byte))
        .then_some(cut)
}

/// Finds the first plain run in `bytes[from..]` that is worth fast-forwarding on a screen
/// of `rows` rows, with a middle of at least `min_middle_bytes`.
pub fn plan_skip(
    bytes: &[u8],
    from: usize,
    rows: u16,
    min_middle_bytes: usize,
) -> Option<SkipPlan> {
    let rows = usize::from(rows.max(1));
    let mut start = from;
    while start < bytes.len() {
        if !PLAIN[bytes[start] as usize] {
            start += 1;
            continue;
        }
        let end = plain_run_end(bytes, start);
        let run = &bytes[start..end];
        if run.len() > min_middle_bytes
            && let Some(middle_start) = after_line_feeds(run, rows)
            && let Some(middle_end) = before_line_feeds(run, rows + 2)
            && middle_end > middle_start
            && middle_end - middle_start >= min_middle_bytes.max(1)
        {
            return Some(SkipPlan {
                run_start: start,
                middle_start: start + middle_start,
                middle_end: start + middle_end,
            });
        }
        start = end;
    }
    None
}

/// Where to start rendering `middle` so that its last `keep_rows` rows are produced: a
/// line start in column 0 (right after a CR LF) at least `keep_rows` lines from the end,
/// or the start of `middle`.
pub fn render_start(middle: &[u8], keep_rows: usize) -> usize {
    if keep_rows == 0 {
        return middle.len();
    }
    // `middle` ends with CR LF; its last LF ends the last line.
    let mut line_feeds = memchr::memrchr_iter(b'\n', middle);
    let Some(_) = line_feeds.next() else {
        return 0;
    };
    for _ in 0..keep_rows {
        if line_feeds.next().is_none() {
            return 0;
        }
    }
    for position in line_feeds.by_ref() {
        // `position` ends an earlier line; the next line starts after it.
        if position > 0 && middle[position - 1] == b'\r' {
            return position + 1;
        }
    }
    0
}

/// Renders plain bytes that start in column 0 of a fresh row, the way vt100 would, and
/// hands each completed row (its text, whether it soft-wraps) to `push`. Bytes after the
/// last LF are not rendered; callers pass whole lines.
pub fn render_plain_rows(bytes: &[u8], cols: u16, mut push: impl FnMut(&str, bool)) {
    let cols = usize::from(cols.max(1));
    // One cell per column: 0 is a blank (default) cell.
    let mut cells = vec![0u8; cols];
    let mut used = 0usize;
    let mut column = 0usize;
    let mut text = String::with_capacity(cols);
    let mut finish_row = |cells: &mut [u8], used: &mut usize, wrapped: bool, text: &mut String| {
        text.clear();
        for cell in &cells[..*used] {
            text.push(if *cell == 0 { ' ' } else { *cell as char });
        }
        push(text, wrapped);
        cells[..*used].fill(0);
        *used = 0;
    };
    for byte in bytes {
        match byte {
            b'\n' => finish_row(&mut cells, &mut used, false, &mut text),
            b'\r' => column = 0,
            0x08 => column = column.saturating_sub(1),
            b'\t' => column = (column - column % 8 + 8).min(cols - 1),
            _ => {
                if column >= cols {
                    // vt100 wraps onto a new row; the row counts as soft-wrapped only if
                    // its last cell holds something (it may not, right after an LF).
                    let wrapped = cells[cols - 1] != 0;
                    finish_row(&mut cells, &mut used, wrapped, &mut text);
                    column = 0;
                }
                cells[column] = *byte;
                used = used.max(column + 1);
                column += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracker_follows_escape_sequences_to_ground() {
        let mut tracker = StreamTracker::new(24);
        tracker.observe(b"hello \x1b[31mred\x1b[m");
        assert!(tracker.eligible(false));
        tracker.observe(b"\x1b[3");
        assert!(!tracker.eligible(false), "inside a CSI");
        tracker.observe(b"1m done");
        assert!(tracker.eligible(false));
        tracker.observe(b"\x1b]0;title");
        assert!(!tracker.eligible(false), "inside an OSC");
        tracker.observe(b"\x07");
        assert!(tracker.eligible(false));
        tracker.observe(b"\x1bPq#0;2;0;0;0");
        assert!(!tracker.eligible(false), "inside a DCS");
        tracker.observe(b"\x1b\\");
        assert!(tracker.eligible(false));
        tracker.observe("caf\u{e9}".as_bytes().split_last().unwrap().1);
        assert!(!tracker.eligible(false), "inside a UTF-8 character");
        tracker.observe(&[0xa9]);
        assert!(tracker.eligible(false));
    }

    #[test]
    fn tracker_follows_scroll_regions_and_the_alternate_screen() {
        let mut tracker = StreamTracker::new(24);
        tracker.observe(b"\x1b[5;10r");
        assert!(!tracker.eligible(false), "a scroll region is set");
        tracker.observe(b"\x1b[r");
        assert!(tracker.eligible(false));
        tracker.observe(b"\x1b[1;24r");
        assert!(tracker.eligible(false), "the full screen is no region");
        tracker.observe(b"\x1b[?1049h");
        assert!(!tracker.eligible(true));
        tracker.observe(b"\x1b[2;20r");
        tracker.observe(b"\x1b[?1049l");
        assert!(
            tracker.eligible(false),
            "the region belonged to the alternate grid"
        );
        tracker.observe(b"\x1b[3;9r");
        assert!(!tracker.eligible(false));
        tracker.on_resize(30);
        assert!(tracker.eligible(false), "resize resets regions");
        tracker.observe(b"\x1b[3;9r\x1bc");
        assert!(tracker.eligible(false), "RIS resets regions");
        tracker.observe(b"\x1b[?5r");
        assert!(tracker.eligible(false), "private-marker r is not DECSTBM");
    }

    fn log_lines(count: usize) -> Vec<u8> {
        let mut bytes = Vec::new();
        for index in 0..count {
            bytes.extend_from_slice(
                format!("line {index:07} of a log that scrolls by\r\n").as_bytes(),
            );
        }
        bytes
    }

    fn line_feeds(bytes: &[u8]) -> usize {
        bytes.iter().filter(|byte| **byte == b'\n').count()
    }

    #[test]
    fn plans_split_a_long_run_at_cr_lf_boundaries() {
        let bytes = log_lines(40_000);
        let plan = plan_skip(&bytes, 0, 24, MIN_MIDDLE_BYTES).expect("a long plain run is split");
        assert_eq!(plan.run_start, 0);
        assert_eq!(
            line_feeds(&bytes[..plan.middle_start]),
            24,
            "F is the first `rows` lines"
        );
        assert_eq!(
            line_feeds(&bytes[plan.middle_end..]),
            26,
            "T is the last `rows + 2` lines"
        );
        assert_eq!(&bytes[plan.middle_start - 2..plan.middle_start], b"\r\n");
        assert_eq!(&bytes[plan.middle_end - 2..plan.middle_end], b"\r\n");
    }

    #[test]
    fn short_or_escaped_runs_are_not_split() {
        assert_eq!(plan_skip(&log_lines(60), 0, 24, MIN_MIDDLE_BYTES), None);
        let mut colored = Vec::new();
        for index in 0..40_000 {
            colored.extend_from_slice(format!("\x1b[32mline {index}\x1b[m\r\n").as_bytes());
        }
        assert_eq!(plan_skip(&colored, 0, 24, MIN_MIDDLE_BYTES), None);
        let mut bare_line_feeds = log_lines(40_000);
        for byte in &mut bare_line_feeds {
            if *byte == b'\r' {
                *byte = b' ';
            }
        }
        assert_eq!(
            plan_skip(&bare_line_feeds, 0, 24, MIN_MIDDLE_BYTES),
            None,
            "no CR LF to split at"
        );
    }

    #[test]
    fn a_run_after_an_escape_sequence_starts_after_it() {
        let mut bytes = b"\x1b[1mbold\x1b[m".to_vec();
        let prefix = bytes.len();
        bytes.extend_from_slice(&log_lines(40_000));
        let plan = plan_skip(&bytes, 0, 24, MIN_MIDDLE_BYTES).unwrap();
        // The run starts at the `[m` after the last ESC; F renders it with vt100.
        assert_eq!(plan.run_start, prefix - 2);
    }

    fn rendered(bytes: &[u8], cols: u16) -> Vec<(String, bool)> {
        let mut rows = Vec::new();
        render_plain_rows(bytes, cols, |text, wrapped| {
            rows.push((text.to_string(), wrapped))
        });
        rows
    }

    #[test]
    fn the_renderer_wraps_overwrites_and_tabs_like_vt100() {
        let rows = rendered(
            b"abcdefghijKL\r\nxy\rZ\r\na\tb\x08c\r\n0123456789\nq\r\n",
            10,
        );
        assert_eq!(
            rows,
            [
                ("abcdefghij".to_string(), true),
                ("KL".to_string(), false),
                ("Zy".to_string(), false),
                ("a       c".to_string(), false),
                ("0123456789".to_string(), false),
                // The LF left the cursor pending at column 10 on a fresh row: the next
                // character wraps from an empty, unwrapped row.
                (String::new(), false),
                ("q".to_string(), false),
            ]
        );
    }

    #[test]
    fn render_start_keeps_enough_rows() {
        let bytes = log_lines(100);
        let start = render_start(&bytes, 10);
        assert_eq!(line_feeds(&bytes[start..]), 11);
        assert_eq!(render_start(&bytes, 1_000), 0);
        assert_eq!(render_start(&bytes, 0), bytes.len());
    }
}
