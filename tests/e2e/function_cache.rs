//! The compile cache's compiled functions (`functions/` in the cache folder)
//! are native code the launcher runs: an entry is used only from a folder
//! and a file of this user's that nobody else may write, and only as it was
//! written. Each case plants the probe's own entries with their code
//! swapped between functions, in the entries' valid format (what someone
//! who may write there could do), and the probe must still answer as
//! itself: the planted code never ran.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use lingxi_wasm_host::{CompileCache, Runtime, RuntimeConfig};
use sha2::{Digest, Sha256};

use crate::cache_trust::probe_id_through;
use crate::support::{guest, workspace_root};

const MAGIC: &[u8; 8] = b"lxfn\x01\0\0\0";
const HEADER: usize = 8 + 4 + 8 + 32;

/// A cache folder whose `functions/` holds the probe's compiled functions
/// (and no whole compiled component), then `change` applied to it.
fn probe_functions(change: impl FnOnce(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(workspace_root().join("target")).unwrap();
    let runtime = runtime_in(dir.path());
    let probe = std::fs::read(guest("probe")).unwrap();
    runtime.precompile(&probe, "probe").unwrap();
    let counts = runtime.function_cache_counts().unwrap();
    assert!(counts.written > 10, "{counts:?}");
    change(&dir.path().join("functions"));
    dir
}

/// An engine with its compile cache in `dir`.
fn runtime_in(dir: &Path) -> Runtime {
    Runtime::with_config(RuntimeConfig {
        cache: Some(CompileCache::new(dir)),
        ..RuntimeConfig::default()
    })
    .unwrap()
}

/// The entries of `functions`: (file, key, value).
pub(crate) fn entries(functions: &Path) -> Vec<(std::path::PathBuf, Vec<u8>, Vec<u8>)> {
    let mut found: Vec<_> = std::fs::read_dir(functions)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let key_len = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
            let key = bytes[HEADER..HEADER + key_len].to_vec();
            let value = bytes[HEADER + key_len..].to_vec();
            (path, key, value)
        })
        .collect();
    found.sort();
    found
}

/// An entry in the store's format, with a digest that matches.
fn entry(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut head = Vec::new();
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&(key.len() as u32).to_le_bytes());
    head.extend_from_slice(&(value.len() as u64).to_le_bytes());
    let mut sha = Sha256::new();
    sha.update(&head);
    sha.update(key);
    sha.update(value);
    let mut out = head;
    out.extend_from_slice(&sha.finalize());
    out.extend_from_slice(key);
    out.extend_from_slice(value);
    out
}

/// Every function's entry given the next function's code, validly made.
pub(crate) fn swap_code(functions: &Path) {
    let found = entries(functions);
    for (i, (path, key, _)) in found.iter().enumerate() {
        let (_, _, other) = &found[(i + 1) % found.len()];
        std::fs::write(path, entry(key, other)).unwrap();
    }
}

#[test]
fn compiled_functions_in_a_folder_others_may_write_are_not_used() {
    let dir = probe_functions(|functions| {
        swap_code(functions);
        std::fs::set_permissions(functions, std::fs::Permissions::from_mode(0o777)).unwrap();
    });
    let (id, stderr) = probe_id_through(dir.path());
    assert_eq!(id, "com.lingxi.test-probe", "planted code ran:\n{stderr}");
    assert!(
        stderr.contains("not using the compiled functions in")
            && stderr.contains("others may write to it"),
        "{stderr}"
    );
}

#[test]
fn compiled_functions_others_may_write_are_not_used_from_a_private_folder() {
    let dir = probe_functions(|functions| {
        swap_code(functions);
        for (path, _, _) in entries(functions) {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666)).unwrap();
        }
    });
    let (id, stderr) = probe_id_through(dir.path());
    assert_eq!(id, "com.lingxi.test-probe", "planted code ran:\n{stderr}");
}

#[test]
fn a_corrupt_compiled_function_is_compiled_again_never_run() {
    let dir = probe_functions(|functions| {
        for (path, _, _) in entries(functions) {
            let mut bytes = std::fs::read(&path).unwrap();
            // A byte of the code, past the header and the key.
            let at = HEADER + 32 + (bytes.len() - HEADER - 32) / 2;
            bytes[at] ^= 0x5a;
            std::fs::write(&path, bytes).unwrap();
        }
    });
    // Through the library, to count what the store refused.
    let runtime = runtime_in(dir.path());
    let probe = std::fs::read(guest("probe")).unwrap();
    runtime.precompile(&probe, "probe").unwrap();
    let counts = runtime.function_cache_counts().unwrap();
    // A function that comes twice in the component is found the second
    // time under the entry its first compile just wrote: hits, but never
    // more than were written in this run.
    assert!(
        counts.refused > 10 && counts.hits <= counts.written,
        "{counts:?}"
    );
    // Compiled again and kept: the launcher now runs the probe from them.
    let (id, stderr) = probe_id_through(dir.path());
    assert_eq!(id, "com.lingxi.test-probe", "{stderr}");
}

/// The control: the same store, untouched, is used (nearly every function),
/// and the engine it compiles with is the engine packed files are made for.
#[test]
fn a_second_compile_takes_every_function_from_the_store() {
    let dir = probe_functions(|_| {});
    let runtime = runtime_in(dir.path());
    let probe = std::fs::read(guest("probe")).unwrap();
    runtime.precompile(&probe, "probe").unwrap();
    let counts = runtime.function_cache_counts().unwrap();
    // Not all: wasmtime's IR of some functions (a few in ten) differs from
    // one compile to the next, so their keys do.
    assert!(
        counts.refused == 0 && counts.hits > 10 && counts.hits >= 4 * counts.misses,
        "{counts:?}"
    );
    assert_eq!(runtime.engine_hash(), Runtime::new().unwrap().engine_hash());
    let (id, stderr) = probe_id_through(dir.path());
    assert_eq!(id, "com.lingxi.test-probe", "{stderr}");
}
