//! What every launcher binary shares: logging, the protocol loop on
//! stdin/stdout (optionally recorded), and how failed calls are worded.
//! `lingxi-wasm-run` and the runtime-only `lingxi-wasm-rt` both use it.

use std::io::{self, BufWriter, IsTerminal};
use std::sync::{Arc, Mutex, OnceLock};

use tracing_appender::non_blocking::{NonBlocking, WorkerGuard};

use anyhow::{Context, Result, bail};
use lingxi_wasm_host::pack::Packed;
use lingxi_wasm_host::{PluginComponent, PluginHost, PolicySpec, Runtime, Server, printable};

use crate::{logfmt, record};

/// Points stdout at /dev/null (`NUL` on Windows) once everything meant for
/// it was written:
/// tracing-appender's guard `println!`s when its worker does not take the
/// shutdown signal in time (stderr pipe full at exit), which would put a
/// line that is not a response on a LingXi host's protocol channel.
pub fn silence_stdout() {
    use std::io::Write;
    let _ = io::stdout().flush();
    #[cfg(unix)]
    // SAFETY: plain file-descriptor calls; fd 1 is replaced atomically by
    // dup2 and nothing of ours writes to stdout after this point.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, libc::STDOUT_FILENO);
            libc::close(null);
        }
    }
    #[cfg(windows)]
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("NUL") {
        use std::os::windows::io::IntoRawHandle;
        use windows_sys::Win32::System::Console::{STD_OUTPUT_HANDLE, SetStdHandle};
        // SAFETY: the handle is a valid, open file handle, given over to be
        // the process's stdout for the rest of its life (never closed).
        unsafe { SetStdHandle(STD_OUTPUT_HANDLE, null.into_raw_handle()) };
    }
}

/// The error and its causes, each said once: a message that already
/// includes its cause (e.g. "cannot read x: No such file…") is not followed
/// by the cause again.
/// Plugin and file text in an error (import names, header fields) is shown
/// through [`printable`], line by line.
pub fn one_line(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    lingxi_wasm_host::printable_lines(&text).into_owned()
}

/// Logs to stderr at `info`, or as `LINGXI_WASM_LOG` says (an `EnvFilter`
/// directive such as `debug` or `lingxi_wasm=trace`). Lines are written by a
/// thread of their own: the thread that runs plugin calls and their
/// deadlines never blocks on a stderr pipe nobody reads. If that pipe stays
/// full, lines are dropped rather than waited for. The thread starts with
/// the first line (a plugin's start usually logs nothing, and a thread
/// started before the plugin's code is published makes each page
/// protection change a cross-CPU flush). The returned [`Logs`] writes out
/// what is queued when dropped.
pub fn init_logging() -> Logs {
    crate::identity::keep();
    crate::words::install();
    let writer = LazyStderr::default();
    let logs = Logs(writer.clone());
    let ansi = io::stderr().is_terminal();
    let default = tracing_subscriber::fmt::format()
        .with_target(false)
        .with_ansi(ansi)
        .without_time();
    let fmt = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(ansi)
        .event_format(logfmt::LineFormat { default });
    match std::env::var("LINGXI_WASM_LOG") {
        Ok(directives) => {
            let filter = tracing_subscriber::EnvFilter::try_new(&directives).unwrap_or_else(|e| {
                eprintln!(
                    "{}: LINGXI_WASM_LOG={directives:?} is not a log filter ({e}); \
                     logging at info. Use a level such as `debug`, or `lingxi_wasm=trace`.",
                    lingxi_wasm_policy::wording::program()
                );
                tracing_subscriber::EnvFilter::new("info")
            });
            fmt.with_env_filter(filter).init()
        }
        // The common case (and every start by LingXi): a list of targets
        // is cheaper to build than an `EnvFilter`. The MCP SDK's own
        // lines (every request it answers) are for debugging only.
        Err(_) => {
            let filter = tracing_subscriber::filter::Targets::new()
                .with_default(tracing::Level::INFO)
                .with_target("rmcp", tracing::Level::ERROR);
            use tracing_subscriber::layer::SubscriberExt;
            use tracing_subscriber::util::SubscriberInitExt;
            fmt.finish().with(filter).init()
        }
    }
    logs
}

// The queue is allocated when the first line is logged.
use lingxi_wasm_policy::limits::LOG_QUEUE_LINES;

/// The log's writer thread, once a line started it: dropping this writes
/// out what is queued (see [`init_logging`]), after a line saying how many
/// were dropped, if any were.
pub struct Logs(LazyStderr);

impl Drop for Logs {
    fn drop(&mut self) {
        let dropped = (self.0.writer.get()).map_or(0, |w| w.error_counter().dropped_lines());
        let guard = self
            .0
            .guard
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        // What is queued is written out first; the count is written after
        // it, directly: through the queue, a full one would drop it too.
        drop(guard);
        if dropped > 0 {
            eprintln!(
                " WARN {dropped} log lines were dropped: stderr was not read as fast as they came"
            );
        }
    }
}

/// Writes log lines through the writer thread, started by the first line.
#[derive(Clone, Default)]
struct LazyStderr {
    writer: Arc<OnceLock<NonBlocking>>,
    guard: Arc<Mutex<Option<WorkerGuard>>>,
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LazyStderr {
    type Writer = NonBlocking;

    fn make_writer(&'a self) -> NonBlocking {
        self.writer
            .get_or_init(|| {
                let (stderr, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
                    .lossy(true)
                    .buffered_lines_limit(LOG_QUEUE_LINES)
                    .thread_name("lingxi-wasm-log")
                    .finish(HidingStderr);
                *self.guard.lock().unwrap_or_else(|e| e.into_inner()) = Some(guard);
                stderr
            })
            .clone()
    }
}

/// Stderr, with every secret value this process read hidden in each line
/// (`crate::secrets::hidden_in_log`): each write is one formatted line.
struct HidingStderr;

impl io::Write for HidingStderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        io::stderr().write_all(crate::secrets::hidden_in_log(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

/// The single-threaded runtime every plugin call of this process runs on.
pub fn tokio() -> Result<tokio::runtime::Runtime> {
    lingxi_wasm_host::call_runtime().context("cannot start the async runtime")
}

/// For commands that print and exit: a closed pipe (`… | head`) ends the
/// process quietly, as for any Unix tool, instead of a panic in `println!`.
/// Not for serving, where a closed stdout is reported as an error.
pub fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: restores the default action of one signal before any other
    // thread of ours could be relying on it being ignored.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Serves the JSONL protocol on stdin/stdout until EOF.
pub fn serve(
    tokio: tokio::runtime::Runtime,
    component: PluginComponent,
    spec: &PolicySpec,
    record: Option<&std::path::Path>,
) -> Result<()> {
    let (mut grant, limits) = spec.resolve_from_environment()?;
    crate::secrets::load_values(&mut grant, &component.manifest().id);
    let mut host = PluginHost::new(component, grant, limits);
    host.set_validation(!spec.no_validate);
    let id = host.manifest().id.clone();
    crate::words::say_grants(&id, host.policy(), host.grant());
    let effective: Vec<_> = host
        .policy()
        .effective()
        .iter()
        .map(|c| c.wire_name())
        .collect();
    tracing::debug!("[{id}] effective capabilities: {effective:?}");

    let mut server = Server::with_runtime(host, tokio);
    let stdin = io::stdin().lock();
    let stdout = BufWriter::new(io::stdout().lock());
    let grants = record::grants_written(spec);
    let tee = record.and_then(|dir| record::Tee::start(dir, &id, grants.clone()));
    // Receipts go to the log if it takes them, to this plugin's own
    // recording and to a `record` proxy around it, whichever record.
    let mut sinks: Vec<_> = tee.iter().map(record::Tee::receipts).collect();
    sinks.extend(record::receipts_file(&grants));
    sinks.extend(crate::logfmt::receipt_logger(id.clone()));
    if !sinks.is_empty() {
        server.on_receipt(Box::new(move |id, receipt| {
            for sink in &mut sinks {
                sink(id, receipt);
            }
        }));
    }
    match tee {
        Some(tee) => {
            let (input, output) = tee.wrap(stdin, stdout);
            let served = server.serve(input, output);
            tee.finish(if served.is_ok() { 0 } else { 1 });
            served
        }
        None => server.serve(stdin, stdout),
    }
    .context("writing to stdout failed")?;
    Ok(())
}

/// A packed plugin's `mcp` and its flags.
#[derive(clap::Parser)]
#[command(
    name = "mcp",
    about = "Serve the packed plugin's tools over the Model Context Protocol: on stdin/stdout, or over streamable HTTP with --http"
)]
struct PackedMcp {
    #[command(flatten)]
    http: crate::mcp::HttpArgs,
}

/// Runs as a packed plugin. With no arguments (how LingXi spawns plugins)
/// it serves the protocol; `mcp` serves it over the Model Context Protocol
/// (how an Agent Plugins host starts it); `inspect` (as `inspect` says),
/// `--help` and `--version` still work. `base` names the executable in `--version`.
pub fn run_packed(
    packed: Packed,
    base: &str,
    inspect: impl FnOnce(&tokio::runtime::Runtime, &Packed) -> Result<()>,
) -> Result<()> {
    // Arguments are read as given (a non-UTF-8 one is an error, not a panic).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let args: Vec<&str> = args
        .iter()
        .map(|a| {
            a.to_str()
                .with_context(|| format!("argument {a:?} is not valid UTF-8; a packed plugin takes no arguments, or `mcp`, `inspect`, `--help`, `--version`"))
        })
        .collect::<Result<_>>()?;
    let header = &packed.header;
    if !args.is_empty() {
        quiet_on_closed_pipe();
    }
    let tokio = tokio()?;
    match args.as_slice() {
        [] => {
            let runtime = Runtime::new()?;
            // SAFETY: `packed` comes from `pack::read_self`: the executable
            // this process is running.
            let component =
                tokio.block_on(unsafe { runtime.load_own_packed(&packed, &header.plugin_id) })?;
            serve(tokio, component, &header.policy, header.record.as_deref())
        }
        ["mcp", ..] => {
            // `mcp --help` prints the flags and exits, as clap does.
            let parsed = <PackedMcp as clap::Parser>::try_parse_from(&args);
            let http = parsed.unwrap_or_else(|e| e.exit()).http.options()?;
            let runtime = Runtime::new()?;
            // SAFETY: as above.
            let component =
                tokio.block_on(unsafe { runtime.load_own_packed(&packed, &header.plugin_id) })?;
            let plugins = crate::mcp::Plugins::One(Box::new(component));
            crate::mcp::serve(tokio, runtime, plugins, &header.policy, http)
        }
        ["inspect"] => inspect(&tokio, &packed),
        ["--version" | "-V"] => {
            println!(
                "{base} {} (packed plugin {} {})",
                env!("CARGO_PKG_VERSION"),
                printable(&header.plugin_id),
                printable(&header.plugin_version)
            );
            Ok(())
        }
        ["--help" | "-h"] => {
            println!(
                "{id} {version}: a LingXi plugin packed by lingxi-wasm-run.\n\n\
                 Run with no arguments it speaks the LingXi JSON-Lines protocol on stdin/stdout,\n\
                 sandboxed with the grants it was packed with; a LingXi host starts it that way.\n\n\
                 Usage: {exe} [mcp | inspect | --help | --version]\n\n  \
                 mcp        serve its tools over the Model Context Protocol on stdin/stdout\n             \
                            (mcp --http ADDR:PORT: over streamable HTTP; mcp --help lists its flags)\n  \
                 inspect    {inspect}\n  \
                 --version  print versions",
                inspect = if base == "lingxi-wasm-run" {
                    "print the manifest, tools, commands, hooks and grants"
                } else {
                    "(packed on the runtime-only base: run `lingxi-wasm-run inspect FILE`)"
                },
                id = printable(&header.plugin_id),
                version = printable(&header.plugin_version),
                exe = std::env::args_os()
                    .next()
                    .map(|a| a.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            );
            Ok(())
        }
        other => bail!(
            "a packed plugin takes no arguments (got {other:?}); try `mcp`, `inspect`, `--help` or `--version`"
        ),
    }
}
