//! `lingxi-wasm-run mcp --http`: MCP over streamable HTTP, driven by the
//! official MCP Python SDK's HTTP client (tests/mcp/client.py --url) and,
//! where the status line matters, by raw HTTP/1.1 written here.
//!
//! - `basics.rs`: the token, Origin and Host, sessions, folders, packed
//!   plugins, stopping on a signal.
//! - `scale.rs`: two `--stateless` servers behind Debian's nginx.
//! - `attacks.rs`: hostile requests, each followed by a client still served.
//! - `approval.rs`: tools that require approval, through elicitation.

mod approval;
mod attacks;
mod basics;
mod scale;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::{test_home, workspace_root};

/// A `lingxi-wasm-run mcp … --http 127.0.0.1:0` server, stopped on drop.
pub struct Server {
    pub child: Child,
    pub port: u16,
    /// What it said on stderr after its address line (read on stop).
    stderr: Option<BufReader<std::process::ChildStderr>>,
}

impl Server {
    /// Starts `command` (its arguments end with `--http 127.0.0.1:0`) and
    /// waits for the line that names its port.
    pub fn start(mut command: Command) -> Server {
        command
            .env("HOME", test_home())
            .env(
                "LINGXI_WASM_CACHE",
                workspace_root().join("target/e2e-cache"),
            )
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("cannot start the server");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut said = String::new();
        let port = loop {
            let mut line = String::new();
            if stderr.read_line(&mut line).unwrap_or(0) == 0 {
                let _ = child.wait();
                panic!("the server stopped before serving; it said:\n{said}");
            }
            said.push_str(&line);
            if let Some(rest) = line.split("serving MCP at http://127.0.0.1:").nth(1) {
                let port = rest.split('/').next().unwrap().parse().unwrap();
                break port;
            }
        };
        Server {
            child,
            port,
            stderr: Some(stderr),
        }
    }

    /// `lingxi-wasm-run mcp PLUGIN ARGS --http 127.0.0.1:0`.
    pub fn launcher(plugin: &Path, args: &[&str]) -> Server {
        let mut command = crate::support::launcher();
        command.arg("mcp").arg(plugin).args(args);
        command.args(["--http", "127.0.0.1:0"]);
        Server::start(command)
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Sends SIGTERM and waits for the exit; what it said on stderr.
    #[cfg(unix)]
    pub fn terminate(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let status = self.child.wait().unwrap();
        let mut rest = String::new();
        if let Some(mut stderr) = self.stderr.take() {
            let _ = stderr.read_to_string(&mut rest);
        }
        (status, rest)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The MCP client's report of `args` (it ends without a server command:
/// `--url` is among them), and its exit status.
pub fn client(args: &[&str]) -> (Value, i32) {
    crate::mcp::client(args, &std::env::temp_dir())
}

/// Waits (at most 60 s) until the client passed its checkpoint `mark`
/// (`--checkpoint`): it is about to make its next call.
pub fn reached(mark: &Path) {
    let reached = mark.with_extension("reached");
    let start = std::time::Instant::now();
    while !reached.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the client never got there"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A client making one call of the testbed's `sleep-ms` for `ms` at
/// `url` (with `token`); returns once the call is in progress.
pub fn call_in_progress(
    url: &str,
    token: Option<&str>,
    ms: u64,
) -> std::thread::JoinHandle<(Value, i32)> {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("mark");
    std::fs::write(mark.with_extension("go"), "").unwrap();
    let calls = serde_json::json!([{"tool": "sleep-ms", "arguments": {"input": ms.to_string()}}]);
    let mut args: Vec<String> = ["--url", url, "--calls", &calls.to_string(), "--checkpoint"]
        .map(str::to_owned)
        .into();
    args.push(mark.to_str().unwrap().to_owned());
    if let Some(token) = token {
        args.extend(["--token".to_owned(), token.to_owned()]);
    }
    let caller = std::thread::spawn(move || {
        let _dir = dir;
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        client(&args)
    });
    reached(&mark);
    std::thread::sleep(Duration::from_millis(500));
    caller
}

/// Whether the tools a client was listed include `name`.
pub fn listed(report: &Value, name: &str) -> bool {
    let tools = report["tools"].as_array();
    tools.is_some_and(|tools| tools.iter().any(|t| t["name"] == name))
}

/// The report of a client run that must succeed.
pub fn served(args: &[&str]) -> Value {
    let (report, status) = client(args);
    assert_eq!(status, 0, "{report}");
    report
}

/// A private token file in `dir` and its token.
pub fn token_file(dir: &Path) -> (PathBuf, String) {
    let token = "0123456789abcdef".repeat(4);
    let file = dir.join("token");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    (file, token)
}

/// What one raw HTTP/1.1 exchange answered.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

/// Sends `request` (a whole HTTP/1.1 request, `Connection: close`) to
/// `port` and reads the answer (at most 10 s).
pub fn raw(port: u16, request: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Answer {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

/// A POST of `body` to /mcp with `headers` (each a whole header line).
pub fn post(port: u16, headers: &[&str], body: &str) -> Answer {
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body);
    raw(port, request.as_bytes())
}

/// An `initialize` request body.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// The calls of a client that must still be served: the probe's echo.
pub fn still_served(url: &str, token: Option<&str>) {
    let calls = r#"[{"tool": "probe.echo", "arguments": {"n": 1}}]"#;
    let mut args = vec!["--url", url, "--calls", calls];
    if let Some(token) = token {
        args.extend(["--token", token]);
    }
    let report = served(&args);
    assert_eq!(report["results"][0]["text"], r#"echo:{"n":1}"#, "{report}");
}
