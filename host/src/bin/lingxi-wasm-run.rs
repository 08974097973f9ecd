//! `lingxi-wasm-run`: runs a LingXi plugin component in a sandbox and speaks
//! the LingXi JSON-Lines protocol on stdin/stdout, so a LingXi host can drive
//! it like any native plugin.

use std::io::{self, BufWriter, IsTerminal};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;
use lingxi_wasm_host::types::Capability;
use lingxi_wasm_host::{Grant, Limits, PluginHost, Runtime, Server};

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
    grant: Vec<String>,

    /// Workspace root to mount for projectRead/projectWrite. Default: the
    /// `workspace.rootPath` of the host's snapshots.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,

    /// Deadline of one call, in seconds. The default stays under LingXi's
    /// 3.0 s watchdog so the host gets an explanatory error.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.5)]
    timeout: f64,

    /// Memory limit of the plugin instance, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 256)]
    max_memory: usize,
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
    let grant = Grant {
        capabilities: parse_grants(&cli.grant)?,
        workspace: match &cli.workspace {
            Some(dir) => Some(dir.canonicalize().with_context(|| {
                format!("--workspace {}: cannot open the directory", dir.display())
            })?),
            None => None,
        },
    };
    if !(cli.timeout.is_finite() && cli.timeout > 0.0) {
        bail!(
            "--timeout {}: give a positive number of seconds, e.g. --timeout 2.5",
            cli.timeout
        );
    }
    let limits = Limits {
        call_timeout: Duration::from_secs_f64(cli.timeout),
        max_memory_bytes: cli
            .max_memory
            .checked_mul(1024 * 1024)
            .context("--max-memory is too large")?,
    };

    let runtime = Runtime::new()?;
    let component = runtime.load_file(&cli.component)?;
    let host = PluginHost::new(component, grant, limits);
    let id = host.manifest().id.clone();
    for line in host.policy().differences() {
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

/// `--grant` values: wire names, or `none`. No flag at all means "as declared".
fn parse_grants(values: &[String]) -> Result<Option<Vec<Capability>>> {
    if values.is_empty() {
        return Ok(None);
    }
    let mut granted = Vec::new();
    for value in values.iter().map(|v| v.trim()).filter(|v| !v.is_empty()) {
        if value == "none" {
            continue;
        }
        match Capability::from_wire(value) {
            Some(c) => granted.push(c),
            None => bail!(
                "--grant {value}: unknown capability; use projectRead, projectWrite, processExecution, networkAccess or none"
            ),
        }
    }
    Ok(Some(granted))
}
