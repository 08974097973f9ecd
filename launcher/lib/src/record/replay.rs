//! `replay FILE -- PLUGIN…`: sends a recording's requests to a plugin, in
//! the recorded order, and diffs each response against the recorded one.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use serde_json::Value;

use lingxi_wasm_host::printable;

use super::diff::{self, Mask};
use lingxi_wasm_policy::limits::MAX_RECORDED_LINE;

/// Responses past the end of the recording shown before the replay stops.
const MAX_EXTRA: usize = 20;
/// Longest response line read: a longer one cannot match any line a
/// replayable recording holds (see [`MAX_RECORDED_LINE`]).
const MAX_RESPONSE: usize = MAX_RECORDED_LINE;
/// Responses read ahead of the comparison: with [`MAX_RESPONSE`], what a
/// flooding plugin can make the replay hold.
const READ_AHEAD: usize = 2;
/// Largest recording read.
const MAX_RECORDING: u64 = 1 << 30;
/// Largest recorded latency taken as one (ms): about 11 days.
const MAX_MS: f64 = 1e9;
/// Longest line compared as JSON (with masks, base64 results decoded); a
/// longer one is compared byte for byte. JSON values take many times their
/// text in memory.
const MAX_STRUCTURAL: usize = 8 * 1024 * 1024;

/// What `replay` is asked to do.
pub struct ReplayArgs {
    /// The recording (or conformance transcript).
    pub file: PathBuf,
    /// The plugin command; empty: the one the recording names.
    pub plugin: Vec<String>,
    /// Mask rules from flags (the recording's own `mask` list applies too).
    pub masks: Vec<String>,
    /// How long to wait for each response.
    pub timeout: Duration,
}

/// One step of a transcript.
enum Step {
    Send {
        line: Vec<u8>,
        partial: bool,
    },
    /// A recorded response (exact match), with its recorded latency.
    Recv {
        line: String,
        ms: Option<f64>,
    },
    /// A conformance expectation (structural match), on the raw or the
    /// base64-decoded response.
    Expect {
        value: Value,
        decode: bool,
    },
}

/// The requests a recording (or a conformance transcript) sends, in order:
/// what `learn --replay` runs again.
pub fn requests(file: &Path) -> Result<Vec<Vec<u8>>> {
    let text = read_recording(file)?;
    let (_, steps) = parse(&text, file)?;
    Ok(steps
        .into_iter()
        .filter_map(|(_, step)| match step {
            Step::Send { line, .. } => Some(line),
            _ => None,
        })
        .collect())
}

/// Replays and prints the differences; `Ok(false)` when a response differed.
pub fn replay(args: ReplayArgs) -> Result<bool> {
    let text = read_recording(&args.file)?;
    let (header, steps) = parse(&text, &args.file)?;
    drop(text);
    let expected = steps
        .iter()
        .filter(|(_, step)| !matches!(step, Step::Send { .. }))
        .count();
    let mut masks = Vec::new();
    let header_masks = header["mask"].as_array().into_iter().flatten();
    for rule in header_masks
        .filter_map(Value::as_str)
        .chain(args.masks.iter().map(String::as_str))
    {
        masks.push(Mask::parse(rule).map_err(|e| anyhow::anyhow!("--mask {rule:?}: {e}"))?);
    }
    // A recording is data: the command it names is shown, never run (a
    // shared recording could name any command).
    if args.plugin.is_empty() {
        let recorded = header["recorded"]["command"]
            .as_array()
            .map(|c| {
                c.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .filter(|c| !c.is_empty());
        match recorded {
            Some(command) => bail!(
                "give the plugin to replay against after `--`; this recording was made with: {}",
                printable(&command)
            ),
            None => bail!("give the plugin to replay against after `--`"),
        }
    }
    let plugin = args.plugin;
    let mut child = super::plugin_command(&plugin)?
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {}", plugin.join(" ")))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        bail!("cannot connect to {}", plugin.join(" "));
    };
    let responses = read_lines(stdout);
    let requests_out = write_lines(stdin);
    println!(
        "replaying {} against {}",
        printable(&args.file.display().to_string()),
        printable(&plugin.join(" "))
    );

    let mut sent: HashMap<String, (Instant, String)> = HashMap::new();
    let (mut requests, mut compared, mut differing, mut extra) = (0, 0, 0, 0);
    let mut latencies: (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    let mut stopped = None;
    for (n, step) in steps {
        match step {
            Step::Send { line, partial } => {
                requests += 1;
                if let Some(id) = super::request_id(&line) {
                    let method = serde_json::from_slice::<Value>(&line)
                        .ok()
                        .and_then(|v| v["method"].as_str().map(str::to_owned))
                        .unwrap_or_default();
                    sent.insert(id, (Instant::now(), method));
                }
                // Written by another thread: a plugin that does not read
                // cannot hold the replay past its response timeout.
                if requests_out.send((line, partial)).is_err() {
                    stopped = Some(format!("line {n}: the plugin stopped reading requests"));
                    break;
                }
            }
            Step::Recv { .. } | Step::Expect { .. } => {
                let got = match responses.recv_timeout(args.timeout) {
                    Ok(Ok(line)) => line,
                    Ok(Err(e)) => {
                        stopped = Some(format!("line {n}: cannot read the response ({e})"));
                        break;
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        stopped = Some(format!(
                            "line {n}: no response within {:?} (raise it with --timeout SECONDS)",
                            args.timeout
                        ));
                        break;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        stopped = Some(format!("line {n}: the plugin exited before answering"));
                        break;
                    }
                };
                compared += 1;
                let mut now = if got.len() > MAX_STRUCTURAL {
                    Value::Null
                } else {
                    diff::normalize(&got)
                };
                let context = now
                    .get("id")
                    .map(|id| id.to_string())
                    .and_then(|id| sent.remove(&id).map(|(at, method)| (id, at, method)));
                let problems = match &step {
                    Step::Recv { line, ms } => {
                        if let (Some(ms), Some((_, at, _))) = (ms, &context) {
                            latencies.0.push(*ms);
                            latencies.1.push(at.elapsed().as_secs_f64() * 1e3);
                        }
                        if line.len().max(got.len()) > MAX_STRUCTURAL {
                            byte_for_byte(line, &got)
                        } else {
                            let mut recorded = diff::normalize(line);
                            diff::apply(&masks, &mut recorded);
                            diff::apply(&masks, &mut now);
                            diff::diff(&recorded, &now)
                        }
                    }
                    Step::Expect { .. } if got.len() > MAX_STRUCTURAL => vec![format!(
                        "/: a response of {} bytes, more than {MAX_STRUCTURAL} compared as JSON",
                        got.len()
                    )],
                    Step::Expect { value, decode } => {
                        let mut raw =
                            serde_json::from_str::<Value>(&got).unwrap_or(Value::from(got.clone()));
                        if *decode {
                            diff::decode_result(&mut raw);
                        }
                        diff::unmet(value, &raw)
                    }
                    Step::Send { .. } => Vec::new(),
                };
                if !problems.is_empty() {
                    differing += 1;
                    // Recorded and plugin text is shown through
                    // `printable`: no escape sequence reaches the terminal.
                    let about = match &context {
                        Some((id, _, method)) if !method.is_empty() => {
                            format!("response to {id} ({})", printable(method))
                        }
                        Some((id, _, _)) => format!("response to {id}"),
                        None => "response".to_owned(),
                    };
                    println!("line {n}, {about}: differs");
                    for line in problems {
                        println!("  {}", printable(&line));
                    }
                }
            }
        }
    }
    // Nothing more may come: every response the plugin sends from here on
    // was not in the recording (the writer closes stdin once it is done).
    drop(requests_out);
    if stopped.is_none() {
        // A plugin that keeps talking cannot keep the replay going: the
        // first responses past the recording are shown, then it stops.
        while let Ok(Ok(line)) = responses.recv_timeout(args.timeout) {
            extra += 1;
            if extra > MAX_EXTRA {
                println!("… more responses not in the recording; the replay stops here");
                break;
            }
            println!("after the last line: a response that is not in the recording");
            let start: String = line.chars().take(200).collect();
            println!("  {}", printable(&start));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    if let Some(reason) = &stopped {
        println!("stopped early: {reason}");
    }
    let verdict = match (differing, &stopped) {
        (0, None) => "all match".to_owned(),
        (0, Some(_)) => format!(
            "{} of {expected} recorded responses missing",
            expected - compared
        ),
        (1, _) => "1 differs".to_owned(),
        (n, _) => format!("{n} differ"),
    };
    println!("{requests} requests sent, {compared} responses compared: {verdict}");
    if extra > 0 {
        println!("{extra} response(s) the recording does not have");
    }
    if !latencies.0.is_empty() {
        println!(
            "median latency: recorded {:.3} ms, now {:.3} ms",
            median(&mut latencies.0),
            median(&mut latencies.1)
        );
    }
    Ok(differing == 0 && extra == 0 && stopped.is_none())
}

/// One line of a transcript, as far as `replay` reads it: values it does
/// not need are skipped without being built (a hostile line of a million
/// tiny values would otherwise take ~30 times its size in memory).
#[derive(serde::Deserialize)]
struct Line {
    send: Option<String>,
    #[serde(rename = "sendBase64")]
    send_base64: Option<String>,
    recv: Option<String>,
    #[serde(rename = "recvBase64")]
    recv_base64: Option<String>,
    expect: Option<serde::de::IgnoredAny>,
    #[serde(rename = "expectInner")]
    expect_inner: Option<serde::de::IgnoredAny>,
    stderr: Option<serde::de::IgnoredAny>,
    exit: Option<serde::de::IgnoredAny>,
    grants: Option<serde::de::IgnoredAny>,
    truncated: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    partial: bool,
    /// The recorded latency of a response.
    ms: Option<f64>,
}

/// The header and the steps of a transcript; `stderr`, `exit` and timing
/// fields are not compared.
/// Each step comes with its line number in the file.
fn parse(text: &str, file: &Path) -> Result<(Value, Vec<(usize, Step)>)> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines
        .next()
        .with_context(|| format!("{} is empty", file.display()))?;
    if first.len() > MAX_STRUCTURAL {
        bail!(
            "{}:1: a header of {} bytes; a header is small",
            file.display(),
            first.len()
        );
    }
    let header: Value = serde_json::from_str(first)
        .with_context(|| format!("{}:1: the header is not JSON", file.display()))?;
    let mut steps = Vec::new();
    for (i, line) in lines {
        let at = || format!("{}:{}", file.display(), i + 1);
        // A request of the longest recorded line, base64-encoded.
        if line.len() > MAX_RECORDED_LINE / 3 * 4 + 4096 {
            bail!(
                "{}: a line of {} bytes, longer than a recording holds ({MAX_RECORDED_LINE} bytes a line)",
                at(),
                line.len()
            );
        }
        let step: Line = serde_json::from_str(line).with_context(|| {
            format!(
                "{}: not a step of a recording (send, recv, expect, expectInner, stderr, exit, grants)",
                at()
            )
        })?;
        let b64 = |v: &Option<String>| {
            v.as_deref()
                .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
        };
        let partial = step.partial;
        if step.truncated.is_some() {
            bail!(
                "{}: this line was too long to record whole; it cannot be replayed",
                at()
            );
        }
        // A latency outside 0 ms to ~11 days is not one.
        let ms = step.ms.filter(|ms| (0.0..=MAX_MS).contains(ms));
        if let Some(line) = step.send {
            if line.len() > MAX_RECORDED_LINE {
                bail!(
                    "{}: a request longer than a recording holds ({MAX_RECORDED_LINE} bytes)",
                    at()
                );
            }
            steps.push((
                i + 1,
                Step::Send {
                    line: line.into_bytes(),
                    partial,
                },
            ));
        } else if let Some(line) = b64(&step.send_base64) {
            steps.push((i + 1, Step::Send { line, partial }));
        } else if let Some(recorded) = step.recv {
            steps.push((i + 1, Step::Recv { ms, line: recorded }));
        } else if let Some(recorded) = b64(&step.recv_base64) {
            let recorded = String::from_utf8_lossy(&recorded).into_owned();
            steps.push((i + 1, Step::Recv { ms, line: recorded }));
        } else if step.expect.is_some() || step.expect_inner.is_some() {
            if line.len() > MAX_STRUCTURAL {
                bail!(
                    "{}: an expectation of {} bytes, more than {MAX_STRUCTURAL}",
                    at(),
                    line.len()
                );
            }
            let mut value: Value =
                serde_json::from_str(line).with_context(|| format!("{}: not JSON", at()))?;
            let decode = step.expect.is_none();
            let key = if decode { "expectInner" } else { "expect" };
            let value = value.get_mut(key).map(Value::take).unwrap_or_default();
            steps.push((i + 1, Step::Expect { value, decode }));
        } else if step.stderr.is_none() && step.exit.is_none() && step.grants.is_none() {
            bail!(
                "{}: not a step of a recording (send, recv, expect, expectInner, stderr, exit, grants)",
                at()
            );
        }
    }
    Ok((header, steps))
}

/// The recording's text: a regular file (a FIFO or a device is never
/// read) of at most [`MAX_RECORDING`] bytes.
pub(super) fn read_recording(file: &Path) -> Result<String> {
    let meta =
        std::fs::metadata(file).with_context(|| format!("cannot read {}", file.display()))?;
    if !meta.is_file() {
        bail!(
            "{} is not a regular file; give a recording (.jsonl)",
            file.display()
        );
    }
    if meta.len() > MAX_RECORDING {
        bail!(
            "{} is larger than {MAX_RECORDING} bytes; replay a shorter recording",
            file.display()
        );
    }
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| f.take(MAX_RECORDING + 1).read_to_end(&mut bytes))
        .with_context(|| format!("cannot read {}", file.display()))?;
    if bytes.len() as u64 > MAX_RECORDING {
        bail!(
            "{} is larger than {MAX_RECORDING} bytes; replay a shorter recording",
            file.display()
        );
    }
    String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8 text", file.display()))
}

/// Writes each request (a line, and whether it is a last line without a
/// newline, which ends the input) to the plugin's stdin, from a thread of
/// its own. The sender fails once the plugin stops reading; dropping it
/// closes stdin.
fn write_lines(stdin: impl Write + Send + 'static) -> mpsc::Sender<(Vec<u8>, bool)> {
    let (tx, rx) = mpsc::channel::<(Vec<u8>, bool)>();
    std::thread::spawn(move || {
        let mut stdin = stdin;
        for (line, partial) in rx {
            let written = stdin
                .write_all(&line)
                .and_then(|()| {
                    if partial {
                        Ok(())
                    } else {
                        stdin.write_all(b"\n")
                    }
                })
                .and_then(|()| stdin.flush());
            if written.is_err() || partial {
                break;
            }
        }
    });
    tx
}

/// The plugin's stdout, line by line, on a channel (so waits can time out).
fn read_lines(stdout: impl Read + Send + 'static) -> mpsc::Receiver<std::io::Result<String>> {
    // Bounded: a plugin that floods stdout waits for the replay to read.
    let (tx, rx) = mpsc::sync_channel(READ_AHEAD);
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut line = Vec::new();
            match (&mut reader)
                .take(MAX_RESPONSE as u64 + 1)
                .read_until(b'\n', &mut line)
            {
                Ok(0) => break,
                Ok(_) => {
                    if line.last() == Some(&b'\n') {
                        line.pop();
                    } else if line.len() > MAX_RESPONSE {
                        let _ = tx.send(Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            format!("a response line longer than {MAX_RESPONSE} bytes, more than a recording holds"),
                        )));
                        break;
                    }
                    if tx
                        .send(Ok(String::from_utf8_lossy(&line).into_owned()))
                        .is_err()
                    {
                        break;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e));
                    break;
                }
            }
        }
    });
    rx
}

/// Lines too long to compare as JSON: equal or not, as bytes (masks do
/// not apply).
fn byte_for_byte(recorded: &str, now: &str) -> Vec<String> {
    if recorded == now {
        return Vec::new();
    }
    vec![format!(
        "/: the lines ({} and {} bytes, more than {MAX_STRUCTURAL} compared as JSON) differ byte for byte",
        recorded.len(),
        now.len()
    )]
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}
