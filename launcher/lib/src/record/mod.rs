//! Recorded sessions: `record` (a transparent JSONL proxy around any
//! plugin), `replay` (the requests again, the responses diffed), and the
//! recording a packed plugin does of itself after `install --record DIR`.
//!
//! A recording is a transcript in the format of `tests/conformance/`: a
//! header line, then one JSON object per line:
//!
//! ```text
//! {"case": "...", "recorded": {"command": [...], "cwd": "...", "startedAt": 1764523200000, "by": "lingxi-wasm-run 0.1.0"}}
//! {"grants": {"grant": ["projectRead"], ...}, "t": 0.2}  what the session was granted
//! {"send": "<request line>", "t": 0.41}                  ms since the start
//! {"recv": "<response line>", "t": 1.93, "ms": 1.52}     ms since its request
//!     with "receipt" (what the call did) when the plugin is this launcher's
//!     (recording itself, or under `record`, which asks it through a file)
//! {"stderr": "<a line the plugin logged>", "t": 1.2}
//! {"exit": 0, "t": 20.7}
//! ```
//!
//! The `grants` line is there when the plugin is this launcher's: the
//! settings it served under, in policy-file keys, variables without their
//! values; `learn --replay` takes it as its ceiling.
//!
//! A line that is not UTF-8 is kept as `sendBase64` / `recvBase64`; a last
//! line without a newline has `"partial": true`. `replay` also takes the
//! conformance steps `expect` and `expectInner`.

mod diff;
mod feed;
mod grants;
mod proxy;
mod replay;
mod tee;

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::{Value, json};

pub use feed::{RECEIPTS_ENV, receipts_file};
pub use grants::{recorded_grants, written as grants_written};
pub use proxy::{plugin_command, record};
pub use replay::{ReplayArgs, replay, requests};
pub use tee::Tee;

use lingxi_wasm_policy::limits::{MAX_RECORDED_LINE, MAX_RECORDED_STDERR};

/// Which way a line went.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Dir {
    /// A request, host to plugin.
    Send,
    /// A response, plugin to host.
    Recv,
    /// A line the plugin wrote on stderr.
    Stderr,
}

/// Writes a recording, one flushed line per event, so that a session that
/// is killed still leaves every line before it.
pub struct Recorder {
    out: Box<dyn Write + Send>,
    start: Instant,
    pending: HashMap<String, Instant>,
    stderr_kept: usize,
    /// Nothing more is written: the plugin ended, or writing failed.
    failed: bool,
    /// The receipt of the call whose response is recorded next.
    receipt: Option<Value>,
    /// Receipts a recorded plugin writes, by response id (`record`).
    feed: Option<feed::Feed>,
    /// Whether the session's grants are recorded.
    granted: bool,
}

/// A recorder shared by the threads (or the reader and writer) that feed it.
pub type SharedRecorder = Arc<Mutex<Recorder>>;

impl Recorder {
    /// Starts a recording on `out` of a session run as `command`.
    pub fn new(
        mut out: Box<dyn Write + Send>,
        command: &[String],
    ) -> std::io::Result<SharedRecorder> {
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let header = json!({
            "case": format!("recorded session of {}", command.first().map(String::as_str).unwrap_or("?")),
            "recorded": {
                "command": command,
                "cwd": std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default(),
                "startedAt": started,
                "by": concat!("lingxi-wasm-run ", env!("CARGO_PKG_VERSION")),
            }
        });
        writeln!(out, "{header}")?;
        out.flush()?;
        Ok(Arc::new(Mutex::new(Recorder {
            out,
            start: Instant::now(),
            pending: HashMap::new(),
            stderr_kept: 0,
            failed: false,
            receipt: None,
            feed: None,
            granted: false,
        })))
    }

    /// Milliseconds since `since`, to the microsecond.
    fn ms(since: Instant) -> f64 {
        (since.elapsed().as_secs_f64() * 1e6).round() / 1e3
    }

    /// Records one line that went `dir`: `kept` of its `total` bytes
    /// (without the newline).
    fn line(&mut self, dir: Dir, kept: &[u8], total: usize, partial: bool) {
        if self.failed {
            return;
        }
        let now = Instant::now();
        let mut event = serde_json::Map::new();
        let key = match dir {
            Dir::Send => "send",
            Dir::Recv => "recv",
            Dir::Stderr => {
                if self.stderr_kept >= MAX_RECORDED_STDERR {
                    return;
                }
                self.stderr_kept += total;
                if self.stderr_kept >= MAX_RECORDED_STDERR {
                    event.insert("note".into(), "further stderr is not recorded".into());
                }
                "stderr"
            }
        };
        match std::str::from_utf8(kept) {
            Ok(text) => event.insert(key.into(), text.into()),
            Err(_) if dir == Dir::Stderr => {
                event.insert(key.into(), String::from_utf8_lossy(kept).into())
            }
            Err(_) => event.insert(
                format!("{key}Base64"),
                base64::engine::general_purpose::STANDARD
                    .encode(kept)
                    .into(),
            ),
        };
        if kept.len() < total {
            event.insert("truncated".into(), total.into());
        }
        if partial {
            event.insert("partial".into(), true.into());
        }
        if dir == Dir::Recv {
            let fed = || {
                let id = request_id(kept)?;
                self.feed.as_mut()?.take(&id)
            };
            let receipt = self.receipt.take().or_else(fed);
            if let Some(grants) = self.feed.as_mut().and_then(|f| f.grants.take()) {
                self.grants(grants);
            }
            if let Some(receipt) = receipt {
                event.insert("receipt".into(), receipt);
            }
        }
        event.insert("t".into(), Self::ms(self.start).into());
        match (dir, request_id(kept)) {
            (Dir::Send, Some(id)) => {
                self.pending.insert(id, now);
            }
            (Dir::Recv, Some(id)) => {
                if let Some(sent) = self.pending.remove(&id) {
                    event.insert("ms".into(), Self::ms(sent).into());
                }
            }
            _ => {}
        }
        self.write(Value::Object(event));
    }

    /// Records what the session was granted (once).
    pub fn grants(&mut self, grants: Value) {
        if !std::mem::replace(&mut self.granted, true) {
            let t = Self::ms(self.start);
            self.write(json!({"grants": grants, "t": t}));
        }
    }

    /// Keeps `receipt` with the next response recorded: what its call did.
    pub fn receipt(&mut self, receipt: &lingxi_wasm_host::Receipt) {
        self.receipt = serde_json::to_value(receipt).ok();
    }

    /// Records how the plugin ended: the last line of the recording (what
    /// other threads still pass on after it is not recorded).
    pub fn exit(&mut self, code: Option<i32>) {
        let t = Self::ms(self.start);
        self.write(json!({"exit": code, "t": t}));
        self.failed = true;
    }

    /// Writes one event as one line, in one write: a process that ends
    /// between two events never leaves half a line.
    fn write(&mut self, event: Value) {
        if self.failed {
            return;
        }
        let mut line = event.to_string().into_bytes();
        line.push(b'\n');
        if let Err(e) = self.out.write_all(&line).and_then(|()| self.out.flush()) {
            // The session goes on; only its recording stops.
            tracing::warn!("recording stopped: cannot write it ({e})");
            self.failed = true;
        }
    }
}

/// The `id` of a JSON line, as JSON text, if it has one.
fn request_id(line: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Id {
        id: Option<Value>,
    }
    serde_json::from_slice::<Id>(line)
        .ok()?
        .id
        .map(|id| id.to_string())
}

/// Cuts a byte stream into lines for a recorder; a line's bytes beyond
/// the cap (64 MiB) are counted, not kept.
pub struct Lines {
    dir: Dir,
    buf: Vec<u8>,
    total: usize,
}

impl Lines {
    /// Lines going `dir`.
    pub fn new(dir: Dir) -> Lines {
        Lines {
            dir,
            buf: Vec::new(),
            total: 0,
        }
    }

    /// Feeds bytes; every completed line goes to `recorder`.
    pub fn feed(&mut self, recorder: &SharedRecorder, mut bytes: &[u8]) {
        while let Some(i) = bytes.iter().position(|b| *b == b'\n') {
            self.take(&bytes[..i]);
            self.emit(recorder, false);
            bytes = &bytes[i + 1..];
        }
        self.take(bytes);
    }

    /// The end of the stream: an unterminated last line is recorded.
    pub fn finish(&mut self, recorder: &SharedRecorder) {
        if self.total > 0 {
            self.emit(recorder, true);
        }
    }

    fn take(&mut self, bytes: &[u8]) {
        let room = MAX_RECORDED_LINE.saturating_sub(self.buf.len());
        self.buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.total += bytes.len();
    }

    fn emit(&mut self, recorder: &SharedRecorder, partial: bool) {
        if let Ok(mut r) = recorder.lock() {
            r.line(self.dir, &self.buf, self.total, partial);
        }
        self.buf.clear();
        self.total = 0;
    }
}

/// Creates the folder recordings go into (and its parents), private to
/// the user where it is new.
pub fn create_folder(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Opens `path` for a new recording (never over an existing file), readable
/// by its owner only: requests may hold secrets.
pub fn create(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}
