//! Bytes through streams: a file's or a connection's stream, handed to the
//! guest while a call is recorded, is wrapped in place in the resource
//! table (same handle, same parent) so that what passes through is counted.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, InputStream, OutputStream};
use wasmtime_wasi::p2::{Pollable, StreamResult};

use super::Effects;

/// What a stream reads or writes.
#[derive(Debug, Clone)]
pub(crate) enum Target {
    /// A file, by the path the guest opened it with.
    File(String),
    /// A TCP connection.
    Tcp(SocketAddr),
}

impl Target {
    fn count(&self, effects: &Effects, read: u64, written: u64) {
        match self {
            Target::File(path) => effects.bytes(path, read, written),
            Target::Tcp(addr) => effects.net_bytes(*addr, written, read),
        }
    }
}

/// Wraps the input stream `stream` so that its bytes are counted.
pub(crate) fn count_input(
    table: &mut ResourceTable,
    stream: &Resource<DynInputStream>,
    effects: &Arc<Effects>,
    target: Target,
) -> wasmtime::Result<()> {
    let counted = |inner| -> DynInputStream { Box::new(Counted::new(inner, effects, target)) };
    swap(table, stream, Box::new(Closed), counted)
}

/// Wraps the output stream `stream` so that its bytes are counted.
pub(crate) fn count_output(
    table: &mut ResourceTable,
    stream: &Resource<DynOutputStream>,
    effects: &Arc<Effects>,
    target: Target,
) -> wasmtime::Result<()> {
    let counted = |inner| -> DynOutputStream { Box::new(Counted::new(inner, effects, target)) };
    swap(table, stream, Box::new(Closed), counted)
}

/// Replaces the stream in `stream`'s slot by `wrap` of it (`closed` holds
/// the slot meanwhile): same handle, same parent.
fn swap<S: Send + 'static>(
    table: &mut ResourceTable,
    stream: &Resource<S>,
    closed: S,
    wrap: impl FnOnce(S) -> S,
) -> wasmtime::Result<()> {
    let slot = table.get_mut(stream)?;
    let inner = std::mem::replace(slot, closed);
    *slot = wrap(inner);
    Ok(())
}

/// A stream and where its bytes are counted.
struct Counted<S> {
    inner: S,
    effects: Arc<Effects>,
    target: Target,
}

impl<S> Counted<S> {
    fn new(inner: S, effects: &Arc<Effects>, target: Target) -> Self {
        Counted {
            inner,
            effects: effects.clone(),
            target,
        }
    }

    fn note(&self, read: usize, written: usize) {
        if self.effects.active() {
            self.target
                .count(&self.effects, read as u64, written as u64);
        }
    }
}

#[wasmtime_wasi::async_trait]
impl<S: Pollable> Pollable for Counted<S> {
    async fn ready(&mut self) {
        self.inner.ready().await
    }
}

#[wasmtime_wasi::async_trait]
impl InputStream for Counted<DynInputStream> {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        let bytes = self.inner.read(size)?;
        self.note(bytes.len(), 0);
        Ok(bytes)
    }
    async fn blocking_read(&mut self, size: usize) -> StreamResult<Bytes> {
        let bytes = self.inner.blocking_read(size).await?;
        self.note(bytes.len(), 0);
        Ok(bytes)
    }
    fn skip(&mut self, nelem: usize) -> StreamResult<usize> {
        self.inner.skip(nelem)
    }
    async fn blocking_skip(&mut self, nelem: usize) -> StreamResult<usize> {
        self.inner.blocking_skip(nelem).await
    }
    async fn cancel(&mut self) {
        self.inner.cancel().await
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for Counted<DynOutputStream> {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        let len = bytes.len();
        self.inner.write(bytes)?;
        self.note(0, len);
        Ok(())
    }
    fn flush(&mut self) -> StreamResult<()> {
        self.inner.flush()
    }
    fn check_write(&mut self) -> StreamResult<usize> {
        self.inner.check_write()
    }
    async fn blocking_write_and_flush(&mut self, bytes: Bytes) -> StreamResult<()> {
        let len = bytes.len();
        self.inner.blocking_write_and_flush(bytes).await?;
        self.note(0, len);
        Ok(())
    }
    fn write_zeroes(&mut self, nelem: usize) -> StreamResult<()> {
        self.inner.write_zeroes(nelem)?;
        self.note(0, nelem);
        Ok(())
    }
    async fn write_ready(&mut self) -> StreamResult<usize> {
        self.inner.write_ready().await
    }
    async fn cancel(&mut self) {
        self.inner.cancel().await
    }
}

/// What a slot holds for the instant between taking its stream out and
/// putting the counted one in.
struct Closed;

#[wasmtime_wasi::async_trait]
impl Pollable for Closed {
    async fn ready(&mut self) {}
}

impl InputStream for Closed {
    fn read(&mut self, _size: usize) -> StreamResult<Bytes> {
        Err(wasmtime_wasi::p2::StreamError::Closed)
    }
}

impl OutputStream for Closed {
    fn write(&mut self, _bytes: Bytes) -> StreamResult<()> {
        Err(wasmtime_wasi::p2::StreamError::Closed)
    }
    fn flush(&mut self) -> StreamResult<()> {
        Err(wasmtime_wasi::p2::StreamError::Closed)
    }
    fn check_write(&mut self) -> StreamResult<usize> {
        Err(wasmtime_wasi::p2::StreamError::Closed)
    }
}
