//! Serving over HTTP as a client and its user expect: the token, browser
//! origins and host names; one sandbox per session; folders of plugins;
//! packed plugins; a stop that lets calls finish.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{INITIALIZE, Server, client, post, raw, served, still_served, token_file};
use crate::packed::pack_component;
use crate::support::guest;

/// What a refused client reports: its error's message and HTTP status.
fn refusal(report: &Value) -> (String, u64) {
    let error = &report["failure"]["error"];
    let message = error["message"].as_str().unwrap_or_default().to_owned();
    (message, error["data"]["httpStatus"].as_u64().unwrap_or(0))
}

#[test]
fn the_python_sdk_calls_with_the_token_and_is_refused_without_it_or_from_a_foreign_origin() {
    let dir = tempfile::tempdir().unwrap();
    let (file, token) = token_file(dir.path());
    let allowed = "http://app.example:8080";
    let args = [
        "--token-file",
        file.to_str().unwrap(),
        "--allow-origin",
        allowed,
    ];
    let server = Server::launcher(&guest("probe"), &args);
    let url = server.url();
    let calls = json!([{"tool": "probe.echo", "arguments": {"n": 7}}]).to_string();
    for modern in [false, true] {
        let mut args = vec!["--url", &url, "--token", &token, "--calls", &calls];
        if modern {
            args.push("--modern");
        }
        let report = served(&args);
        assert_eq!(report["tools"][0]["name"], "probe.echo", "{report}");
        assert_eq!(report["results"][0]["text"], r#"echo:{"n":7}"#, "{report}");
    }
    // No token, a wrong one: 401, said in the error the SDK raises.
    let wrong = "f".repeat(64);
    for args in [vec!["--url", &url], vec!["--url", &url, "--token", &wrong]] {
        let (report, status) = client(&args);
        assert_ne!(status, 0, "{report}");
        let (message, http) = refusal(&report);
        assert_eq!(http, 401, "{report}");
        assert!(message.contains("--token-file"), "{message}");
    }
    // A page of another origin: 403, naming the flag that allows it.
    let args = [
        "--url",
        &url,
        "--token",
        &token,
        "--origin",
        "http://evil.example",
    ];
    let (report, _) = client(&args);
    let (message, http) = refusal(&report);
    assert_eq!(http, 403, "{report}");
    assert!(message.contains("--allow-origin"), "{message}");
    let args = [
        "--url", &url, "--token", &token, "--origin", allowed, "--calls", &calls,
    ];
    assert_eq!(served(&args)["results"][0]["isError"], false);

    // The status lines themselves.
    let bearer = format!("Authorization: Bearer {token}");
    let none = post(server.port, &[], INITIALIZE);
    assert_eq!(none.status, 401, "{none:?}");
    assert!(
        none.head
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{none:?}"
    );
    let lower = format!("authorization: bearer {token}");
    assert_eq!(post(server.port, &[&lower], INITIALIZE).status, 200);
    let forged = post(
        server.port,
        &[&bearer, "Origin: https://evil.example"],
        INITIALIZE,
    );
    assert_eq!(forged.status, 403, "{forged:?}");
    // DNS rebinding: a page of evil.example resolved to 127.0.0.1.
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: evil.example\r\n{bearer}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    let rebound = raw(server.port, request.as_bytes());
    assert_eq!(rebound.status, 403, "{rebound:?}");
    assert!(rebound.body.contains("--allow-host"), "{rebound:?}");
    still_served(&url, Some(&token));
}

#[test]
fn beyond_loopback_a_server_needs_a_token_and_the_token_must_be_private() {
    let dir = tempfile::tempdir().unwrap();
    let probe = guest("probe");
    let run = |args: &[&str]| {
        let out = crate::support::launcher()
            .arg("mcp")
            .arg(&probe)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} started");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let open = run(&["--http", "0.0.0.0:0"]);
    assert!(
        open.contains("without a token") && open.contains("--no-auth"),
        "{open}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let (file, _) = token_file(dir.path());
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let said = run(&[
            "--http",
            "127.0.0.1:0",
            "--token-file",
            file.to_str().unwrap(),
        ]);
        assert!(said.contains("others may read"), "{said}");
    }
    let (short, _) = token_file(dir.path());
    std::fs::write(&short, "secret\n").unwrap();
    let said = run(&[
        "--http",
        "127.0.0.1:0",
        "--token-file",
        short.to_str().unwrap(),
    ]);
    assert!(said.contains("at least 32"), "{said}");
    let said = run(&["--stateless"]);
    assert!(said.contains("--http"), "{said}");
}

/// Each MCP session has a sandbox session of its own; `--stateless`, one
/// per request. `--max-sessions` is a cap, and DELETE frees a place.
#[test]
fn sessions_are_sandboxes_of_their_own_and_capped() {
    let testbed = guest("testbed");
    let server = Server::launcher(&testbed, &["--max-sessions", "2"]);
    let url = server.url();
    let append = json!([
        {"tool": "mem-append", "arguments": {"input": "mine"}},
        {"tool": "mem-get", "arguments": {}},
    ])
    .to_string();
    let first = served(&["--url", &url, "--calls", &append]);
    assert_eq!(first["results"][1]["text"], "mine,", "{first}");
    let get = json!([{"tool": "mem-get", "arguments": {}}]).to_string();
    let second = served(&["--url", &url, "--calls", &get]);
    assert_eq!(
        second["results"][0]["text"], "",
        "another session's memory: {second}"
    );

    // Two sessions held open, a third refused; DELETE one, and it opens.
    let session_of = |answer: &super::Answer| {
        answer
            .head
            .lines()
            .find_map(|l| l.strip_prefix("mcp-session-id: "))
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("no session: {answer:?}"))
    };
    let a = session_of(&post(server.port, &[], INITIALIZE));
    let _b = session_of(&post(server.port, &[], INITIALIZE));
    let third = post(server.port, &[], INITIALIZE);
    assert_eq!(third.status, 503, "{third:?}");
    assert!(third.body.contains("--max-sessions"), "{third:?}");
    // A 2026-07-28 client opens no session: it is served all the same.
    let modern = served(&["--url", &url, "--modern", "--calls", &get]);
    assert_eq!(modern["results"][0]["isError"], false, "{modern}");
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {a}\r\nConnection: close\r\n\r\n"
    );
    let deleted = raw(server.port, delete.as_bytes());
    assert!(deleted.status < 300, "{deleted:?}");
    // The session ends in the background: a place is free shortly after.
    let start = Instant::now();
    while post(server.port, &[], INITIALIZE).status != 200 {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "no place after DELETE"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(server);

    let stateless = Server::launcher(&testbed, &["--stateless"]);
    let report = served(&["--url", &stateless.url(), "--modern", "--calls", &append]);
    assert_eq!(report["results"][0]["text"], "mine,", "{report}");
    assert_eq!(
        report["results"][1]["text"], "",
        "a request saw another's memory: {report}"
    );
}

#[test]
fn a_folder_of_plugins_is_one_catalog_and_a_clash_stops_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("plugins");
    std::fs::create_dir(&folder).unwrap();
    std::fs::copy(guest("probe"), folder.join("probe.wasm")).unwrap();
    std::fs::copy(guest("workspace_stats"), folder.join("stats.wasm")).unwrap();
    let server = Server::launcher(&folder, &[]);
    let report = served(&["--url", &server.url()]);
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"probe.echo"), "{report}");
    assert!(names.len() > 1, "{report}");
    assert_eq!(report["serverInfo"]["name"], "lingxi-wasm-run", "{report}");
    drop(server);

    std::fs::copy(guest("probe"), folder.join("probe-again.wasm")).unwrap();
    let out = crate::support::launcher()
        .arg("mcp")
        .arg(&folder)
        .args(["--http", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("probe") && said.contains("was not served"),
        "{said}"
    );
}

#[test]
fn a_packed_plugin_serves_http_with_its_grants() {
    let dir = tempfile::tempdir().unwrap();
    let exe = pack_component(dir.path(), &guest("probe"), "probe", &[]);
    let mut command = Command::new(&exe);
    command.args(["mcp", "--http", "127.0.0.1:0"]);
    let server = Server::start(command);
    still_served(&server.url(), None);
    let help = Command::new(&exe).args(["mcp", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("--token-file") && help.contains("--stateless"),
        "{help}"
    );
}

/// SIGTERM: no new connections; a call in progress finishes and is
/// answered; the process exits.
#[cfg(unix)]
#[test]
fn a_stopped_server_finishes_the_calls_in_progress() {
    let server = Server::launcher(&guest("testbed"), &["--timeout", "20"]);
    let url = server.url();
    let port = server.port;
    // Stop the server while the call runs.
    let caller = super::call_in_progress(&url, None, 2000);
    let start = Instant::now();
    let (status, said) = server.terminate();
    assert!(status.success(), "{status:?}: {said}");
    assert!(start.elapsed() < Duration::from_secs(15), "{said}");
    let (report, _) = caller.join().unwrap();
    assert_eq!(report["results"][0]["text"], "slept 2000 ms", "{report}");
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

/// `export --mcp-url`: an Agent Plugins package whose server is the plugin
/// served over HTTP; the client loads it (schema and Lime's URL rules) and
/// reaches the server. URLs that break the rules are refused.
#[test]
fn an_exported_package_can_name_the_server_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let probe = guest("probe");
    let server = Server::launcher(&probe, &["--stateless"]);
    let export = |url: &str, out: &str| {
        crate::support::launcher()
            .args(["export", "--format", "agent-plugin", "--mcp-url", url, "-o"])
            .arg(dir.path().join(out))
            .arg(&probe)
            .output()
            .unwrap()
    };
    let url = server.url();
    assert!(export(&url, "package").status.success());
    let mcp: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("package/mcp.json")).unwrap())
            .unwrap();
    assert_eq!(
        mcp["mcpServers"]["com.lingxi.test-probe"],
        json!({"type": "streamable-http", "url": url}),
        "{mcp}"
    );
    let (package, data) = (dir.path().join("package"), dir.path().join("data"));
    let schemas = crate::mcp::schemas();
    let calls = json!([{"tool": "probe.echo", "arguments": {"via": "package"}}]).to_string();
    let report = served(&[
        "--package",
        package.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--schemas",
        &schemas,
        "--calls",
        &calls,
    ]);
    assert_eq!(report["package"]["ok"], true, "{report}");
    assert_eq!(report["package"]["launch"]["url"], url.as_str(), "{report}");
    assert_eq!(report["results"][0]["text"], r#"echo:{"via":"package"}"#);
    for (url, said) in [
        ("http://mcp.example.com/mcp", "HTTPS"),
        ("https://me:pw@mcp.example.com/mcp", "user name"),
    ] {
        let out = export(url, "refused");
        assert!(!out.status.success(), "{url}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(said), "{url}");
        assert!(!dir.path().join("refused").exists(), "{url}");
    }
}
