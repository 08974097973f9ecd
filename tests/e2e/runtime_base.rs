//! Packed plugins on the runtime-only base (`lingxi-wasm-rt`: wasmtime
//! without a compiler): the same protocol and the same sandbox as on the
//! full launcher, a start that checks the code it maps, and a base that
//! `pack` refuses when it is not ours.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::attacks::{Tree, allowed, attempt, denied};
use crate::conformance::replay_all;
use crate::packed::{launcher, lingxi_spawn, pack as pack_plugin};
use crate::support::{Session, guest, runtime_base, spec_snapshot};

/// Packs `plugin` on the runtime-only base into `dir/plugins/<plugin>`.
fn pack_on_runtime(dir: &Path, plugin: &str, args: &[&str]) -> PathBuf {
    let base = runtime_base();
    let mut all = vec!["--base", base.to_str().unwrap()];
    all.extend_from_slice(args);
    pack_plugin(dir, plugin, &all)
}

#[test]
fn conformance_on_the_runtime_base_spawned_like_lingxi() {
    let dir = tempfile::tempdir().unwrap();
    let probe = pack_on_runtime(dir.path(), "probe", &[]);
    let testbed = pack_on_runtime(dir.path(), "testbed", &[]);
    let (ok, out, err) = launcher(
        dir.path(),
        dir.path(),
        &["inspect", probe.to_str().unwrap()],
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("runs on      lingxi-wasm-rt 0.1.0 (runtime-only)"),
        "{out}"
    );
    // What the file is made of: its base (the runtime-only base as built),
    // the probe's component (stored compressed), and parts that add up to
    // the file.
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("made of      "))
        .unwrap_or_else(|| panic!("{out}"));
    let numbers: Vec<f64> = line
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|n| n.parse().ok())
        .collect();
    let mb = |p: &Path| std::fs::metadata(p).unwrap().len() as f64 / 1e6;
    let [total, base, component, uncompressed, native, rest] = numbers[..] else {
        panic!("{line}")
    };
    assert!((total - mb(&probe)).abs() < 0.05, "{line}");
    assert!((base - mb(&runtime_base())).abs() < 0.05, "{line}");
    assert!((uncompressed - mb(&guest("probe"))).abs() < 0.05, "{line}");
    assert!(component < uncompressed, "{line}");
    assert!(
        native > 0.0 && (base + component + native + rest - total).abs() < 0.2,
        "{line}"
    );
    // Smaller than the same plugin on the full launcher: no compiler.
    let full = pack_plugin(&dir.path().join("full"), "probe", &[]);
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(
        size(&probe) < size(&full),
        "{} >= {}",
        size(&probe),
        size(&full)
    );

    replay_all(|plugin, _| {
        let exe = if plugin == "probe" { &probe } else { &testbed };
        Session::spawn(lingxi_spawn(exe, dir.path()))
    });
}

#[test]
fn the_runtime_base_keeps_the_sandbox_and_recovers() {
    let t = Tree::new();
    let args = [
        "--grant",
        "projectRead",
        "--timeout",
        "1",
        "--max-memory",
        "32",
    ];
    let exe = pack_on_runtime(&t.top, "testbed", &args);
    let mut s = Session::spawn(lingxi_spawn(&exe, &t.top));
    let snapshot = spec_snapshot(t.ws.to_str().unwrap());
    assert_eq!(
        s.call("snap", "host.snapshot", snapshot)["error"],
        Value::Null
    );
    assert_eq!(
        allowed(&attempt(&mut s, "read-file", &t.ws("notes.txt"))),
        "inside"
    );
    let r = attempt(&mut s, "read-file", &t.top("secret.txt"));
    assert!(r["result"].is_null() && r["error"].is_string(), "{r}");
    denied(&attempt(&mut s, "spin", ""), "did not finish within 1.0 s");
    denied(
        &attempt(&mut s, "alloc-mib", "64"),
        "memory limit of 32 MiB",
    );
    // A trap, then a fresh instance from the same precompiled code: no
    // compiler is needed to recover.
    let r = attempt(&mut s, "panic", "");
    assert!(r["error"].is_string(), "{r}");
    assert_eq!(allowed(&attempt(&mut s, "len", "four")), "4");
    let (status, stderr) = s.finish();
    assert!(status.success(), "{stderr}");
}

#[test]
fn damaged_code_never_starts() {
    let dir = tempfile::tempdir().unwrap();
    let exe = pack_on_runtime(dir.path(), "probe", &[]);
    let mut bytes = std::fs::read(&exe).unwrap();
    let packed = lingxi_wasm_host::pack::read(&exe).unwrap().unwrap();
    let code = packed.precompiled();
    // The code sits at the end of the payload, just before the trailer.
    let at = bytes.len() - 56 - code.len() + code.len() / 2;
    bytes[at] ^= 0x40;
    let damaged = dir.path().join("damaged");
    std::fs::write(&damaged, &bytes).unwrap();
    std::fs::set_permissions(
        &damaged,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let out = lingxi_spawn(&damaged, dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("precompiled code does not match"),
        "{stderr}"
    );

    // Cut short or lengthened: no trailer, so the base finds no plugin, and
    // says that the file was cut, not what the base is.
    let original = std::fs::read(&exe).unwrap();
    for changed in [
        original[..original.len() - 1].to_vec(),
        [&original[..], b"x"].concat(),
    ] {
        std::fs::write(&damaged, &changed).unwrap();
        let out = lingxi_spawn(&damaged, dir.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success() && out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("cut off or changed"), "{stderr}");
    }
}

#[test]
fn the_runtime_base_alone_and_bases_that_are_not_ours() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = std::process::Command::new(runtime_base()).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("runs nothing by itself"), "{stderr}");
    let probe = crate::support::guest("probe");
    let out_file = d.join("p");
    // A script that prints the right words is not a base either, and it is
    // never run (its file with a payload after it would be run by a shell).
    let script = d.join("fake-rt");
    let marker = d.join("ran");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntouch {}\necho 'lingxi-wasm-rt 0.1.0 (runtime-only)'\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for base in ["/bin/true", "/bin/echo", script.to_str().unwrap()] {
        let args = [
            "pack",
            probe.to_str().unwrap(),
            "-o",
            out_file.to_str().unwrap(),
            "--base",
            base,
        ];
        let (ok, _, err) = launcher(d, d, &args);
        assert!(!ok, "packed on {base}");
        assert!(
            err.contains("--base") && err.contains("not a lingxi-wasm-rt"),
            "{err}"
        );
        assert!(!out_file.exists());
    }
    assert!(
        !marker.exists(),
        "pack ran the script it was given as a base"
    );
}
