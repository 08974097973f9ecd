//! What a component imports and exports, and which of its imports this
//! host provides: the first questions `lingxi-wasm-run check` asks of a
//! package, before anything in it runs.

use std::time::{Duration, Instant};

use crate::engine::{PluginComponent, Runtime};
use crate::error::LoadError;
pub use crate::linker::provided;
use lingxi_plugin_wit::{PLUGIN_INTERFACE, TASK_RUNNER_INTERFACE};

/// A compiled component's imports and exports, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentShape {
    /// Every import, e.g. `wasi:cli/environment@0.2.6`.
    pub imports: Vec<String>,
    /// Every export, e.g. `lingxi:plugin/plugin@0.1.1`.
    pub exports: Vec<String>,
    /// How long compiling took.
    pub compile_time: Duration,
}

impl ComponentShape {
    /// Whether it exports the plugin interface, at a version of the line
    /// this host links.
    pub fn is_plugin(&self) -> bool {
        self.exports_interface(PLUGIN_INTERFACE)
    }

    /// Whether it exports a task runner (it can run background tasks).
    pub fn runs_tasks(&self) -> bool {
        self.exports_interface(TASK_RUNNER_INTERFACE)
    }

    fn exports_interface(&self, interface: &str) -> bool {
        (self.exports.iter()).any(|e| lingxi_plugin_wit::interface_of(e) == Some(interface))
    }

    /// The imports this host does not provide.
    pub fn unprovided(&self) -> Vec<&str> {
        crate::linker::unprovided(self.imports.iter().map(String::as_str))
    }

    /// Whether it imports any interface of `package` (e.g. `wasi:sockets`).
    pub fn imports_package(&self, package: &str) -> bool {
        self.imports
            .iter()
            .any(|i| i.starts_with(&format!("{package}/")))
    }
}

impl Runtime {
    /// Compiles `bytes` (never the whole component from the cache, so the
    /// time is the compiler's; functions compiled before, by this or
    /// another plugin, are reused) and lists what the component imports and
    /// exports; runs nothing. The code compiled is kept in the cache, if
    /// there is one, for the next load.
    pub fn shape(&self, bytes: &[u8], name: &str) -> Result<(ComponentShape, Linked), LoadError> {
        let started = Instant::now();
        let component = self.compile_anew(bytes, name)?;
        let compile_time = started.elapsed();
        if let Some(cache) = &self.cache {
            cache.keep(&self.engine, bytes, &component);
        }
        let ty = component.component_type();
        let shape = ComponentShape {
            imports: ty
                .imports(&self.engine)
                .map(|(n, _)| n.to_owned())
                .collect(),
            exports: ty
                .exports(&self.engine)
                .map(|(n, _)| n.to_owned())
                .collect(),
            compile_time,
        };
        Ok((shape, Linked { component }))
    }
}

/// A component [`Runtime::shape`] compiled, to link and load.
pub struct Linked {
    component: wasmtime::component::Component,
}

impl Linked {
    /// Links it and asks its manifest, in a sandbox with nothing granted.
    pub async fn load(self, runtime: &Runtime, name: &str) -> Result<PluginComponent, LoadError> {
        runtime.prepare(self.component, name, None, None).await
    }
}
