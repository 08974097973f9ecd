//! Writes the host's bindings call with the WIT world inline
//! (`$OUT_DIR/bindings.rs`, included by `src/bindings.rs`): the world comes
//! from the `lingxi-plugin-wit` crate, so this crate builds from its own
//! package as well as from the repository, and the WIT has one source.
//! The options of the bindings are decided here.

use std::path::PathBuf;

fn main() {
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        panic!("cargo sets OUT_DIR for build scripts");
    };
    // `{:?}` writes the WIT as a Rust string literal, escapes included.
    let bindings = format!(
        r#"wasmtime::component::bindgen!({{
    world: {world:?},
    inline: {wit:?},
    additional_derives: [PartialEq],
    // `log` may trap: a plugin that floods its log is stopped.
    // So may `report-progress`: its message is output too.
    imports: {{
        "lingxi:plugin/logging.log": trappable,
        "lingxi:plugin/tasks.report-progress": trappable,
    }},
    exports: {{ default: async }},
}});
"#,
        world = lingxi_plugin_wit::WORLD,
        wit = lingxi_plugin_wit::WIT,
    );
    if let Err(e) = std::fs::write(out.join("bindings.rs"), bindings) {
        panic!("cannot write {}: {e}", out.join("bindings.rs").display());
    }
}
