//! Guest stdout and stderr. They never reach the process stdout (the JSONL
//! channel): every line becomes a log event with the plugin id as a field
//! (see [`crate::observe`]), that `lingxi-wasm-run` writes to its stderr.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError, StreamResult};

use crate::limits::MAX_PENDING_LINE;
use crate::limits::OutputBudget;
use crate::observe::{LogSource, Origin};
use crate::text::lossy_no_longer;

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
}
