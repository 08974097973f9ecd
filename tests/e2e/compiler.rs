//! `--compiler winch`: the author's loop on wasmtime's baseline compiler.
//! Its code is cached apart from Cranelift's (neither is ever loaded for
//! the other), it keeps no per-function entries, and the sandbox holds the
//! same: a spinning or a sleeping call is stopped at its deadline, an
//! allocation past the memory limit is refused.

use std::path::Path;
use std::process::Output;

use crate::support::{guest, launcher, workspace_root};

/// `lingxi-wasm-run ARGS… --cache-dir CACHE`.
fn run(cache: &Path, args: &[&str]) -> Output {
    let out = launcher()
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .expect("cannot run the launcher");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(
        out.status.success() || STOPPED.iter().any(|(tool, ..)| args.contains(tool)),
        "{args:?}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// The compiled components in `cache`, and how many function entries.
fn cached(cache: &Path) -> (Vec<String>, usize) {
    let mut components: Vec<String> = std::fs::read_dir(cache)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".cwasm"))
        .collect();
    components.sort();
    let functions = std::fs::read_dir(cache.join("functions")).map_or(0, |d| d.count());
    (components, functions)
}

#[test]
fn winch_code_is_cached_apart_and_never_taken_for_cranelifts() {
    let cache = tempfile::tempdir_in(workspace_root().join("target")).unwrap();
    let probe = guest("probe");
    let probe = probe.to_str().unwrap();
    let out = run(
        cache.path(),
        &["check", probe, "--compiler", "winch", "--json"],
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["compiler"], "winch", "{report}");
    let (after_check, functions) = cached(cache.path());
    assert_eq!(
        after_check.len(),
        1,
        "check leaves Winch's code: {after_check:?}"
    );
    assert_eq!(functions, 0, "Winch keeps no function entries");

    let call = [
        "call",
        probe,
        "probe.echo",
        r#"{"a":1}"#,
        "--compiler",
        "winch",
    ];
    let out = run(cache.path(), &call);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        r#"echo:{"a":1}"#
    );
    assert_eq!(
        cached(cache.path()).0,
        after_check,
        "the call took what check left"
    );

    let out = run(cache.path(), &["call", probe, "probe.echo", "{}"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "echo:{}");
    let (both, functions) = cached(cache.path());
    assert_eq!(both.len(), 2, "Cranelift compiled its own: {both:?}");
    assert!(functions > 0, "and kept its functions");
}

/// A call that must be stopped, its flags, and what the error says.
const STOPPED: [(&str, &str, &[&str], &str); 3] = [
    // Blocked, not spinning: asleep for 60 s.
    (
        "sleep",
        "60",
        &["--timeout", "1"],
        "did not finish within 1.0 s",
    ),
    (
        "spin",
        "{}",
        &["--timeout", "1"],
        "did not finish within 1.0 s",
    ),
    ("alloc-mib", "512", &[], "exceeded the plugin memory limit"),
];

#[test]
fn under_winch_the_deadline_and_the_memory_limit_hold() {
    let cache = tempfile::tempdir_in(workspace_root().join("target")).unwrap();
    let testbed = guest("testbed");
    for (tool, arguments, flags, said) in STOPPED {
        let mut args = vec!["call", testbed.to_str().unwrap(), tool, arguments];
        args.extend(flags);
        args.extend(["--compiler", "winch"]);
        let started = std::time::Instant::now();
        let out = run(cache.path(), &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{tool} was not stopped");
        assert!(stderr.contains(said), "{tool}: {stderr}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{tool} took {:?}",
            started.elapsed()
        );
    }
}
