//! The generated host bindings of the `lingxi:plugin` WIT world
//! (`wit/lingxi-plugin.wit`, through the `lingxi-plugin-wit` crate; the
//! bindgen call and its options are written by `build.rs`). Private: the
//! crate re-exports an explicit list of these types from `lib.rs`.
//!
//! Exports are async: every call into a plugin is a future that the caller
//! bounds with its deadline (see `plugin/mod.rs`), so a guest blocked in WASI
//! is stopped as surely as one spinning. Imports stay synchronous: they only
//! read host memory and never block.

include!(concat!(env!("OUT_DIR"), "/bindings.rs"));

use exports::lingxi::plugin::{plugin, task_runner};
use wasmtime::component::InstancePre;

/// A component linked and ready to instantiate, with its exports looked up
/// once: the `plugin` interface every LingXi component has, and the
/// `task-runner` interface if it has one (components built before tasks
/// existed do not; they load and run as before, without tasks).
pub(crate) struct PluginPre<T: 'static> {
    pre: InstancePre<T>,
    plugin: plugin::GuestIndices,
    task_runner: Option<task_runner::GuestIndices>,
}

// Derived `Clone` would ask `T: Clone`.
impl<T: 'static> Clone for PluginPre<T> {
    fn clone(&self) -> Self {
        PluginPre {
            pre: self.pre.clone(),
            plugin: self.plugin.clone(),
            task_runner: self.task_runner.clone(),
        }
    }
}

/// One instance's exports.
pub(crate) struct PluginBindings {
    plugin: plugin::Guest,
    task_runner: Option<task_runner::Guest>,
}

impl<T: Send + 'static> PluginPre<T> {
    /// Looks the exports up; fails if `plugin` is missing or mistyped.
    pub(crate) fn new(pre: InstancePre<T>) -> wasmtime::Result<Self> {
        let plugin = plugin::GuestIndices::new(&pre)?;
        let task_runner = task_runner::GuestIndices::new(&pre).ok();
        Ok(PluginPre {
            pre,
            plugin,
            task_runner,
        })
    }

    /// Whether the component exports a task runner.
    pub(crate) fn runs_tasks(&self) -> bool {
        self.task_runner.is_some()
    }

    /// A fresh instance in `store`.
    pub(crate) async fn instantiate_async(
        &self,
        mut store: impl wasmtime::AsContextMut<Data = T>,
    ) -> wasmtime::Result<PluginBindings> {
        let instance = self.pre.instantiate_async(&mut store).await?;
        let plugin = self.plugin.load(&mut store, &instance)?;
        let task_runner = match &self.task_runner {
            Some(indices) => Some(indices.load(&mut store, &instance)?),
            None => None,
        };
        Ok(PluginBindings {
            plugin,
            task_runner,
        })
    }
}

impl PluginBindings {
    /// The `plugin` interface.
    pub(crate) fn lingxi_plugin_plugin(&self) -> &plugin::Guest {
        &self.plugin
    }

    /// The `task-runner` interface, if the component exports it.
    pub(crate) fn task_runner(&self) -> Option<&task_runner::Guest> {
        self.task_runner.as_ref()
    }
}
