//! Compact scrollback: the rows that scrolled off the top of a pane's screen, kept as
//! vt100 "basic formatted" text (characters plus SGR escape sequences) in 64 KiB blocks.
//!
//! Why not vt100's own scrollback: it keeps every cell as a 32-byte struct, so 10,000 rows
//! of 100 characters cost ~32 MB per pane. Here a plain row costs its text plus 4 bytes,
//! and the row count stays exactly bounded: evicting a row only moves an offset, and a
//! block is freed (or reused) once all its rows are evicted.

use std::collections::VecDeque;

const BLOCK_BYTES: usize = 64 * 1024;
const WRAPPED_BIT: u32 = 1 << 31;
const ESCAPES_BIT: u32 = 1 << 30;
const END_MASK: u32 = ESCAPES_BIT - 1;

struct Block {
    bytes: Vec<u8>,
    /// Per row: end offset in `bytes` (exclusive) with the wrapped and escapes bits.
    rows: Vec<u32>,
}

impl Block {
    fn with_capacity(bytes: usize) -> Block {
        Block {
            bytes: Vec::with_capacity(bytes),
            rows: Vec::new(),
        }
    }

    fn row(&self, index: usize) -> ScrollbackRow<'_> {
        let start = if index == 0 {
            0
        } else {
            (self.rows[index - 1] & END_MASK) as usize
        };
        let entry = self.rows[index];
        let end = (entry & END_MASK) as usize;
        let text = std::str::from_utf8(&self.bytes[start..end]).unwrap_or("");
        ScrollbackRow {
            formatted: text,
            wrapped: entry & WRAPPED_BIT != 0,
            has_escapes: entry & ESCAPES_BIT != 0,
        }
    }
}

/// One stored row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScrollbackRow<'a> {
    /// The row's characters with SGR sequences; each row starts from default attributes.
    pub formatted: &'a str,
    /// The row continues on the next row (soft wrap).
    pub wrapped: bool,
    /// `formatted` contains escape sequences.
    pub has_escapes: bool,
}

pub struct Scrollback {
    capacity: usize,
    blocks: VecDeque<Block>,
    /// Rows of the front block that are already evicted.
    evicted_in_front: usize,
    len: usize,
    pushed_total: u64,
    spare: Option<Block>,
}

impl Scrollback {
    /// A store that keeps at most `capacity` rows.
    pub fn new(capacity: usize) -> Scrollback {
        Scrollback {
            capacity,
            blocks: VecDeque::new(),
            evicted_in_front: 0,
            len: 0,
            pushed_total: 0,
            spare: None,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Rows pushed since the pane started (evicted ones included).
    pub fn pushed_total(&self) -> u64 {
        self.pushed_total
    }

    /// Appends a row, evicting the oldest when full.
    pub fn push(&mut self, formatted: &str, wrapped: bool) {
        self.pushed_total += 1;
        if self.capacity == 0 {
            return;
        }
        let needs_block = match self.blocks.back() {
            None => true,
            Some(block) => {
                !block.rows.is_empty() && block.bytes.len() + formatted.len() > BLOCK_BYTES
            }
        };
        if needs_block {
            if let Some(full) = self.blocks.back_mut() {
                full.rows.shrink_to_fit();
            }
            let block = match self.spare.take() {
                Some(mut block) => {
                    block.bytes.clear();
                    block.rows.clear();
                    block
                }
                None => Block::with_capacity(BLOCK_BYTES.max(formatted.len())),
            };
            self.blocks.push_back(block);
        }
        let block = self.blocks.back_mut().expect("a block was just ensured");
        block.bytes.extend_from_slice(formatted.as_bytes());
        let end = u32::try_from(block.bytes.len())
            .unwrap_or(END_MASK)
            .min(END_MASK);
        let mut entry = end;
        if wrapped {
            entry |= WRAPPED_BIT;
        }
        if formatted.as_bytes().contains(&0x1b) {
            entry |= ESCAPES_BIT;
        }
        block.rows.push(entry);
        self.len += 1;
        while self.len > self.capacity {
            self.evict_oldest();
        }
    }

    fn evict_oldest(&mut self) {
        self.evicted_in_front += 1;
        self.len -= 1;
        let front_rows = self.blocks.front().map_or(0, |block| block.rows.len());
        if self.evicted_in_front >= front_rows {
            let block = self.blocks.pop_front();
            self.evicted_in_front = 0;
            if self.spare.is_none()
                && block
                    .as_ref()
                    .is_some_and(|block| block.bytes.capacity() <= BLOCK_BYTES)
            {
                self.spare = block;
            }
        }
    }

    /// The rows from index `start` (0 = oldest retained) to the newest, in order.
    pub fn rows_from(&self, start: usize) -> impl Iterator<Item = ScrollbackRow<'_>> + '_ {
        let mut skip = start + self.evicted_in_front;
        let mut first_block = 0;
        while first_block < self.blocks.len() && skip >= self.blocks[first_block].rows.len() {
            skip -= self.blocks[first_block].rows.len();
            first_block += 1;
        }
        self.blocks
            .range(first_block..)
            .enumerate()
            .flat_map(move |(offset, block)| {
                let from = if offset == 0 { skip } else { 0 };
                (from..block.rows.len()).map(move |index| block.row(index))
            })
    }

    /// Drops every row.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.evicted_in_front = 0;
        self.len = 0;
    }

    /// Approximate heap bytes held (for memory reports).
    pub fn heap_bytes(&self) -> usize {
        self.blocks
            .iter()
            .chain(self.spare.iter())
            .map(|block| block.bytes.capacity() + block.rows.capacity() * 4)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(store: &Scrollback, start: usize) -> Vec<String> {
        store
            .rows_from(start)
            .map(|row| row.formatted.to_string())
            .collect()
    }

    #[test]
    fn keeps_exactly_the_newest_rows() {
        let mut store = Scrollback::new(3);
        for index in 0..10 {
            store.push(&format!("row {index}"), index % 2 == 0);
        }
        assert_eq!(store.len(), 3);
        assert_eq!(store.pushed_total(), 10);
        assert_eq!(texts(&store, 0), ["row 7", "row 8", "row 9"]);
        assert_eq!(texts(&store, 2), ["row 9"]);
        let wrapped: Vec<bool> = store.rows_from(0).map(|row| row.wrapped).collect();
        assert_eq!(wrapped, [false, true, false]);
    }

    #[test]
    fn spans_many_blocks_and_frees_evicted_ones() {
        let mut store = Scrollback::new(5_000);
        let line = "x".repeat(100);
        for index in 0..20_000 {
            store.push(&format!("{index:05} {line}"), false);
        }
        assert_eq!(store.len(), 5_000);
        let rows = texts(&store, 0);
        assert!(rows[0].starts_with("15000 "));
        assert!(rows[4_999].starts_with("19999 "));
        assert_eq!(texts(&store, 4_998).len(), 2);
        // 5,000 rows of 106 bytes need about 8 blocks; evicted blocks are not kept.
        assert!(
            store.heap_bytes() < 12 * BLOCK_BYTES,
            "{}",
            store.heap_bytes()
        );
    }

    #[test]
    fn zero_capacity_stores_nothing_and_escape_rows_are_flagged() {
        let mut store = Scrollback::new(0);
        store.push("gone", false);
        assert!(store.is_empty());
        assert_eq!(store.pushed_total(), 1);
        let mut store = Scrollback::new(2);
        store.push("\x1b[31mred", false);
        store.push("plain", false);
        let flags: Vec<bool> = store.rows_from(0).map(|row| row.has_escapes).collect();
        assert_eq!(flags, [true, false]);
    }

    #[test]
    fn a_row_longer_than_a_block_gets_its_own_block() {
        let mut store = Scrollback::new(10);
        let huge = "y".repeat(BLOCK_BYTES * 2);
        store.push("small", false);
        store.push(&huge, true);
        store.push("after", false);
        let rows = texts(&store, 0);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[1].len(), BLOCK_BYTES * 2);
        assert_eq!(rows[2], "after");
    }
}
