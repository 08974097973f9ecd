//! What running plugins in-process buys an agent host, measured in one run
//! against baselines measured in the same run:
//!
//! - P3: a warm `Session::call_tool` on the probe, against (i) a warm JSONL
//!   round trip to the native probe over pipes (target: ≥ 10× faster) and
//!   (ii) a bare wasmtime call of the same export of the same component on
//!   an engine configured the same way, with no sandbox bookkeeping
//!   (target: within 1.3×); and the same call with a receipt asked for
//!   (`CallOptions::with_receipt`), against the call without; and the same
//!   call of a probe that mounts the workspace root and a folder named
//!   under it (`{root}/src`), as a plugin with `projectRead` and a learned
//!   policy does, against the bare call; measured in five processes, since
//!   one process has a ratio of its own (each row is the median over them,
//!   and each process's ratio is shown);
//! - P4: 10 000 sessions, each with an initialized probe instance, in this
//!   process: resident memory (target ≤ 512 MiB) and the median time to
//!   create and initialize one (target ≤ 50 µs);
//! - scaling: two plugins called from two tasks against one (target ≥ 1.7×
//!   the calls per second on 2 cores), and a plugin's call latency while
//!   another spins until its deadline, against its idle latency (target
//!   within 2×);
//! - polyglot: the probe in Rust, Python and JavaScript: per-session
//!   create-and-initialize time and resident memory, split into the
//!   instance's linear memory and the rest.
//!
//! Run: `cargo bench -p lingxi-wasm-host --bench embed` (all), or name
//! sections after `--`: `p3`, `p4`, `scaling`, `polyglot`.

mod bare;
#[path = "../common/mod.rs"]
mod common;
mod pipes;
mod polyglot;

use lingxi_wasm_host::CallOptions;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{PROCESSES, median, numbers_from_child, ratio_verdict, rss};
use lingxi_wasm_host::{PluginOptions, PluginSet, ReceiptSlot, Runtime, RuntimeConfig, no_grant};

const CALLS: usize = 20_000;
const ROUNDS: usize = 7;
const SESSIONS: usize = 10_000;
const ARGS: &str = r#"{"q":1}"#;

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "NOT met" }
}

async fn set_of(runtime: Runtime, guests: &[&std::path::Path]) -> PluginSet {
    let mut set = PluginSet::new(runtime);
    for guest in guests {
        let options = PluginOptions::grant(no_grant());
        set.load_file(guest, options).await.expect("load");
    }
    set
}

/// µs per warm `call_tool` of `tool`, median of rounds.
async fn call_cost(session: &lingxi_wasm_host::Session, tool: &str) -> f64 {
    calls_with(session, tool, CallOptions::default()).await
}

/// µs per warm `call_tool` of `tool` with `options`, median of rounds.
async fn calls_with(session: &lingxi_wasm_host::Session, tool: &str, options: CallOptions) -> f64 {
    for _ in 0..1000 {
        session
            .call_tool(tool, ARGS, options.clone())
            .await
            .expect("call");
    }
    let mut rounds = Vec::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..CALLS {
            session
                .call_tool(tool, ARGS, options.clone())
                .await
                .expect("call");
        }
        rounds.push(start.elapsed().as_secs_f64() * 1e6 / CALLS as f64);
    }
    median(rounds)
}

/// The environment variable that makes a child measure P3's calls of the
/// probe at this path ([`p3_calls`]).
const P3_CHILD: &str = "LINGXI_EMBED_P3_PROBE";

fn main() {
    if let Some(probe) = std::env::var_os(P3_CHILD) {
        return p3_calls(std::path::Path::new(&probe));
    }
    let guests = pipes::build();
    let tokio = common::tokio();
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    const SECTIONS: [&str; 4] = ["p3", "p4", "scaling", "polyglot"];
    if let Some(unknown) = wanted.iter().find(|w| !SECTIONS.contains(&w.as_str())) {
        eprintln!("no section '{unknown}': name one or more of {SECTIONS:?}, or none for all");
        std::process::exit(2);
    }
    let run = |section: &str| wanted.is_empty() || wanted.iter().any(|w| w == section);
    println!("\nin-process calls of examples/probe (lingxi-wasm-host PluginSet)");
    if run("p3") {
        p3(&guests);
    }
    if run("p4") {
        p4(&tokio, &guests);
    }
    if run("scaling") {
        scaling(&tokio, &guests);
    }
    if run("polyglot") {
        polyglot::rows(&tokio, &guests.probe);
    }
}

fn pooled() -> Runtime {
    Runtime::with_config(RuntimeConfig::pooled(SESSIONS as u32 + 16)).expect("runtime")
}

/// P3's in-process rows are measured in [`PROCESSES`] processes (one
/// process has a ratio of its own): each row is the median over processes,
/// each ratio the median of each process's own.
fn p3(guests: &pipes::Guests) {
    let runs: Vec<[f64; 4]> = (0..PROCESSES)
        .map(|_| {
            let said = numbers_from_child(&[(P3_CHILD, guests.probe.as_ref())]);
            said.try_into()
                .unwrap_or_else(|n| panic!("P3 child said {n:?}"))
        })
        .collect();
    let column = |i: usize| median(runs.iter().map(|run| run[i]).collect());
    let [in_process, bare, receipted, mounted] = [0, 1, 2, 3].map(column);
    let ratios: Vec<f64> = runs.iter().map(|run| run[0] / run[1]).collect();
    let (pipe, pipe_pinned) = pipes::round_trips(&guests.native);
    println!(
        "P3: warm probe.echo, µs per call (in-process rows: median of {PROCESSES} processes, each the median of 3 alternations' medians of {ROUNDS} rounds of {CALLS}; the round trip: in this process)"
    );
    println!("  Session::call_tool                      {in_process:8.2}");
    println!("  bare wasmtime call, same export         {bare:8.2}");
    println!("  Session::call_tool, receipt asked for   {receipted:8.2}");
    println!("  Session::call_tool, {{root}}/src mounted  {mounted:8.2}");
    println!(
        "  JSONL round trip to the native probe    {pipe:8.2}   pinned to 1 CPU {pipe_pinned:8.2}"
    );
    let speedup = pipe_pinned.min(pipe) / in_process;
    println!(
        "  round trip / call_tool = {speedup:.1}×   (target ≥ 10×: {})",
        verdict(speedup >= 10.0)
    );
    println!("  call_tool / bare call  = {}", ratio_verdict(ratios, 1.3));
    let receipt: Vec<f64> = runs.iter().map(|run| run[2] / run[0]).collect();
    println!(
        "  with receipt / without = {:.2}    (what asking for a receipt costs a call)",
        median(receipt)
    );
    let mounting: Vec<f64> = runs.iter().map(|run| run[3] / run[1]).collect();
    println!(
        "  mounted / bare call    = {:.3}   (the call of a plugin that mounts the root and a folder under it)",
        median(mounting)
    );
}

/// In a child: µs per warm `call_tool` of `probe`, per bare call of the
/// same export, per `call_tool` with a receipt asked for, and per
/// `call_tool` of a probe that mounts a workspace, alternated three times,
/// each the median of its rounds.
fn p3_calls(probe: &std::path::Path) {
    let tokio = common::tokio();
    let (in_process, bare, receipted, mounted) = tokio
        .block_on(async {
            let set = set_of(pooled(), &[probe]).await;
            let session = set.session("bench", None).expect("session");
            let mut in_process = Vec::new();
            let mut bare_rounds = Vec::new();
            let mut receipted = Vec::new();
            let mut bare = bare::Bare::new(probe).await;
            let slot = ReceiptSlot::new();
            let mounting = Mounting::new(probe).await;
            let mut mounted = Vec::new();
            for _ in 0..3 {
                in_process.push(call_cost(&session, "probe.echo").await);
                bare_rounds.push(bare.cost(CALLS, ROUNDS, ARGS).await);
                let asked = CallOptions::default().with_receipt(&slot);
                receipted.push(calls_with(&session, "probe.echo", asked).await);
                mounted.push(call_cost(&mounting.session, "probe.echo").await);
            }
            let medians = [in_process, bare_rounds, receipted, mounted].map(median);
            mounting.session.close().await;
            medians
        })
        .into();
    println!("{in_process} {bare} {receipted} {mounted}");
}

fn p4(tokio: &tokio::runtime::Runtime, guests: &pipes::Guests) {
    let (before, after, create) = tokio.block_on(async {
        let set = set_of(pooled(), &[&guests.probe]).await;
        let before = rss();
        let mut sessions = Vec::with_capacity(SESSIONS);
        let mut times = Vec::with_capacity(SESSIONS);
        for i in 0..SESSIONS {
            let session = set.session(format!("s{i}"), None).expect("session");
            let start = Instant::now();
            session.start("com.lingxi.test-probe").await.expect("start");
            times.push(start.elapsed().as_secs_f64() * 1e6);
            sessions.push(session);
        }
        let after = rss();
        for session in sessions {
            session.close().await;
        }
        (before, after, median(times))
    });
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    println!("P4: {SESSIONS} sessions, each with an initialized probe instance");
    println!(
        "  RSS {:.0} MiB (before them {:.0} MiB, {:.1} KiB each)   (target ≤ 512 MiB: {})",
        mib(after),
        mib(before),
        (after.saturating_sub(before)) as f64 / 1024.0 / SESSIONS as f64,
        verdict(mib(after) <= 512.0)
    );
    println!(
        "  create + initialize one: {create:.1} µs median   (target ≤ 50 µs: {})",
        verdict(create <= 50.0)
    );
}

/// Calls per second of `tools`, each called from a task of its own.
async fn throughput(set: &Arc<PluginSet>, tools: &'static [&'static str]) -> f64 {
    let start = Instant::now();
    let tasks: Vec<_> = tools
        .iter()
        .map(|tool| {
            let set = set.clone();
            tokio::spawn(async move {
                let session = set.session(format!("t-{tool}"), None).expect("session");
                for _ in 0..CALLS * 5 {
                    session
                        .call_tool(tool, ARGS, CallOptions::default())
                        .await
                        .expect("call");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task");
    }
    (tools.len() * CALLS * 5) as f64 / start.elapsed().as_secs_f64()
}

fn scaling(tokio: &tokio::runtime::Runtime, guests: &pipes::Guests) {
    // The baseline: bare wasmtime calls from one thread and from two.
    let (mut bare_ones, mut bare_twos) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        bare_ones.push(bare::throughput(&guests.probe, 1, CALLS * 5));
        bare_twos.push(bare::throughput(&guests.probe, 2, CALLS * 5));
    }
    let bare_scaling = median(bare_twos) / median(bare_ones);
    let (one, two, idle, contended) = tokio.block_on(async {
        let plugins = [&*guests.probe, &guests.quickstart, &guests.testbed];
        let set = Arc::new(set_of(pooled(), &plugins).await);
        let mut ones = Vec::new();
        let mut twos = Vec::new();
        for _ in 0..3 {
            ones.push(throughput(&set, &["probe.echo"]).await);
            ones.push(throughput(&set, &["echo"]).await);
            twos.push(throughput(&set, &["probe.echo", "echo"]).await);
        }
        let probe = set.session("latency", None).expect("session");
        let idle = call_cost(&probe, "probe.echo").await;
        let spinner = {
            let set = set.clone();
            tokio::spawn(async move {
                let session = set.session("spinner", None).expect("session");
                let limit = Some(Duration::from_secs(1));
                loop {
                    let _ = session
                        .call_tool(
                            "spin",
                            "",
                            limit.map_or_else(CallOptions::default, CallOptions::within),
                        )
                        .await;
                }
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let contended = call_cost(&probe, "probe.echo").await;
        spinner.abort();
        (median(ones), median(twos), idle, contended)
    });
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("scaling on {cpus} CPUs");
    println!(
        "  two plugins from two tasks: {:.2}× the calls/s of one ({one:.0}/s → {two:.0}/s)   (target ≥ 1.7: {})",
        two / one,
        verdict(two / one >= 1.7)
    );
    println!("    (bare wasmtime calls from two threads: {bare_scaling:.2}× one thread)");
    println!(
        "  call latency while another plugin spins: {contended:.2} µs vs {idle:.2} idle = {:.2}×   (target ≤ 2: {})",
        contended / idle,
        verdict(contended / idle <= 2.0)
    );
}

/// The probe as a plugin with a project sees it: granted what it declares
/// (`projectRead`), with `{root}/src` named under the root, in a session
/// whose snapshot's root is a scratch folder with `src` in it.
struct Mounting {
    session: lingxi_wasm_host::Session,
    _set: PluginSet,
    _root: tempfile::TempDir,
}

impl Mounting {
    async fn new(probe: &std::path::Path) -> Mounting {
        use lingxi_wasm_host::policy::{Grant, UnderRoot};
        let root = tempfile::tempdir().expect("root");
        std::fs::create_dir_all(root.path().join("src")).expect("src");
        let grant = Grant {
            in_root: UnderRoot {
                read: vec!["src".into()],
                ..UnderRoot::default()
            },
            ..Grant::default()
        };
        let mut set = PluginSet::new(pooled());
        let options = PluginOptions::grant(grant);
        set.load_file(probe, options).await.expect("load");
        let session = set.session("mounted", None).expect("session");
        let sent = serde_json::json!({"observedAt": 1_800_000_000, "ipcVersion": 1,
            "workspace": {"rootPath": root.path(), "isGitRepository": false, "coreVersion": "1.1.0"}});
        let snapshot =
            lingxi_wasm_host::convert::snapshot(serde_json::from_value(sent).expect("dto"));
        session.set_snapshot(snapshot).expect("snapshot");
        Mounting {
            session,
            _set: set,
            _root: root,
        }
    }
}
