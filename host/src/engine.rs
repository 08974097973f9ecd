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
        #[cfg(all(unix, target_arch = "x86_64"))]
        config.with_custom_code_memory(Some(Arc::new(crate::code::PageProtection::new())));
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
        let component = self.compile(bytes, name)?;
        self.prepare(component, name, None)
    }

    /// Compiles component bytes, through the cache if there is one.
    fn compile(&self, bytes: &[u8], name: &str) -> Result<Component, LoadError> {
        let compiled = match &self.cache {
            Some(cache) => cache.load_or_compile(&self.engine, bytes),
            None => Component::new(&self.engine, bytes),
        };
        compiled.map_err(|e| LoadError::Compile {
            name: name.to_owned(),
            reason: format!("{e:#}"),
        })
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
    /// for this engine, else the portable component, compiled now. The
    /// manifest recorded at pack time comes from these very bytes (one
    /// digest covers both), so no instance is needed to read it.
    pub fn load_packed(&self, packed: &Packed, name: &str) -> Result<PluginComponent, LoadError> {
        self.load_packed_with(packed, name, false)
    }

    /// Like [`Runtime::load_packed`], but runs the precompiled code straight
    /// from a private map of the file where the platform allows it (see
    /// `host/src/code.rs`), which saves copying it at every start.
    ///
    /// # Safety
    ///
    /// The file must not be changed in place for the rest of the process
    /// (the map stays until then). That holds for the running executable:
    /// writing to it fails (`ETXTBSY`), and `install` replaces by rename.
    pub unsafe fn load_packed_in_place(
        &self,
        packed: &Packed,
        name: &str,
    ) -> Result<PluginComponent, LoadError> {
        self.load_packed_with(packed, name, true)
    }

    fn load_packed_with(
        &self,
        packed: &Packed,
        name: &str,
        in_place: bool,
    ) -> Result<PluginComponent, LoadError> {
        let mut component = None;
        if packed.header.engine == engine_hash(&self.engine) && !packed.precompiled().is_empty() {
            if in_place {
                component = self.map_precompiled(packed, name);
            }
            if component.is_none() {
                // SAFETY: the precompiled bytes come from a payload whose
                // SHA-256 matched the trailer (checked by `pack::read`),
                // written by our own `pack` for an engine with this very
                // compatibility hash; wasmtime validates the header and
                // compatibility again.
                match unsafe { Component::deserialize(&self.engine, packed.precompiled()) } {
                    Ok(c) => component = Some(c),
                    Err(e) => {
                        tracing::debug!("recompiling {name}: precompiled code unusable: {e:#}")
                    }
                }
            }
        }
        let component = match component {
            Some(c) => c,
            None => self.compile(packed.component(), name)?,
        };
        let known = packed.header.manifest.clone();
        let known = known.and_then(crate::convert::manifest_from_dto);
        self.prepare(component, name, known)
    }

    /// The precompiled code of `packed`, mapped from its file and used in
    /// place; `None` (and the caller copies) if that is not possible.
    #[cfg(all(unix, target_arch = "x86_64"))]
    fn map_precompiled(&self, packed: &Packed, name: &str) -> Option<Component> {
        let (file, offset) = packed.precompiled_in_file()?;
        let len = packed.precompiled().len();
        let memory = crate::code::map_in_place(file, offset, len)
            .inspect_err(|e| tracing::debug!("{name}: cannot map precompiled code: {e}"))
            .ok()?;
        // SAFETY: the same verified bytes as `packed.precompiled()` (the
        // caller of `load_packed_in_place` guarantees the file is unchanged),
        // mapped for the rest of the process; the engine publishes code
        // through `code::PageProtection`, which accepts memory it did not map.
        let component = unsafe { Component::deserialize_raw(&self.engine, memory) }
            .inspect_err(|e| tracing::debug!("{name}: mapped precompiled code unusable: {e:#}"))
            .ok()?;
        tracing::debug!("{name}: running its precompiled code in place from the packed file");
        Some(component)
    }

    #[cfg(not(all(unix, target_arch = "x86_64")))]
    fn map_precompiled(&self, _packed: &Packed, _name: &str) -> Option<Component> {
        None
    }

    /// Links a compiled component and reads its manifest (unless `known`).
    fn prepare(
        &self,
        component: Component,
        name: &str,
        known: Option<wit::Manifest>,
    ) -> Result<PluginComponent, LoadError> {
        let world_error = |e: wasmtime::Error| LoadError::World {
            name: name.to_owned(),
            reason: format!("{e:#}"),
        };
        let instance_pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(world_error)?;
        let pre = LingxiPluginPre::new(instance_pre).map_err(world_error)?;

        if let Some(manifest) = known {
            return Ok(PluginComponent {
                runtime: self.clone(),
                pre,
                manifest,
            });
        }
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
