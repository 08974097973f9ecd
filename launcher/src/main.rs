//! `lingxi-wasm-run`: runs a LingXi plugin component in a sandbox and speaks
//! the LingXi JSON-Lines protocol on stdin/stdout, so a LingXi host can drive
//! it like any native plugin. It also packs a component into one native
//! executable (`pack`) that runs with no arguments.

mod call;
mod check;
mod cli;
mod install;
mod logfmt;
mod new;
mod packed;
mod record;
mod sdk_files;
mod signing;

use std::io::{self, BufWriter, IsTerminal};

use anyhow::{Context, Result};
use clap::Parser;
use lingxi_wasm_host::pack;
use lingxi_wasm_host::{
    CallError, CompileCache, PluginComponent, PluginHost, PolicySpec, Runtime, Server,
};

use crate::cli::{CacheArgs, Cli, Command};

fn main() {
    let logs = init_logging();
    // A packed executable carries its plugin: serve it, whatever the name.
    let result = match pack::read_self().map_err(anyhow::Error::from) {
        Ok(Some(plugin)) => packed::run(plugin),
        // Spawned bare but nothing embedded: most likely a packed plugin
        // whose end was cut off. Say so instead of printing usage.
        // A plain launcher run bare: say how to use it.
        Ok(None) if std::env::args_os().len() == 1 && is_the_launcher() => run(Cli::parse()),
        Ok(None) if std::env::args_os().len() == 1 => Err(anyhow::anyhow!(
            "no plugin is embedded in {} and no component was given; run `lingxi-wasm-run <COMPONENT>`, or reinstall the packed plugin (its end may have been cut off)",
            std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        )),
        Ok(None) => run(Cli::parse()),
        Err(error) => Err(error),
    };
    // Writes out the logs still queued before anything else is said. The
    // guard prints to stdout if the log thread is stuck on a full stderr
    // pipe: nothing may reach the protocol channel after our last response.
    silence_stdout();
    drop(logs);
    if let Err(error) = result {
        if error.is::<check::Failed>() {
            std::process::exit(1);
        }
        if let Some(Exit(code)) = error.downcast_ref::<Exit>() {
            std::process::exit(*code);
        }
        eprintln!("lingxi-wasm-run: error: {}", one_line(&error));
        std::process::exit(1);
    }
}

/// Points stdout at /dev/null once everything meant for it was written:
/// tracing-appender's guard `println!`s when its worker does not take the
/// shutdown signal in time (stderr pipe full at exit), which would put a
/// line that is not a response on a LingXi host's protocol channel.
fn silence_stdout() {
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
}

/// The error and its causes, each said once: a message that already
/// includes its cause (e.g. "cannot read x: No such file…") is not followed
/// by the cause again.
fn one_line(error: &anyhow::Error) -> String {
    let mut text = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// Logs to stderr at `info`, or as `LINGXI_WASM_LOG` says (an `EnvFilter`
/// directive such as `debug` or `lingxi_wasm=trace`). Lines are written by a
/// thread of their own: the thread that runs plugin calls and their
/// deadlines never blocks on a stderr pipe nobody reads. If that pipe stays
/// full, lines are dropped rather than waited for. The returned guard writes
/// out what is queued when dropped.
fn init_logging() -> tracing_appender::non_blocking::WorkerGuard {
    let (stderr, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(true)
        // Queued lines are allocated up front: keep the start cheap.
        .buffered_lines_limit(1024)
        .thread_name("lingxi-wasm-log")
        .finish(io::stderr());
    let ansi = io::stderr().is_terminal();
    let default = tracing_subscriber::fmt::format()
        .with_target(false)
        .with_ansi(ansi)
        .without_time();
    let fmt = tracing_subscriber::fmt()
        .with_writer(stderr)
        .with_ansi(ansi)
        .event_format(logfmt::LineFormat { default });
    match std::env::var("LINGXI_WASM_LOG") {
        Ok(directives) => {
            let filter = tracing_subscriber::EnvFilter::try_new(&directives).unwrap_or_else(|e| {
                eprintln!(
                    "lingxi-wasm-run: LINGXI_WASM_LOG={directives:?} is not a log filter ({e}); \
                     logging at info. Use a level such as `debug`, or `lingxi_wasm=trace`."
                );
                tracing_subscriber::EnvFilter::new("info")
            });
            fmt.with_env_filter(filter).init()
        }
        // The common case (and every start by LingXi): a plain level filter
        // is cheaper to build than an `EnvFilter`.
        Err(_) => fmt.with_max_level(tracing::Level::INFO).init(),
    }
    guard
}

/// Whether this executable is named as the launcher (not as a plugin a
/// LingXi host starts, which is always named after the plugin id).
fn is_the_launcher() -> bool {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|s| s == "lingxi-wasm-run"))
        .unwrap_or(false)
}

/// The single-threaded runtime every plugin call of this process runs on.
fn tokio() -> Result<tokio::runtime::Runtime> {
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

/// Ends the process with this status, after saying what there was to say.
#[derive(Debug, thiserror::Error)]
#[error("exit status {0}")]
struct Exit(i32);

fn run(cli: Cli) -> Result<()> {
    // `record` and `replay` write to a plugin that may be gone: a closed
    // pipe must be an error they handle, not a signal that ends them.
    let proxies = matches!(
        cli.command,
        Some(Command::Record { .. } | Command::Replay { .. })
    );
    if cli.command.is_some() && !proxies {
        quiet_on_closed_pipe();
    }
    let tokio = tokio()?;
    match cli.command {
        Some(Command::Pack {
            component,
            output,
            sign,
            grants,
        }) => {
            let key = sign.as_deref().map(signing::load_secret_key).transpose()?;
            packed::pack(&tokio, &component, &output, grants.spec()?, key.as_ref())
        }
        Some(Command::Record { out, plugin }) => match record::record(&out, &plugin)? {
            0 => Ok(()),
            code => Err(Exit(code).into()),
        },
        Some(Command::Replay {
            file,
            mask,
            timeout,
            plugin,
        }) => {
            let timeout = std::time::Duration::try_from_secs_f64(timeout)
                .ok()
                .filter(|t| !t.is_zero())
                .context("--timeout takes a positive number of seconds")?;
            let args = record::ReplayArgs {
                file,
                plugin,
                masks: mask,
                timeout,
            };
            match record::replay(args) {
                Ok(true) => Ok(()),
                Ok(false) => Err(Exit(1).into()),
                Err(e) => {
                    eprintln!("lingxi-wasm-run: error: {}", one_line(&e));
                    Err(Exit(2).into())
                }
            }
        }
        Some(Command::Keygen {
            output,
            no_password,
        }) => signing::keygen(&output, no_password),
        Some(Command::Call {
            plugin,
            target,
            args,
            hook,
            json,
            grants,
            cache,
        }) => {
            let flags = grants.any().then(|| grants.spec()).transpose()?;
            let target = call::Target::parse(hook, target, args)?;
            call::call(tokio, &runtime(&cache)?, &plugin, flags, target, json)
        }
        Some(Command::Inspect { file, cache, trust }) => {
            packed::inspect(&tokio, &file, &runtime(&cache)?, &trust.load()?)
        }
        Some(Command::Check { file, json }) => check::check(&tokio, &file, json),
        Some(Command::New {
            dir,
            lang,
            id,
            name,
            sdk,
        }) => new::new(new::NewArgs {
            dir,
            lang,
            id,
            name,
            sdk,
        }),
        Some(Command::Install {
            input,
            project,
            force,
            keep_grants,
            signed_only,
            record,
            trust,
            grants,
        }) => install::install(
            &tokio,
            &input,
            install::Options {
                project: project.as_deref(),
                force,
                grants: install::Grants::choose(keep_grants, &grants)?,
                trust: trust.load()?,
                signed_only,
                record: record.as_deref(),
            },
        ),
        Some(Command::List { project, trust }) => {
            let here = std::env::current_dir().ok();
            install::list(project.as_deref().or(here.as_deref()), &trust.load()?)
        }
        Some(Command::Uninstall {
            id,
            project,
            purge,
            data_root,
        }) => install::uninstall(&id, project.as_deref(), purge, data_root.as_deref()),
        None => {
            let component_path = cli.component.context("no component given")?;
            let runtime = runtime(&cli.cache)?;
            let component = tokio.block_on(runtime.load_file(&component_path))?;
            serve(tokio, component, &cli.grants.spec()?, None)
        }
    }
}

/// The engine with the compile cache the flags ask for.
fn runtime(cache: &CacheArgs) -> Result<Runtime> {
    let cache = match (cache.no_cache, &cache.cache_dir) {
        (true, _) => None,
        (false, Some(dir)) => Some(CompileCache::new(
            std::path::absolute(dir).context("cannot resolve --cache-dir")?,
        )),
        (false, None) => CompileCache::default_dir().map(CompileCache::new),
    };
    Ok(Runtime::new()?.with_cache(cache))
}

/// A failed call as the launcher words it: the library's text, with the
/// flag that raises the limit it names.
pub fn error_text(error: &CallError) -> String {
    let (phrase, flag) = match error {
        CallError::Timeout { .. } => ("raise the call timeout", "--timeout SECONDS"),
        CallError::Memory { .. } => ("raise the memory limit", "--max-memory MIB"),
        CallError::StorageQuota { .. } => ("raise the storage quota", "--storage-quota MIB"),
        CallError::Disabled { .. } => {
            let text = error.to_string();
            return text.replace(
                "(a new session, or a restart)",
                "by restarting the launcher",
            );
        }
        _ => return error.to_string(),
    };
    error
        .to_string()
        .replacen(phrase, &format!("{phrase} with {flag}"), 1)
}

/// Serves the JSONL protocol on stdin/stdout until EOF.
fn serve(
    tokio: tokio::runtime::Runtime,
    component: PluginComponent,
    spec: &PolicySpec,
    record: Option<&std::path::Path>,
) -> Result<()> {
    let (grant, limits) = spec.resolve(|key| std::env::var(key).ok())?;
    let mut host = PluginHost::new(component, grant, limits);
    host.set_validation(!spec.no_validate);
    let id = host.manifest().id.clone();
    for line in host.policy().report(host.grant()) {
        tracing::warn!("[{id}] {line}");
    }
    let effective: Vec<_> = host
        .policy()
        .effective()
        .iter()
        .map(|c| c.wire_name())
        .collect();
    tracing::debug!("[{id}] effective capabilities: {effective:?}");

    let mut server = Server::with_runtime(host, tokio).with_error_text(error_text);
    let stdin = io::stdin().lock();
    let stdout = BufWriter::new(io::stdout().lock());
    match record.and_then(|dir| record::Tee::start(dir, &id)) {
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use lingxi_wasm_host::CallError;

    #[test]
    fn failed_calls_name_the_flag_that_raises_their_limit() {
        let timeout = CallError::Timeout {
            call: "tool.execute 'spin'".into(),
            limit: Duration::from_secs(1),
        };
        let text = super::error_text(&timeout);
        assert!(
            text.contains("raise the call timeout with --timeout SECONDS"),
            "{text}"
        );
        let memory = CallError::Memory {
            call: "x".into(),
            limit_bytes: 1 << 20,
        };
        let text = super::error_text(&memory);
        assert!(
            text.contains("raise the memory limit with --max-memory MIB"),
            "{text}"
        );
        let disabled = CallError::Disabled {
            plugin: "p".into(),
            traps: 5,
            window_secs: 60,
            last: "boom".into(),
        };
        let text = super::error_text(&disabled);
        assert!(
            text.contains("then start it again by restarting the launcher"),
            "{text}"
        );
        let plugin = CallError::Plugin("its own words".into());
        assert_eq!(super::error_text(&plugin), "its own words");
    }
}
