//! The adversarial suite: one test per attack, named so the list reads as a
//! threat model (the README's security section lists the same names). Every
//! case asserts that the attack fails (or, for a positive control, that the
//! granted thing works) AND that the launcher still answers the next request.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::thread;

use serde_json::{Value, json};

use crate::support::{Session, guest, spec_snapshot, tool};

/// A scratch tree: `<tmp>/ws` is the workspace (with `notes.txt`, a symlink
/// `link` to the outside secret and a symlink `up` to `..`), `<tmp>/secret.txt`
/// lies outside it, `<tmp>/extra` is a directory for `--allow-read/write`.
struct Tree {
    _tmp: tempfile::TempDir,
    top: PathBuf,
    ws: PathBuf,
}

impl Tree {
    fn new() -> Tree {
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

    fn ws(&self, rel: &str) -> String {
        self.ws.join(rel).to_string_lossy().into_owned()
    }

    fn top(&self, rel: &str) -> String {
        self.top.join(rel).to_string_lossy().into_owned()
    }
}

/// Starts the testbed with `args`, sends the workspace snapshot.
fn start(tree: &Tree, args: &[&str]) -> Session {
    let mut s = Session::start(&guest("testbed"), args);
    let r = s.call(
        "snap",
        "host.snapshot",
        spec_snapshot(tree.ws.to_str().unwrap()),
    );
    assert_eq!(r["error"], Value::Null, "{r}");
    s
}

/// Runs one tool call and then checks the launcher still answers.
fn attempt(s: &mut Session, tool_name: &str, input: &str) -> Value {
    let r = s.call("attack", "tool.execute", tool(tool_name, input));
    let next = s.call("next", "tool.execute", tool("ok", "alive"));
    assert_eq!(
        next["result"], "ok:alive",
        "the next request after {tool_name} failed: {next}"
    );
    r
}

fn denied(r: &Value) -> &str {
    r["error"]
        .as_str()
        .unwrap_or_else(|| panic!("the attack was not refused: {r}"))
}

fn allowed(r: &Value) -> &str {
    r["result"]
        .as_str()
        .unwrap_or_else(|| panic!("the granted operation failed: {r}"))
}

/// A loopback TCP server answering `pong` to each line, and its port.
fn pong_server() -> u16 {
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

fn read_back(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

// ---- filesystem ---------------------------------------------------------

#[test]
fn fs_read_inside_the_workspace_works() {
    let t = Tree::new();
    assert_eq!(
        allowed(&attempt(
            &mut start(&t, &[]),
            "read-file",
            &t.ws("notes.txt")
        )),
        "inside"
    );
}

#[test]
fn fs_dotdot_traversal_out_of_the_workspace() {
    let t = Tree::new();
    denied(&attempt(
        &mut start(&t, &[]),
        "read-file",
        &t.ws("../secret.txt"),
    ));
}

#[test]
fn fs_relative_dotdot_path() {
    let t = Tree::new();
    denied(&attempt(
        &mut start(&t, &[]),
        "read-file",
        "../../../../etc/passwd",
    ));
}

#[test]
fn fs_absolute_path_outside_the_workspace() {
    let t = Tree::new();
    denied(&attempt(
        &mut start(&t, &[]),
        "read-file",
        &t.top("secret.txt"),
    ));
}

#[test]
fn fs_read_etc_passwd() {
    let t = Tree::new();
    denied(&attempt(&mut start(&t, &[]), "read-file", "/etc/passwd"));
}

#[test]
fn fs_symlink_in_the_workspace_pointing_outside() {
    let t = Tree::new();
    denied(&attempt(&mut start(&t, &[]), "read-file", &t.ws("link")));
}

#[test]
fn fs_symlink_to_the_parent_directory() {
    let t = Tree::new();
    denied(&attempt(
        &mut start(&t, &[]),
        "read-file",
        &t.ws("up/secret.txt"),
    ));
}

#[test]
fn fs_hard_link_a_workspace_file_to_the_outside() {
    let t = Tree::new();
    let args = format!("{}\n{}", t.ws("notes.txt"), t.top("stolen.txt"));
    denied(&attempt(&mut start(&t, &[]), "hard-link", &args));
    assert!(read_back(&t.top.join("stolen.txt")).is_none());
}

#[test]
fn fs_hard_link_an_outside_file_into_the_workspace() {
    let t = Tree::new();
    let args = format!("{}\n{}", t.top("secret.txt"), t.ws("copy.txt"));
    denied(&attempt(&mut start(&t, &[]), "hard-link", &args));
    assert!(read_back(&t.ws.join("copy.txt")).is_none());
}

#[test]
fn fs_rename_a_file_out_of_the_workspace() {
    let t = Tree::new();
    let args = format!("{}\n{}", t.ws("notes.txt"), t.top("moved.txt"));
    denied(&attempt(&mut start(&t, &[]), "rename", &args));
    assert_eq!(
        read_back(&t.ws.join("notes.txt")).as_deref(),
        Some("inside")
    );
}

#[test]
fn fs_proc_self_environ() {
    let t = Tree::new();
    denied(&attempt(
        &mut start(&t, &[]),
        "read-file",
        "/proc/self/environ",
    ));
}

#[test]
fn fs_proc_self_maps() {
    let t = Tree::new();
    denied(&attempt(
        &mut start(&t, &[]),
        "read-file",
        "/proc/self/maps",
    ));
}

#[test]
fn fs_list_the_host_root() {
    let t = Tree::new();
    denied(&attempt(&mut start(&t, &[]), "list-dir", "/"));
}

#[test]
fn fs_write_under_a_read_only_grant() {
    let t = Tree::new();
    let mut s = start(&t, &["--grant", "projectRead"]);
    denied(&attempt(&mut s, "write-file", &t.ws("new.txt")));
    assert!(read_back(&t.ws.join("new.txt")).is_none());
}

#[test]
fn fs_overwrite_under_a_read_only_grant() {
    let t = Tree::new();
    let mut s = start(&t, &["--grant", "projectRead"]);
    denied(&attempt(&mut s, "write-file", &t.ws("notes.txt")));
    assert_eq!(
        read_back(&t.ws.join("notes.txt")).as_deref(),
        Some("inside")
    );
}

#[test]
fn fs_write_inside_with_project_write_works() {
    let t = Tree::new();
    let mut s = start(&t, &["--grant", "projectRead,projectWrite"]);
    assert_eq!(
        allowed(&attempt(&mut s, "write-file", &t.ws("new.txt"))),
        "written"
    );
    assert_eq!(
        read_back(&t.ws.join("new.txt")).as_deref(),
        Some("written by plugin")
    );
}

#[test]
fn fs_create_a_file_outside_the_workspace() {
    let t = Tree::new();
    let mut s = start(&t, &["--grant", "projectRead,projectWrite"]);
    denied(&attempt(&mut s, "write-file", &t.top("evil.txt")));
    assert!(read_back(&t.top.join("evil.txt")).is_none());
}

#[test]
fn fs_write_to_tmp() {
    let t = Tree::new();
    let mut s = start(&t, &["--grant", "projectRead,projectWrite"]);
    denied(&attempt(
        &mut s,
        "write-file",
        "/tmp/lingxi-wasm-attack.txt",
    ));
    assert!(read_back(Path::new("/tmp/lingxi-wasm-attack.txt")).is_none());
}

#[test]
fn fs_no_grant_no_files() {
    let t = Tree::new();
    denied(&attempt(
        &mut start(&t, &["--grant", "none"]),
        "read-file",
        &t.ws("notes.txt"),
    ));
}

#[test]
fn fs_allow_read_mounts_an_extra_directory_read_only() {
    let t = Tree::new();
    let extra = t.top("extra");
    let mut s = start(&t, &["--grant", "projectRead", "--allow-read", &extra]);
    assert_eq!(
        allowed(&attempt(&mut s, "read-file", &t.top("extra/data.txt"))),
        "extra"
    );
    denied(&attempt(&mut s, "write-file", &t.top("extra/data.txt")));
    assert_eq!(
        read_back(&t.top.join("extra/data.txt")).as_deref(),
        Some("extra")
    );
}

#[test]
fn fs_allow_write_needs_project_write() {
    let t = Tree::new();
    let extra = t.top("extra");
    let mut s = start(&t, &["--grant", "projectRead", "--allow-write", &extra]);
    denied(&attempt(&mut s, "write-file", &t.top("extra/new.txt")));
    let (_, stderr) = s.finish();
    assert!(
        stderr.contains("--allow-write ignored: the plugin does not have projectWrite"),
        "{stderr}"
    );
}

// ---- environment and stdin -----------------------------------------------

#[test]
fn env_variables_of_the_launcher_are_invisible() {
    let t = Tree::new();
    assert_eq!(allowed(&attempt(&mut start(&t, &[]), "env", "")), "");
}

#[test]
fn env_only_explicitly_passed_keys_are_visible() {
    let t = Tree::new();
    let mut s = start(&t, &["--env", "MODE=fast"]);
    assert_eq!(allowed(&attempt(&mut s, "env", "")), "MODE=fast");
}

#[test]
fn stdin_of_the_plugin_is_not_the_protocol_channel() {
    let t = Tree::new();
    assert_eq!(
        allowed(&attempt(&mut start(&t, &[]), "read-stdin", "")),
        "stdin:"
    );
}

// ---- network ---------------------------------------------------------------

#[test]
fn net_tcp_without_the_grant() {
    let t = Tree::new();
    let port = pong_server();
    let mut s = start(&t, &["--grant", "projectRead"]);
    denied(&attempt(&mut s, "tcp", &format!("127.0.0.1:{port}")));
}

#[test]
fn net_tcp_with_the_grant_works() {
    let t = Tree::new();
    let port = pong_server();
    let mut s = start(&t, &["--grant", "networkAccess"]);
    assert_eq!(
        allowed(&attempt(&mut s, "tcp", &format!("127.0.0.1:{port}"))),
        "pong"
    );
}

#[test]
fn net_tcp_in_the_allow_list_works() {
    let t = Tree::new();
    let port = pong_server();
    let rule = format!("127.0.0.1:{port}");
    let mut s = start(&t, &["--grant", "networkAccess", "--allow-net", &rule]);
    assert_eq!(allowed(&attempt(&mut s, "tcp", &rule)), "pong");
}

#[test]
fn net_tcp_to_a_port_outside_the_allow_list() {
    let t = Tree::new();
    let port = pong_server();
    let rule = format!("127.0.0.1:{}", port.wrapping_add(1));
    let mut s = start(&t, &["--grant", "networkAccess", "--allow-net", &rule]);
    denied(&attempt(&mut s, "tcp", &format!("127.0.0.1:{port}")));
    let (_, stderr) = s.finish();
    assert!(
        stderr.contains(&format!("allow it with --allow-net 127.0.0.1:{port}")),
        "{stderr}"
    );
}

#[test]
fn net_tcp_to_a_host_outside_the_allow_list() {
    let t = Tree::new();
    let port = pong_server();
    let mut s = start(
        &t,
        &["--grant", "networkAccess", "--allow-net", "127.0.0.2:*"],
    );
    denied(&attempt(&mut s, "tcp", &format!("127.0.0.1:{port}")));
}

#[test]
fn net_dns_lookup_without_the_grant() {
    let t = Tree::new();
    denied(&attempt(
        &mut start(&t, &["--grant", "projectRead"]),
        "dns",
        "localhost",
    ));
}

#[test]
fn net_dns_lookup_of_a_name_outside_the_allow_list() {
    let t = Tree::new();
    let mut s = start(
        &t,
        &["--grant", "networkAccess", "--allow-net", "localhost:80"],
    );
    denied(&attempt(&mut s, "dns", "exfiltrate.example.invalid"));
}

#[test]
fn net_allowed_name_resolves_and_connects() {
    let t = Tree::new();
    let port = pong_server();
    let rule = format!("localhost:{port}");
    let mut s = start(&t, &["--grant", "networkAccess", "--allow-net", &rule]);
    assert!(allowed(&attempt(&mut s, "dns", "localhost")).contains("127.0.0.1"));
    assert_eq!(
        allowed(&attempt(&mut s, "tcp", &format!("127.0.0.1:{port}"))),
        "pong"
    );
}

#[test]
fn net_udp_without_the_grant() {
    let t = Tree::new();
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = sink.local_addr().unwrap().to_string();
    denied(&attempt(
        &mut start(&t, &["--grant", "projectRead"]),
        "udp",
        &addr,
    ));
}

#[test]
fn net_udp_outside_the_allow_list() {
    let t = Tree::new();
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sink.local_addr().unwrap().port();
    let rule = format!("127.0.0.1:{}", port.wrapping_add(1));
    let mut s = start(&t, &["--grant", "networkAccess", "--allow-net", &rule]);
    denied(&attempt(&mut s, "udp", &format!("127.0.0.1:{port}")));
}

// ---- resources ---------------------------------------------------------------

#[test]
fn cpu_endless_loop() {
    let t = Tree::new();
    let r = attempt(&mut start(&t, &["--timeout", "0.5"]), "spin", "");
    assert!(denied(&r).contains("did not finish within 0.5 s"), "{r}");
}

#[test]
fn mem_memory_bomb() {
    let t = Tree::new();
    let r = attempt(&mut start(&t, &["--max-memory", "32"]), "alloc-mib", "64");
    assert!(denied(&r).contains("memory limit of 32 MiB"), "{r}");
}

#[test]
fn stack_deep_recursion() {
    let t = Tree::new();
    let r = attempt(&mut start(&t, &[]), "recurse", "");
    assert!(denied(&r).contains("crashed the plugin"), "{r}");
}

#[test]
fn out_100_mb_result() {
    let t = Tree::new();
    let r = attempt(&mut start(&t, &[]), "big-result", "100");
    let error = denied(&r);
    assert!(
        error.contains("result limit") || error.contains("memory limit"),
        "{r}"
    );
}

#[test]
fn out_log_flood() {
    let t = Tree::new();
    let r = attempt(&mut start(&t, &[]), "log-flood", "20000");
    assert!(denied(&r).contains("MiB of output"), "{r}");
}

#[test]
fn out_stdout_flood_does_not_reach_the_channel() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    for _ in 0..3 {
        assert_eq!(allowed(&attempt(&mut s, "print-stdout", "")), "printed");
    }
}

// ---- crashes -------------------------------------------------------------------

#[test]
fn crash_panic() {
    let t = Tree::new();
    assert!(denied(&attempt(&mut start(&t, &[]), "panic", "")).contains("crashed the plugin"));
}

#[test]
fn crash_abort() {
    let t = Tree::new();
    assert!(denied(&attempt(&mut start(&t, &[]), "abort", "")).contains("crashed the plugin"));
}

#[test]
fn crash_unreachable() {
    let t = Tree::new();
    assert!(
        denied(&attempt(&mut start(&t, &[]), "unreachable", "")).contains("crashed the plugin")
    );
}

#[test]
fn crash_process_exit() {
    let t = Tree::new();
    let r = attempt(&mut start(&t, &[]), "exit", "");
    // WASI 0.2 `exit` carries only ok or error: status 3 arrives as 1.
    assert!(denied(&r).contains("made the plugin exit with status 1"), "{r}");
}

#[test]
fn crash_storm_disables_the_plugin_and_the_host_lives() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    for i in 0..5 {
        let r = s.call(&format!("p{i}"), "tool.execute", tool("panic", ""));
        assert!(r["error"].is_string(), "{r}");
    }
    let r = s.call("after", "tool.execute", tool("ok", "x"));
    let error = denied(&r);
    assert!(
        error.contains("is disabled: it crashed 5 times within 60 s"),
        "{error}"
    );
    let r = s.call(
        "cmd",
        "command.execute",
        json!({"commandName": "info", "arguments": []}),
    );
    assert!(denied(&r).contains("disabled"), "{r}");
    let r = s.call("snap2", "host.snapshot", spec_snapshot("/repo"));
    assert_eq!(
        r["error"],
        Value::Null,
        "the launcher itself still answers: {r}"
    );
    assert!(s.finish().0.success());
}

// ---- hostile input ---------------------------------------------------------------

#[test]
fn input_invalid_utf8_in_arguments() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    let mut line =
        br#"{"id":"bad","method":"tool.execute","params":{"toolName":"len","arguments":""#.to_vec();
    line.extend_from_slice(&[0xff, 0xfe, 0xc3]);
    line.extend_from_slice(br#"","sessionID":"s","toolCallID":"c"}}"#);
    s.send_bytes(&line);
    let r = s.recv();
    assert_eq!(r["id"], "bad");
    assert!(denied(&r).contains("not valid UTF-8"), "{r}");
    assert_eq!(allowed(&attempt(&mut s, "ok", "")), "ok:");
}

#[test]
fn input_huge_arguments() {
    let t = Tree::new();
    let big = "a".repeat(20 * 1024 * 1024);
    assert_eq!(
        allowed(&attempt(&mut start(&t, &[]), "len", &big)),
        (20 * 1024 * 1024).to_string()
    );
}

#[test]
fn input_line_longer_than_the_cap() {
    let t = Tree::new();
    let mut s = start(&t, &[]);
    let huge = format!(
        r#"{{"id":"huge","method":"tool.execute","params":"{}"}}"#,
        "A".repeat(65 * 1024 * 1024)
    );
    s.send_raw(&huge);
    let r = s.recv();
    assert_eq!(r["id"], "huge");
    assert!(denied(&r).contains("longer than"), "{r}");
    assert_eq!(allowed(&attempt(&mut s, "ok", "")), "ok:");
}

#[test]
fn eof_while_a_tool_never_returns() {
    let t = Tree::new();
    let mut s = start(&t, &["--timeout", "0.5"]);
    s.send_raw(&crate::support::core_line(
        "spin",
        "tool.execute",
        &tool("spin", ""),
    ));
    s.close_stdin();
    let r = s.recv();
    assert!(
        denied(&r).contains("did not finish within 0.5 s"),
        "the call in flight is answered: {r}"
    );
    assert!(s.finish().0.success());
}
