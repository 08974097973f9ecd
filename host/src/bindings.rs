//! The generated host bindings of `wit/lingxi-plugin.wit`. Private: the crate
//! re-exports an explicit list of these types from `lib.rs`.
//!
//! Exports are async: every call into a plugin is a future that the caller
//! bounds with its deadline (see `plugin/mod.rs`), so a guest blocked in WASI
//! is stopped as surely as one spinning. Imports stay synchronous: they only
//! read host memory and never block.

wasmtime::component::bindgen!({
    world: "lingxi-plugin",
    path: "../wit",
    additional_derives: [PartialEq],
    // `log` may trap: a plugin that floods its log is stopped.
    imports: { "lingxi:plugin/logging.log": trappable },
    exports: { default: async },
});
