//! The attack rows that apply to any guest, against the Python and the
//! JavaScript testbed: the sandbox is the host's, so it must not depend on
//! the language. Each row asserts the refusal AND that the next request is
//! answered; the positive controls show the refused thing works when
//! granted (so the refusal is the guard's, not the language's).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::thread;

use serde_json::Value;

use super::per_language;
use crate::attacks::{Tree, allowed, attempt, denied, pong_server, start_component};
use crate::packed::{lingxi_spawn, pack_component};
use crate::support::{Lang, Session, polyglot, spec_snapshot};

/// Starts the testbed of `lang` on the tree's workspace.
fn start(lang: Lang, tree: &Tree, args: &[&str]) -> Session {
    start_component(&polyglot(lang, "testbed"), tree, args)
}

/// Asserts the call failed and returned nothing.
fn refused(r: &Value) {
    assert!(
        r["result"].is_null() && r["error"].is_string(),
        "not refused: {r}"
    );
}

/// A loopback HTTP server answering `pong` to every request, and its port.
fn http_server() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    thread::spawn(move || {
        for stream in listener.incoming().take(16).flatten() {
            let mut reader = BufReader::new(&stream);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let _ = (&stream).write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\npong",
            );
        }
    });
    port
}

/// The testbed's network tool of `lang` and its argument for `port`:
/// Python opens a TCP socket, JavaScript has only `fetch` (wasi:http).
fn reach(lang: Lang) -> (&'static str, u16, String, &'static str) {
    match lang {
        Lang::Python => {
            let port = pong_server();
            ("tcp", port, format!("127.0.0.1:{port}"), "pong")
        }
        Lang::JavaScript => {
            let port = http_server();
            (
                "http",
                port,
                format!("http://127.0.0.1:{port}/"),
                "200 pong",
            )
        }
    }
}

per_language! {
    fn fs_read_inside_the_workspace_works(lang) {
        let t = Tree::new();
        assert_eq!(allowed(&attempt(&mut start(lang, &t, &[]), "read-file", &t.ws("notes.txt"))), "inside");
    }

    fn fs_escapes_out_of_the_workspace(lang) {
        let t = Tree::new();
        let mut s = start(lang, &t, &[]);
        for path in [t.ws("../secret.txt"), t.top("secret.txt"), t.ws("link"),
                     t.ws("up/secret.txt"), "/etc/passwd".to_owned(), "../../../../etc/passwd".to_owned()] {
            let r = attempt(&mut s, "read-file", &path);
            refused(&r);
            let error = r["error"].as_str().unwrap_or_default();
            assert!(error.contains("[refused by the sandbox: read "), "{path}: {error}");
        }
        let (_, stderr) = s.finish();
        for line in [
            "read /etc/passwd denied: outside the folders the plugin may read (allow it with --allow-read /etc (with projectRead))".to_owned(),
            format!("read {} denied: outside the folders the plugin may read (allow it with --allow-read {} (with projectRead))", t.top("secret.txt"), t.top.display()),
            format!("read {} denied: {} leads out of the folder it was reached through", t.ws("link"), t.ws("link")),
        ] {
            assert!(stderr.contains(&line), "stderr lacks {line:?}:\n{stderr}");
        }
    }

    /// Refusing a path outside the grants tells the plugin nothing about
    /// the host: an existing and a missing file get the same error.
    fn fs_no_existence_oracle_outside_the_grants(lang) {
        let t = Tree::new();
        let mut s = start(lang, &t, &[]);
        let guest_error = |s: &mut Session, path: &str| {
            let r = attempt(s, "read-file", path);
            let error = r["error"].as_str().unwrap_or_default().to_owned();
            let guest = error.split(" [refused by the sandbox").next().unwrap_or_default();
            guest.replace(path, "PATH")
        };
        let existing = guest_error(&mut s, &t.top("secret.txt"));
        let missing = guest_error(&mut s, &t.top("missing.txt"));
        assert_eq!(existing, missing, "an existing and a missing host file differ");
        assert_eq!(guest_error(&mut s, "/etc/passwd"), guest_error(&mut s, "/etc/no-such-file"));
    }

    /// `link/../x` is `x` next to the link's target, as in POSIX (a
    /// helper library that resolved `..` by text would read `ws/notes.txt`).
    fn fs_dotdot_after_a_symlink_resolves_like_posix(lang) {
        let t = Tree::new();
        std::fs::create_dir_all(t.ws.join("sub/deep")).unwrap();
        std::fs::write(t.ws.join("sub/notes.txt"), "sub").unwrap();
        std::os::unix::fs::symlink("sub/deep", t.ws.join("dl")).unwrap();
        let r = attempt(&mut start(lang, &t, &[]), "read-file", &t.ws("dl/../notes.txt"));
        assert_eq!(allowed(&r), "sub");
    }

    fn fs_write_without_project_write(lang) {
        let t = Tree::new();
        let mut s = start(lang, &t, &["--grant", "projectRead"]);
        let r = attempt(&mut s, "write-file", &format!("{}\nx", t.ws("new.txt")));
        refused(&r);
        assert!(r["error"].as_str().unwrap_or_default().contains("allow it with --grant projectWrite"), "{r}");
        assert!(!t.ws.join("new.txt").exists());
        let (_, stderr) = s.finish();
        let line = format!("write {} denied: the workspace is mounted read-only (allow it with --grant projectWrite)", t.ws("new.txt"));
        assert!(stderr.contains(&line), "stderr lacks {line:?}:\n{stderr}");
        let mut s = start(lang, &t, &["--grant", "projectRead,projectWrite"]);
        allowed(&attempt(&mut s, "write-file", &format!("{}\nx", t.ws("new.txt"))));
        assert_eq!(std::fs::read_to_string(t.ws.join("new.txt")).unwrap(), "x");
    }

    /// Refused, and said: the error's note and a log line name the grant
    /// (a TCP socket for Python, an HTTP request for JavaScript).
    fn net_without_the_grant(lang) {
        let t = Tree::new();
        let (tool, _, target, _) = reach(lang);
        let mut s = start(lang, &t, &["--grant", "projectRead"]);
        let r = attempt(&mut s, tool, &target);
        refused(&r);
        let grant = "it needs networkAccess, declared by the plugin and granted with --grant networkAccess";
        let error = r["error"].as_str().unwrap_or_default();
        assert!(error.contains("[refused by the sandbox: ") && error.contains(grant), "{r}");
        let (_, stderr) = s.finish();
        assert!(stderr.contains("denied: the plugin has no network access") && stderr.contains(grant), "{stderr}");
    }

    fn net_with_the_grant_works(lang) {
        let t = Tree::new();
        let (tool, _, target, answer) = reach(lang);
        let mut s = start(lang, &t, &["--grant", "networkAccess", "--allow-net", "*:*"]);
        assert_eq!(allowed(&attempt(&mut s, tool, &target)), answer);
    }

    fn net_outside_the_allow_list(lang) {
        let t = Tree::new();
        let (tool, port, target, _) = reach(lang);
        let other = format!("127.0.0.1:{}", port.wrapping_add(1).max(1));
        let mut s = start(lang, &t, &["--grant", "networkAccess", "--allow-net", &other]);
        refused(&attempt(&mut s, tool, &target));
        let rule = format!("--allow-net 127.0.0.1:{port}");
        let (_, stderr) = s.finish();
        assert!(stderr.contains(&rule), "the denial names {rule}: {stderr}");
    }

    fn env_only_explicitly_passed_keys_are_visible(lang) {
        let t = Tree::new();
        assert_eq!(allowed(&attempt(&mut start(lang, &t, &[]), "env", "")), "");
        let mut s = start(lang, &t, &["--env", "MODE=fast"]);
        assert_eq!(allowed(&attempt(&mut s, "env", "")), "MODE=fast");
    }

    fn cpu_endless_loop(lang) {
        let t = Tree::new();
        let r = attempt(&mut start(lang, &t, &["--timeout", "0.5"]), "spin", "");
        denied(&r, "did not finish within 0.5 s");
    }

    /// The guest blocks in WASI (a clock pollable), not spinning: the
    /// deadline still holds.
    fn deadline_guest_sleeps_an_hour(lang) {
        let t = Tree::new();
        let r = attempt(&mut start(lang, &t, &["--timeout", "1"]), "sleep", "3600");
        denied(&r, "did not finish within 1.0 s");
    }

    fn mem_memory_bomb(lang) {
        let t = Tree::new();
        let r = attempt(&mut start(lang, &t, &["--max-memory", "32"]), "alloc-mib", "64");
        denied(&r, "memory limit of 32 MiB");
    }

    fn out_100_mb_result(lang) {
        let t = Tree::new();
        // A generous deadline: this row is about the result limit, and an
        // interpreter in a debug host builds 100 MB slowly. It stays under
        // the 60 s the test waits for any response.
        let r = attempt(&mut start(lang, &t, &["--timeout", "55"]), "big-result", "100");
        denied(&r, "more than the 16 MiB result limit");
    }

    fn out_log_flood(lang) {
        let t = Tree::new();
        // A generous deadline: this row is about the output limit, and an
        // interpreter in a debug host logs slowly on a loaded machine.
        let r = attempt(&mut start(lang, &t, &["--timeout", "30"]), "log-flood", "20000");
        denied(&r, "MiB of output");
    }

    fn out_stdout_does_not_reach_the_channel(lang) {
        let t = Tree::new();
        let mut s = start(lang, &t, &[]);
        for _ in 0..2 {
            assert_eq!(allowed(&attempt(&mut s, "print-stdout", "")), "printed");
        }
    }

    /// The same sandbox when the plugin is packed and spawned as LingXi
    /// spawns it: the grants and limits travel inside the executable.
    fn packed_plugin_keeps_the_sandbox(lang) {
        let t = Tree::new();
        let args = ["--grant", "projectRead", "--timeout", "1", "--max-memory", "32"];
        let exe = pack_component(&t.top, &polyglot(lang, "testbed"), "testbed", &args);
        let mut s = Session::spawn(lingxi_spawn(&exe, &t.top));
        let snapshot = spec_snapshot(t.ws.to_str().unwrap());
        assert_eq!(s.call("snap", "host.snapshot", snapshot)["error"], Value::Null);
        assert_eq!(allowed(&attempt(&mut s, "read-file", &t.ws("notes.txt"))), "inside");
        refused(&attempt(&mut s, "read-file", &t.top("secret.txt")));
        refused(&attempt(&mut s, "write-file", &format!("{}\nx", t.ws("new.txt"))));
        let (tool, _, target, _) = reach(lang);
        refused(&attempt(&mut s, tool, &target));
        assert_eq!(allowed(&attempt(&mut s, "env", "")), "");
        denied(&attempt(&mut s, "spin", ""), "did not finish within 1.0 s");
        denied(&attempt(&mut s, "alloc-mib", "64"), "memory limit of 32 MiB");
    }
}
