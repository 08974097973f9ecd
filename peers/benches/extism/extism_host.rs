//! The Extism side: the probe's tools as an Extism plug-in
//! (`peers/extism-echo`, extism-pdk on wasm32-unknown-unknown), compiled
//! once and instantiated from the compiled form, as an Extism host that
//! keeps many instances would.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use extism::{CompiledPlugin, Manifest, PTR, Plugin, PluginBuilder, UserData, Wasm, host_fn};

use crate::common::{cargo, median, root};

/// The plug-in built for `target` (`wasm32-unknown-unknown`, or
/// `wasm32-wasip1` for the WASI sleep), and its file.
pub fn build(target: &str) -> PathBuf {
    cargo(&[
        "build",
        "--target",
        target,
        "--profile",
        "guest",
        "-p",
        "extism-echo",
        "--target-dir",
        "target/guests",
    ]);
    root().join(format!("target/guests/{target}/guest/extism_echo.wasm"))
}

// The host function the plug-in's `sleep` blocks in, as an Extism host's
// own functions do (Extism's are synchronous).
host_fn!(sleep_ms(ms: String) -> String {
    let ms: u64 = ms.trim().parse()?;
    std::thread::sleep(Duration::from_millis(ms));
    Ok(format!("slept {ms} ms"))
});

/// How an Extism plug-in is set up.
#[derive(Clone, Copy, Default)]
pub struct Setup {
    /// A call timeout and a memory cap (in 64 KiB pages), or neither.
    pub limits: Option<(Duration, u32)>,
    /// wasmtime's pooling allocator, as `Runtime`'s pooled engine has.
    pub pooled: bool,
    /// WASI (preview 1), for the plug-in built for `wasm32-wasip1`.
    pub wasi: bool,
}

/// The plug-in in `file` compiled once for instances set up as `setup`
/// says. The manifest names the file (not its bytes): an instance keeps a
/// copy of its manifest, and bytes in it would be a copy of the plug-in.
pub fn compiled(file: &Path, setup: Setup) -> CompiledPlugin {
    let mut manifest = Manifest::new([Wasm::file(file)]);
    if let Some((timeout, pages)) = setup.limits {
        manifest = manifest.with_timeout(timeout).with_memory_max(pages);
    }
    let mut builder = PluginBuilder::new(manifest)
        .with_wasi(setup.wasi)
        .with_function("sleep_ms", [PTR], [PTR], UserData::new(()), sleep_ms);
    if setup.pooled {
        let mut config = wasmtime43::Config::new();
        config.allocation_strategy(wasmtime43::InstanceAllocationStrategy::Pooling(
            wasmtime43::PoolingAllocationConfig::default(),
        ));
        builder = builder.with_wasmtime_config(config);
    }
    builder.compile().expect("extism compile")
}

/// One instance, answering its first call.
pub fn instance(compiled: &CompiledPlugin, arguments: &str) -> Plugin {
    let mut plugin = Plugin::new_from_compiled(compiled).expect("extism instance");
    let answer: String = plugin.call("echo", arguments).expect("extism echo");
    assert_eq!(answer, format!("echo:{arguments}"));
    plugin
}

/// µs per warm call of `echo`, median of `rounds` × `calls`.
pub fn cost(plugin: &mut Plugin, calls: usize, rounds: usize, arguments: &str) -> f64 {
    let mut samples = Vec::new();
    for round in 0..=rounds {
        let start = Instant::now();
        for _ in 0..calls {
            let answer: &str = plugin.call("echo", arguments).expect("extism echo");
            assert!(answer.starts_with("echo:"));
        }
        if round > 0 {
            samples.push(start.elapsed().as_secs_f64() * 1e6 / calls as f64);
        }
    }
    median(samples)
}

/// What calling `function` with `input` ended in, and after how long.
pub fn outcome(plugin: &mut Plugin, function: &str, input: &str) -> (Duration, String) {
    let start = Instant::now();
    let answer = plugin.call::<&str, String>(function, input);
    let took = start.elapsed();
    let said = match answer {
        Ok(text) => format!("returned: {text}"),
        Err(e) => format!("error: {e:#}"),
    };
    (took, said)
}
