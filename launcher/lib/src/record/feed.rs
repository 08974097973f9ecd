//! Receipts across a process boundary, for `record`: the proxy names a
//! private file in [`RECEIPTS_ENV`] when it starts the plugin; a plugin run
//! by this launcher (a component, or a packed plugin) appends each call's
//! receipt there, with its response's id, before it writes the response.
//! So when the proxy sees a response, its receipt is already in the file,
//! and the recording keeps it with the response. Any other plugin ignores
//! the variable (nothing is recorded for it), and the plugin itself never
//! sees it (its environment is only what `--env` passes).

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use lingxi_wasm_host::{Receipt, ReceiptSink};
use serde_json::{Value, json};

/// The environment variable naming the file receipts are appended to.
pub const RECEIPTS_ENV: &str = "LINGXI_WASM_RECEIPTS";

/// Unmatched receipts kept at most (a plugin decides how many it writes).
const MAX_WAITING: usize = 1024;

/// The sink a serving launcher hands receipts to when [`RECEIPTS_ENV`]
/// names a file that exists (it is never created here). The session's
/// `grants` ([`super::grants::written`]) go first, for the recording.
pub fn receipts_file(grants: &Value) -> Option<ReceiptSink> {
    let path = std::env::var_os(RECEIPTS_ENV)?;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .map_err(|e| {
            tracing::warn!(
                "receipts are not passed to the recording: cannot open {} ({e})",
                Path::new(&path).display()
            )
        })
        .ok()?;
    let mut first = json!({ "grants": grants }).to_string();
    first.push('\n');
    let _ = file.write_all(first.as_bytes());
    Some(Box::new(move |id: Option<&Value>, receipt: &Receipt| {
        let mut line = json!({"id": id, "receipt": receipt}).to_string();
        line.push('\n');
        // One write per line; a failed one only loses this receipt.
        let _ = file.write_all(line.as_bytes());
    }))
}

/// The proxy's side: the receipts written so far, by response id.
#[derive(Debug)]
pub(super) struct Feed {
    file: File,
    pending: Vec<u8>,
    waiting: HashMap<String, Value>,
    /// The session's grants, once read (taken by the recorder).
    pub(super) grants: Option<Value>,
}

impl Feed {
    /// Reads what the plugin appends to `path`.
    pub(super) fn open(path: &Path) -> std::io::Result<Feed> {
        Ok(Feed {
            file: File::open(path)?,
            pending: Vec::new(),
            waiting: HashMap::new(),
            grants: None,
        })
    }

    /// The receipt of the response with `id` (JSON text), if it came.
    pub(super) fn take(&mut self, id: &str) -> Option<Value> {
        let mut more = Vec::new();
        let _ = self.file.read_to_end(&mut more);
        self.pending.extend_from_slice(&more);
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let Ok(mut entry) = serde_json::from_slice::<Value>(&line) else {
                continue;
            };
            if entry.get("grants").is_some() {
                self.grants.get_or_insert(entry["grants"].take());
                continue;
            }
            if self.waiting.len() >= MAX_WAITING {
                self.waiting.clear();
            }
            let key = entry["id"].to_string();
            self.waiting.insert(key, entry["receipt"].take());
        }
        self.waiting.remove(id)
    }
}
