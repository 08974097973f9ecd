//! The per-session cost of the same probe in Rust, Python and JavaScript
//! (`examples/probe`, `examples/probe-py`, `examples/probe-js`): the
//! median time to create a session and initialize the plugin's instance,
//! and the resident memory each initialized session adds, split into the
//! pages of the instance's linear memory (copy-on-write views of the
//! plugin's memory image: what the guest wrote while initializing) and the
//! rest (instance and store state, tables, the fiber stack, host heap).

use std::path::{Path, PathBuf};
use std::time::Instant;

use lingxi_wasm_host::{Runtime, RuntimeConfig};

use crate::common::{median, polyglot_probe};
use crate::set_of;

/// Sessions per language: enough for a stable per-session figure.
const SESSIONS: usize = 200;

/// Resident bytes of this process: (in the pool's linear memories, all).
/// The pool reserves the linear memories as one mapping far larger than
/// any other (slots × the most a memory may grow to); Linux only.
fn resident() -> (u64, u64) {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let (mut largest, mut largest_rss, mut all) = (0u64, 0u64, 0u64);
    let mut size = 0u64;
    let kib = |line: &str| -> u64 {
        line.split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
            * 1024
    };
    for line in smaps.lines() {
        if line.starts_with("Size:") {
            size = kib(line);
        } else if line.starts_with("Rss:") {
            let rss = kib(line);
            all += rss;
            if size > largest {
                (largest, largest_rss) = (size, rss);
            }
        }
    }
    (largest_rss, all)
}

/// One language's figures.
struct Row {
    lang: &'static str,
    create_us: f64,
    memory_kib: f64,
    other_kib: f64,
}

async fn measure(lang: &'static str, component: &Path) -> Row {
    let runtime = Runtime::with_config(RuntimeConfig::pooled(SESSIONS as u32 + 4)).expect("pool");
    let set = set_of(runtime, &[component]).await;
    let plugin = set.ids().next().expect("one plugin").to_owned();
    // One session first, so that what every session shares is not counted.
    let first = set.session("first", None).expect("session");
    first.start(&plugin).await.expect("start");
    let (memory_before, all_before) = resident();
    let mut sessions = Vec::with_capacity(SESSIONS);
    let mut times = Vec::with_capacity(SESSIONS);
    for i in 0..SESSIONS {
        let session = set.session(format!("s{i}"), None).expect("session");
        let start = Instant::now();
        session.start(&plugin).await.expect("start");
        times.push(start.elapsed().as_secs_f64() * 1e6);
        sessions.push(session);
    }
    let (memory_after, all_after) = resident();
    for session in sessions {
        session.close().await;
    }
    let per = |bytes: u64| bytes as f64 / 1024.0 / SESSIONS as f64;
    let memory = memory_after.saturating_sub(memory_before);
    let all = all_after.saturating_sub(all_before);
    Row {
        lang,
        create_us: median(times),
        memory_kib: per(memory),
        other_kib: per(all.saturating_sub(memory)),
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
        "polyglot: the probe per language, {SESSIONS} sessions each (median create + initialize; resident memory each session adds)"
    );
    println!("  language     create + init    per session   linear memory   the rest");
    for (lang, component) in &probes {
        let row = tokio.block_on(measure(lang, component));
        let total = row.memory_kib + row.other_kib;
        let shown = |kib: f64| {
            if kib >= 1024.0 {
                format!("{:.2} MiB", kib / 1024.0)
            } else {
                format!("{kib:.1} KiB")
            }
        };
        println!(
            "  {:<10} {:>10.1} µs   {:>12}   {:>13}   {:>8}",
            row.lang,
            row.create_us,
            shown(total),
            shown(row.memory_kib),
            shown(row.other_kib)
        );
    }
}
