//! The JSONL server: reads request lines, answers each through a
//! [`Dispatcher`] with one [`PluginHost`], writes exactly one response line
//! per decodable request, in order (spec §2–§3).

use std::io::{self, BufRead, Write};

use crate::dispatch::Dispatcher;
use crate::effects::ReceiptSlot;
use crate::limits::MAX_LINE_BYTES;
use crate::plugin::PluginHost;

/// One JSONL session with one plugin.
///
/// Requests are read and answered on the calling thread, one at a time,
/// inside a single-threaded tokio runtime owned by the server; each call
/// into the plugin is bounded by its deadline. Reading the next line happens
/// only between calls, so nothing blocks the thread while a deadline runs.
pub struct Server {
    /// The plugin, and the plugin's id.
    host: PluginHost,
    plugin: String,
    /// The wire front (the dialect answers take).
    front: Dispatcher,
    /// Runs the calls; `None` only while being dropped.
    tokio: Option<tokio::runtime::Runtime>,
    /// Every call's receipt, and where it goes before the call's response
    /// is written ([`Server::on_receipt`]).
    receipts: Option<(ReceiptSlot, ReceiptSink)>,
}

/// What [`Server::on_receipt`] hands each receipt to, with the `id` of
/// the response it belongs to (as the response line has it).
pub type ReceiptSink =
    Box<dyn FnMut(Option<&serde_json::Value>, &crate::policy::receipt::Receipt) + Send>;

impl Server {
    /// A session for `host`. Until a request carries params, answers use the
    /// Core dialect. Fails only if the runtime's timer or I/O driver cannot
    /// be created.
    pub fn new(host: PluginHost) -> io::Result<Self> {
        Ok(Server::with_runtime(host, crate::engine::call_runtime()?))
    }

    /// The same on a runtime the caller made (e.g. the one that loaded the
    /// plugin, see [`crate::call_runtime`]). It must be a current-thread
    /// runtime with time and I/O enabled.
    pub fn with_runtime(host: PluginHost, tokio: tokio::runtime::Runtime) -> Self {
        let plugin = host.manifest().id.clone();
        Server {
            host,
            front: Dispatcher::new(Some(plugin.clone())),
            plugin,
            tokio: Some(tokio),
            receipts: None,
        }
    }

    /// Hands every call's receipt to `sink` (the one way a server keeps
    /// receipts): each line's, also `plugin.initialize`'s, before its
    /// response is written, with the `id` the response carries. A plugin in
    /// learning mode ([`PluginHost::set_learning`]) keeps the longer lists
    /// of [`ReceiptSlot::for_learning`]. A second sink replaces the first.
    pub fn on_receipt(&mut self, sink: ReceiptSink) {
        let slot = match self.host.learning() {
            true => ReceiptSlot::for_learning(),
            false => ReceiptSlot::new(),
        };
        self.host.keep_receipts(slot.clone());
        self.receipts = Some((slot, sink));
    }

    /// Hands the receipt of the call just answered to the sink, with the
    /// id its response carries.
    fn pass_receipt(&mut self) {
        let Some((slot, sink)) = &mut self.receipts else {
            return;
        };
        if let Some(receipt) = slot.take() {
            let id = (self.front.answered_id()).map(|id| serde_json::Value::String(id.to_owned()));
            sink(id.as_ref(), &receipt);
        }
    }

    /// Runs `work` to completion on the server's runtime (taken out of the
    /// server meanwhile, so `work` may borrow the rest of it).
    fn block_on<T>(&mut self, work: impl AsyncFnOnce(&mut Server) -> T) -> T {
        let Some(tokio) = self.tokio.take() else {
            unreachable!("the runtime lives as long as the server")
        };
        let result = tokio.block_on(work(self));
        self.tokio = Some(tokio);
        result
    }

    /// The id of the plugin being served.
    pub fn plugin(&self) -> &str {
        &self.plugin
    }

    /// Serves until EOF on `input`, then cancels the plugin's background
    /// tasks (waiting at most [`TASK_STOP_WAIT`](crate::limits::TASK_STOP_WAIT))
    /// and deactivates the plugin. Each response
    /// is written as one line and flushed. Fails only if `output` fails.
    /// The whole loop runs inside the runtime; the next line is read only
    /// between calls, when no deadline is running.
    pub fn serve(&mut self, mut input: impl BufRead, mut output: impl Write) -> io::Result<()> {
        self.block_on(async |server| {
            let mut line = Vec::new();
            loop {
                line.clear();
                let read = read_line_capped(&mut input, &mut line, MAX_LINE_BYTES)?;
                if read == LineRead::Eof {
                    break;
                }
                let response = if read == LineRead::TooLong {
                    server.front.too_long(&line)
                } else {
                    server.front.answer_bytes(&mut server.host, &line).await
                };
                server.pass_receipt();
                if let Some(response) = response {
                    output.write_all(response.as_bytes())?;
                    output.write_all(b"\n")?;
                    output.flush()?;
                }
            }
            // Its background tasks end with the session, before the plugin
            // cleans up.
            server.host.stop_tasks().await;
            if let Err(e) = server.host.deactivate().await {
                tracing::warn!(plugin = %server.plugin, "deactivate failed: {e}");
            }
            Ok(())
        })
    }

    /// Handles one raw line (without its newline). `None` means no response:
    /// the line was empty, or undecodable with no recoverable id.
    pub fn handle_bytes(&mut self, line: &[u8]) -> Option<String> {
        let answer =
            self.block_on(async |server| server.front.answer_bytes(&mut server.host, line).await);
        self.pass_receipt();
        answer
    }

    /// Handles one line of text.
    pub fn handle_line(&mut self, line: &str) -> Option<String> {
        let answer =
            self.block_on(async |server| server.front.answer_line(&mut server.host, line).await);
        self.pass_receipt();
        answer
    }
}

impl Drop for Server {
    /// A call stopped at its deadline may leave a thread blocked in the
    /// system (a name lookup that never answers): do not wait for it.
    fn drop(&mut self) {
        if let Some(tokio) = self.tokio.take() {
            tokio.shutdown_background();
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum LineRead {
    Line,
    TooLong,
    Eof,
}

/// Reads one `\n`-terminated line into `buf` (without the newline), keeping
/// at most `cap` bytes; the rest of an over-long line is consumed and dropped.
fn read_line_capped(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<LineRead> {
    let mut seen_any = false;
    let mut too_long = false;
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(match (seen_any, too_long) {
                (false, _) => LineRead::Eof,
                (true, true) => LineRead::TooLong,
                (true, false) => LineRead::Line,
            });
        }
        seen_any = true;
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        let room = cap.saturating_sub(buf.len());
        if chunk.len() > room {
            too_long = true;
        }
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let consumed = done.unwrap_or(available.len());
        input.consume(consumed);
        if done.is_some() {
            return Ok(if too_long {
                LineRead::TooLong
            } else {
                LineRead::Line
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_reader_splits_lines_and_drops_the_excess() {
        let mut input = io::Cursor::new(b"ab\n0123456789\nlast".to_vec());
        let mut buf = Vec::new();
        assert_eq!(
            read_line_capped(&mut input, &mut buf, 4).unwrap(),
            LineRead::Line
        );
        assert_eq!(buf, b"ab");
        buf.clear();
        assert_eq!(
            read_line_capped(&mut input, &mut buf, 4).unwrap(),
            LineRead::TooLong
        );
        assert_eq!(buf, b"0123");
        buf.clear();
        assert_eq!(
            read_line_capped(&mut input, &mut buf, 4).unwrap(),
            LineRead::Line
        );
        assert_eq!(buf, b"last");
        buf.clear();
        assert_eq!(
            read_line_capped(&mut input, &mut buf, 4).unwrap(),
            LineRead::Eof
        );
    }
}
