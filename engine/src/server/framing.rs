//! Newline-delimited framing with a line limit. A partial line at end of input is not an
//! error (the peer went away before finishing it); an over-long line is reported once, and
//! the connection is then closed by the caller.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use super::line_budget::{PartialLineBudget, PendingLine};

#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// One complete line without its `\n` (and without a trailing `\r`).
    Line(Vec<u8>),
    /// The line grew past the limit before its newline arrived.
    TooLong,
    /// The unfinished lines of all connections hold the whole budget; this line was
    /// dropped.
    BudgetSpent,
    /// The peer closed the connection (a partial line, if any, is dropped).
    End,
}

pub struct LineReader<R> {
    inner: R,
    max_line_bytes: usize,
    /// The start of a line whose newline has not arrived yet.
    pending: PendingLine,
    /// Bytes read ahead of `inner` (see [`LineReader::read_ahead`]), not yet framed.
    ahead: Vec<u8>,
    /// The peer closed the connection after the bytes in `ahead`.
    ahead_ended: bool,
}

/// What one slice of input gave: how much of it was used, and the frame it completed.
struct Taken {
    consumed: usize,
    frame: Option<Frame>,
}

impl<R> LineReader<R> {
    pub fn new(inner: R, max_line_bytes: usize) -> LineReader<R> {
        LineReader::with_budget(inner, max_line_bytes, None)
    }

    /// A reader whose unfinished line is charged to `budget`, shared by every connection.
    pub fn with_budget(
        inner: R,
        max_line_bytes: usize,
        budget: Option<PartialLineBudget>,
    ) -> LineReader<R> {
        LineReader {
            inner,
            max_line_bytes,
            pending: PendingLine::bounded(budget),
            ahead: Vec::new(),
            ahead_ended: false,
        }
    }

    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Whether no partial line and no read-ahead bytes are held here.
    pub fn holds_nothing(&self) -> bool {
        self.pending.is_empty() && self.ahead.is_empty() && !self.ahead_ended
    }

    /// Hands over bytes that were read from the source outside `inner`, while `inner`
    /// held none; they are framed before anything `inner` reads later. An empty slice
    /// means the peer closed the connection.
    pub fn read_ahead(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            self.ahead_ended = true;
        } else {
            self.ahead.extend_from_slice(bytes);
        }
    }

    /// The next frame from the read-ahead bytes, if they complete one.
    fn frame_from_ahead(&mut self) -> Option<Frame> {
        if !self.ahead.is_empty() {
            let taken = take(&mut self.pending, self.max_line_bytes, &self.ahead);
            self.ahead.drain(..taken.consumed);
            if taken.frame.is_some() {
                return taken.frame;
            }
        }
        if self.ahead.is_empty() && std::mem::take(&mut self.ahead_ended) {
            self.pending.clear();
            return Some(Frame::End);
        }
        None
    }
}

/// Frames what `available` adds to the `pending` line.
fn take(pending: &mut PendingLine, max_line_bytes: usize, available: &[u8]) -> Taken {
    match available.iter().position(|byte| *byte == b'\n') {
        Some(newline) => {
            if pending.len() + newline > max_line_bytes {
                pending.clear();
                return Taken {
                    consumed: newline + 1,
                    frame: Some(Frame::TooLong),
                };
            }
            if pending.extend(&available[..newline]).is_err() {
                return Taken {
                    consumed: available.len(),
                    frame: Some(Frame::BudgetSpent),
                };
            }
            let mut line = pending.take();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            Taken {
                consumed: newline + 1,
                frame: Some(Frame::Line(line)),
            }
        }
        None => {
            let length = available.len();
            if pending.len() + length > max_line_bytes {
                pending.clear();
                return Taken {
                    consumed: length,
                    frame: Some(Frame::TooLong),
                };
            }
            let frame = pending.extend(available).err().map(|_| Frame::BudgetSpent);
            Taken {
                consumed: length,
                frame,
            }
        }
    }
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Reads the next frame. Cancel-safe: bytes already read stay in `pending`.
    pub async fn next_frame(&mut self) -> std::io::Result<Frame> {
        if let Some(frame) = self.frame_from_ahead() {
            return Ok(frame);
        }
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                self.pending.clear();
                return Ok(Frame::End);
            }
            let taken = take(&mut self.pending, self.max_line_bytes, available);
            self.inner.consume(taken.consumed);
            if let Some(frame) = taken.frame {
                return Ok(frame);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], limit: usize) -> Vec<Frame> {
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(7, input), limit);
        let mut frames = Vec::new();
        loop {
            let frame = reader.next_frame().await.unwrap();
            let end = frame == Frame::End;
            frames.push(frame);
            if end {
                return frames;
            }
        }
    }

    #[tokio::test]
    async fn lines_split_on_newlines_across_buffer_boundaries() {
        let got = frames(b"{\"a\":1}\n\r\n{\"bb\":22}\r\npartial", 100).await;
        assert_eq!(
            got,
            vec![
                Frame::Line(b"{\"a\":1}".to_vec()),
                Frame::Line(Vec::new()),
                Frame::Line(b"{\"bb\":22}".to_vec()),
                Frame::End
            ]
        );
    }

    #[tokio::test]
    async fn bytes_read_ahead_come_before_what_the_source_reads_later() {
        let source: &[u8] = b"of-two\"}\n{\"third\":3}\n";
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(7, source), 100);
        // Two whole lines and the start of a third arrived while the socket was polled.
        reader.read_ahead(b"{\"a\":1}\n{\"b\":2}\n{\"part\":\"one-");
        assert!(!reader.holds_nothing());
        assert_eq!(
            reader.next_frame().await.unwrap(),
            Frame::Line(b"{\"a\":1}".to_vec())
        );
        assert_eq!(
            reader.next_frame().await.unwrap(),
            Frame::Line(b"{\"b\":2}".to_vec())
        );
        assert_eq!(
            reader.next_frame().await.unwrap(),
            Frame::Line(b"{\"part\":\"one-of-two\"}".to_vec())
        );
        assert_eq!(
            reader.next_frame().await.unwrap(),
            Frame::Line(b"{\"third\":3}".to_vec())
        );
        assert_eq!(reader.next_frame().await.unwrap(), Frame::End);
        assert!(reader.holds_nothing());
    }

    #[tokio::test]
    async fn an_end_read_ahead_ends_input_after_its_bytes_and_drops_a_partial_line() {
        let mut reader = LineReader::new(tokio::io::BufReader::new(&b"never read\n"[..]), 100);
        reader.read_ahead(b"{\"a\":1}\npartial");
        reader.read_ahead(b"");
        assert_eq!(
            reader.next_frame().await.unwrap(),
            Frame::Line(b"{\"a\":1}".to_vec())
        );
        assert_eq!(reader.next_frame().await.unwrap(), Frame::End);
    }

    #[tokio::test]
    async fn the_line_limit_counts_read_ahead_bytes() {
        let mut reader = LineReader::new(tokio::io::BufReader::new(&b"xxxxxxxxxx\nok\n"[..]), 20);
        reader.read_ahead(&[b'x'; 15]);
        assert_eq!(reader.next_frame().await.unwrap(), Frame::TooLong);
    }

    #[tokio::test]
    async fn an_over_long_line_is_reported_once() {
        let mut input = vec![b'x'; 50];
        input.push(b'\n');
        input.extend_from_slice(b"ok\n");
        let got = frames(&input, 20).await;
        assert_eq!(got[0], Frame::TooLong);
    }
}
