//! `lingxi-wasm-soak`: see the library's documentation. Exit status 1 if
//! any check failed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, ValueEnum};
use lingxi_wasm_soak::{BreakerPolicy, Config, Fault, Mode, Thresholds};

/// Soaks lingxi-wasm-run and a plugin set with a long mixed request stream
/// in both wire dialects, 1% of it faults; checks every answer, samples RSS
/// and open descriptors, exits 1 if anything failed.
#[derive(Debug, Parser)]
#[command(name = "lingxi-wasm-soak", version)]
struct Args {
    /// Requests per mode.
    #[arg(long, default_value_t = 1_000_000)]
    requests: u64,
    /// Seed of the request mix (the same seed sends the same requests).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The lingxi-wasm-run executable [default: beside this one].
    #[arg(long)]
    launcher: Option<PathBuf>,
    /// The testbed component [default: target/guests/wasm32-wasip2/guest/testbed.wasm].
    #[arg(long)]
    component: Option<PathBuf>,
    /// Another component for the set (repeatable) [default: probe.wasm and
    /// quickstart.wasm beside the testbed].
    #[arg(long = "plugin")]
    plugins: Vec<PathBuf>,
    /// What to soak.
    #[arg(long, value_enum, default_value_t = ModeArg::Both)]
    mode: ModeArg,
    /// Concurrent sessions of the set.
    #[arg(long, default_value_t = 4)]
    sessions: usize,
    /// Faults, in percent of the requests.
    #[arg(long, default_value_t = 1.0)]
    fault_rate: f64,
    /// The fault kinds (comma separated): panic, unreachable, abort, spin,
    /// log-flood, big-result, print-escapes [default: all].
    #[arg(long, value_delimiter = ',')]
    faults: Vec<String>,
    /// The launcher's --timeout, in seconds: how long a spin lasts there,
    /// and the most any call may take (on a busy machine a call of a
    /// process run with `nice` can wait long for a CPU).
    #[arg(long, default_value_t = 0.5)]
    timeout: f64,
    /// The deadline, in seconds, the set's caller gives the spinning tool.
    #[arg(long, default_value_t = 0.1)]
    spin_deadline: f64,
    /// Requests in flight to the launcher at once.
    #[arg(long, default_value_t = 32)]
    window: usize,
    /// How to live with the crash breaker: restart (inject every fault,
    /// check the breaker trips, restart the launcher or deactivate the
    /// session as documented) or pace (one process for the whole run:
    /// faults that count toward the breaker are spaced under its limit).
    #[arg(long, value_enum, default_value_t = BreakerArg::Restart)]
    breaker: BreakerArg,
    /// Traps that trip the breaker (the launcher's is fixed at 5; in the
    /// set 0 means no breaker).
    #[arg(long, default_value_t = 5)]
    max_traps: usize,
    /// The breaker's window, in seconds (the launcher's is fixed at 60).
    #[arg(long, default_value_t = 60)]
    trap_window: u64,
    /// Fail if RSS grows more than this many percent after warm-up.
    #[arg(long, default_value_t = 5.0)]
    max_rss_growth: f64,
    /// Fail if open descriptors grow by more than this after warm-up.
    #[arg(long, default_value_t = 0)]
    max_fd_growth: i64,
    /// Do not fail on RSS or descriptor growth (still reported).
    #[arg(long)]
    no_resource_checks: bool,
    /// RSS/fd samples over a run.
    #[arg(long, default_value_t = 200)]
    samples: u64,
    /// The share of a run that is warm-up.
    #[arg(long, default_value_t = 0.1)]
    warmup: f64,
    /// Seconds to wait for one answer before counting it lost.
    #[arg(long, default_value_t = 60)]
    guard: u64,
    /// A folder for plugin data, HOME and the compile cache [default: a
    /// temporary one, removed at the end].
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Write every RSS/fd sample here as CSV (mode, answers, pid, RSS KiB, fds).
    #[arg(long)]
    samples_out: Option<PathBuf>,
    /// No progress lines.
    #[arg(long)]
    quiet: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ModeArg {
    Launcher,
    Embed,
    Both,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum BreakerArg {
    Restart,
    Pace,
}

fn main() {
    match run(Args::parse()) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(error) => {
            eprintln!("lingxi-wasm-soak: error: {error:#}");
            std::process::exit(2);
        }
    }
}

fn run(args: Args) -> Result<bool> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let guests = root.join("target/guests/wasm32-wasip2/guest");
    let launcher = match args.launcher {
        Some(path) => path,
        None => std::env::current_exe()?.with_file_name("lingxi-wasm-run"),
    };
    let component = args
        .component
        .unwrap_or_else(|| guests.join("testbed.wasm"));
    let plugins = if args.plugins.is_empty() {
        let beside = component.parent().unwrap_or(Path::new(".")).to_owned();
        (["probe.wasm", "quickstart.wasm"].iter())
            .map(|name| beside.join(name))
            .filter(|path| path.exists())
            .collect()
    } else {
        args.plugins
    };
    let temp = match &args.work_dir {
        Some(_) => None,
        None => Some(tempfile::tempdir().context("cannot make a work folder")?),
    };
    let work = match (&args.work_dir, &temp) {
        (Some(dir), _) => dir.clone(),
        (None, Some(temp)) => temp.path().to_owned(),
        (None, None) => unreachable!("a temporary folder was made"),
    };
    let home = work.join("home");
    std::fs::create_dir_all(&home).context("cannot make the launcher's HOME")?;
    let faults = match args.faults.as_slice() {
        [] => Fault::ALL.to_vec(),
        names => (names.iter())
            .map(|n| Fault::parse(n).with_context(|| format!("no fault kind {n:?}")))
            .collect::<Result<_>>()?,
    };
    let mut config = Config::new(launcher, component, work.clone());
    config.requests = args.requests;
    config.seed = args.seed;
    config.launcher_env = vec![
        ("HOME".into(), home.display().to_string()),
        (
            "LINGXI_WASM_CACHE".into(),
            work.join("cache").display().to_string(),
        ),
    ];
    config.plugins = plugins;
    config.sessions = args.sessions;
    config.fault_ppm = (args.fault_rate * 10_000.0).round() as u32;
    config.faults = faults;
    config.timeout = Duration::from_secs_f64(args.timeout);
    config.spin_deadline = Duration::from_secs_f64(args.spin_deadline);
    config.window = args.window.max(1);
    config.breaker = match args.breaker {
        BreakerArg::Restart => BreakerPolicy::Restart,
        BreakerArg::Pace => BreakerPolicy::Pace,
    };
    config.max_traps = args.max_traps;
    config.trap_window = Duration::from_secs(args.trap_window);
    config.samples = args.samples;
    config.warmup = args.warmup;
    config.guard = Duration::from_secs(args.guard);
    config.progress = !args.quiet;
    let mode = match args.mode {
        ModeArg::Launcher => Mode::Launcher,
        ModeArg::Embed => Mode::Embed,
        ModeArg::Both => Mode::Both,
    };
    let limits = Thresholds {
        max_rss_growth_pct: (!args.no_resource_checks).then_some(args.max_rss_growth),
        max_fd_growth: (!args.no_resource_checks).then_some(args.max_fd_growth),
    };
    println!(
        "lingxi-wasm-soak: {} requests per mode, seed {}, faults {}%",
        config.requests, config.seed, args.fault_rate
    );
    let reports = lingxi_wasm_soak::run(&config, mode)?;
    if let Some(path) = &args.samples_out {
        let mut csv = String::from("mode,answers,pid,rss_kib,fds\n");
        for report in &reports {
            for s in &report.samples {
                let mode = report.mode;
                csv.push_str(&format!(
                    "{mode},{},{},{},{}\n",
                    s.done, s.pid, s.rss_kib, s.fds
                ));
            }
        }
        std::fs::write(path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let mut failures = Vec::new();
    for report in &reports {
        print!("{}", report.render());
        failures.extend(report.failures(&limits));
    }
    for failure in &failures {
        println!("FAIL {failure}");
    }
    if failures.is_empty() {
        println!("PASS");
    }
    Ok(failures.is_empty())
}
