//! The project beside Extism, in one run: the probe's `echo` tool called
//! in-process through `Session::call_tool`, through a bare wasmtime call of
//! the same component export (the engine floor), and as an Extism plug-in
//! through the `extism` crate (1.30.0, the newest whose engine builds with
//! this toolchain), with and without Extism's timeout and memory cap:
//!
//! - per-call latency of a warm call;
//! - instantiate + first call;
//! - memory per live instance, 1 000 instances (each measured in a process
//!   of its own, so that one side's freed memory is not the next's);
//! - what each enforces while doing it: a call that spins, a call blocked
//!   in the host, and one that allocates past its cap.
//!
//! Run: `cargo bench -p lingxi-wasm-peers` (needs `rustup target add
//! wasm32-wasip2 wasm32-unknown-unknown`).

#[path = "../../../host/benches/embed/bare.rs"]
#[allow(dead_code)] // the embed bench's throughput is not used here
mod bare;
#[path = "../../../host/benches/common/mod.rs"]
mod common;
mod extism_host;
mod ours;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::{median, rss};

const CALLS: usize = 20_000;
const ROUNDS: usize = 7;
const FIRST_CALLS: usize = 200;
const INSTANCES: usize = 1_000;
const ARGS: &str = r#"{"q":1}"#;
/// The limits both hosts enforce in the enforcement rows: a call's time,
/// and an instance's memory (the project's default, 256 MiB).
const LIMIT: Duration = Duration::from_millis(200);
const MEMORY_PAGES: u32 = 4096;

/// The environment variable a child process is told its side by.
const MEMORY_SIDE: &str = "LINGXI_PEERS_MEMORY";

/// The guests, built from source.
struct Guests {
    probe: PathBuf,
    testbed: PathBuf,
    extism: PathBuf,
}

fn main() {
    if let Ok(side) = std::env::var(MEMORY_SIDE) {
        return memory_child(&side);
    }
    let folder = common::guests(&["probe", "testbed"]);
    let guests = Guests {
        probe: folder.join("probe.wasm"),
        testbed: folder.join("testbed.wasm"),
        extism: extism_host::build(),
    };
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    let wasm = std::fs::read(&guests.extism).expect("extism plug-in");
    println!("\nthe probe's echo beside Extism 1.30.0 (extism-pdk 1.4.1, wasm32-unknown-unknown)");
    per_call(&tokio, &guests, &wasm);
    first_call(&tokio, &guests, &wasm);
    memory(&guests);
    enforcement(&tokio, &guests, &wasm);
}

fn per_call(tokio: &tokio::runtime::Runtime, guests: &Guests, wasm: &[u8]) {
    let unlimited = extism_host::compiled(wasm, None);
    let limited = extism_host::compiled(wasm, Some((Duration::from_secs(10), MEMORY_PAGES)));
    let mut free = extism_host::instance(&unlimited, ARGS);
    let mut capped = extism_host::instance(&limited, ARGS);
    let [mut session, mut floor, mut extism, mut extism_capped]: [Vec<f64>; 4] = Default::default();
    tokio.block_on(async {
        let set = ours::set(&[&guests.probe], 16).await;
        let call = set.session("bench", None).expect("session");
        let mut bare = bare::Bare::new(&guests.probe).await;
        for _ in 0..3 {
            session.push(ours::cost(&call, CALLS, ROUNDS, ARGS).await);
            floor.push(bare.cost(CALLS, ROUNDS, ARGS).await);
            extism.push(extism_host::cost(&mut free, CALLS, ROUNDS, ARGS));
            extism_capped.push(extism_host::cost(&mut capped, CALLS, ROUNDS, ARGS));
        }
    });
    let [session, floor, extism, extism_capped]: [f64; 4] =
        [session, floor, extism, extism_capped].map(median);
    println!("per-call latency, warm echo, µs (median of 3 × {ROUNDS} rounds of {CALLS})");
    println!("  Session::call_tool (deadline, memory cap, output caps)    {session:8.2}");
    println!("  bare wasmtime 48 call of the same export (no bookkeeping) {floor:8.2}");
    println!("  Extism Plugin::call, no timeout, no memory cap            {extism:8.2}");
    println!("  Extism Plugin::call, timeout 10 s, memory max 256 MiB     {extism_capped:8.2}");
    println!(
        "  call_tool / bare = {:.2} (target ≤ 1.3: {});  call_tool / Extism capped = {:.2}",
        session / floor,
        if session / floor <= 1.3 {
            "met"
        } else {
            "NOT met"
        },
        session / extism_capped
    );
}

fn first_call(tokio: &tokio::runtime::Runtime, guests: &Guests, wasm: &[u8]) {
    let limited = extism_host::compiled(wasm, Some((Duration::from_secs(10), MEMORY_PAGES)));
    let extism = median(
        (0..FIRST_CALLS)
            .map(|_| {
                let start = std::time::Instant::now();
                drop(extism_host::instance(&limited, ARGS));
                start.elapsed().as_secs_f64() * 1e6
            })
            .collect(),
    );
    let (session, floor) = tokio.block_on(async {
        let set = ours::set(&[&guests.probe], FIRST_CALLS + 16).await;
        let session = ours::first_calls(&set, FIRST_CALLS, ARGS).await;
        let prepared = bare::Prepared::new(&guests.probe);
        let mut floor = Vec::new();
        for _ in 0..FIRST_CALLS {
            let start = std::time::Instant::now();
            let mut instance = bare::Bare::instance(&prepared).await;
            instance.call_once(ARGS).await;
            floor.push(start.elapsed().as_secs_f64() * 1e6);
        }
        (session, median(floor))
    });
    println!("instantiate + first call, µs (median of {FIRST_CALLS}; compiled once before)");
    println!("  new session + call_tool (pooled runtime)                   {session:8.1}");
    println!("  bare wasmtime: instantiate, initialize, call              {floor:8.1}");
    println!("  Extism Plugin::new_from_compiled + call (capped)          {extism:8.1}");
}

fn memory(guests: &Guests) {
    println!(
        "memory per live instance, {INSTANCES} instances that each answered a call (KiB of RSS; a process each)"
    );
    for (side, what) in [
        ("ours", "Session (pooled runtime)"),
        ("bare", "bare wasmtime store + instance"),
        ("extism", "Extism Plugin (capped)"),
    ] {
        let output = Command::new(std::env::current_exe().expect("bench"))
            .env(MEMORY_SIDE, side)
            .env("LINGXI_PEERS_PROBE", &guests.probe)
            .env("LINGXI_PEERS_EXTISM", &guests.extism)
            .output()
            .expect("child");
        let said = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "{side}: {said}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        println!("  {what:<58} {:>8}", said.trim());
    }
}

/// In a child: creates the instances of `side` and prints KiB of RSS each.
fn memory_child(side: &str) {
    let path = |key: &str| PathBuf::from(std::env::var(key).expect("guest path"));
    let (probe, extism) = (path("LINGXI_PEERS_PROBE"), path("LINGXI_PEERS_EXTISM"));
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio");
    let per_instance = match side {
        "ours" => tokio.block_on(ours::memory(&probe, INSTANCES, ARGS)),
        "bare" => tokio.block_on(async {
            let prepared = bare::Prepared::new(&probe);
            let before = rss();
            let mut kept = Vec::with_capacity(INSTANCES);
            for _ in 0..INSTANCES {
                let mut instance = bare::Bare::instance(&prepared).await;
                instance.call_once(ARGS).await;
                kept.push(instance);
            }
            (rss() - before) as f64 / INSTANCES as f64
        }),
        _ => {
            let wasm = std::fs::read(&extism).expect("plug-in");
            let limited =
                extism_host::compiled(&wasm, Some((Duration::from_secs(10), MEMORY_PAGES)));
            let before = rss();
            let kept: Vec<_> = (0..INSTANCES)
                .map(|_| extism_host::instance(&limited, ARGS))
                .collect();
            let each = (rss() - before) as f64 / INSTANCES as f64;
            drop(kept);
            each
        }
    };
    println!("{:.1}", per_instance / 1024.0);
}

fn enforcement(tokio: &tokio::runtime::Runtime, guests: &Guests, wasm: &[u8]) {
    let limited = extism_host::compiled(wasm, Some((LIMIT, MEMORY_PAGES)));
    let mut extism = extism_host::instance(&limited, ARGS);
    let theirs = [
        extism_host::outcome(&mut extism, "spin", ""),
        {
            let mut fresh = extism_host::instance(&limited, ARGS);
            extism_host::outcome(&mut fresh, "sleep", "2000")
        },
        {
            let mut fresh = extism_host::instance(&limited, ARGS);
            extism_host::outcome(&mut fresh, "alloc_mib", "512")
        },
    ];
    let mine = tokio.block_on(ours::enforcement(&guests.testbed, LIMIT));
    println!(
        "what each enforces (limit {} ms a call, 256 MiB an instance; what the call ended in, after how long)",
        LIMIT.as_millis()
    );
    let cases = [
        "a call that spins",
        "a call blocked 2 s in the host",
        "allocating 512 MiB",
    ];
    for ((case, (our_time, ours_said)), (their_time, their_said)) in
        cases.iter().zip(mine).zip(theirs)
    {
        println!("  {case}");
        println!(
            "    call_tool  {:>7.0} ms  {}",
            ms(our_time),
            clip(&ours_said)
        );
        println!(
            "    Extism     {:>7.0} ms  {}",
            ms(their_time),
            clip(&their_said)
        );
    }
}

fn ms(took: Duration) -> f64 {
    took.as_secs_f64() * 1e3
}

/// The first line of what a call said, at most 100 characters.
fn clip(said: &str) -> String {
    let line = said.lines().next().unwrap_or_default();
    line.chars().take(100).collect()
}
