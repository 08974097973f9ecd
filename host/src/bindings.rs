//! The generated host bindings of `wit/lingxi-plugin.wit`. Private: the crate
//! re-exports an explicit list of these types from `lib.rs`.

wasmtime::component::bindgen!({
    world: "lingxi-plugin",
    path: "../wit",
    additional_derives: [PartialEq],
    // `log` may trap: a plugin that floods its log is stopped.
    imports: { "lingxi:plugin/logging.log": trappable },
});
