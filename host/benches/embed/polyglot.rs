//! The per-session cost of the same probe in Rust, Python and JavaScript
//! (`examples/probe`, `examples/probe-py`, `examples/probe-js`): the
//! median time to create a session and initialize the plugin's instance,
//! and the private memory each initialized session adds, by where it is:
//! pages of the plugin's memory image the instance wrote (copy-on-write
//! copies), linear memory past the image, and the rest (the host's heap:
//! instance and store state; tables; the fiber stack). Pages of the image
//! an instance only reads are shared by all instances: resident memory
//! (RSS) counts them once per instance, this does not.

use std::path::{Path, PathBuf};
use std::time::Instant;

use lingxi_wasm_host::{Runtime, RuntimeConfig};

use crate::common::{median, polyglot_probe};
use crate::set_of;

/// Sessions per language: enough for a stable per-session figure.
const SESSIONS: usize = 200;

/// This process's private (written) pages, in bytes, by where they are:
/// (the plugins' memory images, linear memory past them, the rest). A
/// memory image is mapped per instance (`memfd:wasm-memory-image`) and only
/// the pages an instance writes are its own; the pool reserves linear
/// memories as one mapping of many GiB; the rest is the host's heap, the
/// tables and the fiber stacks. Linux only.
fn private_pages() -> [u64; 3] {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let mut found = [0u64; 3];
    let mut place = 2;
    let kib = |line: &str| -> u64 {
        line.split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
            * 1024
    };
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or("");
        if first.contains('-') && !first.ends_with(':') {
            // A mapping's header: its address range, then its name.
            let size = first
                .split_once('-')
                .and_then(|(a, b)| {
                    let a = u64::from_str_radix(a, 16).ok()?;
                    let b = u64::from_str_radix(b, 16).ok()?;
                    b.checked_sub(a)
                })
                .unwrap_or(0);
            place = if line.contains("wasm-memory-image") {
                0
            } else if size >= 1 << 30 {
                1
            } else {
                2
            };
        } else if line.starts_with("Anonymous:") {
            found[place] += kib(line);
        }
    }
    found
}

/// One language's figures.
struct Row {
    lang: &'static str,
    create_us: f64,
    /// KiB per session: memory image pages written, linear memory past
    /// the image, the rest.
    kib: [f64; 3],
}

async fn measure(lang: &'static str, component: &Path) -> Row {
    let runtime = Runtime::with_config(RuntimeConfig::pooled(SESSIONS as u32 + 4)).expect("pool");
    let set = set_of(runtime, &[component]).await;
    let plugin = set.ids().next().expect("one plugin").to_owned();
    // One session first, so that what every session shares is not counted.
    let first = set.session("first", None).expect("session");
    first.start(&plugin).await.expect("start");
    let before = private_pages();
    let mut sessions = Vec::with_capacity(SESSIONS);
    let mut times = Vec::with_capacity(SESSIONS);
    for i in 0..SESSIONS {
        let session = set.session(format!("s{i}"), None).expect("session");
        let start = Instant::now();
        session.start(&plugin).await.expect("start");
        times.push(start.elapsed().as_secs_f64() * 1e6);
        sessions.push(session);
    }
    let after = private_pages();
    for session in sessions {
        session.close().await;
    }
    let per = |i: usize| after[i].saturating_sub(before[i]) as f64 / 1024.0 / SESSIONS as f64;
    Row {
        lang,
        create_us: median(times),
        kib: [per(0), per(1), per(2)],
    }
}

pub fn rows(tokio: &tokio::runtime::Runtime, rust_probe: &Path) {
    let scratch = tempfile::tempdir().expect("tempdir");
    let mut probes: Vec<(&'static str, PathBuf)> = vec![("Rust", rust_probe.to_owned())];
    for (lang, code) in [("Python", "py"), ("JavaScript", "js")] {
        let out = scratch.path().join(format!("probe-{code}.wasm"));
        if let Some(component) = polyglot_probe(code, &out) {
            probes.push((lang, component));
        }
    }
    println!(
        "polyglot: the probe per language, {SESSIONS} sessions each (median create + initialize; the private memory each session adds)"
    );
    println!(
        "  language     create + init    per session    memory image written   linear memory past it   heap, tables, stacks"
    );
    for (lang, component) in &probes {
        let row = tokio.block_on(measure(lang, component));
        let total: f64 = row.kib.iter().sum();
        let shown = |kib: f64| {
            if kib >= 1024.0 {
                format!("{:.2} MiB", kib / 1024.0)
            } else {
                format!("{kib:.1} KiB")
            }
        };
        println!(
            "  {:<10} {:>10.1} µs   {:>12}   {:>20}   {:>21}   {:>20}",
            row.lang,
            row.create_us,
            shown(total),
            shown(row.kib[0]),
            shown(row.kib[1]),
            shown(row.kib[2])
        );
    }
}
