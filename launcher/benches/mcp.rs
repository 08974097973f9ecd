//! MCP throughput and latency of `examples/probe`'s echo tool, in one run:
//! 1, 16 and 64 concurrent clients, each making calls one after another,
//! against
//!
//! - one `lingxi-wasm-run mcp --http --stateless` server on loopback (a
//!   fresh sandbox session per request, as behind a load balancer);
//! - one `lingxi-wasm-run mcp --http` server with an MCP session per client
//!   (answers as event streams);
//! - over stdio, a `lingxi-wasm-run mcp` process per client (the baseline:
//!   how an MCP client runs a local server).
//!
//! The client is here: keep-alive HTTP/1.1 and newline JSON-RPC over
//! pipes, nothing else on the way. Prints calls per second and the p50 and
//! p99 latency of each, and HTTP/stdio ratios. Kinds alternate over
//! [`ROUNDS`] rounds; the median round is shown.
//! Run: `cargo bench -p lingxi-wasm-run --bench mcp`.

#[path = "../../host/benches/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// Calls per row (spread over its clients).
const CALLS: usize = 3_200;
const ROUNDS: usize = 3;
const CLIENTS: [usize; 3] = [1, 16, 64];

/// Call `id` (MCP: an id is never used twice in a session).
fn call(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"probe.echo","arguments":{{"n":1}}}}}}"#
    )
}
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A server started with `--http 127.0.0.1:0`.
struct Server(Child, u16);

impl Server {
    fn start(launcher: &Path, component: &Path, extra: &[&str]) -> Server {
        let child = Command::new(launcher)
            .arg("mcp")
            .arg(component)
            .args(["--http", "127.0.0.1:0", "--max-client-calls", "1024"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the server");
        // Dropped (killed and waited for) on every way out.
        let mut server = Server(child, 0);
        let mut stderr = BufReader::new(server.0.stderr.take().expect("stderr"));
        let mut line = String::new();
        loop {
            line.clear();
            assert!(stderr.read_line(&mut line).expect("read") > 0, "no server");
            if let Some(rest) = line.split("http://127.0.0.1:").nth(1) {
                let port = rest
                    .split('/')
                    .next()
                    .and_then(|p| p.parse().ok())
                    .expect("port");
                // Keep draining stderr so the server never blocks on it.
                std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
                server.1 = port;
                return server;
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One keep-alive HTTP/1.1 connection.
struct Http {
    stream: BufReader<TcpStream>,
    port: u16,
    session: Option<String>,
}

impl Http {
    fn connect(port: u16) -> Http {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Http {
            stream: BufReader::new(stream),
            port,
            session: None,
        }
    }

    /// POSTs `body`; the answer's body (a JSON-RPC message, or the data of
    /// its event stream).
    fn post(&mut self, body: &str) -> String {
        let session = self.session.as_ref().map_or(String::new(), |id| {
            format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n")
        });
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\r\n{body}",
            self.port,
            body.len()
        );
        self.stream
            .get_mut()
            .write_all(request.as_bytes())
            .expect("write");
        let (mut length, mut chunked) = (None, false);
        let mut line = String::new();
        loop {
            line.clear();
            self.stream.read_line(&mut line).expect("head");
            let header = line.trim_end().to_ascii_lowercase();
            if header.is_empty() {
                break;
            }
            if let Some(n) = header.strip_prefix("content-length: ") {
                length = n.parse().ok();
            }
            if header == "transfer-encoding: chunked" {
                chunked = true;
            }
            if let Some(id) = line.trim_end().strip_prefix("mcp-session-id: ") {
                self.session = Some(id.to_owned());
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.stream.read_line(&mut line).expect("chunk");
                let size = usize::from_str_radix(line.trim(), 16).expect("chunk size");
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk).expect("chunk");
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            body.resize(length.unwrap_or(0), 0);
            self.stream.read_exact(&mut body).expect("body");
        }
        String::from_utf8(body).expect("UTF-8")
    }
}

impl Drop for Http {
    /// Ends the MCP session, if there is one.
    fn drop(&mut self) {
        if let Some(id) = self.session.take() {
            let request = format!(
                "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nMcp-Session-Id: {id}\r\nConnection: close\r\n\r\n",
                self.port
            );
            let _ = self.stream.get_mut().write_all(request.as_bytes());
            let _ = self.stream.read_to_end(&mut Vec::new());
        }
    }
}

/// A stdio server with its pipes.
struct Pipe {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Pipe {
    fn start(launcher: &Path, component: &Path) -> Pipe {
        let mut child = Command::new(launcher)
            .arg("mcp")
            .arg(component)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start");
        let input = child.stdin.take().expect("stdin");
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        let mut server = Pipe {
            child,
            input,
            output,
        };
        server.send(INITIALIZE);
        server.answer();
        server.send(INITIALIZED);
        server
    }

    fn send(&mut self, line: &str) {
        self.input.write_all(line.as_bytes()).expect("write");
        self.input.write_all(b"\n").expect("write");
    }

    fn answer(&mut self) -> String {
        let mut line = String::new();
        self.output.read_line(&mut line).expect("read");
        line
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The figures of one row: calls per second, p50 and p99 latency (µs).
#[derive(Clone, Copy)]
struct Figures {
    per_second: f64,
    p50: f64,
    p99: f64,
}

/// `clients` threads, each making `CALLS / clients` calls with `call` on
/// a connection `open` made before the clock starts.
fn drive<C: Send>(
    clients: usize,
    open: impl Fn() -> C,
    call: impl Fn(&mut C, usize) -> String + Sync,
) -> Figures {
    let each = CALLS / clients;
    let connections: Vec<C> = (0..clients).map(|_| open()).collect();
    let call = &call;
    let start = Instant::now();
    let mut latencies: Vec<Duration> = std::thread::scope(|scope| {
        let threads: Vec<_> = connections
            .into_iter()
            .map(|mut connection| {
                scope.spawn(move || {
                    (0..each)
                        .map(|n| {
                            let start = Instant::now();
                            // Ids 0 and 1 open a session.
                            let answer = call(&mut connection, n + 2);
                            assert!(answer.contains(r#"echo:{\"n\":1}"#), "{answer}");
                            start.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().expect("client"))
            .collect()
    });
    let wall = start.elapsed();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    Figures {
        per_second: (each * clients) as f64 / wall.as_secs_f64(),
        p50: at(0.50),
        p99: at(0.99),
    }
}

fn main() {
    let component = common::guests(&["probe"]).join("probe.wasm");
    let launcher = Path::new(env!("CARGO_BIN_EXE_lingxi-wasm-run"));
    let stateless = Server::start(launcher, &component, &["--stateless"]);
    let sessions = Server::start(launcher, &component, &["--max-sessions", "128"]);
    println!("MCP calls of the probe's echo tool, {CALLS} a row, median of {ROUNDS} rounds");
    println!("  clients  transport             calls/s    p50 µs    p99 µs   calls/s vs stdio");
    for clients in CLIENTS {
        let mut rows: [Vec<Figures>; 3] = Default::default();
        for _ in 0..ROUNDS {
            let stdio = drive(
                clients,
                || Pipe::start(launcher, &component),
                |s, id| {
                    s.send(&call(id));
                    s.answer()
                },
            );
            let http = drive(
                clients,
                || Http::connect(stateless.1),
                |h, id| h.post(&call(id)),
            );
            let session = drive(
                clients,
                || {
                    let mut h = Http::connect(sessions.1);
                    h.post(INITIALIZE);
                    h.post(INITIALIZED);
                    h
                },
                |h, id| h.post(&call(id)),
            );
            rows[0].push(stdio);
            rows[1].push(http);
            rows[2].push(session);
        }
        let median = |row: &[Figures]| {
            let mut row = row.to_vec();
            row.sort_by(|a, b| a.per_second.total_cmp(&b.per_second));
            row[row.len() / 2]
        };
        let base = median(&rows[0]).per_second;
        for (name, row) in [
            "stdio (a process each)",
            "HTTP --stateless",
            "HTTP sessions",
        ]
        .iter()
        .zip(&rows)
        {
            let f = median(row);
            println!(
                "  {clients:>7}  {name:<22} {:>8.0}  {:>8.0}  {:>8.0}   {:.2}",
                f.per_second,
                f.p50,
                f.p99,
                f.per_second / base
            );
        }
    }
}
