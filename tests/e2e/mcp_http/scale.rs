//! Scale-out with parts users already run: two `--stateless` servers
//! behind Debian's nginx (started here on loopback, in the foreground, with
//! a configuration of its own), driven by the official MCP Python SDK. The
//! calls are spread over both; one server is killed mid-run and the calls
//! after go through the other; none is lost or answered twice.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Server, client};
use crate::support::{guest, workspace_root};

/// nginx, unpacked by scripts/toolchains when the system has none.
fn nginx() -> PathBuf {
    let root = workspace_root();
    let status = Command::new(root.join("scripts/toolchains"))
        .arg("nginx")
        .status()
        .expect("cannot run scripts/toolchains");
    assert!(status.success(), "scripts/toolchains nginx failed");
    root.join("target/toolchains/nginx/nginx")
}

/// A free port on loopback (free now; nginx binds it right after).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// nginx balancing `upstreams` on `port`, logging each request's upstream
/// attempts to `dir/access.log`; killed on drop.
struct Balancer(Child);

impl Balancer {
    fn start(dir: &Path, port: u16, upstreams: &[u16]) -> Balancer {
        let servers: String = upstreams
            .iter()
            .map(|p| format!("server 127.0.0.1:{p} max_fails=1 fail_timeout=60s;\n"))
            .collect();
        let d = dir.display();
        let conf = format!(
            r#"daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 256; }}
http {{
  log_format attempts '$request_method $status "$upstream_addr" "$upstream_status"';
  access_log {d}/access.log attempts;
  client_body_temp_path {d}/body;
  proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi;
  scgi_temp_path {d}/scgi;
  upstream mcp {{
    {servers}
  }}
  server {{
    listen 127.0.0.1:{port};
    location /mcp {{
      proxy_pass http://mcp;
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_next_upstream error timeout;
      proxy_connect_timeout 2s;
      proxy_read_timeout 60s;
    }}
  }}
}}
"#
        );
        let file = dir.join("nginx.conf");
        std::fs::write(&file, conf).unwrap();
        let child = Command::new(nginx())
            .args(["-e", &format!("{d}/error.log"), "-p"])
            .arg(dir)
            .arg("-c")
            .arg(&file)
            .stdout(Stdio::null())
            .spawn()
            .expect("cannot start nginx");
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "nginx did not start: {log}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Balancer(child)
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn two_stateless_servers_behind_nginx_keep_serving_when_one_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let probe = guest("probe");
    let mut a = Server::launcher(&probe, &["--stateless"]);
    let b = Server::launcher(&probe, &["--stateless"]);
    let port = free_port();
    let _nginx = Balancer::start(dir.path(), port, &[a.port, b.port]);
    let url = format!("http://127.0.0.1:{port}/mcp");

    let total = 40;
    let calls: Vec<_> = (0..total)
        .map(|seq| json!({"tool": "probe.echo", "arguments": {"seq": seq}}))
        .collect();
    let calls = json!(calls).to_string();
    let mark = dir.path().join("mark");
    let checkpoint = mark.to_str().unwrap().to_owned();
    let driver = std::thread::spawn(move || {
        let args = [
            "--url",
            &url,
            "--modern",
            "--calls",
            &calls,
            "--checkpoint",
            &checkpoint,
            "--checkpoint-after",
            "20",
        ];
        client(&args)
    });
    super::reached(&mark);
    let log = dir.path().join("access.log");
    let before = std::fs::read_to_string(&log).unwrap();
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    std::fs::write(mark.with_extension("go"), "").unwrap();
    let (report, status) = driver.join().unwrap();
    assert_eq!(status, 0, "{report}");

    // Every call answered once, with its own answer, in order.
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), total, "{report}");
    for (seq, result) in results.iter().enumerate() {
        assert_eq!(result["isError"], false, "call {seq}: {report}");
        assert_eq!(
            result["text"],
            format!(r#"echo:{{"seq":{seq}}}"#),
            "{report}"
        );
    }
    // Spread over both before the kill; only the survivor answered after.
    let answered_by = |text: &str, port: u16| {
        text.lines()
            .filter(|l| l.starts_with("POST 200"))
            .filter(|l| answering(l) == Some(port))
            .count()
    };
    assert!(answered_by(&before, a.port) > 0, "nginx log:\n{before}");
    assert!(answered_by(&before, b.port) > 0, "nginx log:\n{before}");
    let all = std::fs::read_to_string(&log).unwrap();
    let after = &all[before.len()..];
    assert_eq!(answered_by(after, a.port), 0, "{after}");
    assert!(answered_by(after, b.port) >= total - 20, "{after}");
    // No request was answered by two servers: at most one attempt of each
    // succeeded.
    for line in all.lines() {
        let statuses = line.split('"').nth(3).unwrap_or_default();
        let successes = statuses.split(", ").filter(|s| *s == "200").count();
        assert!(successes <= 1, "answered twice: {line}");
    }
}

/// The port of the upstream that answered a logged request (its last
/// attempt), from `… "127.0.0.1:A, 127.0.0.1:B" "502, 200"`.
fn answering(line: &str) -> Option<u16> {
    let addresses = line.split('"').nth(1)?;
    let last = addresses.split(", ").last()?;
    last.rsplit(':').next()?.parse().ok()
}
