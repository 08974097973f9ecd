//! The adversarial suite: one case per attack, named so the list reads as a
//! threat model (the security chapter of the book (docs/) lists the same
//! names): files (`fs_*`), network (`net_*`), environment and stdin
//! (`env_*`, `stdin_*`), plugin storage (`storage_*`), resources, crashes
//! and hostile input (`runtime.rs`: `cpu_*`, `mem_*`, `out_*`, `crash_*`,
//! `input_*`, …) and deadlines against blocking WASI (`deadline_*`). Every
//! case asserts that the attack fails (or, for a positive control, that the
//! granted thing works) AND that the launcher still answers the next
//! request.
//!
//! The attacks of one shape — one `tool.execute` on a fresh launcher, an
//! expected result or refusal, a few checks after it — are data: a
//! `[[case]]` table each in `tests/attacks/<group>.toml`, all replayed by
//! one test, [`cases`] (`attacks::cases::attack_cases`; with
//! `ATTACK_CASE=<text>` only the cases whose name contains it). The cases
//! of a shape of their own (several calls in one session, two sessions, raw
//! or generated input, stderr read after exit, timing, the library API) are
//! tests here, in the file of their group.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::thread;

use serde_json::Value;

use crate::support::{Session, guest, spec_snapshot, tool};

mod cases;
mod deadline;
mod fs;
mod net;
mod runtime;
mod storage;

/// A scratch tree: `<tmp>/ws` is the workspace (with `notes.txt`, a symlink
/// `link` to the outside secret and a symlink `up` to `..`), `<tmp>/secret.txt`
/// lies outside it, `<tmp>/extra` is a directory for `--allow-read/write`.
pub(crate) struct Tree {
    _tmp: tempfile::TempDir,
    pub(crate) top: PathBuf,
    pub(crate) ws: PathBuf,
}

impl Tree {
    pub(crate) fn new() -> Tree {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().canonicalize().unwrap();
        let ws = top.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(top.join("extra")).unwrap();
        std::fs::write(ws.join("notes.txt"), "inside").unwrap();
        std::fs::write(top.join("secret.txt"), "secret").unwrap();
        std::fs::write(top.join("extra/data.txt"), "extra").unwrap();
        std::os::unix::fs::symlink(top.join("secret.txt"), ws.join("link")).unwrap();
        std::os::unix::fs::symlink("..", ws.join("up")).unwrap();
        Tree { _tmp: tmp, top, ws }
    }

    pub(crate) fn ws(&self, rel: &str) -> String {
        self.ws.join(rel).to_string_lossy().into_owned()
    }

    pub(crate) fn top(&self, rel: &str) -> String {
        self.top.join(rel).to_string_lossy().into_owned()
    }
}

/// Starts the testbed with `args`, sends the workspace snapshot.
pub(super) fn start(tree: &Tree, args: &[&str]) -> Session {
    start_component(&guest("testbed"), tree, args)
}

/// Starts `component` (a testbed in any language) with `args`, sends the
/// workspace snapshot.
pub(crate) fn start_component(component: &Path, tree: &Tree, args: &[&str]) -> Session {
    let mut s = Session::start(component, args);
    let r = s.call(
        "snap",
        "host.snapshot",
        spec_snapshot(tree.ws.to_str().unwrap()),
    );
    assert_eq!(r["error"], Value::Null, "{r}");
    s
}

/// Runs one tool call and then checks the launcher still answers.
pub(crate) fn attempt(s: &mut Session, tool_name: &str, input: &str) -> Value {
    let r = s.call("attack", "tool.execute", tool(tool_name, input));
    let next = s.call("next", "tool.execute", tool("ok", "alive"));
    assert_eq!(
        next["result"], "ok:alive",
        "the next request after {tool_name} failed: {next}"
    );
    r
}

/// The error of a refused attack, which must name `reason` (the rule,
/// capability or limit that refused it): any other failure does not count.
pub(crate) fn denied<'a>(r: &'a Value, reason: &str) -> &'a str {
    let error = r["error"]
        .as_str()
        .unwrap_or_else(|| panic!("the attack was not refused: {r}"));
    assert!(
        error.contains(reason),
        "refused, but not for the expected reason ({reason:?}): {error}"
    );
    error
}

pub(crate) fn allowed(r: &Value) -> &str {
    r["result"]
        .as_str()
        .unwrap_or_else(|| panic!("the granted operation failed: {r}"))
}

/// A loopback TCP server answering `pong` to each line, and its port.
pub(crate) fn pong_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for stream in listener.incoming().take(16).flatten() {
            let mut line = String::new();
            let mut reader = BufReader::new(&stream);
            if reader.read_line(&mut line).is_ok() {
                let _ = (&stream).write_all(b"pong\n");
            }
        }
    });
    port
}

pub(crate) fn read_back(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}
