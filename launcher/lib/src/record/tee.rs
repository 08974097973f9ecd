//! A plugin that records its own sessions (`install --record DIR`): the
//! request reader and the response writer of the protocol loop, teed into
//! a recording. What is recorded is exactly what was read and written.

use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};

use super::{Dir, Lines, Recorder, SharedRecorder};

/// The file a session of plugin `id` is recorded into: a new one in `dir`,
/// named after the plugin, the time and the process.
pub fn session_file(dir: &Path, id: &str) -> PathBuf {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    dir.join(format!("{id}-{secs}-{}.jsonl", std::process::id()))
}

/// An open recording of this process's own session.
pub struct Tee {
    recorder: SharedRecorder,
}

impl Tee {
    /// Starts recording a session of plugin `id`, served under `grants`
    /// ([`super::grants_written`]), into a new file in `dir`. A recording
    /// that cannot start is logged, and the session runs without it:
    /// recording never stops a plugin from serving.
    pub fn start(dir: &Path, id: &str, grants: serde_json::Value) -> Option<Tee> {
        let path = session_file(dir, id);
        // Checked again at every start: the folder may have changed since
        // `install` checked it.
        let file = super::create_folder(dir)
            .and_then(|()| crate::private::check(dir).map_err(std::io::Error::other))
            .and_then(|_| super::create(&path));
        let command: Vec<String> = std::env::current_exe()
            .map(|exe| vec![exe.display().to_string()])
            .unwrap_or_default();
        match file.and_then(|f| Recorder::new(Box::new(f), &command)) {
            Ok(recorder) => {
                if let Ok(mut r) = recorder.lock() {
                    r.grants(grants);
                }
                Some(Tee { recorder })
            }
            Err(e) => {
                tracing::warn!(
                    "[{id}] not recording this session: cannot write {} ({e}); reinstall with another --record DIR",
                    path.display()
                );
                None
            }
        }
    }

    /// `input` and `output`, recorded.
    pub fn wrap<R: BufRead, W: Write>(&self, input: R, output: W) -> (Reader<R>, Writer<W>) {
        (
            Reader {
                inner: input,
                lines: Lines::new(Dir::Send),
                recorder: self.recorder.clone(),
            },
            Writer {
                inner: output,
                lines: Lines::new(Dir::Recv),
                recorder: self.recorder.clone(),
            },
        )
    }

    /// Where the server hands each call's receipt: kept with its response.
    pub fn receipts(&self) -> lingxi_wasm_host::ReceiptSink {
        let recorder = self.recorder.clone();
        Box::new(move |_id, receipt| {
            if let Ok(mut r) = recorder.lock() {
                r.receipt(receipt);
            }
        })
    }

    /// Records the end of the session.
    pub fn finish(self, code: i32) {
        if let Ok(mut r) = self.recorder.lock() {
            r.exit(Some(code));
        }
    }
}

/// The request side of a [`Tee`].
pub struct Reader<R> {
    inner: R,
    lines: Lines,
    recorder: SharedRecorder,
}

impl<R: BufRead> Read for Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Reader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let available = self.inner.fill_buf()?;
        if available.is_empty() {
            self.lines.finish(&self.recorder);
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        // The bytes being consumed are still in the inner buffer (a
        // `fill_buf` after one that returned them does no I/O).
        if let Ok(available) = self.inner.fill_buf() {
            let n = amount.min(available.len());
            self.lines.feed(&self.recorder, &available[..n]);
        }
        self.inner.consume(amount);
    }
}

/// The response side of a [`Tee`].
pub struct Writer<W> {
    inner: W,
    lines: Lines,
    recorder: SharedRecorder,
}

impl<W: Write> Write for Writer<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.lines.feed(&self.recorder, &buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_teed_session_records_what_was_read_and_written() {
        let dir = tempfile::tempdir().unwrap();
        let tee = Tee::start(dir.path(), "com.example.p", serde_json::json!({})).unwrap();
        let input: &[u8] = b"{\"id\":\"1\",\"method\":\"m\"}\n\nlast";
        let mut out = Vec::new();
        {
            let (mut r, mut w) = tee.wrap(input, &mut out);
            let mut line = String::new();
            while r.read_line(&mut line).unwrap() > 0 {
                line.clear();
            }
            w.write_all(b"{\"id\":\"1\",\"result\":\"\"}\n").unwrap();
        }
        tee.finish(0);
        assert_eq!(out, b"{\"id\":\"1\",\"result\":\"\"}\n");
        let file = std::fs::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        assert!(
            file.file_name()
                .to_string_lossy()
                .starts_with("com.example.p-")
        );
        let text = std::fs::read_to_string(file.path()).unwrap();
        let events: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(events[0]["recorded"]["command"].is_array(), "{text}");
        // What the session was granted comes first (here: nothing given).
        assert!(events[1].get("grants").is_some(), "{text}");
        assert_eq!(events[2]["send"], "{\"id\":\"1\",\"method\":\"m\"}");
        assert_eq!(events[3]["send"], "");
        assert_eq!(events[4]["send"], "last");
        assert_eq!(events[4]["partial"], true);
        assert_eq!(events[5]["recv"], "{\"id\":\"1\",\"result\":\"\"}");
        assert!(events[5]["ms"].is_number(), "{text}");
        assert_eq!(events[6]["exit"], 0);
    }
}
