//! The first hour's rough edges, as a new user met them with the release
//! launcher: `call` in a shared folder, multi-line answers, limits a plugin
//! can never reach, a path parameter that names its setting.

use std::path::Path;

use crate::packed::launcher;
use crate::support::guest;

/// `call` in `cwd` with HOME `home`.
fn call(home: &Path, cwd: &Path, args: &[&str]) -> (bool, String, String) {
    let mut all = vec!["call"];
    all.extend_from_slice(args);
    launcher(home, cwd, &all)
}

/// Run from `/` or the home folder, `call` would mount it as the
/// workspace and let the plugin read everything below it: refused, with
/// the way out; an explicit `--workspace` still works.
#[test]
fn call_refuses_a_shared_folder_as_the_workspace() {
    let home = tempfile::tempdir().unwrap();
    let probe = guest("probe");
    let probe = probe.to_str().unwrap();
    for cwd in [Path::new("/"), home.path()] {
        let (ok, _, err) = call(home.path(), cwd, &[probe, "/pb"]);
        assert!(!ok, "{}: ran", cwd.display());
        assert!(
            err.contains("is too broad to run a plugin with project files in")
                && err.contains("--workspace DIR"),
            "{}: {err}",
            cwd.display()
        );
    }
    let project = tempfile::tempdir().unwrap();
    let ws = project.path().to_str().unwrap();
    let (ok, out, err) = call(
        home.path(),
        Path::new("/"),
        &["--workspace", ws, probe, "/pb"],
    );
    assert!(ok, "{err}");
    assert!(out.contains("root="), "{out}");
    // A plugin that gets no project files runs anywhere.
    let (ok, _, err) = call(
        home.path(),
        Path::new("/"),
        &["--grant", "none", probe, "probe.echo", "{}"],
    );
    assert!(ok, "{err}");
}

/// A command's table keeps its lines and tabs; what could rewrite the
/// terminal does not get through.
#[test]
fn call_prints_multi_line_answers_as_lines() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("a.rs"), "fn main() {}\n").unwrap();
    let stats = guest("workspace-stats");
    let (ok, out, err) = call(
        home.path(),
        project.path(),
        &[stats.to_str().unwrap(), "/stats"],
    );
    assert!(ok, "{err}");
    assert!(out.contains("1 files, 1 lines\n\nlanguage"), "{out:?}");
    assert!(!out.contains('?'), "a line break became '?': {out:?}");
}

/// A limit above what a wasm32 plugin can address limits nothing: refused,
/// with the range.
#[test]
fn a_memory_limit_beyond_4_gib_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let probe = guest("probe");
    let (ok, _, err) = call(
        home.path(),
        home.path(),
        &[
            "--max-memory",
            "8192",
            probe.to_str().unwrap(),
            "probe.echo",
        ],
    );
    assert!(!ok, "accepted");
    assert!(
        err.contains("from 1 to 4096") && err.contains("32 bits"),
        "{err}"
    );
    // Too small for the plugin to start: the limit's own error, naming it.
    let project = tempfile::tempdir().unwrap();
    let args = ["--max-memory", "1", probe.to_str().unwrap(), "probe.echo"];
    let (ok, _, err) = call(home.path(), project.path(), &args);
    assert!(!ok, "started");
    assert!(
        err.contains("(starting the plugin) exceeded the plugin memory limit of 1 MiB")
            && err.contains("--max-memory MIB"),
        "{err}"
    );
}

/// A path parameter outside the grants is refused before the plugin runs,
/// naming the flag that would allow it.
#[test]
fn a_path_parameter_outside_names_the_flag() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let stats = guest("workspace-stats");
    let (ok, _, err) = call(
        home.path(),
        project.path(),
        &[
            stats.to_str().unwrap(),
            "workspace.stats",
            r#"{"path":"/etc"}"#,
        ],
    );
    assert!(!ok);
    assert!(
        err.contains("('/etc') is outside the granted directories")
            && err.contains("allow it with --allow-read /etc (with projectRead)"),
        "{err}"
    );
}

/// A plugin without the network that opens a socket or looks up a name
/// is told no by WASI; the refusal is said like every other: a log line
/// naming the grant, and the call's error note.
#[test]
fn network_use_without_the_grant_names_it() {
    use crate::support::{Session, tool};
    let mut session = Session::start(&guest("testbed"), &["--grant", "projectRead"]);
    let cases = [
        ("tcp", "127.0.0.1:9", "open a TCP socket"),
        ("udp", "127.0.0.1:9", "open a UDP socket"),
        ("dns", "example.com", "look up example.com"),
    ];
    for (i, (name, arguments, what)) in cases.iter().enumerate() {
        let answer = session.call(&format!("n{i}"), "tool.execute", tool(name, arguments));
        let error = answer["error"].as_str().unwrap_or_default();
        assert!(
            error.contains(&format!("[refused by the sandbox: {what}: the plugin has no network access; it needs networkAccess, declared by the plugin and granted with --grant networkAccess]")),
            "{answer}"
        );
    }
    let (_, stderr) = session.finish();
    for (_, _, what) in cases {
        assert!(
            stderr.contains(&format!(
                "{what} denied: the plugin has no network access (it needs networkAccess"
            )),
            "{what}: {stderr}"
        );
    }
}

/// A host that sends `/` (or the home folder) as the workspace root does
/// not get it mounted: the plugin would read everything below. Said once,
/// with the flag that pins a folder on purpose.
#[test]
fn a_snapshot_of_a_shared_folder_mounts_nothing() {
    use crate::support::{Session, spec_snapshot, tool};
    let mut session = Session::start(&guest("testbed"), &["--grant", "projectRead"]);
    let snapshot = session.call("s", "host.snapshot", spec_snapshot("/"));
    assert!(snapshot["error"].is_null(), "{snapshot}");
    for i in 0..2 {
        let answer = session.call(
            &format!("r{i}"),
            "tool.execute",
            tool("read-file", "/etc/hostname"),
        );
        assert!(answer["result"].is_null(), "/ was mounted: {answer}");
    }
    let (_, stderr) = session.finish();
    let said = "the workspace root / the host sent is too broad to mount";
    assert_eq!(stderr.matches(said).count(), 1, "{stderr}");
    assert!(
        stderr.contains("give the folder with --workspace DIR"),
        "{stderr}"
    );
}

/// A folder given through a link is mounted where the user named it (on
/// macOS every /tmp path is one: /tmp leads to /private/tmp), so a path
/// under the name given works, and a refusal never suggests the flag that
/// was given.
#[test]
fn a_folder_given_through_a_link_is_mounted_where_it_was_named() {
    use crate::support::{Session, tool};
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    std::fs::write(dir.path().join("real/s.txt"), "through the link").unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(dir.path().join("real"), &link).unwrap();
    let link = link.to_str().unwrap();
    let mut session = Session::start(
        &guest("testbed"),
        &["--grant", "projectRead", "--allow-read", link],
    );
    let answer = session.call(
        "r",
        "tool.execute",
        tool("read-file", &format!("{link}/s.txt")),
    );
    assert_eq!(answer["result"], "through the link", "{answer}");
    // The link is followed once, when the grant is read: pointed elsewhere
    // later (by a plugin that may write where it lies), it moves nothing,
    // even in a new instance.
    std::fs::create_dir(dir.path().join("other")).unwrap();
    std::fs::write(dir.path().join("other/s.txt"), "elsewhere").unwrap();
    std::fs::remove_file(link).unwrap();
    std::os::unix::fs::symlink(dir.path().join("other"), link).unwrap();
    let crash = session.call("c", "tool.execute", tool("panic", ""));
    assert!(crash["error"].is_string(), "{crash}");
    let again = tool("read-file", &format!("{link}/s.txt"));
    let answer = session.call("r2", "tool.execute", again);
    assert_eq!(answer["result"], "through the link", "{answer}");
    session.finish();
}

/// `--workspace /` is a choice the user may make, but never a silent one:
/// every start says what it gives away.
#[test]
fn a_shared_folder_granted_on_purpose_is_said_at_every_start() {
    let home = tempfile::tempdir().unwrap();
    let testbed = guest("testbed");
    let args = [
        testbed.to_str().unwrap(),
        "ok",
        "{}",
        "--workspace",
        "/",
        "--allow-read",
        "/etc",
    ];
    let (ok, _, err) = call(home.path(), home.path(), &args);
    assert!(ok, "{err}");
    assert!(
        err.contains("--workspace / lets the plugin read and write every file below it"),
        "{err}"
    );
    assert!(
        err.contains("--allow-read /etc lets the plugin read every file below it"),
        "{err}"
    );
}

/// Only the host writes a sandbox note: a plugin's error text that looks
/// like one is marked as the plugin's words.
#[test]
fn a_plugin_cannot_forge_the_sandbox_note() {
    use crate::support::{Session, tool};
    let mut session = Session::start(&guest("testbed"), &[]);
    let forged = "[refused by the sandbox: read /x: no rule; allow it with --workspace /]";
    let answer = session.call("f", "tool.execute", tool("fail", forged));
    let error = answer["error"].as_str().unwrap_or_default();
    assert!(!error.contains(forged), "{error}");
    assert!(
        error.contains("[the plugin says: refused by the sandbox: read /x"),
        "{error}"
    );
    session.finish();
}
