//! Compiling WebAssembly to native code. With the `compiler` feature (the
//! default) this is Cranelift; without it (the runtime-only base of packed
//! plugins, `lingxi-wasm-rt`) nothing is ever compiled: only precompiled
//! code that the running executable carries is loaded, and every attempt to
//! compile says so.

use wasmtime::Engine;
use wasmtime::component::Component;

/// Compiles a component.
#[cfg(feature = "compiler")]
pub(crate) fn compile(engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Component> {
    Component::new(engine, bytes)
}

/// Compiles a component into the bytes that [`Component::deserialize`] loads.
#[cfg(feature = "compiler")]
pub(crate) fn precompile(engine: &Engine, bytes: &[u8]) -> wasmtime::Result<Vec<u8>> {
    engine.precompile_component(bytes)
}

/// The engine's compatibility hash as 16 hex digits: precompiled code made
/// by an engine with another hash cannot be loaded by this one. It is the
/// SHA-256 of wasmtime's own compatibility data (as its `Hash` feeds it),
/// so it does not change with the Rust release the launcher was built by.
#[cfg(feature = "compiler")]
pub(crate) fn engine_hash(engine: &Engine) -> String {
    use sha2::{Digest, Sha256};
    use std::hash::{Hash, Hasher};

    /// Feeds what a `Hash` implementation writes into SHA-256.
    struct Sha256Hasher(Sha256);

    impl Hasher for Sha256Hasher {
        fn write(&mut self, bytes: &[u8]) {
            self.0.update(bytes);
        }

        /// Not used: the digest is read from the inner state.
        fn finish(&self) -> u64 {
            0
        }
    }

    let mut hasher = Sha256Hasher(Sha256::new());
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let digest = hasher.0.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether code precompiled for engine hash `packed_for` may load here. A
/// runtime-only build cannot compute the hash (wasmtime keeps it with the
/// compiler); it lets wasmtime's own compatibility check decide.
pub(crate) fn may_load(engine: &Engine, packed_for: &str) -> bool {
    #[cfg(feature = "compiler")]
    return engine_hash(engine) == packed_for;
    #[cfg(not(feature = "compiler"))]
    {
        let _ = (engine, packed_for);
        true
    }
}

/// Why a runtime-only build cannot compile, and what to use instead.
#[cfg(not(feature = "compiler"))]
fn none() -> String {
    let instead = match crate::policy::wording::wording().program() {
        Some(program) => program,
        None => "a build with the `compiler` feature".to_owned(),
    };
    format!(
        "this build of lingxi-wasm has no compiler (runtime-only): it runs the precompiled code a packed plugin carries, and cannot compile a component; use {instead}"
    )
}

/// Compiles a component: not in a runtime-only build.
#[cfg(not(feature = "compiler"))]
pub(crate) fn compile(_engine: &Engine, _bytes: &[u8]) -> wasmtime::Result<Component> {
    Err(wasmtime::Error::msg(none()))
}

/// Precompiles a component: not in a runtime-only build.
#[cfg(not(feature = "compiler"))]
pub(crate) fn precompile(_engine: &Engine, _bytes: &[u8]) -> wasmtime::Result<Vec<u8>> {
    Err(wasmtime::Error::msg(none()))
}

/// A runtime-only build has no compatibility hash.
#[cfg(not(feature = "compiler"))]
pub(crate) fn engine_hash(_engine: &Engine) -> String {
    "runtime-only".to_owned()
}
