//! The project beside Extism, in one run: the probe's `echo` tool called
//! in-process through `Session::call_tool`, through a bare wasmtime call of
//! the same component export (the engine floor), and as an Extism plug-in
//! through the `extism` crate (1.30.0, the newest whose engine builds with
//! this toolchain), with and without Extism's timeout and memory cap:
//!
//! - per-call latency of a warm call (in five processes: one process has
//!   a ratio of its own; each row is the median over them);
//! - instantiate + first call;
//! - memory per live instance, 1 000 instances (each measured in a process
//!   of its own, so that one side's freed memory is not the next's);
//! - what each enforces while doing it: a call that spins, a call blocked
//!   in the host, and one that allocates past its cap.
//!
//! Run: `cargo bench -p lingxi-wasm-peers` (needs `rustup target add
//! wasm32-wasip2 wasm32-wasip1 wasm32-unknown-unknown`).

#[path = "../../../host/benches/embed/bare.rs"]
#[allow(dead_code)] // the embed bench's throughput is not used here
mod bare;
#[path = "../../../host/benches/common/mod.rs"]
mod common;
mod extism_host;
mod ours;

use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

use common::{PROCESSES, median, numbers_from_child, ratio_verdict, rss};
use extism_host::Setup;

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
/// The environment variable that makes a child measure the per-call rows.
const PER_CALL: &str = "LINGXI_PEERS_PER_CALL";

/// The guests, built from source.
struct Guests {
    probe: PathBuf,
    testbed: PathBuf,
    extism: PathBuf,
    /// The same plug-in built for `wasm32-wasip1` (its WASI sleep).
    extism_wasi: PathBuf,
}

impl Guests {
    /// What a child is told: what to measure (`key` = `value`) and where
    /// the guests are.
    fn envs<'a>(&'a self, key: &'a str, value: &'a str) -> [(&'a str, &'a OsStr); 5] {
        [
            (key, value.as_ref()),
            ("LINGXI_PEERS_PROBE", self.probe.as_ref()),
            ("LINGXI_PEERS_TESTBED", self.testbed.as_ref()),
            ("LINGXI_PEERS_EXTISM", self.extism.as_ref()),
            ("LINGXI_PEERS_EXTISM_WASI", self.extism_wasi.as_ref()),
        ]
    }

    /// In a child: the guests its parent built ([`Guests::envs`]).
    fn from_env() -> Guests {
        let path = |key: &str| PathBuf::from(std::env::var_os(key).expect("guest path"));
        Guests {
            probe: path("LINGXI_PEERS_PROBE"),
            testbed: path("LINGXI_PEERS_TESTBED"),
            extism: path("LINGXI_PEERS_EXTISM"),
            extism_wasi: path("LINGXI_PEERS_EXTISM_WASI"),
        }
    }
}

/// Extism's plug-in with a timeout and the memory cap of the project's
/// default, `limit` the timeout.
fn capped(limit: Duration) -> Setup {
    Setup {
        limits: Some((limit, MEMORY_PAGES)),
        ..Setup::default()
    }
}

fn main() {
    if let Ok(side) = std::env::var(MEMORY_SIDE) {
        return memory_child(&side);
    }
    if std::env::var_os(PER_CALL).is_some() {
        return per_call_child();
    }
    let folder = common::guests(&["probe", "testbed"]);
    let guests = Guests {
        probe: folder.join("probe.wasm"),
        testbed: folder.join("testbed.wasm"),
        extism: extism_host::build("wasm32-unknown-unknown"),
        extism_wasi: extism_host::build("wasm32-wasip1"),
    };
    let tokio = common::tokio();
    println!("\nthe probe's echo beside Extism 1.30.0 (extism-pdk 1.4.1, wasm32-unknown-unknown)");
    per_call(&guests);
    first_call(&tokio, &guests);
    memory(&guests);
    enforcement(&tokio, &guests);
}

/// The per-call rows, measured in [`PROCESSES`] processes (one process has
/// a ratio of its own): each row is the median over processes, the ratio
/// the median of each process's own, and each is shown.
fn per_call(guests: &Guests) {
    let runs: Vec<[f64; 4]> = (0..PROCESSES)
        .map(|_| {
            let said = numbers_from_child(&guests.envs(PER_CALL, "1"));
            said.try_into()
                .unwrap_or_else(|n| panic!("per-call child said {n:?}"))
        })
        .collect();
    let column = |i: usize| median(runs.iter().map(|run| run[i]).collect());
    let [session, floor, extism, extism_capped] = [0, 1, 2, 3].map(column);
    let ratios: Vec<f64> = runs.iter().map(|run| run[0] / run[1]).collect();
    println!(
        "per-call latency, warm echo, µs (median of {PROCESSES} processes, each the median of 3 alternations' medians of {ROUNDS} rounds of {CALLS})"
    );
    println!("  Session::call_tool (deadline, memory cap, output caps)    {session:8.2}");
    println!("  bare wasmtime 48 call of the same export (no bookkeeping) {floor:8.2}");
    println!("  Extism Plugin::call, no timeout, no memory cap            {extism:8.2}");
    println!("  Extism Plugin::call, timeout 10 s, memory max 256 MiB     {extism_capped:8.2}");
    println!("  call_tool / bare = {}", ratio_verdict(ratios, 1.3));
    println!(
        "  call_tool / Extism capped = {:.2}",
        session / extism_capped
    );
}

/// In a child: µs per warm call of `Session::call_tool`, the bare call and
/// Extism's two, alternated three times, each the median of its rounds.
fn per_call_child() {
    let guests = Guests::from_env();
    let tokio = common::tokio();
    let unlimited = extism_host::compiled(&guests.extism, Setup::default());
    let limited = extism_host::compiled(&guests.extism, capped(Duration::from_secs(10)));
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
    let medians = [session, floor, extism, extism_capped].map(median);
    println!("{}", medians.map(|m| m.to_string()).join(" "));
}

/// Median µs of `n` runs of `make` (what is dropped afterwards is not timed).
fn timed<T>(n: usize, mut make: impl FnMut() -> T) -> f64 {
    let mut kept = Vec::with_capacity(1);
    let times = (0..n)
        .map(|_| {
            let start = std::time::Instant::now();
            let made = make();
            let took = start.elapsed().as_secs_f64() * 1e6;
            kept.clear();
            kept.push(made);
            took
        })
        .collect();
    median(times)
}

fn first_call(tokio: &tokio::runtime::Runtime, guests: &Guests) {
    let limited = extism_host::compiled(&guests.extism, capped(Duration::from_secs(10)));
    let extism = timed(FIRST_CALLS, || extism_host::instance(&limited, ARGS));
    let pooled = extism_host::compiled(
        &guests.extism,
        Setup {
            pooled: true,
            ..capped(Duration::from_secs(10))
        },
    );
    let extism_pooled = timed(FIRST_CALLS, || extism_host::instance(&pooled, ARGS));
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
            drop(instance);
        }
        (session, median(floor))
    });
    println!(
        "instantiate + first call, µs (median of {FIRST_CALLS}; compiled once before; drops not timed)"
    );
    println!("  new session + call_tool (pooled runtime)                  {session:8.1}");
    println!("  bare wasmtime: instantiate, initialize, call (not pooled) {floor:8.1}");
    println!("  Extism Plugin::new_from_compiled + call (capped)          {extism:8.1}");
    println!("  the same on wasmtime's pooling allocator                  {extism_pooled:8.1}");
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
        let [kib] = numbers_from_child(&guests.envs(MEMORY_SIDE, side))[..] else {
            panic!("{side}: one number expected");
        };
        println!("  {what:<58} {kib:>8.1}");
    }
}

/// In a child: creates the instances of `side` and prints KiB of RSS each.
fn memory_child(side: &str) {
    let Guests { probe, extism, .. } = Guests::from_env();
    let tokio = common::tokio();
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
            rss().saturating_sub(before) as f64 / INSTANCES as f64
        }),
        _ => {
            let limited = extism_host::compiled(&extism, capped(Duration::from_secs(10)));
            let before = rss();
            let kept: Vec<_> = (0..INSTANCES)
                .map(|_| extism_host::instance(&limited, ARGS))
                .collect();
            let each = rss().saturating_sub(before) as f64 / INSTANCES as f64;
            drop(kept);
            each
        }
    };
    println!("{:.1}", per_instance / 1024.0);
}

fn enforcement(tokio: &tokio::runtime::Runtime, guests: &Guests) {
    let limited = extism_host::compiled(&guests.extism, capped(LIMIT));
    let wasi = extism_host::compiled(
        &guests.extism_wasi,
        Setup {
            wasi: true,
            ..capped(LIMIT)
        },
    );
    // A fresh instance for each case: a call stopped by its limit may
    // leave the one before unusable.
    let theirs = [
        (&limited, "spin", ""),
        (&wasi, "wasi_sleep", "2000"),
        (&limited, "sleep", "2000"),
        (&limited, "alloc_mib", "512"),
    ]
    .map(|(compiled, function, input)| {
        extism_host::outcome(&mut extism_host::instance(compiled, ARGS), function, input)
    });
    let [spin, sleep, alloc] = tokio.block_on(ours::enforcement(&guests.testbed, LIMIT));
    let mine = [Some(spin), Some(sleep), None, Some(alloc)];
    println!(
        "what each enforces (limit {} ms a call, 256 MiB an instance; what the call ended in, after how long)",
        LIMIT.as_millis()
    );
    let cases = [
        "a call that spins",
        "a call that sleeps 2 s through WASI (wasi:clocks; Extism: wasm32-wasip1)",
        "a call blocked 2 s in a host function that does not watch its time (the bench's, given to Extism)",
        "allocating 512 MiB",
    ];
    for ((case, ours), (their_time, their_said)) in cases.iter().zip(mine).zip(theirs) {
        println!("  {case}");
        match ours {
            Some((took, said)) => println!("    call_tool  {:>7.0} ms  {}", ms(took), clip(&said)),
            None => println!(
                "    call_tool        -     (the project's host functions are its own, async)"
            ),
        }
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
