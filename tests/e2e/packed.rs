//! Packed executables, spawned exactly as an unmodified LingXi host does
//! (spec §6): no arguments, working directory = the binary's own folder,
//! environment reduced to an allow-list, pipes on all three streams.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::conformance::replay_with;
use crate::support::{Session, guest, workspace_root};

/// Packs `plugin` into `<dir>/plugins/<name>` with `args` and returns the path.
pub(crate) fn pack(dir: &Path, plugin: &str, args: &[&str]) -> PathBuf {
    pack_component(dir, &guest(plugin), plugin, args)
}

/// Packs `component` into `<dir>/plugins/<name>` with `args`.
pub(crate) fn pack_component(dir: &Path, component: &Path, name: &str, args: &[&str]) -> PathBuf {
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    let out = plugins.join(name);
    let status = crate::support::launcher()
        .arg("pack")
        .arg(component)
        .arg("-o")
        .arg(&out)
        .args(args)
        .status()
        .unwrap();
    assert!(status.success());
    out
}

/// How LingXi spawns a plugin binary.
pub(crate) fn lingxi_spawn(exe: &Path, home: &Path) -> Command {
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

/// On x86-64 Linux the precompiled code runs from a map of the packed file
/// (no copy at start); the debug log says which way it was loaded.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
#[test]
fn packed_code_runs_in_place_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let exe = pack(dir.path(), "probe", &[]);
    let mut command = lingxi_spawn(&exe, dir.path());
    command.env("LINGXI_WASM_LOG", "debug");
    let mut s = Session::spawn(command);
    let r = s.call(
        "1",
        "tool.execute",
        crate::support::tool("probe.echo", "{}"),
    );
    assert_eq!(r["result"], "echo:{}", "{r}");
    let (status, stderr) = s.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("running its precompiled code in place"),
        "{stderr}"
    );
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
        stderr.contains("damaged packed plugin")
            && stderr.contains("precompiled code does not match the digest")
            && stderr.contains("get a fresh copy")
            && !stderr.contains("reinstall it with"),
        "{stderr}"
    );

    std::fs::write(&exe, &bytes[..bytes.len() - 10]).unwrap();
    let out = lingxi_spawn(&exe, dir.path()).output().unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no plugin is embedded"), "{stderr}");
}

/// `lingxi-wasm-run <args…>` with HOME set to `home`, run in `cwd`.
pub(crate) fn launcher(home: &Path, cwd: &Path, args: &[&str]) -> (bool, String, String) {
    let out = crate::support::launcher()
        .args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn install_list_uninstall_where_lingxi_looks() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let (h, p) = (home.path(), project.path());
    let probe = guest("probe");
    let testbed = guest("testbed");

    // Global install, named after the plugin id, runs as LingXi spawns it.
    let (ok, out, err) = launcher(h, p, &["install", probe.to_str().unwrap()]);
    assert!(ok, "{err}");
    let global = h.join(".lingxiagent/plugins/com.lingxi.test-probe");
    assert!(
        out.contains(&format!(
            "installed com.lingxi.test-probe 0.1.0 at {}",
            global.display()
        )),
        "{out}"
    );
    assert!(
        out.contains("declares       projectRead") && out.contains("capabilities   as declared"),
        "{out}"
    );
    let transcript = workspace_root().join("tests/conformance/spec7-core-dialect.jsonl");
    replay_with(&transcript, |_, _| Session::spawn(lingxi_spawn(&global, h))).unwrap();

    // Project install with grants; a foreign file of the same name is kept
    // unless --force.
    let plugins = p.join(".lingxi/plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::write(
        plugins.join("com.lingxi.testbed"),
        "#!/bin/sh\necho native\n",
    )
    .unwrap();
    let install = [
        "install",
        testbed.to_str().unwrap(),
        "--project",
        p.to_str().unwrap(),
        "--grant",
        "none",
    ];
    let (ok, _, err) = launcher(h, p, &install);
    assert!(
        !ok && err.contains("is not a plugin packed by lingxi-wasm-run; pass --force"),
        "{err}"
    );
    let (ok, out, err) = launcher(h, p, &[&install[..], &["--force"]].concat());
    assert!(ok, "{err}");
    assert!(out.contains("capabilities   (none)"), "{out}");
    // Reinstalling the same plugin (an upgrade) needs no --force.
    assert!(launcher(h, p, &install).0);

    let (ok, out, _) = launcher(h, p, &["list"]);
    assert!(ok);
    assert!(
        out.contains("com.lingxi.testbed 0.1.0") && out.contains("com.lingxi.test-probe 0.1.0"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "path           {}",
            plugins.join("com.lingxi.testbed").display()
        )),
        "{out}"
    );
    assert_eq!(out.matches("component      ok").count(), 2, "{out}");

    // A damaged install is reported by list.
    let installed = plugins.join("com.lingxi.testbed");
    let mut bytes = std::fs::read(&installed).unwrap();
    let at = bytes.len() - 100_000;
    bytes[at] ^= 1;
    std::fs::write(&installed, bytes).unwrap();
    let (_, out, _) = launcher(h, p, &["list"]);
    assert!(
        out.contains("DAMAGED") && out.contains("does not match the digest in its header"),
        "{out}"
    );

    // Uninstall keeps the data directory unless --purge.
    let data = h.join(".lingxiagent/plugin-data/com.lingxi.test-probe");
    std::fs::create_dir_all(&data).unwrap();
    let (ok, out, err) = launcher(h, p, &["uninstall", "com.lingxi.test-probe"]);
    assert!(ok, "{err}");
    assert!(
        !global.exists() && data.exists() && out.contains("--purge"),
        "{out}"
    );
    let (ok, _, err) = launcher(h, p, &["uninstall", "com.lingxi.test-probe"]);
    assert!(!ok && err.contains("is not installed"), "{err}");
    let (ok, out, _) = launcher(
        h,
        p,
        &[
            "uninstall",
            "com.lingxi.testbed",
            "--project",
            p.to_str().unwrap(),
            "--purge",
        ],
    );
    assert!(ok, "{out}");
    assert!(!installed.exists());
    let (ok, _, err) = launcher(h, p, &["uninstall", "../etc"]);
    assert!(!ok && err.contains("is not a plugin id"), "{err}");
}
