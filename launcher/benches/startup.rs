//! Cold start and warm calls of `examples/probe`, side by side, in one run:
//!
//! - (a) the native build (SDK feature `native`) spawned → handshake answered
//! - (b) the packed executable spawned → handshake answered
//! - (c) `lingxi-wasm-run probe.wasm` spawned → handshake, warm compile cache
//! - (d) the same with a cold (empty) compile cache
//! - (e) warm `tool.execute` round trips per second through (a) and (b),
//!   as spawned (host and plugin on any cores) and, on Linux, with both
//!   pinned to one CPU: that shows the CPU cost of a call without the
//!   wake-up latency of an idle core, which dominates the first figure on a
//!   virtual machine and varies most between runs
//! - (b′) the packed executable on the runtime-only base (`lingxi-wasm-rt`,
//!   wasmtime without a compiler), beside (b) on the full launcher, with
//!   its round trips in (e)
//! - the floor: spawn → exit of the native binary doing nothing (stdin
//!   closed), of `lingxi-wasm-run --version` and of `lingxi-wasm-rt
//!   --version`, i.e. what loading each executable costs before any plugin
//!   work
//!
//! Every start is measured as LingXi starts a plugin (spec §6): spawned with
//! the allow-list environment only (PATH, HOME, LANG, TMPDIR), then
//! `host.snapshot`, `plugin.initialize`, until the handshake line is read. Prints medians and
//! the ratios b/a and e(b)/e(a). Kinds are interleaved so that machine noise
//! affects them alike. Then the same probe in Python and JavaScript (see
//! `polyglot/mod.rs`): packed, warm and cold starts and round trips.
//! Run: `cargo bench -p lingxi-wasm-run --bench startup`.

// Shared with the library's embedding bench.
#[path = "../../host/benches/common/mod.rs"]
mod common;
mod polyglot;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{lingxi_spawn, median, session};

const STARTS: usize = 60;
const ROUND_TRIPS: usize = 2_000;
const ROUNDS: usize = 7;

/// Spawns `cmd` with stdin closed and waits for it to exit.
fn spawn_to_exit(mut cmd: Command) -> Duration {
    let start = Instant::now();
    let status = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    assert!(status.success());
    start.elapsed()
}

/// Alternating rounds of round trips; the median time per call of each.
fn round_trips(native: impl Fn() -> Command, packed: impl Fn() -> Command) -> (f64, f64) {
    let (mut per_a, mut per_b) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        per_a.push(session(native(), ROUND_TRIPS).1 / ROUND_TRIPS as u32);
        per_b.push(session(packed(), ROUND_TRIPS).1 / ROUND_TRIPS as u32);
    }
    (
        median(per_a).as_secs_f64() * 1e6,
        median(per_b).as_secs_f64() * 1e6,
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    // Everything is built here, release, from source.
    let native = common::native_probe();
    let component = common::guests(&["probe"]).join("probe.wasm");
    let launcher = PathBuf::from(env!("CARGO_BIN_EXE_lingxi-wasm-run"));
    let runtime = common::runtime_base();
    let scratch = tempfile::tempdir().expect("tempdir");
    let pack_on = |base: &Path, name: &str| {
        let out = scratch.path().join(name);
        let status = Command::new(&launcher)
            .arg("pack")
            .arg(&component)
            .arg("-o")
            .arg(&out)
            .arg("--base")
            .arg(base)
            .stderr(Stdio::null())
            .status()
            .expect("pack");
        assert!(status.success(), "pack on {}", base.display());
        out
    };
    let packed = pack_on(&launcher, "probe-packed");
    let packed_rt = pack_on(&runtime, "probe-packed-rt");
    let warm_cache = scratch.path().join("warm-cache");

    let native_cmd = || lingxi_spawn(&native, scratch.path());
    let packed_cmd = || lingxi_spawn(&packed, scratch.path());
    let rt_cmd = || lingxi_spawn(&packed_rt, scratch.path());
    let launcher_cmd = |cache: &Path| {
        let mut c = lingxi_spawn(&launcher, scratch.path());
        c.arg("--cache-dir")
            .arg(cache)
            .arg("--no-storage")
            .arg(&component);
        c
    };
    // Warm the page cache and the compile cache, then interleave the four
    // kinds of start so that machine noise hits them alike.
    let _ = session(native_cmd(), 0);
    let _ = session(packed_cmd(), 0);
    let _ = session(rt_cmd(), 0);
    let _ = session(launcher_cmd(&warm_cache), 0);
    let (mut a, mut b, mut c, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut floor_a, mut floor_launcher) = (Vec::new(), Vec::new());
    let (mut b_rt, mut floor_rt) = (Vec::new(), Vec::new());
    for i in 0..STARTS {
        a.push(session(native_cmd(), 0).0);
        b.push(session(packed_cmd(), 0).0);
        b_rt.push(session(rt_cmd(), 0).0);
        c.push(session(launcher_cmd(&warm_cache), 0).0);
        d.push(session(launcher_cmd(&scratch.path().join(format!("cold-{i}"))), 0).0);
        floor_a.push(spawn_to_exit(native_cmd()));
        let mut version = lingxi_spawn(&launcher, scratch.path());
        version.arg("--version");
        floor_launcher.push(spawn_to_exit(version));
        let mut version = lingxi_spawn(&runtime, scratch.path());
        version.arg("--version");
        floor_rt.push(spawn_to_exit(version));
    }
    let (a, b, c, d) = (median(a), median(b), median(c), median(d));
    let (floor_a, floor_launcher) = (median(floor_a), median(floor_launcher));
    let (b_rt, floor_rt) = (median(b_rt), median(floor_rt));
    let (ea, eb) = round_trips(native_cmd, packed_cmd);
    let (ea_rt, eb_rt) = round_trips(native_cmd, rt_cmd);
    #[cfg(target_os = "linux")]
    let (pinned, pinned_rt) = {
        let all = common::pin_to_one_cpu();
        let pinned = round_trips(native_cmd, packed_cmd);
        let pinned_rt = round_trips(native_cmd, rt_cmd);
        rustix::thread::sched_setaffinity(None, &all).expect("sched_setaffinity");
        (Some(pinned), Some(pinned_rt))
    };
    #[cfg(not(target_os = "linux"))]
    let (pinned, pinned_rt): (Option<(f64, f64)>, Option<(f64, f64)>) = (None, None);
    let size_mb = |p: &Path| std::fs::metadata(p).map_or(0.0, |m| m.len() as f64 / 1e6);

    println!("\nprobe start-up, spawn → handshake answered (median of {STARTS})");
    println!("  (a) native binary                     {:8.2} ms", ms(a));
    println!(
        "  (b) packed executable                 {:8.2} ms  ({:.0} MB, on lingxi-wasm-run)",
        ms(b),
        size_mb(&packed)
    );
    println!(
        "  (b′) packed, runtime-only base        {:8.2} ms  ({:.0} MB, on lingxi-wasm-rt)",
        ms(b_rt),
        size_mb(&packed_rt)
    );
    println!("  (c) lingxi-wasm-run, warm cache       {:8.2} ms", ms(c));
    println!("  (d) lingxi-wasm-run, cold cache       {:8.2} ms", ms(d));
    println!("  floor, spawn → exit doing nothing:");
    println!(
        "      native binary, stdin closed       {:8.2} ms",
        ms(floor_a)
    );
    println!(
        "      lingxi-wasm-run --version         {:8.2} ms",
        ms(floor_launcher)
    );
    println!(
        "      lingxi-wasm-rt --version          {:8.2} ms",
        ms(floor_rt)
    );
    println!(
        "warm tool.execute round trips, µs per call (median of {ROUNDS} alternating rounds of {ROUND_TRIPS})"
    );
    println!("  (e) as spawned      native {ea:7.1}   packed {eb:7.1}");
    if let Some((pa, pb)) = pinned {
        println!("  (e) pinned, 1 CPU   native {pa:7.1}   packed {pb:7.1}");
    }
    println!("  (e′) as spawned     native {ea_rt:7.1}   packed on lingxi-wasm-rt {eb_rt:7.1}");
    if let Some((pa, pb)) = pinned_rt {
        println!("  (e′) pinned, 1 CPU  native {pa:7.1}   packed on lingxi-wasm-rt {pb:7.1}");
    }
    println!("ratios");
    println!("  cold start  b/a = {:.2}  (target ≤ 1.3)", ms(b) / ms(a));
    println!(
        "              b′/a = {:.2}  (runtime-only base; target ≤ 2)",
        ms(b_rt) / ms(a)
    );
    println!(
        "              floor: lingxi-wasm-run --version / a = {:.2}",
        ms(floor_launcher) / ms(a)
    );
    println!(
        "  round trip  packed/native = {:.2} as spawned{}",
        eb / ea,
        pinned.map_or(String::new(), |(pa, pb)| format!(", {:.2} pinned", pb / pa)),
    );
    println!(
        "              runtime-only/native = {:.2} as spawned{}  (target ≤ 1.15 pinned)",
        eb_rt / ea_rt,
        pinned_rt.map_or(String::new(), |(pa, pb)| format!(", {:.2} pinned", pb / pa)),
    );

    println!("\nthe same probe per language: start-up, spawn → handshake (ms), and");
    println!("warm round trips through the packed executable (µs per call, as spawned)");
    println!("  language       size   packed   warm cache   cold cache   round trip   pinned");
    let shown = |us: Option<f64>| us.map_or("-".to_owned(), |us| format!("{us:.1}"));
    println!(
        "  native         -      {:7.2}        -            -        {:7.1}   {:>6}",
        ms(a),
        ea,
        shown(pinned.map(|p| p.0))
    );
    let rust_size = std::fs::metadata(&component).map_or(0.0, |m| m.len() as f64 / 1e6);
    println!(
        "  Rust       {rust_size:5.1} MB {:7.2}   {:9.2}   {:10.1}   {:9.1}   {:>6}",
        ms(b),
        ms(c),
        ms(d),
        eb,
        shown(pinned.map(|p| p.1))
    );
    for row in polyglot::rows(&launcher, scratch.path()) {
        println!(
            "  {:<10} {:5.1} MB {:7.2}   {:9.2}   {:10.1}   {:9.1}   {:>6}",
            row.lang,
            row.size_mb,
            row.packed_ms,
            row.warm_ms,
            row.cold_ms,
            row.round_trip_us,
            shown(row.pinned_us)
        );
        println!(
            "             packed/native start {:.1}×, cold/packed {:.0}×, round trip packed/native {:.2}",
            row.packed_ms / ms(a),
            row.cold_ms / row.packed_ms,
            row.round_trip_us / ea
        );
    }
}
