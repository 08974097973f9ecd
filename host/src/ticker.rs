//! The epoch ticker: the thread whose ticks make a running guest yield to
//! its deadline (every [`EPOCH_TICK`]), one per engine.
//!
//! It starts with the engine's first store, before any guest code runs,
//! not with the engine: a second thread alive while a plugin's code is
//! mapped and published makes each page protection change a cross-CPU
//! flush, a large part of a packed start on a virtual machine. It stops
//! when the last clone of the engine is dropped.

use std::sync::{Arc, OnceLock};
use std::thread;

use wasmtime::Engine;

use crate::limits::EPOCH_TICK;

/// An engine's ticker, shared by the clones of its runtime.
#[derive(Clone, Default)]
pub(crate) struct Ticker(Arc<OnceLock<Result<(), String>>>);

impl Ticker {
    /// Starts the thread for `engine` if it is not running yet. An error
    /// (no thread could be started) is kept: no store is made without it,
    /// as no deadline could stop a spinning guest.
    pub(crate) fn start(&self, engine: &Engine) -> Result<(), String> {
        self.0
            .get_or_init(|| {
                let weak = engine.weak();
                thread::Builder::new()
                    .name("lingxi-wasm-epoch".into())
                    .spawn(move || {
                        while let Some(engine) = weak.upgrade() {
                            engine.increment_epoch();
                            drop(engine);
                            thread::sleep(EPOCH_TICK);
                        }
                    })
                    .map(drop)
                    .map_err(|e| format!("cannot start the epoch thread: {e}"))
            })
            .clone()
    }
}
