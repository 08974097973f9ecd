//! Packed executables, spawned exactly as an unmodified LingXi host does
//! (spec §6): no arguments, working directory = the binary's own folder,
//! environment reduced to an allow-list, pipes on all three streams.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::conformance::replay_with;
use crate::support::{Session, guest, workspace_root};

/// Packs `plugin` into `<dir>/plugins/<name>` with `args` and returns the path.
fn pack(dir: &Path, plugin: &str, args: &[&str]) -> PathBuf {
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let out = plugins.join(plugin);
    let status = Command::new(env!("CARGO_BIN_EXE_lingxi-wasm-run"))
        .arg("pack")
        .arg(guest(plugin))
        .arg("-o")
        .arg(&out)
        .args(args)
        .env(
            "LINGXI_WASM_CACHE",
            workspace_root().join("target/e2e-cache"),
        )
        .status()
        .unwrap();
    assert!(status.success());
    out
}

/// How LingXi spawns a plugin binary.
fn lingxi_spawn(exe: &Path, home: &Path) -> Command {
    let mut command = Command::new(exe);
    command
        .current_dir(exe.parent().unwrap())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("TMPDIR", std::env::temp_dir());
    command
}

#[test]
fn a_packed_plugin_replays_spec7_when_spawned_like_lingxi_does() {
    let dir = tempfile::tempdir().unwrap();
    let exe = pack(dir.path(), "probe", &[]);
    let transcripts = workspace_root().join("tests/conformance");
    for name in ["spec7-core-dialect.jsonl", "spec7-doc-dialect.jsonl"] {
        replay_with(&transcripts.join(name), |plugin, args| {
            assert_eq!((plugin, args), ("probe", &[][..]));
            Session::spawn(lingxi_spawn(&exe, dir.path()))
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

#[test]
fn packed_grants_travel_inside_and_inspect_shows_them() {
    let dir = tempfile::tempdir().unwrap();
    let exe = pack(
        dir.path(),
        "testbed",
        &["--grant", "projectRead", "--env", "MODE=packed"],
    );
    let mut s = Session::spawn(lingxi_spawn(&exe, dir.path()));
    let r = s.call("1", "tool.execute", crate::support::tool("env", ""));
    assert_eq!(r["result"], "MODE=packed", "{r}");
    let r = s.call(
        "2",
        "tool.execute",
        crate::support::tool("write-file", "/tmp/x"),
    );
    assert!(r["error"].is_string());
    assert!(s.finish().0.success());

    let out = lingxi_spawn(&exe, dir.path())
        .arg("inspect")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("plugin       com.lingxi.testbed 0.1.0"),
        "{text}"
    );
    assert!(
        text.contains("declares     projectRead, projectWrite, networkAccess, processExecution"),
        "{text}"
    );
    assert!(text.contains("granted      projectRead\n"), "{text}");
    assert!(text.contains("tool         spin"), "{text}");
    assert!(text.contains("hooks        agentTurnEnd"), "{text}");
    assert!(text.contains("digest       sha256:"), "{text}");

    let out = lingxi_spawn(&exe, dir.path())
        .arg("--version")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("packed plugin com.lingxi.testbed 0.1.0")
    );
    let out = lingxi_spawn(&exe, dir.path())
        .arg("--help")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("inspect"));
}

#[test]
fn tampered_or_truncated_packed_plugins_refuse_to_run() {
    let dir = tempfile::tempdir().unwrap();
    let exe = pack(dir.path(), "probe", &[]);
    let bytes = std::fs::read(&exe).unwrap();

    let mut tampered = bytes.clone();
    let at = tampered.len() - 200_000;
    tampered[at] ^= 0x55;
    std::fs::write(&exe, &tampered).unwrap();
    let out = lingxi_spawn(&exe, dir.path()).output().unwrap();
    assert!(!out.status.success());
    assert!(
        out.stdout.is_empty(),
        "nothing reaches the protocol channel"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("damaged packed plugin") && stderr.contains("digest mismatch"),
        "{stderr}"
    );

    std::fs::write(&exe, &bytes[..bytes.len() - 10]).unwrap();
    let out = lingxi_spawn(&exe, dir.path()).output().unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no plugin is embedded"), "{stderr}");
}
