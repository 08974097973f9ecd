//! What a newcomer sees in the first hour: one name, every message said once
//! and in one line, contradictions refused, nothing created by mistake.

use std::path::Path;

use serde_json::json;

use crate::packed::launcher;
use crate::support::{Session, guest, misfit, tool};

/// `lingxi-wasm-run <args…>` in a fresh HOME, run in `cwd`.
fn run(cwd: &Path, args: &[&str]) -> (bool, String, String) {
    launcher(cwd, cwd, args)
}

#[test]
fn one_name_one_description_and_the_environment_in_help() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out, _) = run(dir.path(), &["--version"]);
    assert!(ok && out.starts_with("lingxi-wasm-run "), "{out}");
    let (_, short, _) = run(dir.path(), &["-h"]);
    let (_, long, _) = run(dir.path(), &["--help"]);
    assert_eq!(
        short.lines().next(),
        long.lines().next().map(|l| l.trim_end_matches('.'))
    );
    for variable in [
        "LINGXI_WASM_LOG",
        "LINGXI_WASM_CACHE",
        "XDG_CACHE_HOME",
        "HOME",
    ] {
        assert!(
            long.contains(variable),
            "--help does not list {variable}:\n{long}"
        );
    }
}

#[test]
fn os_errors_are_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let probe = guest("probe");
    let probe = probe.to_str().unwrap();
    let cases: [&[&str]; 3] = [
        &["/no/such.wasm"],
        &["--policy", "/no/such.toml", probe],
        &["--workspace", "/no/such/dir", probe],
    ];
    for args in cases {
        let (ok, _, err) = run(dir.path(), args);
        assert!(!ok, "{args:?}");
        let first = err
            .find("(os error")
            .unwrap_or_else(|| panic!("{args:?}: {err}"));
        assert!(!err[first + 1..].contains("(os error"), "said twice: {err}");
    }
    let (ok, _, err) = run(dir.path(), &["/tmp"]);
    assert!(
        !ok && err.contains("/tmp: it is a directory, not a plugin file"),
        "{err}"
    );
}

#[test]
fn files_that_are_not_components_are_named_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello").unwrap();
    let core = dir.path().join("core.wasm");
    std::fs::write(&core, b"\0asm\x01\0\0\0").unwrap();
    let native = env!("CARGO_BIN_EXE_lingxi-wasm-run");
    for (file, what) in [
        (text.to_str().unwrap(), "is a text file"),
        (core.to_str().unwrap(), "is a core WebAssembly module"),
        (native, "is a native ELF executable"),
    ] {
        let (ok, _, err) = run(dir.path(), &[file]);
        assert!(!ok && err.contains(what), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

#[test]
fn the_bare_launcher_shows_its_usage() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = run(dir.path(), &[]);
    assert!(!ok && err.contains("Usage: lingxi-wasm-run"), "{err}");
    assert!(!err.contains("cut off"), "{err}");
}

#[test]
fn none_with_capabilities_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let probe = guest("probe");
    let (ok, _, err) = run(
        dir.path(),
        &["--grant", "none,projectRead", probe.to_str().unwrap()],
    );
    assert!(!ok && err.contains("`none` cannot be combined"), "{err}");
}

#[test]
fn install_and_pack_name_the_users_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = d.join("notes.txt");
    std::fs::write(&text, "hello").unwrap();
    let project = d.to_str().unwrap();
    let (ok, _, err) = run(
        d,
        &["install", text.to_str().unwrap(), "--project", project],
    );
    assert!(
        !ok && err.contains(&format!("{} is a text file", text.display())),
        "{err}"
    );
    assert!(
        !d.join(".lingxi").exists(),
        "nothing is created for a failed install"
    );
    let (ok, _, err) = run(
        d,
        &[
            "install",
            text.to_str().unwrap(),
            "--project",
            "/no/such/dir",
        ],
    );
    assert!(
        !ok && err.contains("--project /no/such/dir: no such folder"),
        "{err}"
    );
    assert!(!Path::new("/no/such/dir").exists());
    let probe = guest("probe");
    let probe = probe.to_str().unwrap();
    let (ok, _, err) = run(d, &["pack", probe, "-o", project]);
    assert!(
        !ok && err.contains("is a folder; give the file to write"),
        "{err}"
    );
    let (ok, _, err) = run(d, &["pack", probe, "-o", "/no/such/dir/p"]);
    assert!(
        !ok && err.contains("the folder /no/such/dir does not exist"),
        "{err}"
    );
}

#[test]
fn an_upgrade_that_would_reach_more_is_refused_unless_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The same plugin id twice: the second declares networkAccess too.
    let v1 = misfit("", &[]);
    let v2 = misfit("net-unused", &[]);
    let install = |component: &Path, extra: &[&str]| {
        let base = [
            "install",
            component.to_str().unwrap(),
            "--project",
            d.to_str().unwrap(),
        ];
        run(d, &[&base[..], extra].concat())
    };
    assert!(install(&v1, &[]).0);
    // Under the same flags (as declared) it would get the network.
    let (ok, _, err) = install(&v2, &[]);
    assert!(!ok && err.contains("would reach more than it"), "{err}");
    assert!(
        err.contains("  + capability networkAccess") && err.contains("--accept-new-grants"),
        "{err}"
    );
    // Narrowing is no increase: it installs, saying what changed.
    let (ok, out, err) = install(&v1, &["--grant", "none"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("grants changed") && out.contains("  + capabilities   (none)"),
        "{out}"
    );
    // Widening back is one, and --force (for a different file) does not
    // skip the check.
    let (ok, _, err) = install(&v1, &["--force"]);
    assert!(!ok && err.contains("  + capability projectRead"), "{err}");
    let (ok, out, err) = install(&v2, &["--accept-new-grants"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("accepted new grants") && out.contains("capability networkAccess"),
        "{out}"
    );
    // The same again: an upgrade in place, nothing to accept.
    assert!(install(&v2, &[]).0);
    let (ok, _, err) = install(&v2, &["--env", "TOKEN=x"]);
    assert!(
        !ok && err.contains("  + environment variable TOKEN"),
        "{err}"
    );
    // A damaged installed copy (a plugin that could write the project
    // could damage its own file) hides nothing: everything is new.
    let installed = d.join(".lingxi/plugins/com.example.misfit");
    let mut bytes = std::fs::read(&installed).unwrap();
    let middle = bytes.len() - 4096;
    bytes[middle] ^= 0xff;
    std::fs::write(&installed, &bytes).unwrap();
    let (ok, _, err) = install(&v2, &["--env", "TOKEN=x", "--force"]);
    assert!(!ok && err.contains("cannot be read"), "{err}");
    assert!(
        err.contains("  + environment variable TOKEN")
            && err.contains("  + capability networkAccess"),
        "{err}"
    );
    assert!(install(&v2, &["--accept-new-grants"]).0);
    // Cut short, it is no plugin of ours any more: --force replaces it,
    // every grant printed as new.
    let bytes = std::fs::read(&installed).unwrap();
    std::fs::write(&installed, &bytes[..1000]).unwrap();
    let (ok, out, err) = install(&v2, &["--force"]);
    assert!(ok && out.contains("every grant below is new"), "{out}{err}");
}

#[test]
fn tool_arguments_given_as_an_object_get_an_example() {
    let mut s = Session::start(&guest("probe"), &[]);
    let mut params = tool("probe.echo", "");
    params["arguments"] = json!({"text": "hi"});
    let r = s.call("1", "tool.execute", params);
    let error = r["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(r#"encoded as a string, e.g. "arguments":"{\"text\":\"hi\"}""#),
        "{r}"
    );
}

#[test]
fn call_a_tool_a_command_and_a_hook_without_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    // The project is not the home folder, which `call` refuses.
    let d = &dir.path().join("project");
    std::fs::create_dir(d).unwrap();
    let probe = guest("probe");
    let probe = probe.to_str().unwrap();
    let (ok, out, err) = launcher(dir.path(), d, &["call", probe, "probe.echo", r#"{"q":1}"#]);
    assert!(ok, "{err}");
    assert_eq!(out, "echo:{\"q\":1}\n");
    let (ok, out, _) = launcher(dir.path(), d, &["call", probe, "/pb", "--json"]);
    assert!(ok);
    let answer: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(answer["id"], "call");
    let root = d.canonicalize().unwrap();
    assert_eq!(answer["result"]["text"], format!("root={}", root.display()));
    let (ok, _, err) = launcher(
        dir.path(),
        d,
        &["call", probe, "--hook", "sessionStart", "s-9"],
    );
    assert!(ok && err.contains("session started: s-9"), "{err}");
    let (ok, _, err) = launcher(dir.path(), d, &["call", probe, "no.such.tool"]);
    assert!(
        !ok && err.contains("Tool 'no.such.tool' not found in plugin"),
        "{err}"
    );
    let (ok, _, err) = launcher(dir.path(), d, &["call", probe, "probe.echo", "{not json"]);
    assert!(!ok && err.contains("must be JSON"), "{err}");
}

#[test]
fn call_snapshots_the_folder_and_its_git_branch_and_takes_packed_files() {
    let dir = tempfile::tempdir().unwrap();
    // The project is not the home folder, which `call` refuses.
    let d = &dir.path().join("project");
    std::fs::create_dir(d).unwrap();
    std::fs::create_dir_all(d.join(".git")).unwrap();
    std::fs::write(d.join(".git/HEAD"), "ref: refs/heads/feature-x\n").unwrap();
    let testbed = guest("testbed");
    let (ok, out, err) = launcher(
        dir.path(),
        d,
        &["call", testbed.to_str().unwrap(), "/info", "workspace"],
    );
    assert!(ok, "{err}");
    assert!(
        out.contains("is-git-repository: true")
            && out.contains("current-git-branch: Some(\"feature-x\")"),
        "{out}"
    );
    let packed = crate::packed::pack(d, "probe", &["--grant", "none"]);
    let (ok, out, err) = launcher(
        dir.path(),
        d,
        &["call", packed.to_str().unwrap(), "probe.echo"],
    );
    assert!(ok, "{err}");
    assert_eq!(out, "echo:{}\n");
}

#[test]
fn call_options_go_anywhere_and_mistakes_get_hints() {
    let dir = tempfile::tempdir().unwrap();
    // The project is not the home folder, which `call` refuses.
    let d = &dir.path().join("project");
    std::fs::create_dir(d).unwrap();
    let probe = guest("probe");
    let probe = probe.to_str().unwrap();
    // `--json` after the arguments, as the README writes it.
    let (ok, out, err) = launcher(
        dir.path(),
        d,
        &["call", probe, "probe.echo", "{}", "--json"],
    );
    assert!(ok, "{err}");
    assert!(
        out.starts_with(r#"{"id":"call","result":"echo:{}""#),
        "{out}"
    );
    // A wrong tool name lists what there is.
    let (ok, _, err) = launcher(dir.path(), d, &["call", probe, "probe"]);
    assert!(
        !ok && err.contains("its tools: probe.echo; its commands: /probe"),
        "{err}"
    );
    // A hook the plugin does not handle is said to do nothing.
    let (ok, _, err) = launcher(dir.path(), d, &["call", probe, "--hook", "sessionEnd"]);
    assert!(
        ok && err.contains("no handler for sessionEnd (it handles: sessionStart)"),
        "{err}"
    );
}

#[test]
fn printing_commands_end_quietly_when_the_reader_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "set -o pipefail; HOME={} '{}' list | true",
        dir.path().display(),
        env!("CARGO_BIN_EXE_lingxi-wasm-run")
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_packed_plugin_given_as_a_component_is_recognised() {
    let dir = tempfile::tempdir().unwrap();
    let packed = crate::packed::pack(dir.path(), "probe", &[]);
    let (ok, _, err) = run(dir.path(), &[packed.to_str().unwrap()]);
    assert!(
        !ok && err.contains("is a packed plugin (run it directly"),
        "{err}"
    );
}
