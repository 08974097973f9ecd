//! The JSONL server: reads request lines, drives one plugin through a
//! [`Session`] (the same core an embedding host uses), writes exactly one
//! response line per decodable request, in order (spec §2–§3).

use std::io::{self, BufRead, Write};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::convert;
use crate::error::CallError;
use crate::plugin::PluginHost;
use crate::protocol::wire::{self, Dialect, Request};
use crate::protocol::{dto, method, text};
use crate::set::Session;

/// Longest request line accepted, in bytes. A longer line is answered with an
/// error (when its id can be read) and skipped; it never stalls the loop.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One JSONL session with one plugin.
///
/// Requests are read and answered on the calling thread, one at a time,
/// inside a single-threaded tokio runtime owned by the server; each call
/// into the plugin is bounded by its deadline. Reading the next line happens
/// only between calls, so nothing blocks the thread while a deadline runs.
pub struct Server {
    /// The plugin's session, and the plugin's id.
    session: Session,
    plugin: String,
    /// The dialect of the last request that carried params.
    last_dialect: Dialect,
    /// Runs the calls; `None` only while being dropped.
    tokio: Option<tokio::runtime::Runtime>,
    /// How a failed call is told on the wire.
    error_text: fn(&CallError) -> String,
}

/// What handling a request produced.
type Outcome = Result<Option<Value>, String>;

impl Server {
    /// A session for `host`. Until a request carries params, answers use the
    /// Core dialect. Fails only if the runtime's timer or I/O driver cannot
    /// be created.
    pub fn new(host: PluginHost) -> io::Result<Self> {
        Ok(Server::with_runtime(host, crate::engine::call_runtime()?))
    }

    /// The same on a runtime the caller made (e.g. the one that loaded the
    /// plugin, see [`crate::call_runtime`]). It must be a current-thread
    /// runtime with time and I/O enabled.
    pub fn with_runtime(host: PluginHost, tokio: tokio::runtime::Runtime) -> Self {
        let plugin = host.manifest().id.clone();
        Server {
            session: Session::single("jsonl", host),
            plugin,
            last_dialect: Dialect::Core,
            tokio: Some(tokio),
            error_text: |error| error.to_string(),
        }
    }

    /// Words failed calls with `text` instead of their `Display` (e.g. to
    /// name the launcher's flag that raises a limit).
    pub fn with_error_text(mut self, text: fn(&CallError) -> String) -> Self {
        self.error_text = text;
        self
    }

    /// Runs `work` to completion on the server's runtime (taken out of the
    /// server meanwhile, so `work` may borrow the rest of it).
    fn block_on<T>(&mut self, work: impl AsyncFnOnce(&mut Server) -> T) -> T {
        let Some(tokio) = self.tokio.take() else {
            unreachable!("the runtime lives as long as the server")
        };
        let result = tokio.block_on(work(self));
        self.tokio = Some(tokio);
        result
    }

    /// The id of the plugin being served.
    pub fn plugin(&self) -> &str {
        &self.plugin
    }

    /// Serves until EOF on `input`, then deactivates the plugin. Each response
    /// is written as one line and flushed. Fails only if `output` fails.
    /// The whole loop runs inside the runtime; the next line is read only
    /// between calls, when no deadline is running.
    pub fn serve(&mut self, mut input: impl BufRead, mut output: impl Write) -> io::Result<()> {
        self.block_on(async |server| {
            let mut line = Vec::new();
            loop {
                line.clear();
                let read = read_line_capped(&mut input, &mut line, MAX_LINE_BYTES)?;
                if read == LineRead::Eof {
                    break;
                }
                let response = if read == LineRead::TooLong {
                    server.too_long(&line)
                } else {
                    server.answer_bytes(&line).await
                };
                if let Some(response) = response {
                    output.write_all(response.as_bytes())?;
                    output.write_all(b"\n")?;
                    output.flush()?;
                }
            }
            server.session.deactivate().await;
            Ok(())
        })
    }

    /// Handles one raw line (without its newline). `None` means no response:
    /// the line was empty, or undecodable with no recoverable id.
    pub fn handle_bytes(&mut self, line: &[u8]) -> Option<String> {
        self.block_on(async |server| server.answer_bytes(line).await)
    }

    /// Handles one line of text.
    pub fn handle_line(&mut self, line: &str) -> Option<String> {
        self.block_on(async |server| server.answer_line(line).await)
    }

    async fn answer_bytes(&mut self, line: &[u8]) -> Option<String> {
        match std::str::from_utf8(line) {
            Ok(text) => self.answer_line(text).await,
            Err(e) => {
                let text = String::from_utf8_lossy(line);
                let id = wire::decode_request(&text).ok().flatten().map(|r| r.id);
                self.undecodable(id, format!("request line is not valid UTF-8: {e}"))
            }
        }
    }

    async fn answer_line(&mut self, line: &str) -> Option<String> {
        let request = match wire::decode_request(line) {
            Ok(Some(request)) => request,
            Ok(None) => return None,
            Err(failure) => return self.undecodable(failure.id, failure.message),
        };
        let dialect = request.dialect.unwrap_or(self.last_dialect);
        if let Some(d) = request.dialect {
            self.last_dialect = d;
        }
        let id = request.id.clone();
        let response = match self.dispatch(request).await {
            Ok(result) => wire::encode_success(&id, result.as_ref(), dialect),
            Err(message) => wire::encode_error(&id, &message, dialect),
        };
        // Escaping (JSON, base64) can make a line several times longer than
        // the text the limits were checked on: the line itself is capped too.
        if response.len() > MAX_LINE_BYTES {
            let message = format!(
                "the answer is {} bytes on the wire, more than the {MAX_LINE_BYTES}-byte line limit; return less, or write large data to the workspace",
                response.len()
            );
            tracing::warn!(plugin = %self.plugin, "{message}");
            return Some(wire::encode_error(&id, &message, dialect));
        }
        Some(response)
    }

    fn undecodable(&self, id: Option<String>, message: String) -> Option<String> {
        tracing::warn!("skipping an undecodable request line: {message}");
        id.map(|id| wire::encode_error(&id, &message, self.last_dialect))
    }

    fn too_long(&self, prefix: &[u8]) -> Option<String> {
        let message = format!(
            "request line is longer than {MAX_LINE_BYTES} bytes and was skipped; send large data through the workspace instead"
        );
        // The id usually comes first: try to read it from the kept prefix.
        let text = String::from_utf8_lossy(prefix);
        let id = text
            .split_once("\"id\":\"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(id, _)| id.to_owned());
        self.undecodable(id, message)
    }

    async fn dispatch(&mut self, request: Request) -> Outcome {
        let params = request.params;
        match request.method.as_str() {
            method::SNAPSHOT => {
                let params = params.ok_or(text::SNAPSHOT_MISSING)?;
                let snapshot: dto::SnapshotDto = decode(params)?;
                self.session
                    .set_snapshot(convert::snapshot(snapshot))
                    .map_err(|e| e.to_string())?;
                Ok(None)
            }
            method::INITIALIZE => {
                let request = match params {
                    Some(params) => decode::<dto::InitializeDto>(params)?,
                    None => dto::InitializeDto::default(),
                };
                let request = convert::initialize_request(request);
                let handshake = self.session.initialize(&self.plugin, request);
                let handshake = handshake.await.map_err(|e| (self.error_text)(&e))?;
                to_value(convert::handshake(handshake))
            }
            method::TOOL_EXECUTE => {
                let params = params.ok_or(text::TOOL_MISSING)?;
                let call = convert::tool_call(decode(params)?);
                let text = self.session.execute_tool(&self.plugin, call);
                let text = text.await.map_err(|e| (self.error_text)(&e))?;
                Ok(Some(Value::String(text)))
            }
            method::COMMAND_EXECUTE => {
                let params = params.ok_or(text::COMMAND_MISSING)?;
                let call = convert::command_call(decode(params)?);
                let result = self.session.execute_command(&self.plugin, call);
                let result = result.await.map_err(|e| (self.error_text)(&e))?;
                to_value(convert::command_result(result))
            }
            method::HOOK_EMIT => {
                let params = params.ok_or(text::HOOK_MISSING)?;
                let payload: dto::HookEmitDto = decode(params)?;
                match convert::hook_payload(payload.clone()) {
                    Some(payload) => {
                        let emitted = self.session.emit_to(&self.plugin, payload);
                        emitted.await.map_err(|e| (self.error_text)(&e))?
                    }
                    // No plugin can have a handler for an event this version
                    // does not know: acknowledge it, as for any unhandled event.
                    None => tracing::debug!("acknowledging unknown hook event {}", payload.event),
                }
                Ok(None)
            }
            other => Err(text::unknown_method(other)),
        }
    }
}

fn decode<T: DeserializeOwned>(params: Value) -> Result<T, String> {
    serde_json::from_value(params).map_err(|e| e.to_string())
}

fn to_value(value: impl serde::Serialize) -> Outcome {
    serde_json::to_value(value)
        .map(Some)
        .map_err(|e| format!("cannot encode the plugin's answer: {e}"))
}

impl Drop for Server {
    /// A call stopped at its deadline may leave a thread blocked in the
    /// system (a name lookup that never answers): do not wait for it.
    fn drop(&mut self) {
        if let Some(tokio) = self.tokio.take() {
            tokio.shutdown_background();
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
enum LineRead {
    Line,
    TooLong,
    Eof,
}

/// Reads one `\n`-terminated line into `buf` (without the newline), keeping
/// at most `cap` bytes; the rest of an over-long line is consumed and dropped.
fn read_line_capped(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<LineRead> {
    let mut seen_any = false;
    let mut too_long = false;
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(match (seen_any, too_long) {
                (false, _) => LineRead::Eof,
                (true, true) => LineRead::TooLong,
                (true, false) => LineRead::Line,
            });
        }
        seen_any = true;
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        let room = cap.saturating_sub(buf.len());
        if chunk.len() > room {
            too_long = true;
        }
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let consumed = done.unwrap_or(available.len());
        input.consume(consumed);
        if done.is_some() {
            return Ok(if too_long {
                LineRead::TooLong
            } else {
                LineRead::Line
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_reader_splits_lines_and_drops_the_excess() {
        let mut input = io::Cursor::new(b"ab\n0123456789\nlast".to_vec());
        let mut buf = Vec::new();
        assert_eq!(
            read_line_capped(&mut input, &mut buf, 4).unwrap(),
            LineRead::Line
        );
        assert_eq!(buf, b"ab");
        buf.clear();
        assert_eq!(
            read_line_capped(&mut input, &mut buf, 4).unwrap(),
            LineRead::TooLong
        );
        assert_eq!(buf, b"0123");
        buf.clear();
        assert_eq!(
            read_line_capped(&mut input, &mut buf, 4).unwrap(),
            LineRead::Line
        );
        assert_eq!(buf, b"last");
        buf.clear();
        assert_eq!(
            read_line_capped(&mut input, &mut buf, 4).unwrap(),
            LineRead::Eof
        );
    }
}
