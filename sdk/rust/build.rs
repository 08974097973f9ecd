//! Writes the SDK's bindings call with the WIT world inline
//! (`$OUT_DIR/bindings.rs`, included by `src/bindings.rs`): the world comes
//! from the `lingxi-plugin-wit` crate, so the SDK builds from its own
//! package as well as from the repository, and the WIT has one source.
//! The options of the bindings are decided here.

use std::path::PathBuf;

fn main() {
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        panic!("cargo sets OUT_DIR for build scripts");
    };
    // `{:?}` writes the WIT as a Rust string literal, escapes included.
    let bindings = format!(
        r#"wit_bindgen::generate!({{
    world: {world:?},
    inline: {wit:?},
    pub_export_macro: true,
    export_macro_name: "export",
    default_bindings_module: "lingxi_plugin_sdk::__private::bindings",
    runtime_path: "lingxi_plugin_sdk::__private::wit_bindgen::rt",
    additional_derives: [PartialEq],
}});
"#,
        world = lingxi_plugin_wit::WORLD,
        wit = lingxi_plugin_wit::WIT,
    );
    if let Err(e) = std::fs::write(out.join("bindings.rs"), bindings) {
        panic!("cannot write {}: {e}", out.join("bindings.rs").display());
    }
}
