//! Guest stdout and stderr. They never reach the process stdout (the JSONL
//! channel): every line becomes a log event with the plugin id as a field
//! (see [`crate::observe`]), that `lingxi-wasm-run` writes to its stderr.

use std::borrow::Cow;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError, StreamResult};

use crate::limits::OutputBudget;
use crate::observe::{LogSource, Origin};

/// Longest partial line kept before it is emitted anyway.
const MAX_PENDING_LINE: usize = 64 * 1024;

/// The `tracing` target of guest output and guest log lines.
pub const GUEST_TARGET: &str = "lingxi_wasm::guest";

/// Where one guest stream's bytes go: split into lines, each logged.
#[derive(Clone)]
pub struct GuestOutput {
    inner: Arc<Mutex<LineBuffer>>,
    budget: Arc<OutputBudget>,
    /// What each line costs beyond its bytes: prefix and frame.
    per_line: usize,
    /// Whether anything was written since the last `flush_partial`.
    written: Arc<std::sync::atomic::AtomicBool>,
}

struct LineBuffer {
    origin: Origin,
    source: LogSource,
    pending: Vec<u8>,
}

impl LineBuffer {
    fn push(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|b| *b == b'\n') {
            self.pending.extend_from_slice(chunk);
            if chunk.ends_with(b"\n") || self.pending.len() >= MAX_PENDING_LINE {
                self.emit();
            }
        }
    }

    fn emit(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let end = self
            .pending
            .iter()
            .rposition(|b| !matches!(b, b'\n' | b'\r'))
            .map_or(0, |i| i + 1);
        let line = lossy_no_longer(&self.pending[..end]);
        self.origin.emit(self.source, &line);
        self.pending.clear();
    }
}

/// Like `String::from_utf8_lossy`, but an invalid sequence becomes one `?`
/// and so does every control character ([`printable`]), so the text is
/// never longer than the bytes it was charged for.
fn lossy_no_longer(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return printable(text);
    }
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(&printable(chunk.valid()));
        if !chunk.invalid().is_empty() {
            text.push('?');
        }
    }
    Cow::Owned(text)
}

/// `text` with every control character but tab (newlines included), and
/// every character that changes how text looks without showing (see
/// `invisible`), replaced by `?`. Text from a plugin is shown this way: a
/// terminal never sees its escape sequences, a reader never sees lines it
/// forged or text it reversed, and the log formatter has nothing to escape
/// (it would write `\x1b` for one byte: more than was charged).
pub fn printable(text: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| (c.is_control() && c != '\t') || invisible(c);
    if !text.contains(unsafe_char) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| if unsafe_char(c) { '?' } else { c })
            .collect(),
    )
}

/// Characters that change how text looks without showing: zero-width
/// ones, bidirectional controls and line or paragraph separators (a name
/// with one could pass for another, or a line hide what follows it).
pub(crate) fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
            | '\u{00AD}'
    )
}

/// A name from a caller or a plugin (a tool, a command, a plugin id) as
/// messages show it: [`printable`], and cut after 128 bytes so a huge name
/// cannot make a huge error text or log line.
pub(crate) fn shown_name(name: &str) -> String {
    const MAX: usize = 128;
    let text = printable(name);
    if text.len() <= MAX {
        return text.into_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

impl Drop for LineBuffer {
    fn drop(&mut self) {
        self.emit();
    }
}

impl GuestOutput {
    /// Output of `source` (stdout or stderr) of the instance `origin`,
    /// charged to `budget`.
    pub(crate) fn new(origin: &Origin, source: LogSource, budget: Arc<OutputBudget>) -> Self {
        GuestOutput {
            per_line: origin.line_cost(source),
            written: Arc::default(),
            inner: Arc::new(Mutex::new(LineBuffer {
                origin: origin.clone(),
                source,
                pending: Vec::new(),
            })),
            budget,
        }
    }

    /// Charges `bytes` as they will be written: the bytes plus, for each
    /// line they end, its prefix and frame (an empty line costs that too).
    fn charge(&self, bytes: &[u8]) -> Result<(), crate::limits::OutputFlood> {
        let lines = bytes.iter().filter(|b| **b == b'\n').count();
        self.budget.spend(
            bytes
                .len()
                .saturating_add(lines.saturating_mul(self.per_line)),
        )
    }

    fn write_bytes(&self, bytes: &[u8]) {
        self.written
            .store(true, std::sync::atomic::Ordering::Relaxed);
        // A poisoned lock only means another writer panicked mid-line; the
        // buffer is still usable.
        let mut buffer = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        buffer.push(bytes);
    }

    /// Emits a pending partial line (called at the end of each call).
    pub fn flush_partial(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        // A load first: most calls write nothing, and a load is cheaper
        // than a swap on the way of every call.
        if !self.written.load(Relaxed) || !self.written.swap(false, Relaxed) {
            return;
        }
        let mut buffer = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        buffer.emit();
    }
}

impl IsTerminal for GuestOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for GuestOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for GuestOutput {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.charge(&bytes)
            .map_err(|flood| StreamError::Trap(flood.into()))?;
        self.write_bytes(&bytes);
        Ok(())
    }
    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }
    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(MAX_PENDING_LINE)
    }
}

impl tokio::io::AsyncWrite for GuestOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if let Err(flood) = self.charge(buf) {
            return Poll::Ready(Err(std::io::Error::other(flood)));
        }
        self.write_bytes(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_hides_controls_and_characters_that_reorder_or_hide_text() {
        assert_eq!(printable("a\tb"), "a\tb");
        assert_eq!(printable("ok\n\u{1b}[32mforged"), "ok??[32mforged");
        assert_eq!(
            printable("t.\u{202e}gnp.exe\u{200b}\u{2028}"),
            "t.?gnp.exe??"
        );
    }

    #[test]
    fn every_line_is_charged_with_its_frame() {
        let budget = OutputBudget::new(1000);
        let origin = Origin::new("p");
        let out = GuestOutput::new(&origin, LogSource::Stdout, budget.clone());
        let per_line = "p stdout".len() + crate::limits::LINE_OVERHEAD;
        // Ten empty lines cost ten frames, not ten bytes.
        out.charge(&[b'\n'; 10]).unwrap();
        assert!(budget.spend(1000 - 10 - 10 * per_line).is_ok());
        assert!(budget.spend(1).is_err());
    }

    #[test]
    fn names_in_messages_are_printable_and_short() {
        assert_eq!(shown_name("probe.echo"), "probe.echo");
        assert_eq!(shown_name("a\nb"), "a?b");
        let long = shown_name(&"é".repeat(1000));
        assert!(
            long.len() <= 128 + '…'.len_utf8() && long.ends_with('…'),
            "{long}"
        );
    }

    #[test]
    fn invalid_utf8_is_never_longer_when_written() {
        assert_eq!(lossy_no_longer(b"ok"), "ok");
        assert_eq!(lossy_no_longer(&[b'a', 0xff, 0xfe, b'b']), "a??b");
        assert_eq!(lossy_no_longer(b"\x1b[8mhidden\x07"), "?[8mhidden?");
        assert_eq!(printable("a\u{9b}b\tc"), "a?b\tc");
    }
}
