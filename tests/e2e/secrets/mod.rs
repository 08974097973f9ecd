//! Secrets end to end, against a real freedesktop Secret Service:
//! gnome-keyring-daemon on a private D-Bus session bus that
//! `scripts/keyring-serve` starts for the test (never the user's own), and
//! `secret-tool` (libsecret) as an independent client of the same keyring.
//! `flows`: `secret set`, an installed plugin spawned as LingXi spawns it
//! reading its secret and calling a local HTTP service with it, and a
//! plugin that tries every channel to let the secret out.

mod flows;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::workspace_root;

/// A Secret Service on a private bus, until dropped.
pub struct Keyring {
    child: Child,
    pub dir: tempfile::TempDir,
}

impl Keyring {
    pub fn start() -> Keyring {
        let dir = tempfile::tempdir().unwrap();
        let log = std::fs::File::create(dir.path().join("log")).unwrap();
        let mut child = Command::new(workspace_root().join("scripts/keyring-serve"))
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("scripts/keyring-serve runs");
        let deadline = Instant::now() + Duration::from_secs(120);
        while !dir.path().join("ready").exists() {
            if let Ok(Some(status)) = child.try_wait() {
                let log = std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
                panic!("the Secret Service ended ({status}) before it served:\n{log}");
            }
            assert!(
                Instant::now() < deadline,
                "the Secret Service did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Keyring { child, dir }
    }

    /// The desktop session's runtime folder: its `bus` is the session bus.
    pub fn runtime_dir(&self) -> PathBuf {
        self.dir.path().join("xdg")
    }

    /// `secret-tool lookup ATTR VALUE…`, the independent client: what it
    /// prints.
    pub fn lookup(&self, attributes: &[&str]) -> String {
        let bus = format!("unix:path={}", self.runtime_dir().join("bus").display());
        let out = Command::new("secret-tool")
            .arg("lookup")
            .args(attributes)
            .env("DBUS_SESSION_BUS_ADDRESS", bus)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Keyring {
    fn drop(&mut self) {
        // The script ends both daemons on TERM.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

/// A plain HTTP service on loopback that answers 200 to every request and
/// keeps each request's text (head and body).
pub struct Service {
    pub port: u16,
    pub seen: Arc<Mutex<Vec<String>>>,
}

impl Service {
    pub fn start() -> Service {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(&stream);
                let mut text = String::new();
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = n.trim().parse().unwrap_or(0);
                    }
                    text.push_str(&line);
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                text.push_str(&String::from_utf8_lossy(&body));
                kept.lock().unwrap().push(text);
                let _ = (&stream).write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                );
            }
        });
        Service { port, seen }
    }
}

/// Whether `path`'s bytes, or any file's under it, hold `needle`.
pub fn holds(path: &Path, needle: &str) -> bool {
    if path.is_dir() {
        return std::fs::read_dir(path)
            .unwrap()
            .flatten()
            .any(|entry| holds(&entry.path(), needle));
    }
    let bytes = std::fs::read(path).unwrap_or_default();
    bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}
