//! The baseline a process per plugin gives: warm JSONL round trips to the
//! native probe over pipes, spawned as LingXi spawns it.

use std::path::{Path, PathBuf};

use crate::common;

/// The components and the native probe, built from source.
pub struct Guests {
    pub probe: PathBuf,
    pub quickstart: PathBuf,
    pub testbed: PathBuf,
    pub native: PathBuf,
}

pub fn build() -> Guests {
    let dir = common::guests(&["probe", "quickstart", "testbed"]);
    Guests {
        probe: dir.join("probe.wasm"),
        quickstart: dir.join("quickstart.wasm"),
        testbed: dir.join("testbed.wasm"),
        native: common::native_probe(),
    }
}

const ROUND_TRIPS: usize = 2_000;
const ROUNDS: usize = 7;

/// µs per warm `tool.execute` round trip to `native`: as spawned, and with
/// this process and the plugin pinned to one CPU (Linux; else the same).
pub fn round_trips(native: &Path) -> (f64, f64) {
    let home = tempfile::tempdir().expect("tempdir");
    let per_call = || {
        let mut rounds = Vec::new();
        for _ in 0..ROUNDS {
            let cmd = common::lingxi_spawn(native, home.path());
            let took = common::session(cmd, ROUND_TRIPS).1;
            rounds.push(took.as_secs_f64() * 1e6 / ROUND_TRIPS as f64);
        }
        common::median(rounds)
    };
    let spawned = per_call();
    #[cfg(target_os = "linux")]
    let pinned = {
        let all = common::pin_to_one_cpu();
        let pinned = per_call();
        rustix::thread::sched_setaffinity(None, &all).expect("sched_setaffinity");
        pinned
    };
    #[cfg(not(target_os = "linux"))]
    let pinned = spawned;
    (spawned, pinned)
}
