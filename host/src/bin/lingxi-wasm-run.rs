//! `lingxi-wasm-run`: runs a LingXi plugin component in a sandbox and speaks
//! the LingXi JSON-Lines protocol on stdin/stdout, so a LingXi host can drive
//! it like any native plugin.

use std::io::{self, BufWriter, IsTerminal};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use lingxi_wasm_host::{CompileCache, PluginHost, PolicySpec, Runtime, Server, storage};

/// Run a LingXi plugin component (wasm32-wasip2) in a deny-by-default sandbox,
/// speaking the LingXi JSON-Lines plugin protocol on stdin/stdout.
///
/// A capability is granted only if the plugin declares it AND it is granted
/// here. Logs and everything the plugin prints go to stderr; stdout carries
/// protocol lines only.
#[derive(Debug, Parser)]
#[command(version, about, long_about)]
struct Cli {
    /// The plugin component (.wasm) to run.
    component: PathBuf,

    /// Capabilities to grant, as wire names separated by commas
    /// (projectRead, projectWrite, processExecution, networkAccess), or `none`.
    /// Repeatable. Default: whatever the plugin's manifest declares.
    #[arg(long, value_name = "CAPS", value_delimiter = ',')]
    grant: Option<Vec<String>>,

    /// Workspace root to mount for projectRead/projectWrite. Default: the
    /// `workspace.rootPath` of the host's snapshots.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,

    /// Also mount DIR read-only (needs projectRead or projectWrite). Repeatable.
    #[arg(long, value_name = "DIR")]
    allow_read: Vec<PathBuf>,

    /// Also mount DIR read-write (needs projectWrite). Repeatable.
    #[arg(long, value_name = "DIR")]
    allow_write: Vec<PathBuf>,

    /// Allow network destinations host:port under networkAccess (e.g.
    /// api.example.com:443, *.example.com:*, 127.0.0.1:8000-8100). Repeatable.
    /// Without any, networkAccess reaches every destination.
    #[arg(long, value_name = "HOST:PORT")]
    allow_net: Vec<String>,

    /// Pass an environment variable: KEY (its value here) or KEY=VALUE.
    /// Repeatable. The plugin sees no other variable.
    #[arg(long, value_name = "KEY[=VALUE]")]
    env: Vec<String>,

    /// Deadline of one call, in seconds [default: 2.5, under LingXi's 3.0 s
    /// watchdog so the host gets an explanatory error].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,

    /// Memory limit of the plugin instance, in MiB [default: 256].
    #[arg(long, value_name = "MIB")]
    max_memory: Option<usize>,

    /// Root of the per-plugin data directories; the plugin gets
    /// `<DIR>/<plugin id>/`, mounted read-write at /lingxi/data
    /// [default: ~/.lingxiagent/plugin-data].
    #[arg(long, value_name = "DIR", conflicts_with = "no_storage")]
    data_root: Option<PathBuf>,

    /// Give the plugin no persistent storage.
    #[arg(long)]
    no_storage: bool,

    /// Size quota of the plugin's data directory, in MiB [default: 64].
    #[arg(long, value_name = "MIB")]
    storage_quota: Option<u64>,

    /// Where compiled components are cached [default: $LINGXI_WASM_CACHE,
    /// $XDG_CACHE_HOME/lingxi-wasm or ~/.cache/lingxi-wasm].
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    cache_dir: Option<PathBuf>,

    /// Compile the component at every start instead of caching it.
    #[arg(long)]
    no_cache: bool,

    /// A TOML policy file with the same settings (grant, workspace,
    /// allow-read, allow-write, allow-net, env, timeout, max-memory); flags
    /// given here override or extend it.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
}

fn main() {
    init_logging();
    if let Err(error) = run(Cli::parse()) {
        eprintln!("lingxi-wasm-run: error: {error:#}");
        std::process::exit(1);
    }
}

fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_env("LINGXI_WASM_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_target(false)
        .with_ansi(io::stderr().is_terminal())
        .without_time()
        .init();
}

fn run(cli: Cli) -> Result<()> {
    let file = match &cli.policy {
        Some(path) => PolicySpec::from_file(path)?,
        None => PolicySpec::default(),
    };
    let flags = PolicySpec {
        grant: cli.grant,
        workspace: cli.workspace,
        allow_read: cli.allow_read,
        allow_write: cli.allow_write,
        allow_net: cli.allow_net,
        env: cli.env,
        timeout: cli.timeout,
        max_memory: cli.max_memory,
        data_root: cli.data_root,
        storage_quota: cli.storage_quota,
    };
    let mut spec = file.merge(flags);
    spec.data_root = match cli.no_storage {
        true => None,
        false => spec.data_root.or_else(storage::default_root),
    };
    let (grant, limits) = spec.resolve(|key| std::env::var(key).ok())?;

    let cache = match (cli.no_cache, cli.cache_dir) {
        (true, _) => None,
        (false, Some(dir)) => Some(CompileCache::new(dir)),
        (false, None) => CompileCache::default_dir().map(CompileCache::new),
    };
    let runtime = Runtime::new()?.with_cache(cache);
    let component = runtime.load_file(&cli.component)?;
    let host = PluginHost::new(component, grant, limits);
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

    let mut server = Server::new(host);
    let stdin = io::stdin().lock();
    let stdout = BufWriter::new(io::stdout().lock());
    server
        .serve(stdin, stdout)
        .context("writing to stdout failed")?;
    Ok(())
}
