//! How the engine is built: on-demand or pooled instance allocation,
//! copy-on-write memory images, the compile cache.
//!
//! A process that runs one plugin (the launcher) allocates on demand. A host
//! that keeps many instances (one per plugin per session) wants the pooling
//! allocator: every slot is reserved once, up front, sized for the instances
//! it allows (not wasmtime's default 4 GiB of address space per memory), and
//! a new instance is a slot plus a copy-on-write view of the plugin's memory
//! image, made in microseconds.

use crate::cache::CompileCache;
use crate::limits::Limits;
use crate::limits::{
    CORE_INSTANCES_PER_PLUGIN, MEMORIES_PER_PLUGIN, TABLE_ELEMENTS, TABLES_PER_PLUGIN,
};

/// How a [`Runtime`](crate::Runtime) is built. `Default` is the launcher's:
/// on-demand allocation, copy-on-write images, no cache.
#[derive(Clone)]
pub struct RuntimeConfig {
    /// Reserve slots for a fixed number of instances up front (see
    /// [`Pooling`]); `None` allocates each instance on demand.
    pub pooling: Option<Pooling>,
    /// Start each instance's memory as a copy-on-write view of the plugin's
    /// initial memory image instead of copying it (default: on).
    pub memory_cow: bool,
    /// Keep compiled components here (see [`CompileCache`]).
    pub cache: Option<CompileCache>,
    /// Which compiler makes native code of what this runtime loads
    /// (default: Cranelift).
    #[cfg(feature = "compiler")]
    pub compiler: Compiler,
    /// Last word on the wasmtime configuration, applied after everything
    /// above. The one place wasmtime's own types show: use it for settings
    /// this crate does not name, at your own risk (it can undo the sandbox's
    /// epoch interruption and memory limits).
    #[cfg(feature = "wasmtime-config")]
    pub tune: Option<std::sync::Arc<dyn Fn(&mut wasmtime::Config) + Send + Sync>>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            pooling: None,
            memory_cow: true,
            cache: None,
            #[cfg(feature = "compiler")]
            compiler: Compiler::default(),
            #[cfg(feature = "wasmtime-config")]
            tune: None,
        }
    }
}

impl RuntimeConfig {
    /// The wasmtime configuration every engine of this crate starts from:
    /// epoch interruption (deadlines), the memory image setting, pooling.
    /// Code precompiled for another platform ([`crate::precompile_for`])
    /// uses it too, so that a packed start there accepts that code.
    pub(crate) fn wasmtime(&self) -> wasmtime::Config {
        let mut config = wasmtime::Config::new();
        #[cfg(feature = "compiler")]
        config.strategy(match self.compiler {
            Compiler::Cranelift => wasmtime::Strategy::Cranelift,
            Compiler::Winch => wasmtime::Strategy::Winch,
        });
        config.epoch_interruption(true);
        config.memory_init_cow(self.memory_cow);
        if let Some(pooling) = &self.pooling {
            pooling.apply(&mut config);
        }
        config
    }

    /// A configuration for a host of up to `max_instances` live instances
    /// at once, pooled: that many instances of any plugin the runtime
    /// loads, whatever language it was written in (see [`Pooling`]). A
    /// session holds one instance of each plugin it has called, one more
    /// for each call that overlaps another, and each running task one.
    pub fn pooled(max_instances: u32) -> Self {
        RuntimeConfig {
            pooling: Some(Pooling::for_instances(max_instances)),
            ..RuntimeConfig::default()
        }
    }
}

/// Which compiler turns a plugin's WebAssembly into native code. Both
/// run under the same deadlines, memory limits and sandbox; what differs
/// is the time to compile against the speed of the code (measured in the
/// book, `performance/authoring.md`).
#[cfg(feature = "compiler")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Compiler {
    /// Cranelift, optimizing: the fastest code. With a compile cache, each
    /// function it compiles is kept too (`functions/`), so a second plugin
    /// or an edit compiles only what changed.
    #[default]
    Cranelift,
    /// Winch, wasmtime's baseline compiler: one pass, no optimization. A
    /// Python or JavaScript plugin compiles in about a quarter of
    /// Cranelift's time and its code runs about 1.4–1.8 times slower: for an
    /// author's `check` and `call`, not for what is packed or installed.
    /// Functions are not kept one by one (wasmtime's per-function cache is
    /// Cranelift's); a whole compiled component is, under an engine hash of
    /// its own, so neither compiler's code is ever loaded by the other.
    Winch,
}

#[cfg(feature = "compiler")]
impl Compiler {
    /// Its name, as `--compiler` takes it and reports say it.
    pub fn name(self) -> &'static str {
        match self {
            Compiler::Cranelift => "cranelift",
            Compiler::Winch => "winch",
        }
    }
}

/// Slots of the pooling allocator. Reserving is address space only: memory
/// is used as instances touch it, and given back when they are dropped.
///
/// The unit is one instance of a plugin of at most [`InstanceShape`]: the
/// pool holds `max_instances` of them, so it holds that many instances of
/// every plugin the runtime loads, since loading refuses a plugin whose
/// instance would need more than one unit ([`LoadError::Pool`](crate::LoadError::Pool)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pooling {
    /// Live instances at once, over all plugins and sessions. One more
    /// fails to start with an error that names this limit.
    pub max_instances: u32,
    /// Address space reserved for one instance's linear memory: the most it
    /// can ever grow to. Keep it at or above [`Limits::max_memory_bytes`],
    /// or plugins fail at this size instead of the limit's.
    pub max_memory_bytes: usize,
    /// What one instance may hold; each of the `max_instances` counts on
    /// this much.
    pub per_instance: InstanceShape,
}

/// What one instance of a plugin holds: its component's core instances
/// (one per core module it instantiates), linear memories and tables.
/// The default holds every plugin the SDKs build, in any language, with
/// room to spare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstanceShape {
    /// Core instances (the plugin's modules, the WASI adapter, shims).
    pub core_instances: u32,
    /// Linear memories.
    pub memories: u32,
    /// Tables.
    pub tables: u32,
}

impl Default for InstanceShape {
    fn default() -> Self {
        InstanceShape {
            core_instances: CORE_INSTANCES_PER_PLUGIN,
            memories: MEMORIES_PER_PLUGIN,
            tables: TABLES_PER_PLUGIN,
        }
    }
}

impl Pooling {
    /// Slots for `max_instances` instances of the default
    /// [`InstanceShape`], each with memory up to the default
    /// [`Limits::max_memory_bytes`].
    pub fn for_instances(max_instances: u32) -> Self {
        Pooling {
            max_instances,
            max_memory_bytes: Limits::default().max_memory_bytes,
            per_instance: InstanceShape::default(),
        }
    }

    pub(crate) fn apply(&self, config: &mut wasmtime::Config) {
        let n = self.max_instances.max(1);
        let shape = self.per_instance;
        let mut pool = wasmtime::PoolingAllocationConfig::new();
        // Core instances are counted, not reserved: each of the n instances
        // may have as many as one plugin may (checked at load), so n of any
        // loadable plugin fit. Memories and tables reserve address space.
        pool.total_component_instances(n)
            .total_core_instances(n.saturating_mul(shape.core_instances))
            .total_memories(n.saturating_mul(shape.memories))
            .total_tables(n.saturating_mul(shape.tables))
            // A store keeps the stack of its last call for the next one.
            .total_stacks(n)
            .max_core_instances_per_component(shape.core_instances)
            .max_memories_per_component(shape.memories)
            .max_tables_per_component(shape.tables)
            .table_elements(TABLE_ELEMENTS)
            .max_memory_size(self.max_memory_bytes);
        config.allocation_strategy(pool);
        // A store keeps the stack of its last call until it is dropped; the
        // pages that call touched go back to the system then, not to a pool
        // that keeps them resident.
        config.async_stack_zeroing(true);
        // Reserve what a memory may grow to, not 4 GiB: bounds are then
        // checked by compiled code instead of guard pages.
        let reservation = u64::try_from(self.max_memory_bytes).unwrap_or(u64::MAX);
        config.memory_reservation(reservation);
        config.memory_guard_size(0);
        config.memory_reservation_for_growth(0);
    }
}

/// Compiles a component for another platform, `target` (a Rust target
/// triple such as `x86_64-pc-windows-gnu`): Cranelift cross-compiles, with
/// the engine configured as a packed start's ([`RuntimeConfig::default`]),
/// for that target's baseline CPU. Returns the code and that engine's
/// compatibility hash.
#[cfg(feature = "compiler")]
pub fn precompile_for(target: &str, bytes: &[u8]) -> Result<(Vec<u8>, String), crate::LoadError> {
    let mut config = RuntimeConfig::default().wasmtime();
    config
        .target(target)
        .map_err(|e| crate::LoadError::Engine(format!("cannot compile for {target}: {e:#}")))?;
    let engine = wasmtime::Engine::new(&config)
        .map_err(|e| crate::LoadError::Engine(format!("cannot compile for {target}: {e:#}")))?;
    let code =
        crate::compiler::precompile(&engine, bytes).map_err(|e| crate::LoadError::Compile {
            name: format!("the component (for {target})"),
            reason: format!("{e:#}"),
        })?;
    Ok((code, crate::compiler::engine_hash(&engine)))
}
