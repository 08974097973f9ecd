//! Hostile requests over HTTP. Each row is answered with a refusal, and
//! afterwards a client (and a session opened before) is still served.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Answer, INITIALIZE, Server, post, raw, served, token_file};
use crate::support::guest;

/// The testbed over HTTP with a token and small caps.
fn server(dir: &std::path::Path, extra: &[&str]) -> (Server, String) {
    let (file, token) = token_file(dir);
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("inside.txt"), "inside").unwrap();
    let mut args = vec![
        "--token-file",
        file.to_str().unwrap(),
        "--workspace",
        project.to_str().unwrap(),
        "--grant",
        "projectRead",
        "--max-body",
        "65536",
    ];
    args.extend_from_slice(extra);
    (Server::launcher(&guest("testbed"), &args), token)
}

/// A client with the token is served a call of `ok`.
fn others_served(server: &Server, token: &str) {
    let calls = json!([{"tool": "ok", "arguments": {"input": "still"}}]).to_string();
    let report = served(&["--url", &server.url(), "--token", token, "--calls", &calls]);
    assert_eq!(report["results"][0]["text"], "ok:still", "{report}");
}

/// A session opened by hand: its id, after `initialize` and `initialized`.
fn open_session(port: u16, bearer: &str) -> String {
    let answer = post(port, &[bearer], INITIALIZE);
    let id = answer
        .head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap_or_else(|| panic!("no session: {answer:?}"))
        .to_owned();
    let session = format!("Mcp-Session-Id: {id}");
    let version = "MCP-Protocol-Version: 2025-11-25";
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let done = post(port, &[bearer, &session, version], initialized);
    assert!(done.status < 300, "{done:?}");
    id
}

/// `tools/list` in session `id`.
fn list_in(port: u16, bearer: &str, id: &str) -> Answer {
    let session = format!("Mcp-Session-Id: {id}");
    let version = "MCP-Protocol-Version: 2025-11-25";
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    post(port, &[bearer, &session, version], list)
}

#[test]
fn hostile_requests_are_refused_and_others_still_served() {
    let dir = tempfile::tempdir().unwrap();
    let (server, token) = server(dir.path(), &[]);
    let port = server.port;
    let bearer = format!("Authorization: Bearer {token}");
    let mine = open_session(port, &bearer);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"ok","arguments":{{"input":"{}"}}}}}}"#,
        "x".repeat(100_000)
    );
    let batch = format!("[{INITIALIZE},{INITIALIZE}]");
    let other_session = "Mcp-Session-Id: 0badc0de-0000-4000-8000-000000000000";
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let wrong = format!("Authorization: Bearer {}", "0".repeat(64));
    // (what, headers, body, the statuses that refuse it)
    let rows: Vec<(&str, Vec<&str>, &str, &[u16])> = vec![
        ("an oversized body", vec![&bearer], &big, &[413]),
        (
            "malformed JSON",
            vec![&bearer],
            "{\"jsonrpc\": \"2.0\", \"id\": 1, \"meth",
            &[400, 415, 422],
        ),
        (
            "not JSON-RPC",
            vec![&bearer],
            r#"{"hello":"world"}"#,
            &[400, 415, 422],
        ),
        ("a batch", vec![&bearer], &batch, &[400, 415, 422]),
        (
            "an unknown session",
            vec![&bearer, other_session],
            list,
            &[404],
        ),
        ("a wrong token", vec![&wrong], INITIALIZE, &[401]),
        ("no token", vec![], INITIALIZE, &[401]),
        (
            "a forged Origin",
            vec![&bearer, "Origin: https://evil.example"],
            INITIALIZE,
            &[403],
        ),
    ];
    for (what, headers, body, refused) in rows {
        let answer = post(port, &headers, body);
        assert!(refused.contains(&answer.status), "{what}: {answer:?}");
        // Said as a JSON-RPC error, but for an ended session's 404, which
        // clients look for as it is.
        if answer.status != 404 {
            let said: serde_json::Value = serde_json::from_str(&answer.body)
                .unwrap_or_else(|_| panic!("{what}: not JSON-RPC: {answer:?}"));
            assert!(said["error"]["message"].is_string(), "{what}: {answer:?}");
        }
    }
    // Requests whose host is not one thing, and a body declared too large
    // (refused at once, unread).
    let raw_rows: [(&str, String, u16); 4] = [
        (
            "two Host headers",
            format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n{bearer}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
            400,
        ),
        (
            "a target naming another host",
            format!(
                "POST http://evil.example/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{bearer}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
            400,
        ),
        (
            "a Host with a port that is not a number",
            format!(
                "POST /mcp HTTP/1.1\r\nHost: localhost:abc\r\n{bearer}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
            400,
        ),
        (
            "a body declared over the cap",
            format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{bearer}\r\nExpect: 100-continue\r\nContent-Length: 9223372036854775807\r\nConnection: close\r\n\r\n"
            ),
            413,
        ),
    ];
    for (what, request, status) in raw_rows {
        let start = Instant::now();
        let answer = raw(port, request.as_bytes());
        assert_eq!(answer.status, status, "{what}: {answer:?}");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{what}: answered late"
        );
    }
    // A DELETE of a session that is not the caller's (a guessed id).
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{bearer}\r\n{other_session}\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(raw(port, delete.as_bytes()).status, 404);
    // A forged Host (DNS rebinding).
    let rebinding = format!(
        "POST /mcp HTTP/1.1\r\nHost: attacker.example\r\n{bearer}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    assert_eq!(raw(port, rebinding.as_bytes()).status, 403);
    // Garbage that is not HTTP.
    let garbage = raw(
        port,
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not http at all\r\n\r\n",
    );
    assert!(garbage.status == 400 || garbage.status == 0, "{garbage:?}");
    let listed = list_in(port, &bearer, &mine);
    assert_eq!(
        listed.status, 200,
        "my session after the attacks: {listed:?}"
    );
    assert!(listed.body.contains("mem-append"), "{listed:?}");
    others_served(&server, &token);
}

/// A flood of sessions is capped; sessions opened before keep working,
/// and idle ones end, which frees their places.
#[test]
fn a_flood_of_sessions_is_capped_and_idle_sessions_end() {
    let dir = tempfile::tempdir().unwrap();
    let (server, token) = server(dir.path(), &["--max-sessions", "8", "--session-idle", "3"]);
    let port = server.port;
    let bearer = format!("Authorization: Bearer {token}");
    let mine = open_session(port, &bearer);
    let refused = (0..40)
        .map(|_| post(port, &[&bearer], INITIALIZE).status)
        .filter(|&s| s == 503)
        .count();
    assert_eq!(refused, 40 - 7, "the cap is 8 sessions, one of them mine");
    assert_eq!(list_in(port, &bearer, &mine).status, 200);
    std::thread::sleep(Duration::from_secs(4));
    others_served(&server, &token);
}

/// Connections that send nothing, or a head byte by byte, are closed after
/// the head timeout; meanwhile clients are served.
#[test]
fn slow_and_idle_connections_are_closed_and_others_served() {
    let dir = tempfile::tempdir().unwrap();
    let (server, token) = server(dir.path(), &[]);
    let start = Instant::now();
    let mut slow: Vec<TcpStream> = (0..50)
        .map(|_| TcpStream::connect(("127.0.0.1", server.port)).unwrap())
        .collect();
    for (i, stream) in slow.iter_mut().enumerate() {
        if i % 2 == 0 {
            stream
                .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                .unwrap();
        }
    }
    others_served(&server, &token);
    for stream in &mut slow {
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let mut byte = [0u8; 512];
        // Closed by the server (EOF, or a 408 and EOF), not by our timeout.
        loop {
            match stream.read(&mut byte) {
                Ok(0) | Err(_) => break,
                Ok(_) => continue,
            }
        }
    }
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(9) && waited < Duration::from_secs(19),
        "closed after {waited:?}"
    );
}

/// A call in progress keeps its session from being idle, and an id in
/// use in a session is not taken twice.
#[test]
fn a_session_with_a_call_in_progress_is_not_idle_and_ids_are_not_reused() {
    let dir = tempfile::tempdir().unwrap();
    let (server, token) = server(dir.path(), &["--session-idle", "1", "--timeout", "10"]);
    let url = server.url();
    let calls = json!([
        {"tool": "sleep-ms", "arguments": {"input": "2500"}},
        {"tool": "mem-append", "arguments": {"input": "after"}},
    ])
    .to_string();
    let report = served(&["--url", &url, "--token", &token, "--calls", &calls]);
    assert_eq!(report["results"][0]["text"], "slept 2500 ms", "{report}");
    assert_eq!(
        report["results"][1]["text"], "after,",
        "the same session: {report}"
    );

    let port = server.port;
    let bearer = format!("Authorization: Bearer {token}");
    let mine = open_session(port, &bearer);
    let session = format!("Mcp-Session-Id: {mine}");
    let version = "MCP-Protocol-Version: 2025-11-25";
    let sleep = r#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"sleep-ms","arguments":{"input":"1500"}}}"#;
    let again = r#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"mem-append","arguments":{"input":"DUP"}}}"#;
    let first = {
        let (bearer, session) = (bearer.clone(), session.clone());
        std::thread::spawn(move || post(port, &[&bearer, &session, version], sleep))
    };
    std::thread::sleep(Duration::from_millis(500));
    let second = post(port, &[&bearer, &session, version], again);
    assert_eq!(second.status, 400, "{second:?}");
    assert!(second.body.contains("same id"), "{second:?}");
    let first = first.join().unwrap();
    assert!(first.body.contains("slept 1500 ms"), "{first:?}");
}

/// One client address has at most --max-client-calls calls in progress.
#[test]
fn one_client_cannot_take_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let (server, token) = server(dir.path(), &["--max-client-calls", "1", "--timeout", "10"]);
    let url = server.url();
    let busy = super::call_in_progress(&url, Some(&token), 3000);
    let bearer = format!("Authorization: Bearer {token}");
    let answer = post(server.port, &[&bearer], INITIALIZE);
    assert_eq!(answer.status, 429, "{answer:?}");
    assert!(answer.body.contains("--max-client-calls"), "{answer:?}");
    let (report, _) = busy.join().unwrap();
    assert_eq!(report["results"][0]["text"], "slept 3000 ms", "{report}");
    others_served(&server, &token);
}

/// The sandbox's rows hold over HTTP as over stdio: a file outside the
/// workspace, an endless loop, a blocking sleep, a huge result.
#[test]
fn the_sandbox_holds_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "TOP-SECRET").unwrap();
    let (server, token) = server(dir.path(), &["--stateless", "--timeout", "1"]);
    let calls = json!([
        {"tool": "read-file", "arguments": {"input": secret.display().to_string()}},
        {"tool": "spin", "arguments": {"input": ""}},
        {"tool": "sleep", "arguments": {"input": "30"}},
        {"tool": "big-result", "arguments": {"input": "20"}},
        {"tool": "ok", "arguments": {"input": "after"}},
    ])
    .to_string();
    let url = server.url();
    for modern in [false, true] {
        let mut args = vec!["--url", &url, "--token", &token, "--calls", &calls];
        args.extend(modern.then_some("--modern"));
        let report = served(&args);
        let r = &report["results"];
        for i in 0..4 {
            assert_eq!(r[i]["isError"], true, "call {i}: {report}");
        }
        assert!(
            !r[0]["text"].as_str().unwrap().contains("TOP-SECRET"),
            "{report}"
        );
        for i in [1, 2] {
            assert!(
                r[i]["text"].as_str().unwrap().contains("--timeout"),
                "{report}"
            );
            assert!(r[i]["ms"].as_f64().unwrap() < 10_000.0, "{report}");
        }
        assert!(r[3]["text"].as_str().unwrap().contains("MiB"), "{report}");
        assert_eq!(r[4]["text"], "ok:after", "{report}");
    }
}
