//! Picks the WIT the guest is built against, as its author would in
//! `wit_bindgen::generate!`: `LINGXI_COMPAT_WIT` (a folder) and
//! `LINGXI_COMPAT_WORLD`, which the compatibility matrix sets for each
//! released shape (tests/e2e/compat/mod.rs); today's `wit/` and world
//! `lingxi-plugin` otherwise. `LINGXI_COMPAT_TASKS=0` when the world exports
//! no task runner (cfg `tasks` is set otherwise).

use std::path::PathBuf;

fn main() {
    let var = |name: &str| {
        println!("cargo::rerun-if-env-changed={name}");
        std::env::var(name).ok().filter(|v| !v.is_empty())
    };
    let Some(manifest) = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from) else {
        panic!("cargo sets CARGO_MANIFEST_DIR for build scripts");
    };
    let wit = var("LINGXI_COMPAT_WIT")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../../wit"));
    let world = var("LINGXI_COMPAT_WORLD").unwrap_or_else(|| "lingxi-plugin".into());
    println!("cargo::rerun-if-changed={}", wit.display());
    println!("cargo::rustc-check-cfg=cfg(tasks)");
    if var("LINGXI_COMPAT_TASKS").as_deref() != Some("0") {
        println!("cargo::rustc-cfg=tasks");
    }
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        panic!("cargo sets OUT_DIR for build scripts");
    };
    let call = format!("wit_bindgen::generate!({{ path: {wit:?}, world: {world:?} }});\n");
    if let Err(e) = std::fs::write(out.join("bindings.rs"), call) {
        panic!("cannot write {}: {e}", out.join("bindings.rs").display());
    }
}
