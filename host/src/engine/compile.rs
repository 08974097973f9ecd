//! Compiling a component: through the whole-component cache or anew, with
//! the per-function store the engine was built with, and what a failed
//! compile says.

use wasmtime::component::Component;

use super::plugin_file::not_a_component;
use super::{PluginComponent, Runtime};
use crate::cache::CompileCache;
use crate::compiler;
use crate::error::LoadError;

impl Runtime {
    /// Compiles component bytes, through the cache if there is one.
    pub(crate) fn compile(&self, bytes: &[u8], name: &str) -> Result<Component, LoadError> {
        self.compile_with(bytes, name, self.cache.as_ref())
    }

    /// Compiles component bytes, never taking the whole component from the
    /// cache (its functions still come from the per-function store).
    pub(crate) fn compile_anew(&self, bytes: &[u8], name: &str) -> Result<Component, LoadError> {
        self.compile_with(bytes, name, None)
    }

    fn compile_with(
        &self,
        bytes: &[u8],
        name: &str,
        cache: Option<&CompileCache>,
    ) -> Result<Component, LoadError> {
        if let Some(what) = not_a_component(bytes) {
            return Err(LoadError::NotAComponent {
                name: name.to_owned(),
                what: what.into_owned(),
            });
        }
        #[cfg(feature = "compiler")]
        let before = self.function_cache_counts();
        let compiled = match cache {
            Some(cache) => cache.load_or_compile(&self.engine, bytes),
            None => compiler::compile(&self.engine, bytes),
        };
        #[cfg(feature = "compiler")]
        if let (Some(before), Some(after)) = (before, self.function_cache_counts()) {
            tracing::debug!(
                "{name}: {} functions taken from the compile cache, {} compiled, {} entries refused",
                after.hits - before.hits,
                after.misses - before.misses,
                after.refused - before.refused
            );
        }
        // A compile through the cache ends its writes here; one without
        // (`check`'s) is kept, and the cache trimmed, by `CompileCache::keep`.
        if let Some(cache) = cache {
            cache.trim_if_grown();
        }
        compiled.map_err(|e| self.load_error(name, e))
    }

    /// What a failed compile or load says: a plugin too big for one unit of
    /// the pool is told so, with the engine's numbers; anything else is an
    /// invalid component.
    pub(super) fn load_error(&self, name: &str, e: wasmtime::Error) -> LoadError {
        let reason = format!("{e:#}");
        // wasmtime's checks of a component against the pool's per-component
        // limits (core instances, memories, tables, sizes) all say this.
        if self.pooled && reason.contains("pooling allocator") {
            LoadError::Pool {
                name: name.to_owned(),
                reason,
            }
        } else {
            LoadError::Compile {
                name: name.to_owned(),
                reason,
            }
        }
    }

    /// Precompiles a component for this engine (the bytes `pack` embeds).
    pub fn precompile(&self, bytes: &[u8], name: &str) -> Result<Vec<u8>, LoadError> {
        let precompiled = compiler::precompile(&self.engine, bytes);
        // `pack` and `install` write the functions they compiled.
        if let Some(cache) = &self.cache {
            cache.trim_if_grown();
        }
        precompiled.map_err(|e| self.load_error(name, e))
    }

    /// Compiles component bytes once for `pack`: the precompiled code it
    /// embeds, and the plugin loaded from that same code (for its
    /// manifest), instead of compiling twice (an 18 MB Python component
    /// takes seconds per compile).
    pub async fn load_and_precompile(
        &self,
        bytes: &[u8],
        name: &str,
    ) -> Result<(PluginComponent, Vec<u8>), LoadError> {
        if let Some(what) = not_a_component(bytes) {
            return Err(LoadError::NotAComponent {
                name: name.to_owned(),
                what: what.into_owned(),
            });
        }
        let precompiled = self.precompile(bytes, name)?;
        // SAFETY: `precompiled` was made a line above, in this process, by
        // this engine: it is the compiler's own output, never bytes read
        // from anywhere.
        let component = unsafe { Component::deserialize(&self.engine, &precompiled) }
            .map_err(|e| self.load_error(name, e))?;
        let loaded = self.prepare(component, name, None, None).await?;
        Ok((loaded, precompiled))
    }
}
