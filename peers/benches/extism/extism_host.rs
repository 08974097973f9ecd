//! The Extism side: the probe's tools as an Extism plug-in
//! (`peers/extism-echo`, extism-pdk on wasm32-unknown-unknown), compiled
//! once and instantiated from the compiled form, as an Extism host that
//! keeps many instances would.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use extism::{CompiledPlugin, Manifest, PTR, Plugin, PluginBuilder, UserData, Wasm, host_fn};

use crate::common::{cargo, median, root};

/// Builds the plug-in and returns its file.
pub fn build() -> PathBuf {
    let target = "wasm32-unknown-unknown";
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
    root().join("target/guests/wasm32-unknown-unknown/guest/extism_echo.wasm")
}

// The host function the plug-in's `sleep` blocks in, as an Extism host's
// own functions do (Extism's are synchronous).
host_fn!(sleep_ms(ms: String) -> String {
    let ms: u64 = ms.trim().parse()?;
    std::thread::sleep(Duration::from_millis(ms));
    Ok(format!("slept {ms} ms"))
});

/// The plug-in compiled for instances with `limits`: a call timeout and a
/// memory cap (in 64 KiB pages), or neither.
pub fn compiled(wasm: &[u8], limits: Option<(Duration, u32)>) -> CompiledPlugin {
    let mut manifest = Manifest::new([Wasm::data(wasm.to_vec())]);
    if let Some((timeout, pages)) = limits {
        manifest = manifest.with_timeout(timeout).with_memory_max(pages);
    }
    PluginBuilder::new(manifest)
        .with_wasi(false)
        .with_function("sleep_ms", [PTR], [PTR], UserData::new(()), sleep_ms)
        .compile()
        .expect("extism compile")
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
