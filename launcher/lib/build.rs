//! Passes the target triple to the library's base mark (src/identity.rs):
//! cargo gives it to build scripts only.
fn main() {
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=LINGXI_WASM_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}
