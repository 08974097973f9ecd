//! The same probe written in Python and in JavaScript (`examples/probe-py`,
//! `examples/probe-js`), built by `scripts/componentize`, beside the Rust
//! probe and the native baseline of the main table:
//!
//! - packed executable, spawned → handshake answered (precompiled code);
//! - `lingxi-wasm-run probe.wasm` with a warm compile cache;
//! - `lingxi-wasm-run probe.wasm` with a cold cache: the compile a LingXi
//!   host would wait for if the component were run unpacked the first time;
//! - warm `tool.execute` round trips through the packed executable, as
//!   spawned and (on Linux) with the bench and the plugin pinned to one CPU,
//!   the steadier figure on a virtual machine.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{lingxi_spawn, median, polyglot_probe, session};

const STARTS: usize = 15;
const COLD_STARTS: usize = 3;
const ROUND_TRIPS: usize = 1_000;

/// One language's figures, in milliseconds and microseconds.
pub struct Row {
    pub lang: &'static str,
    pub size_mb: f64,
    pub packed_ms: f64,
    pub warm_ms: f64,
    pub cold_ms: f64,
    pub round_trip_us: f64,
    pub pinned_us: Option<f64>,
}

/// Builds and measures the Python and JavaScript probes; a language whose
/// toolchain cannot be installed is reported and skipped.
pub fn rows(launcher: &Path, scratch: &Path) -> Vec<Row> {
    let mut rows = Vec::new();
    for (lang, code) in [("Python", "py"), ("JavaScript", "js")] {
        let Some(component) = polyglot_probe(code, &scratch.join(format!("probe-{code}.wasm")))
        else {
            continue;
        };
        rows.push(measure(lang, launcher, &component, scratch));
    }
    rows
}

fn measure(lang: &'static str, launcher: &Path, component: &Path, scratch: &Path) -> Row {
    let packed = scratch.join(format!("{lang}-packed"));
    let status = Command::new(launcher)
        .arg("pack")
        .arg(component)
        .arg("-o")
        .arg(&packed)
        .stderr(Stdio::null())
        .status()
        .expect("pack");
    assert!(status.success(), "pack {}", component.display());
    let warm_cache = scratch.join(format!("{lang}-warm-cache"));
    let unpacked = |cache: &Path| {
        let mut c = lingxi_spawn(launcher, scratch);
        c.arg("--cache-dir")
            .arg(cache)
            .arg("--no-storage")
            .arg(component);
        c
    };
    let packed_cmd = || lingxi_spawn(&packed, scratch);
    let _ = session(packed_cmd(), 0);
    let _ = session(unpacked(&warm_cache), 0);
    let (mut p, mut w, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..STARTS {
        p.push(session(packed_cmd(), 0).0);
        w.push(session(unpacked(&warm_cache), 0).0);
        if i < COLD_STARTS {
            let cold = scratch.join(format!("{lang}-cold-{i}"));
            c.push(session(unpacked(&cold), 0).0);
        }
    }
    let per_call = session(packed_cmd(), ROUND_TRIPS).1 / ROUND_TRIPS as u32;
    #[cfg(target_os = "linux")]
    let pinned_us = {
        let all = crate::common::pin_to_one_cpu();
        let per_call = session(packed_cmd(), ROUND_TRIPS).1 / ROUND_TRIPS as u32;
        rustix::thread::sched_setaffinity(None, &all).expect("sched_setaffinity");
        Some(per_call.as_secs_f64() * 1e6)
    };
    #[cfg(not(target_os = "linux"))]
    let pinned_us = None;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    Row {
        lang,
        size_mb: std::fs::metadata(component).map_or(0.0, |m| m.len() as f64 / 1e6),
        packed_ms: ms(median(p)),
        warm_ms: ms(median(w)),
        cold_ms: ms(median(c)),
        round_trip_us: per_call.as_secs_f64() * 1e6,
        pinned_us,
    }
}
