//! `record --out FILE -- PLUGIN…`: runs any plugin between a LingXi host and
//! itself, passes every byte through unchanged, and records the lines.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use super::{Dir, Lines, Recorder, SharedRecorder};

/// The command that runs `plugin`: a component (a file that starts with the
/// wasm magic) runs under this launcher with `args`; anything else (a packed
/// plugin, a native plugin, a name on PATH) runs as it is.
pub fn plugin_command(plugin: &[String]) -> Result<Command> {
    let Some((program, args)) = plugin.split_first() else {
        bail!(
            "no plugin command given: put it after `--`, e.g. `-- ./my-plugin` or `-- plugin.wasm --grant projectRead`"
        );
    };
    let mut command = if is_component(Path::new(program)) {
        let mut command =
            Command::new(std::env::current_exe().context("cannot locate the running executable")?);
        command.arg(program);
        command
    } else {
        Command::new(program)
    };
    command.args(args);
    Ok(command)
}

fn is_component(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == *b"\0asm"
}

/// Runs `plugin` with our stdin, stdout and stderr passed through, records
/// the session into `out`, and returns the plugin's exit code.
pub fn record(out: &Path, plugin: &[String]) -> Result<i32> {
    let mut command = plugin_command(plugin)?;
    let file = super::create(out).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::AlreadyExists => {
                "it exists, and a recording never overwrites a file".to_owned()
            }
            _ => e.to_string(),
        };
        anyhow::anyhow!("cannot create the recording {}: {why}", out.display())
    })?;
    let recorder = Recorder::new(Box::new(file), plugin)
        .with_context(|| format!("cannot write {}", out.display()))?;
    // A plugin of this launcher passes each call's receipt through a
    // private file (see feed.rs); it lives as long as the session.
    let receipts = tempfile::NamedTempFile::new().ok();
    if let Some(receipts) = &receipts
        && let Ok(feed) = super::feed::Feed::open(receipts.path())
        && let Ok(mut r) = recorder.lock()
    {
        r.feed = Some(feed);
        command.env(super::RECEIPTS_ENV, receipts.path());
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {}", display(plugin)))?;
    let (Some(to_plugin), Some(from_plugin), Some(plugin_err)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        bail!("cannot connect to {}", display(plugin));
    };
    // Requests: our stdin to the plugin. This thread may stay blocked on
    // our stdin after the plugin exits; the process ends without it.
    let r = recorder.clone();
    std::thread::spawn(move || pump(std::io::stdin(), to_plugin, Dir::Send, &r));
    let r = recorder.clone();
    let responses = std::thread::spawn(move || pump(from_plugin, std::io::stdout(), Dir::Recv, &r));
    let r = recorder.clone();
    let logs = std::thread::spawn(move || pump(plugin_err, std::io::stderr(), Dir::Stderr, &r));
    if let Ok(Err(e)) = responses.join() {
        // The host stopped reading: nobody can get the plugin's answers.
        let _ = child.kill();
        tracing::debug!("stdout closed: {e}");
    }
    let _ = logs.join();
    let status = child.wait().context("cannot wait for the plugin")?;
    let code = exit_code(&status);
    if let Ok(mut r) = recorder.lock() {
        r.exit(status.code());
    }
    Ok(code)
}

/// Copies `from` to `to` as bytes arrive, each chunk flushed, and records
/// the lines. Ends at EOF (then closes `to`), or when writing fails.
fn pump(
    mut from: impl Read,
    mut to: impl Write,
    dir: Dir,
    recorder: &SharedRecorder,
) -> std::io::Result<()> {
    let mut lines = Lines::new(dir);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        // Recorded before it is passed on, so that a request is always in
        // the recording before its response can be.
        lines.feed(recorder, &buf[..n]);
        to.write_all(&buf[..n])?;
        to.flush()?;
    }
    lines.finish(recorder);
    Ok(())
}

/// The exit code a shell would report for `status`.
fn exit_code(status: &std::process::ExitStatus) -> i32 {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return 128 + signal;
        }
    }
    status.code().unwrap_or(1)
}

fn display(plugin: &[String]) -> String {
    plugin.join(" ")
}
