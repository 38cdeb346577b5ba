//! Newline-delimited framing with a line limit. A partial line at end of input is not an
//! error (the peer went away before finishing it); an over-long line is reported once, and
//! the connection is then closed by the caller.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// One complete line without its `\n` (and without a trailing `\r`).
    Line(Vec<u8>),
    /// The line grew past the limit before its newline arrived.
    TooLong,
    /// The peer closed the connection (a partial line, if any, is dropped).
    End,
}

pub struct LineReader<R> {
    inner: R,
    max_line_bytes: usize,
    pending: Vec<u8>,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(inner: R, max_line_bytes: usize) -> LineReader<R> {
        LineReader {
            inner,
            max_line_bytes,
            pending: Vec::new(),
        }
    }

    /// Reads the next frame. Cancel-safe: bytes already read stay in `pending`.
    pub async fn next_frame(&mut self) -> std::io::Result<Frame> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                self.pending.clear();
                return Ok(Frame::End);
            }
            match available.iter().position(|byte| *byte == b'\n') {
                Some(newline) => {
                    if self.pending.len() + newline > self.max_line_bytes {
                        self.inner.consume(newline + 1);
                        self.pending.clear();
                        return Ok(Frame::TooLong);
                    }
                    self.pending.extend_from_slice(&available[..newline]);
                    self.inner.consume(newline + 1);
                    let mut line = std::mem::take(&mut self.pending);
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    return Ok(Frame::Line(line));
                }
                None => {
                    let length = available.len();
                    if self.pending.len() + length > self.max_line_bytes {
                        self.inner.consume(length);
                        self.pending.clear();
                        return Ok(Frame::TooLong);
                    }
                    self.pending.extend_from_slice(available);
                    self.inner.consume(length);
                }
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
    async fn an_over_long_line_is_reported_once() {
        let mut input = vec![b'x'; 50];
        input.push(b'\n');
        input.extend_from_slice(b"ok\n");
        let got = frames(&input, 20).await;
        assert_eq!(got[0], Frame::TooLong);
    }
}
