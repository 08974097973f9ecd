//! What the benches share: building the guests and the native probe from
//! source, spawning a plugin as LingXi does, and driving its JSONL session.
#![allow(dead_code)] // each bench uses its own part

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const SNAPSHOT: &str = r#"{"id":"A","method":"host.snapshot","params":{"observedAt":821692800,"ipcVersion":1,"workspace":{"rootPath":"/tmp","isGitRepository":true,"coreVersion":"1.1.0"}}}"#;
pub const INIT: &str = r#"{"id":"B","method":"plugin.initialize","params":{"hostIPCVersion":1,"coreVersion":"1.1.0"}}"#;
pub const CALL: &str = r#"{"id":"C","method":"tool.execute","params":{"toolName":"probe.echo","arguments":"{\"q\":1}","sessionID":"s","toolCallID":"c"}}"#;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .to_path_buf()
}

pub fn cargo(args: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root())
        .args(args)
        .status()
        .expect("cargo");
    assert!(status.success(), "cargo {args:?} failed");
}

/// Builds the native probe (release) and returns its path.
pub fn native_probe() -> PathBuf {
    cargo(&[
        "build",
        "--release",
        "-p",
        "probe",
        "--features",
        "native",
        "--bin",
        "probe-native",
        "--target-dir",
        "target/bench-native",
    ]);
    root().join("target/bench-native/release/probe-native")
}

/// Builds the runtime-only base of packed plugins (with its profile,
/// `[profile.runtime]`, on its own so that no other package's features are
/// unified in) and returns it.
pub fn runtime_base() -> PathBuf {
    cargo(&["build", "--profile", "runtime", "-p", "lingxi-wasm-rt"]);
    root().join("target/runtime/lingxi-wasm-rt")
}

/// Builds guest components (`-p` names) and returns their folder.
pub fn guests(names: &[&str]) -> PathBuf {
    let mut args = vec!["build", "--target", "wasm32-wasip2", "--profile", "guest"];
    for name in names {
        args.extend(["-p", name]);
    }
    args.extend(["--target-dir", "target/guests"]);
    cargo(&args);
    root().join("target/guests/wasm32-wasip2/guest")
}

/// The probe written in `code` (`py`, `js`: `examples/probe-<code>`),
/// built by `scripts/componentize` into `out`; `None` (said) if that
/// language's toolchain cannot be installed.
pub fn polyglot_probe(code: &str, out: &Path) -> Option<PathBuf> {
    let built = Command::new(root().join("scripts/componentize"))
        .args([code, &format!("examples/probe-{code}")])
        .arg(out)
        .current_dir(root())
        .status();
    if built.is_ok_and(|s| s.success()) {
        Some(out.to_owned())
    } else {
        println!("  {code}: skipped, scripts/componentize {code} failed (no toolchain?)");
        None
    }
}

/// `program` with the environment a LingXi host gives a plugin.
pub fn lingxi_spawn(program: &Path, home: &Path) -> Command {
    let mut c = Command::new(program);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("TMPDIR", std::env::temp_dir());
    c
}

/// Spawns `cmd`, answers the handshake, optionally makes `calls` tool calls;
/// returns (time to handshake, time of the calls). Each request line goes
/// out in one `write`, as a host writes it.
pub fn session(mut cmd: Command, calls: usize) -> (Duration, Duration) {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdin
        .write_all(format!("{SNAPSHOT}\n{INIT}\n").as_bytes())
        .expect("write");
    for _ in 0..2 {
        line.clear();
        stdout.read_line(&mut line).expect("read");
    }
    assert!(line.contains("\"B\""), "no handshake: {line}");
    let handshake = start.elapsed();
    let call = format!("{CALL}\n");
    let calls_start = Instant::now();
    for _ in 0..calls {
        stdin.write_all(call.as_bytes()).expect("write");
        line.clear();
        stdout.read_line(&mut line).expect("read");
    }
    let call_time = calls_start.elapsed();
    drop(stdin);
    let _ = child.wait();
    (handshake, call_time)
}

/// Pins this process (and so the plugins it spawns) to the CPU it is on;
/// returns the previous set of CPUs.
#[cfg(target_os = "linux")]
pub fn pin_to_one_cpu() -> rustix::thread::CpuSet {
    use rustix::thread::{CpuSet, sched_getaffinity, sched_getcpu, sched_setaffinity};
    let all = sched_getaffinity(None).expect("sched_getaffinity");
    let mut one = CpuSet::new();
    one.set(sched_getcpu());
    sched_setaffinity(None, &one).expect("sched_setaffinity");
    all
}

/// The runtime the in-process benches call on: two workers, as many as
/// the 2-core VM has cores, timers and I/O enabled.
pub fn tokio() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio")
}

/// Processes a per-call ratio is measured in. One process has a ratio of
/// its own: where the loader and the allocators put code and data moves
/// `call_tool / bare` by about ±0.04 on the 2-core VM, so one process is
/// not the build. The benches print the median over processes, and each.
pub const PROCESSES: usize = 5;

/// How far apart the processes' ratios may be for a verdict: on a quiet
/// 2-core VM they fall within 0.08 of each other; far more means something
/// else ran on the machine, and the median says nothing about the build.
pub const SPREAD: f64 = 0.15;

/// A per-call ratio over processes against `target`: its median (three
/// decimals: the verdict is on the number as measured, not as rounded),
/// the verdict, and each process's ratio.
pub fn ratio_verdict(ratios: Vec<f64>, target: f64) -> String {
    let each: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
    let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let high = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ratio = median(ratios);
    let verdict = if high - low > SPREAD {
        format!(
            "no verdict: the processes differ by {:.2}, more than {SPREAD}; run it on a quiet machine",
            high - low
        )
    } else if ratio <= target {
        "met".to_owned()
    } else {
        "NOT met".to_owned()
    };
    format!(
        "{ratio:.3} (target ≤ {target}: {verdict}; each process: {})",
        each.join(" ")
    )
}

/// Runs this bench again, with `envs` set (one of them tells it what to
/// measure), and returns the numbers the child printed.
pub fn numbers_from_child(envs: &[(&str, &std::ffi::OsStr)]) -> Vec<f64> {
    let output = Command::new(std::env::current_exe().expect("bench"))
        .envs(envs.iter().copied())
        .output()
        .expect("child");
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{envs:?}: {said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    said.split_whitespace()
        .map(|n| n.parse().unwrap_or_else(|_| panic!("{envs:?}: {said}")))
        .collect()
}

/// The middle sample.
pub fn median<T: Copy + PartialOrd>(mut samples: Vec<T>) -> T {
    samples.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    samples[samples.len() / 2]
}

/// Resident memory of this process, in bytes (Linux; 0 elsewhere).
pub fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}
