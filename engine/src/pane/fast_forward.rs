//! Fast-forward over output that can never be seen.
//!
//! When a burst of output arrives faster than vt100 can render it (vt100 handles roughly
//! 50 MB/s of plain text), most of the burst scrolls through the screen and out of the
//! bounded scrollback before anyone can read it. Rendering those rows is wasted work.
//!
//! This module finds such rows and lets the terminal skip them while producing exactly the
//! state that rendering them would have produced. The argument:
//!
//! - Take a *plain run*: bytes that are only printable ASCII, CR, LF, TAB and BS, starting
//!   while the parser is in its ground state, on the main screen, with the full screen as
//!   scroll region. Such bytes print characters and move the cursor; they change no mode,
//!   attribute, tab stop or scroll region, and every LF at the bottom row scrolls one row
//!   into the scrollback.
//! - Cut the run right after a CR LF such that the rest of the run still holds
//!   `K = 2·rows + scrollback_capacity + 4` LFs and at least one printable byte.
//! - Replace the part before the cut with CR followed by `rows` LFs. In both versions the
//!   cursor is in column 0 at the cut, no wrap is pending, and the rest of the run scrolls
//!   at least `rows + capacity` times after the cursor reached the bottom row. So every row
//!   that held output from before the cut is pushed out of the scrollback again, and the
//!   screen, the scrollback, the cursor and `last_char` (for `CSI b`) end up identical.
//!
//! The one difference is vt100's internal count of rows that ever scrolled, which only
//! decides how many blank rows a later resize to a taller screen inserts at the top when
//! that resize grows the screen by more than `rows + capacity` rows.
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

/// Runs shorter than this are rendered normally; skipping them would save little.
pub const MIN_SKIP_BYTES: usize = 256 * 1024;

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
                Some(first.iter().fold(0u16, |value, digit| value.saturating_mul(10).saturating_add(u16::from(digit - b'0'))))
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
                let top = params.first().copied().flatten().filter(|value| *value != 0).unwrap_or(1) - 1;
                let bottom = (params.get(1).copied().flatten().filter(|value| *value != 0).unwrap_or(rows) - 1).min(rows - 1);
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

/// A part of a batch that may be replaced by the synthetic prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkipPlan {
    /// Start of the plain run: bytes before it are rendered normally first.
    pub run_start: usize,
    /// Bytes `run_start..cut` are skipped; rendering resumes at `cut`.
    pub cut: usize,
}

/// End of the plain run starting at `start`.
fn plain_run_end(bytes: &[u8], start: usize) -> usize {
    bytes[start..].iter().position(|byte| !PLAIN[*byte as usize]).map_or(bytes.len(), |offset| start + offset)
}

/// Finds the first skippable part of `bytes[from..]`, for a screen of `rows` rows and a
/// scrollback of `capacity` rows.
pub fn plan_skip(bytes: &[u8], from: usize, rows: u16, capacity: usize) -> Option<SkipPlan> {
    let needed_line_feeds = 2 * usize::from(rows) + capacity + 4;
    let mut start = from;
    while start < bytes.len() {
        if !PLAIN[bytes[start] as usize] {
            start += 1;
            continue;
        }
        let end = plain_run_end(bytes, start);
        if end - start >= MIN_SKIP_BYTES + needed_line_feeds
            && let Some(cut) = find_cut(&bytes[start..end], needed_line_feeds)
            && cut >= MIN_SKIP_BYTES
        {
            return Some(SkipPlan { run_start: start, cut: start + cut });
        }
        start = end;
    }
    None
}

/// Within one plain run: the latest position right after a CR LF such that the rest holds
/// `needed_line_feeds` LFs and a printable byte.
fn find_cut(run: &[u8], needed_line_feeds: usize) -> Option<usize> {
    let mut line_feeds = memchr::memrchr_iter(b'\n', run);
    let mut last_needed = None;
    for _ in 0..needed_line_feeds {
        last_needed = Some(line_feeds.next()?);
    }
    let last_needed = last_needed?;
    // The cut must come before the `needed_line_feeds`-th LF from the end.
    let mut candidates = memchr::memrchr_iter(b'\n', &run[..last_needed]);
    let line_feed = loop {
        let position = candidates.next()?;
        if position > 0 && run[position - 1] == b'\r' {
            break position;
        }
    };
    let cut = line_feed + 1;
    let has_printable = run[cut..].iter().any(|byte| (0x21..0x7f).contains(byte));
    has_printable.then_some(cut)
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
        assert!(tracker.eligible(false), "the region belonged to the alternate grid");
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
            bytes.extend_from_slice(format!("line {index:07} of a log that scrolls by\r\n").as_bytes());
        }
        bytes
    }

    #[test]
    fn plans_a_cut_that_leaves_enough_line_feeds() {
        let bytes = log_lines(40_000);
        let plan = plan_skip(&bytes, 0, 24, 1_000).expect("a long plain run can be skipped");
        assert_eq!(plan.run_start, 0);
        let rest = &bytes[plan.cut..];
        let line_feeds = rest.iter().filter(|byte| **byte == b'\n').count();
        assert!(line_feeds >= 2 * 24 + 1_000 + 4);
        assert!(line_feeds < 2 * 24 + 1_000 + 10, "the cut is as late as possible");
        assert_eq!(&bytes[plan.cut - 2..plan.cut], b"\r\n");
    }

    #[test]
    fn short_or_escaped_runs_are_not_skipped() {
        assert_eq!(plan_skip(&log_lines(100), 0, 24, 1_000), None);
        let mut colored = Vec::new();
        for index in 0..40_000 {
            colored.extend_from_slice(format!("\x1b[32mline {index}\x1b[m\r\n").as_bytes());
        }
        assert_eq!(plan_skip(&colored, 0, 24, 1_000), None);
        let mut bare_line_feeds = log_lines(40_000);
        for byte in &mut bare_line_feeds {
            if *byte == b'\r' {
                *byte = b' ';
            }
        }
        assert_eq!(plan_skip(&bare_line_feeds, 0, 24, 1_000), None, "no CR LF to cut after");
    }

    #[test]
    fn a_run_after_an_escape_sequence_starts_after_it() {
        let mut bytes = b"\x1b[1mbold\x1b[m".to_vec();
        let prefix = bytes.len();
        bytes.extend_from_slice(&log_lines(40_000));
        let plan = plan_skip(&bytes, 0, 24, 1_000).unwrap();
        // The run starts at the `[m` after the last ESC; the terminal renders its first
        // line before checking eligibility.
        assert_eq!(plan.run_start, prefix - 2);
    }
}
