//! The wasmtime engine and loaded components. One [`Runtime`] is shared by
//! every plugin of a process: it owns the engine, the epoch ticker that
//! enforces deadlines, and the linkers with WASI and the LingXi imports.

use std::path::Path;
use std::sync::Arc;

use wasmtime::component::Component;
use wasmtime::{Engine, Store};
use wasmtime_wasi::WasiCtxBuilder;

use crate::bindings::PluginPre;
use crate::bindings::lingxi::plugin::types as wit;
use crate::cache::CompileCache;
use crate::compiler::{self, engine_hash};
use crate::config::RuntimeConfig;
use crate::deadline::{Deadline, Expired};
use crate::error::LoadError;
use crate::limits::{Limits, OutputBudget};
use crate::memory::MemoryCap;
use crate::observe::Origin;
use crate::pack::Packed;
use crate::state::HostState;
use crate::ticker::Ticker;

mod compile;
mod plugin_file;

pub use plugin_file::read_plugin_file;
pub(crate) use plugin_file::regular_file;

/// A wasmtime engine configured for plugins, with its epoch ticker.
#[derive(Clone)]
pub struct Runtime {
    pub(crate) engine: Engine,
    /// One linker per set of imported interfaces (see `linker/imports.rs`).
    pub(crate) linkers: Arc<crate::linker::Linkers>,
    pub(crate) cache: Option<CompileCache>,
    /// The compile cache's per-function store the engine compiles through,
    /// if the cache's folder may be used.
    #[cfg(feature = "compiler")]
    functions: Option<Arc<crate::cache::FunctionCache>>,
    /// What the engine was built from (`with_cache` builds it again).
    settings: RuntimeConfig,
    /// Whether instances come from a pool, whose unit a plugin must fit.
    pooled: bool,
    /// The epoch ticker, started with the first store.
    ticker: Ticker,
}

impl Runtime {
    /// The launcher's engine: instances allocated on demand, no cache
    /// ([`RuntimeConfig::default`]).
    pub fn new() -> Result<Self, LoadError> {
        Runtime::with_config(RuntimeConfig::default())
    }

    /// Creates the engine as `settings` say. Its epoch ticker thread (the
    /// ticks that stop a guest at its deadline) starts with the first
    /// instance, before any guest code runs, and stops when the last clone
    /// of the engine is dropped.
    pub fn with_config(settings: RuntimeConfig) -> Result<Self, LoadError> {
        // Changed further only on Linux x86-64 (code memory) or by `tune`.
        #[allow(unused_mut)]
        let mut config = settings.wasmtime();
        #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
        config.with_custom_code_memory(Some(Arc::new(crate::code::PageProtection::new())));
        // Each function is compiled once: Cranelift's incremental cache, in
        // the compile cache's folder, under the same trust rules (Winch has
        // none).
        #[cfg(feature = "compiler")]
        let functions = (settings.cache.as_ref())
            .filter(|_| settings.compiler == crate::config::Compiler::Cranelift)
            .and_then(CompileCache::function_store);
        #[cfg(feature = "compiler")]
        if let Some(store) = &functions {
            config
                .enable_incremental_compilation(store.clone())
                .map_err(|e| LoadError::Engine(e.to_string()))?;
        }
        #[cfg(feature = "wasmtime-config")]
        if let Some(tune) = &settings.tune {
            tune(&mut config);
        }
        let engine = Engine::new(&config).map_err(|e| LoadError::Engine(e.to_string()))?;
        Ok(Runtime {
            engine,
            linkers: Arc::default(),
            cache: settings.cache.clone(),
            #[cfg(feature = "compiler")]
            functions,
            pooled: settings.pooling.is_some(),
            settings,
            ticker: Ticker::default(),
        })
    }

    /// Keeps compiled components, and each compiled function, in `cache`
    /// (see [`CompileCache`]). The engine is built again with it: call this
    /// before loading anything (the same as naming the cache in
    /// [`RuntimeConfig::cache`]).
    pub fn with_cache(self, cache: Option<CompileCache>) -> Self {
        let settings = RuntimeConfig {
            cache: cache.clone(),
            ..self.settings.clone()
        };
        match Runtime::with_config(settings) {
            Ok(runtime) => runtime,
            // The same settings built an engine a moment ago; keep it, with
            // the whole-component cache only.
            Err(e) => {
                tracing::warn!("cannot build the engine with the compile cache's functions: {e}");
                Runtime { cache, ..self }
            }
        }
    }

    /// What the compile cache's per-function store did so far in this
    /// engine (`None` without a usable cache).
    #[cfg(feature = "compiler")]
    pub fn function_cache_counts(&self) -> Option<crate::cache::FunctionCacheCounts> {
        self.functions.as_ref().map(|store| store.counts())
    }

    /// The engine's compatibility hash, as packed files and the compile
    /// cache record it: precompiled code is used only by an engine with the
    /// same hash.
    pub fn engine_hash(&self) -> String {
        engine_hash(&self.engine)
    }

    /// Where the compile cache keeps `bytes` compiled for this engine.
    pub fn cache_path_for(&self, bytes: &[u8]) -> Option<std::path::PathBuf> {
        Some(self.cache.as_ref()?.path_for(&self.engine, bytes))
    }

    /// Loads a component file and reads its manifest.
    pub async fn load_file(&self, path: &Path) -> Result<PluginComponent, LoadError> {
        let bytes = read_plugin_file(path)?;
        self.load_bytes(&bytes, &path.display().to_string()).await
    }

    /// Compiles component bytes (`name` is used in messages) and reads the
    /// plugin's manifest in a sandbox with no capabilities at all.
    pub async fn load_bytes(&self, bytes: &[u8], name: &str) -> Result<PluginComponent, LoadError> {
        let component = self.compile(bytes, name)?;
        self.prepare(component, name, None, None).await
    }

    /// Loads the plugin of a packed file that is NOT the running executable
    /// (`inspect`, `install`, an embedder reading plugin folders): its
    /// portable component is compiled here (or taken from this user's
    /// compile cache) and asked for its manifest. The file's precompiled
    /// code is never used: its digest is unkeyed, so anyone can write a
    /// file whose "precompiled code" is arbitrary native code.
    pub async fn load_packed(
        &self,
        packed: &Packed,
        name: &str,
    ) -> Result<PluginComponent, LoadError> {
        let component = self.compile(packed.component(), name)?;
        self.prepare(component, name, None, None).await
    }

    /// Loads the running executable's own packed plugin: its precompiled
    /// code when it was made for this engine (mapped from the file and run
    /// in place where the platform allows it, see `host/src/code.rs`), else
    /// the portable component, compiled now; the manifest recorded at pack
    /// time comes from the same verified payload, so no instance is needed.
    ///
    /// # Safety
    ///
    /// `packed` must come from [`crate::pack::read_self`]: the executable
    /// this process is running, whose bytes are already trusted as native
    /// code. Any other file must go through [`Runtime::load_packed`].
    pub async unsafe fn load_own_packed(
        &self,
        packed: &Packed,
        name: &str,
    ) -> Result<PluginComponent, LoadError> {
        let mut component = None;
        if compiler::may_load(&self.engine, &packed.header.engine)
            && !packed.precompiled().is_empty()
        {
            if let Some((c, map)) = self.map_precompiled(packed, name) {
                component = Some((c, Some(map)));
            } else {
                // SAFETY: the caller guarantees these are the running
                // executable's own verified bytes, packed by our `pack` for an
                // engine with this compatibility hash; wasmtime checks the
                // header and compatibility again.
                match unsafe { Component::deserialize(&self.engine, packed.precompiled()) } {
                    Ok(c) => component = Some((c, None)),
                    Err(e) => {
                        tracing::debug!("recompiling {name}: precompiled code unusable: {e:#}")
                    }
                }
            }
        }
        let (component, code) = match component {
            Some(found) => found,
            None => {
                // A start checks only the code it maps; the component is
                // checked before it is compiled instead.
                packed.verify_component()?;
                (self.compile(packed.component(), name)?, None)
            }
        };
        let known = packed.header.manifest.clone();
        let known = known.and_then(crate::convert::manifest_from_dto);
        self.prepare(component, name, known, code).await
    }

    /// The precompiled code of `packed`, mapped from its file and used in
    /// place; `None` (and the caller copies) if that is not possible.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    fn map_precompiled(&self, packed: &Packed, name: &str) -> Option<(Component, Arc<CodeMap>)> {
        let (file, offset) = packed.precompiled_in_file()?;
        let len = packed.precompiled().len();
        let map = crate::code::map_in_place(file, offset, len)
            .inspect_err(|e| tracing::debug!("{name}: cannot map precompiled code: {e}"))
            .ok()?;
        // SAFETY: the same verified bytes as `packed.precompiled()` (the
        // caller of `load_own_packed` guarantees they are this executable's),
        // in a private map that the returned `CodeMap` keeps alive and that
        // `PluginComponent` drops only after every user of the code; the
        // engine publishes code through `code::PageProtection`, which accepts
        // memory it did not map.
        let component = unsafe { Component::deserialize_raw(&self.engine, map.memory()) }
            .inspect_err(|e| tracing::debug!("{name}: mapped precompiled code unusable: {e:#}"))
            .ok()?;
        tracing::debug!("{name}: running its precompiled code in place from the packed file");
        Some((component, Arc::new(map)))
    }

    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    fn map_precompiled(&self, _packed: &Packed, _name: &str) -> Option<(Component, Arc<CodeMap>)> {
        None
    }

    /// Links a compiled component and reads its manifest (unless `known`).
    pub(crate) async fn prepare(
        &self,
        component: Component,
        name: &str,
        known: Option<wit::Manifest>,
        code: Option<Arc<CodeMap>>,
    ) -> Result<PluginComponent, LoadError> {
        let world_error = |e: wasmtime::Error| LoadError::World {
            name: name.to_owned(),
            reason: format!("{e:#}"),
        };
        let imports = crate::linker::imported(&self.engine, &component);
        let linker = self
            .linkers
            .get(&self.engine, imports)
            .map_err(|e| LoadError::Engine(e.to_string()))?;
        let instance_pre = linker.instantiate_pre(&component).map_err(|e| {
            // Name what is missing when that is why it does not link: a
            // version of lingxi:plugin this host does not link, or imports.
            let ty = component.component_type();
            let names: Vec<&str> = ty.imports(&self.engine).map(|(name, _)| name).collect();
            if let Some((found, why)) = crate::linker::unlinked_version(&names) {
                return LoadError::Version {
                    name: name.to_owned(),
                    found,
                    why: why.into(),
                };
            }
            if let Some(later) = crate::linker::later_version(&names) {
                return LoadError::Version {
                    name: name.to_owned(),
                    found: later,
                    why: format!(
                        "later than this host's {}, and it uses what that lacks ({e:#})",
                        lingxi_plugin_wit::VERSION
                    ),
                };
            }
            let missing = crate::linker::unprovided(names.into_iter());
            if missing.is_empty() {
                world_error(e)
            } else {
                LoadError::Imports {
                    name: name.to_owned(),
                    missing: missing.join(", "),
                    provided: crate::linker::provided_in_words(),
                }
            }
        })?;
        let pre = PluginPre::new(instance_pre).map_err(world_error)?;
        drop(component);

        let manifest = match known {
            Some(manifest) => manifest,
            None => self.ask_manifest(&pre, name).await?,
        };
        Ok(PluginComponent {
            runtime: self.clone(),
            pre,
            manifest,
            _code: code,
        })
    }

    /// Calls `get-manifest` in a sandbox with no capabilities, under the
    /// default deadline.
    async fn ask_manifest(
        &self,
        pre: &PluginPre<HostState>,
        name: &str,
    ) -> Result<wit::Manifest, LoadError> {
        let manifest_error = |reason: String| LoadError::Manifest {
            name: name.to_owned(),
            reason,
        };
        let limits = Limits::default();
        let origin = Origin::new(name);
        let mut store = self
            .store(WasiCtxBuilder::new(), &origin, &limits)
            .map_err(LoadError::Engine)?;
        let call = async {
            let bindings = pre.instantiate_async(&mut store).await?;
            bindings
                .lingxi_plugin_plugin()
                .call_get_manifest(&mut store)
                .await
        };
        match Deadline::after(limits.call_timeout).run(call).await {
            Ok(Ok(manifest)) => Ok(manifest),
            Ok(Err(e)) => Err(manifest_error(format!("{e:#}"))),
            Err(Expired) => Err(manifest_error(format!(
                "get-manifest did not answer within {:.1} s",
                limits.call_timeout.as_secs_f64()
            ))),
        }
    }

    /// A fresh store with `wasi` and the memory cap. Deadlines are the
    /// caller's timer: the guest yields to it at every epoch tick, so a
    /// spinning guest is stopped like one blocked in WASI. Fails only if
    /// the epoch ticker cannot be started.
    pub(crate) fn store(
        &self,
        mut wasi: WasiCtxBuilder,
        origin: &Origin,
        limits: &Limits,
    ) -> Result<Store<HostState>, String> {
        self.ticker.start(&self.engine)?;
        let state = HostState {
            origin: origin.clone(),
            wasi: wasi.build(),
            table: Default::default(),
            limits: MemoryCap::new(limits.max_memory_bytes),
            snapshot: None,
            net: None,
            http: crate::linker::HttpGate::new(origin.plugin.clone()),
            lookups: Default::default(),
            output: OutputBudget::new(limits.max_output_bytes),
            data_dir: None,
            writes: Default::default(),
            effects: Default::default(),
            names: Default::default(),
            files: Default::default(),
            tasks: None,
            secrets: Default::default(),
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(|_| Ok(yield_to_runtime()));
        Ok(store)
    }
}

/// What a guest does at each epoch tick: it yields to the runtime through
/// tokio's `yield_now`, which lets the runtime look at its timers and I/O
/// before the guest runs again. (A guest that woke itself, as wasmtime's
/// own yield does, was polled again at once: on a runtime whose other
/// tasks wait on timers and I/O — a served plugin's calls, its deadlines,
/// the next request — those were looked at only every 61 polls, ~0.6 s
/// of a spinning guest, and a deadline fired that late.)
fn yield_to_runtime() -> wasmtime::UpdateDeadline {
    wasmtime::UpdateDeadline::YieldCustom(1, Box::pin(tokio::task::yield_now()))
}

/// A single-threaded tokio runtime with the timer and I/O drivers, as the
/// calls of one plugin need them (deadlines, WASI sockets, the blocking
/// pool for file and name-lookup work).
pub fn call_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .enable_io()
        .thread_name("lingxi-wasm-blocking")
        .build()
}

/// Precompiled code mapped from the running executable (Linux, x86-64);
/// elsewhere never constructed.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
type CodeMap = crate::code::CodeMap;
#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
type CodeMap = ();

/// A compiled plugin component, ready to instantiate, and its manifest.
#[derive(Clone)]
pub struct PluginComponent {
    pub(crate) runtime: Runtime,
    pub(crate) pre: PluginPre<HostState>,
    manifest: wit::Manifest,
    /// The mapped code `pre` runs, if any. Declared last so it is dropped
    /// after `pre`; every store made from this component is owned next to a
    /// clone of it and dropped first (see `PluginHost`'s `Drop`).
    _code: Option<Arc<CodeMap>>,
}

impl PluginComponent {
    /// What the plugin declares about itself.
    pub fn manifest(&self) -> &wit::Manifest {
        &self.manifest
    }

    /// The capabilities the manifest declares, as the policy takes them.
    pub fn declared(&self) -> Vec<crate::policy::Capability> {
        crate::convert::capabilities(&self.manifest.capabilities)
    }
}
