//! # lingxi-wasm-soak
//!
//! A long, deterministic stream of mixed requests in both wire dialects,
//! about 1% of them faults (traps, a spin to the deadline, output and
//! result floods), sent to
//! - the real `lingxi-wasm-run` serving the `testbed` guest over pipes
//!   ([`launcher`]), and
//! - a `PluginSet` of several guests in this process, several sessions at
//!   once on tokio ([`embed`]).
//!
//! Every request must get exactly one answer, in order, of the right kind
//! (the documented error for each fault, the right content for the rest,
//! and a normal answer after each fault). RSS and open descriptors of the
//! soaked process are sampled; [`Report::failures`] says what failed.

use std::path::PathBuf;
use std::time::Duration;

pub mod embed;
pub mod expect;
pub mod fault;
mod front;
pub mod launcher;
pub mod mix;
pub mod progress;
pub mod report;
pub mod rng;
pub mod sample;

pub use fault::{BreakerPolicy, Fault};
pub use report::{Report, Thresholds};

/// Which part to soak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The launcher over pipes.
    Launcher,
    /// A plugin set in this process.
    Embed,
    /// The launcher, then the set.
    Both,
}

/// A soak run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Requests per mode.
    pub requests: u64,
    /// Seed of the request mix.
    pub seed: u64,
    /// The `lingxi-wasm-run` executable.
    pub launcher: PathBuf,
    /// Environment every launcher gets besides this process's (HOME, the
    /// compile cache: never the user's).
    pub launcher_env: Vec<(String, String)>,
    /// The `testbed` component.
    pub component: PathBuf,
    /// Other components for the set (probe, quickstart).
    pub plugins: Vec<PathBuf>,
    /// Concurrent sessions of the set.
    pub sessions: usize,
    /// Faults per million requests.
    pub fault_ppm: u32,
    /// The fault kinds to inject.
    pub faults: Vec<Fault>,
    /// The launcher's `--timeout` (how long a spin lasts there).
    pub timeout: Duration,
    /// The deadline the set's caller gives `spin`.
    pub spin_deadline: Duration,
    /// Requests in flight to the launcher at once.
    pub window: usize,
    /// How the run lives with the crash breaker.
    pub breaker: BreakerPolicy,
    /// The breaker's traps (the launcher's is fixed at 5; 0: no breaker in the set).
    pub max_traps: usize,
    /// The breaker's window (the launcher's is fixed at 60 s).
    pub trap_window: Duration,
    /// RSS/fd samples over a run.
    pub samples: u64,
    /// The share of the run before warm-up ends.
    pub warmup: f64,
    /// How long to wait for one answer before counting it lost.
    pub guard: Duration,
    /// A folder for data directories and the compile cache.
    pub work_dir: PathBuf,
    /// Print progress on stderr.
    pub progress: bool,
}

impl Config {
    /// The defaults, for `launcher` and `component`, working in `work_dir`.
    pub fn new(launcher: PathBuf, component: PathBuf, work_dir: PathBuf) -> Self {
        Config {
            requests: 20_000,
            seed: 1,
            launcher,
            launcher_env: Vec::new(),
            component,
            plugins: Vec::new(),
            sessions: 4,
            fault_ppm: 10_000,
            faults: Fault::ALL.to_vec(),
            timeout: Duration::from_millis(500),
            spin_deadline: Duration::from_millis(100),
            window: 32,
            breaker: BreakerPolicy::Restart,
            max_traps: 5,
            trap_window: Duration::from_secs(60),
            samples: 200,
            warmup: 0.1,
            guard: Duration::from_secs(60),
            work_dir,
            progress: false,
        }
    }
}

/// Runs `mode`: one report per part soaked.
pub fn run(config: &Config, mode: Mode) -> anyhow::Result<Vec<Report>> {
    let mut reports = Vec::new();
    if matches!(mode, Mode::Launcher | Mode::Both) {
        reports.push(launcher::run(config)?);
    }
    if matches!(mode, Mode::Embed | Mode::Both) {
        reports.push(embed::run(config)?);
    }
    Ok(reports)
}
