//! The wasmtime engine and loaded components. One [`Runtime`] is shared by
//! every plugin of a process: it owns the engine, the epoch ticker that
//! enforces deadlines, and the linker with WASI and the LingXi imports.

use std::path::Path;
use std::sync::Arc;
use std::thread;

use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, Store, StoreLimitsBuilder};
use wasmtime_wasi::WasiCtxBuilder;

use crate::bindings::lingxi::plugin::types as wit;
use crate::bindings::{LingxiPlugin, LingxiPluginPre};
use crate::cache::{CompileCache, engine_hash};
use crate::error::LoadError;
use crate::limits::{EPOCH_TICK, Limits, OutputBudget};
use crate::pack::Packed;
use crate::state::HostState;

/// A wasmtime engine configured for plugins, with its epoch ticker.
#[derive(Clone)]
pub struct Runtime {
    engine: Engine,
    linker: Arc<Linker<HostState>>,
    cache: Option<CompileCache>,
}

impl Runtime {
    /// Creates the engine and starts the epoch ticker thread (which stops
    /// when the last clone of the engine is dropped).
    pub fn new() -> Result<Self, LoadError> {
        let mut config = Config::new();
        config.epoch_interruption(true);
        let engine = Engine::new(&config).map_err(|e| LoadError::Engine(e.to_string()))?;

        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| LoadError::Engine(e.to_string()))?;
        crate::policy::net::link_name_lookup(&mut linker)
            .map_err(|e| LoadError::Engine(e.to_string()))?;
        crate::storage::writes::link(&mut linker).map_err(|e| LoadError::Engine(e.to_string()))?;
        LingxiPlugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)
            .map_err(|e| LoadError::Engine(e.to_string()))?;

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
            .map_err(|e| LoadError::Engine(format!("cannot start the epoch thread: {e}")))?;

        Ok(Runtime {
            engine,
            linker: Arc::new(linker),
            cache: None,
        })
    }

    /// Keeps compiled components in `cache` (see [`CompileCache`]).
    pub fn with_cache(mut self, cache: Option<CompileCache>) -> Self {
        self.cache = cache;
        self
    }

    /// The underlying engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Loads a component file and reads its manifest.
    pub fn load_file(&self, path: &Path) -> Result<PluginComponent, LoadError> {
        let bytes = std::fs::read(path).map_err(|source| LoadError::Read {
            path: path.to_owned(),
            source,
        })?;
        self.load_bytes(&bytes, &path.display().to_string())
    }

    /// Compiles component bytes (`name` is used in messages) and reads the
    /// plugin's manifest in a sandbox with no capabilities at all.
    pub fn load_bytes(&self, bytes: &[u8], name: &str) -> Result<PluginComponent, LoadError> {
        let compiled = match &self.cache {
            Some(cache) => cache.load_or_compile(&self.engine, bytes),
            None => Component::new(&self.engine, bytes),
        };
        let component = compiled.map_err(|e| LoadError::Compile {
            name: name.to_owned(),
            reason: format!("{e:#}"),
        })?;
        self.prepare(component, name)
    }

    /// Precompiles a component for this engine (the bytes `pack` embeds).
    pub fn precompile(&self, bytes: &[u8], name: &str) -> Result<Vec<u8>, LoadError> {
        self.engine
            .precompile_component(bytes)
            .map_err(|e| LoadError::Compile {
                name: name.to_owned(),
                reason: format!("{e:#}"),
            })
    }

    /// Loads a verified packed plugin: its precompiled code when it was made
    /// for this engine, else the portable component, compiled now.
    pub fn load_packed(&self, packed: &Packed, name: &str) -> Result<PluginComponent, LoadError> {
        if packed.header.engine == engine_hash(&self.engine) && !packed.precompiled().is_empty() {
            // SAFETY: the precompiled bytes come from a payload whose SHA-256
            // matched the trailer (checked by `pack::read`), written by our
            // own `pack` for an engine with this very compatibility hash;
            // wasmtime validates the header and compatibility again.
            match unsafe { Component::deserialize(&self.engine, packed.precompiled()) } {
                Ok(component) => return self.prepare(component, name),
                Err(e) => tracing::debug!("recompiling {name}: precompiled code unusable: {e:#}"),
            }
        }
        self.load_bytes(packed.component(), name)
    }

    /// Links a compiled component and reads its manifest.
    fn prepare(&self, component: Component, name: &str) -> Result<PluginComponent, LoadError> {
        let world_error = |e: wasmtime::Error| LoadError::World {
            name: name.to_owned(),
            reason: format!("{e:#}"),
        };
        let instance_pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(world_error)?;
        let pre = LingxiPluginPre::new(instance_pre).map_err(world_error)?;

        let manifest_error = |e: wasmtime::Error| LoadError::Manifest {
            name: name.to_owned(),
            reason: format!("{e:#}"),
        };
        let limits = Limits::default();
        let mut store = self.store(WasiCtxBuilder::new(), "(loading)", &limits);
        let bindings = pre.instantiate(&mut store).map_err(manifest_error)?;
        let manifest = bindings
            .lingxi_plugin_plugin()
            .call_get_manifest(&mut store)
            .map_err(manifest_error)?;
        Ok(PluginComponent {
            runtime: self.clone(),
            pre,
            manifest,
        })
    }

    /// A fresh store with `wasi`, the memory cap, and a trap at the deadline.
    pub(crate) fn store(
        &self,
        mut wasi: WasiCtxBuilder,
        plugin_id: &str,
        limits: &Limits,
    ) -> Store<HostState> {
        let state = HostState {
            plugin_id: plugin_id.into(),
            wasi: wasi.build(),
            table: Default::default(),
            limits: StoreLimitsBuilder::new()
                .memory_size(limits.max_memory_bytes)
                .trap_on_grow_failure(true)
                .build(),
            snapshot: None,
            net: None,
            output: OutputBudget::new(limits.max_output_bytes),
            data_dir: None,
            writes: Default::default(),
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        store.set_epoch_deadline(limits.deadline_ticks());
        store
    }
}

/// A compiled plugin component, ready to instantiate, and its manifest.
#[derive(Clone)]
pub struct PluginComponent {
    pub(crate) runtime: Runtime,
    pub(crate) pre: LingxiPluginPre<HostState>,
    manifest: wit::Manifest,
}

impl PluginComponent {
    /// What the plugin declares about itself.
    pub fn manifest(&self) -> &wit::Manifest {
        &self.manifest
    }
}
