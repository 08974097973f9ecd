//! The generated guest bindings of `wit/lingxi-plugin.wit`. Private: the SDK
//! re-exports an explicit list of these types from `lib.rs`, and plugin
//! authors never touch wit-bindgen directly.

wit_bindgen::generate!({
    world: "lingxi-plugin",
    path: "../../wit",
    pub_export_macro: true,
    export_macro_name: "export",
    default_bindings_module: "lingxi_plugin_sdk::__private::bindings",
    runtime_path: "lingxi_plugin_sdk::__private::wit_bindgen::rt",
    additional_derives: [PartialEq],
});
