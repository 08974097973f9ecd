//! Serving sandboxed plugins over the Model Context Protocol, on
//! stdin/stdout or streamable HTTP (`lingxi-wasm-run mcp`, or a packed
//! plugin started with the argument `mcp`), with the official Rust SDK
//! (`rmcp`).
//!
//! The plugins run in a [`PluginSet`], the core an embedding host uses:
//! the same grants, deadlines, memory and output caps, argument validation
//! and path parameters as over JSONL. What maps to what is decided in
//! `map.rs`; where the workspace root comes from in `roots.rs`; how a
//! user approves a call in `approval.rs`; one session's handler in
//! `handler.rs`; the HTTP server and its defences in `http/`.

mod approval;
mod handler;
mod http;
mod map;
mod places;
mod roots;
mod tasks;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use lingxi_wasm_host::types::InitializeRequest;
use lingxi_wasm_host::{PluginComponent, PluginOptions, PluginSet, Policy, PolicySpec, Runtime};
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};

use handler::{Channel, Handler, ServerState};

pub use approval::APPROVAL_KEY;
pub use http::{HttpArgs, HttpOptions};
pub use map::{CONTRACT_META, EFFECTS_META, PROMPT_ARGUMENT};
pub use roots::shared_place;

/// The environment variable an Agent Plugins host sets to the plugin's
/// persistent data directory.
pub const PLUGIN_DATA: &str = "PLUGIN_DATA";

/// What `mcp` serves: one plugin, or every plugin in a folder (one
/// catalog; a plugin that does not load or whose names clash with one
/// loaded before it stops the server from starting).
pub enum Plugins {
    /// A component or packed plugin, loaded.
    One(Box<PluginComponent>),
    /// A folder of plugins, as [`PluginSet::load_dir`] reads it.
    Folder(PathBuf),
}

/// Serves `plugins` over MCP, on stdin/stdout until the client closes
/// stdin, or over HTTP as `http` says until a signal stops it. `spec` is
/// the grant (of every plugin, for a folder).
pub fn serve(
    tokio: tokio::runtime::Runtime,
    runtime: Runtime,
    plugins: Plugins,
    spec: &PolicySpec,
    http: Option<http::HttpOptions>,
) -> Result<()> {
    // Over HTTP, sessions run in parallel on every core.
    let tokio = match http {
        Some(_) => {
            drop(tokio);
            tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .thread_name("lingxi-wasm-mcp")
                .build()
                .context("cannot start the async runtime")?
        }
        None => tokio,
    };
    tokio.block_on(async move {
        // Servers sharing a token share the key of approval states.
        let token = http.as_ref().and_then(|h| h.token.as_deref());
        let seal = approval::Seal::new(token);
        let shared = Arc::new(shared(runtime, plugins, spec, seal).await?);
        match http {
            None => stdio(shared).await,
            Some(options) => http::serve(shared, options).await,
        }
    })
}

/// Serves one session over stdin/stdout.
async fn stdio(shared: Arc<ServerState>) -> Result<()> {
    let handler = Handler::open(shared, "mcp".into(), Channel::Stdio)?;
    let session = handler.session();
    let transport = rmcp::transport::io::stdio_pipes();
    let running = rmcp::serve_server(handler, transport)
        .await
        .context("the MCP client did not complete the handshake")?;
    let quit = running.waiting().await;
    session.deactivate().await;
    quit.context("the MCP service failed")?;
    Ok(())
}

/// The plugin set, what it offers and the server's description.
async fn shared(
    runtime: Runtime,
    plugins: Plugins,
    spec: &PolicySpec,
    seal: approval::Seal,
) -> Result<ServerState> {
    let (mut grant, limits) = spec.resolve_from_environment()?;
    // The root until the client's MCP roots say otherwise: --workspace,
    // else the working directory unless it is too broad to be one. It
    // reaches the plugin as its snapshot's root.
    let fallback = match grant.workspace.take() {
        Some(root) => Some(root),
        None => std::env::current_dir()
            .ok()
            .filter(|dir| !roots::too_broad(dir, "the working directory")),
    };
    let data = match spec.no_storage {
        true => None,
        false => std::env::var_os(PLUGIN_DATA).filter(|d| !d.is_empty()),
    };
    let mut set = PluginSet::new(runtime).with_initialize(InitializeRequest {
        host_ipc_version: Some(1),
        core_version: None,
    });
    let options = |manifest: &lingxi_wasm_host::types::Manifest, data_dir| {
        let mut grant = grant.clone();
        grant.data_dir = data_dir;
        crate::secrets::load_values(&mut grant, &manifest.id);
        let policy = Policy::decide(
            &lingxi_wasm_host::convert::capabilities(&manifest.capabilities),
            &grant,
        );
        crate::words::say_grants(&manifest.id, &policy, &grant);
        PluginOptions {
            grant,
            limits: Some(limits.clone()),
            log_sink: None,
            validate_arguments: !spec.no_validate,
        }
    };
    let hint = |error: &lingxi_wasm_host::SetError| match error {
        lingxi_wasm_host::SetError::Contract { .. } => format!(
            "; fix the plugin, or pass {} to serve it without checking arguments against its schemas",
            lingxi_wasm_host::Setting::NoValidate
        ),
        _ => String::new(),
    };
    let implementation = match plugins {
        Plugins::One(component) => {
            let component = *component;
            let manifest = component.manifest().clone();
            let data_dir = data.map(|d| plugin_data(PathBuf::from(d))).transpose()?;
            let options = options(&manifest, data_dir);
            if let Err(error) = set.add(component, &manifest.id, options).await {
                anyhow::bail!("{error}{}", hint(&error));
            }
            Implementation::new(manifest.id.clone(), manifest.version.clone())
                .with_title(manifest.name.clone())
                .with_description(manifest.description.clone())
        }
        Plugins::Folder(dir) => {
            let data = data.map(|d| plugin_data(PathBuf::from(d))).transpose()?;
            // Each plugin's data in a folder of its own under PLUGIN_DATA.
            let own = |id: &str| {
                let dir = data.as_ref()?.join(storage_name(id)?);
                std::fs::create_dir_all(&dir).ok()?;
                Some(dir)
            };
            let loaded = set
                .load_dir(&dir, |manifest| options(manifest, own(&manifest.id)))
                .await?;
            for (path, result) in &loaded {
                if let Err(error) = result {
                    anyhow::bail!(
                        "{} was not served: {error}{}; remove it from {} or fix it",
                        path.display(),
                        hint(error),
                        dir.display()
                    );
                }
            }
            anyhow::ensure!(
                !loaded.is_empty(),
                "{} holds no plugin (a .wasm component, a packed plugin, or a plugin folder); nothing to serve",
                dir.display()
            );
            let ids: Vec<&str> = set.ids().collect();
            Implementation::new("lingxi-wasm-run", env!("CARGO_PKG_VERSION"))
                .with_title(format!("{} LingXi plugins", ids.len()))
                .with_description(format!("The LingXi plugins {}", ids.join(", ")))
        }
    };
    // Each plugin within its own --max-tasks, and no session cap below
    // their sum: the flag is the limit a user sets.
    let plugins = set.ids().count();
    let set = set.with_session_tasks(limits.max_tasks.saturating_mul(plugins));
    let offer = map::offer(&set.catalog());
    let capabilities = ServerCapabilities::builder()
        .enable_tools()
        .enable_prompts();
    let capabilities = match offer.starts_task.is_empty() {
        true => capabilities.build(),
        false => capabilities.enable_tasks().build(),
    };
    let info = ServerConfig::new(capabilities)
    .with_instructions(format!(
        "Tools of {} ({}), run in a WebAssembly sandbox by lingxi-wasm-run: it reaches only what its user granted.",
        implementation.title.clone().unwrap_or_default(),
        implementation.name
    ))
    .with_server_info(implementation);
    Ok(ServerState {
        set,
        offer,
        info,
        snapshot: fallback.as_deref().and_then(crate::workspace::wit_snapshot),
        call_timeout: limits.call_timeout,
        task_ttl: limits.task_timeout.saturating_add(limits.task_keep),
        request_tasks: std::sync::OnceLock::new(),
        task_records: limits.max_kept_tasks.saturating_add(limits.max_tasks),
        seal,
    })
}

/// The name of plugin `id`'s data folder under `PLUGIN_DATA`, when the id
/// can name one folder (and nothing above or beside it).
fn storage_name(id: &str) -> Option<&str> {
    let plain = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    (plain && !id.is_empty() && !id.starts_with('.')).then_some(id)
}

/// The folder `PLUGIN_DATA` names, checked: an Agent Plugins host's folder
/// for this one plugin, never a link or a shared place (`/`, a folder
/// directly under it, the home folder or above it): the plugin gets it
/// read-write, or read-only when over quota, and sees everything below.
fn plugin_data(dir: PathBuf) -> Result<PathBuf> {
    let named = || format!("{PLUGIN_DATA}={}", dir.display());
    anyhow::ensure!(
        dir.is_absolute(),
        "{} is not an absolute path; an Agent Plugins host sets it to the plugin's own data folder",
        named()
    );
    if std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink()) {
        anyhow::bail!(
            "{} is a symbolic link; give the plugin's data folder itself",
            named()
        );
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", named()))?;
    let resolved =
        dunce::canonicalize(&dir).with_context(|| format!("cannot resolve {}", named()))?;
    if roots::shared_place(&resolved) {
        anyhow::bail!(
            "{} is not a plugin's own folder (it is /, a folder directly under /, or holds the home folder); the plugin would see everything below it; set it to a folder of this plugin's own, or pass {}",
            named(),
            lingxi_wasm_host::Setting::NoStorage
        );
    }
    Ok(resolved)
}
