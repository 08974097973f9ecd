//! Serving one sandboxed plugin over the Model Context Protocol on
//! stdin/stdout (`lingxi-wasm-run mcp`, or a packed plugin started with the
//! argument `mcp`), with the official Rust SDK (`rmcp`).
//!
//! The plugin runs in a one-plugin [`PluginSet`], the core an embedding host
//! uses: the same grants, deadlines, memory and output caps, argument
//! validation and path parameters as over JSONL. What maps to what is
//! decided in `map.rs`; where the workspace root comes from in `roots.rs`.

mod map;
mod roots;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use lingxi_wasm_host::types::InitializeRequest;
use lingxi_wasm_host::{
    CallError, CallOptions, PluginComponent, PluginOptions, PluginSet, Policy, PolicySpec,
    RECEIPT_TARGET, ReceiptSlot, Runtime, Session,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, GetPromptRequestParams, GetPromptResponse,
    Implementation, InitializeRequestParams, InitializeResult, ListPromptsResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{RoleServer, ServerHandler};

pub use map::{CONTRACT_META, EFFECTS_META, PROMPT_ARGUMENT};
pub use roots::shared_place;

/// The environment variable an Agent Plugins host sets to the plugin's
/// persistent data directory.
pub const PLUGIN_DATA: &str = "PLUGIN_DATA";

/// Serves `component` over MCP on stdin/stdout until the client closes
/// stdin. `spec` is the grant.
pub fn serve(
    tokio: tokio::runtime::Runtime,
    runtime: Runtime,
    component: PluginComponent,
    spec: &PolicySpec,
) -> Result<()> {
    let (mut grant, limits) = spec.resolve(|key| std::env::var(key).ok())?;
    let id = component.manifest().id.clone();
    // The root until the client's MCP roots say otherwise: --workspace,
    // else the working directory unless it is too broad to be one. It
    // reaches the plugin as its snapshot's root.
    let fallback = match grant.workspace.take() {
        Some(root) => Some(root),
        None => std::env::current_dir()
            .ok()
            .filter(|dir| !roots::too_broad(dir, "the working directory")),
    };
    if !spec.no_storage
        && let Some(dir) = std::env::var_os(PLUGIN_DATA).filter(|d| !d.is_empty())
    {
        grant.data_dir = Some(plugin_data(PathBuf::from(dir))?);
    }
    let policy = Policy::decide(&component.manifest().capabilities, &grant);
    for line in policy.report(&grant) {
        tracing::warn!("[{id}] {line}");
    }
    let options = PluginOptions {
        grant,
        limits: Some(limits),
        log_sink: None,
        validate_arguments: !spec.no_validate,
    };
    let manifest = component.manifest().clone();
    tokio.block_on(async move {
        let mut set = PluginSet::new(runtime).with_initialize(InitializeRequest {
            host_ipc_version: Some(1),
            core_version: None,
        });
        if let Err(error) = set.add(component, &id, options).await {
            let hint = matches!(error, lingxi_wasm_host::SetError::Contract { .. })
                .then_some("; fix the plugin, or pass --no-validate to serve it without checking arguments against its schemas")
                .unwrap_or_default();
            anyhow::bail!("{error}{hint}");
        }
        let offer = map::offer(&set.catalog());
        for (_, why) in &offer.withheld {
            tracing::warn!("[{id}] {why}");
        }
        let snapshot = fallback.as_deref().and_then(crate::workspace::wit_snapshot);
        let session = Arc::new(set.session("mcp", snapshot)?);
        let info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .build(),
        )
        .with_server_info(
            Implementation::new(manifest.id.clone(), manifest.version.clone())
                .with_title(manifest.name.clone())
                .with_description(manifest.description.clone()),
        )
        .with_instructions(format!(
            "Tools of the LingXi plugin {} ({}), run in a WebAssembly sandbox by lingxi-wasm-run: it reaches only what its user granted.",
            manifest.name, manifest.id
        ));
        let handler = Handler {
            session: session.clone(),
            queue: tokio::sync::Mutex::new(()),
            offer,
            info,
            roots: roots::Roots::new(session.clone()),
        };
        let transport = rmcp::transport::io::stdio_pipes();
        let running = rmcp::serve_server(handler, transport)
            .await
            .context("the MCP client did not complete the handshake")?;
        let quit = running.waiting().await;
        session.deactivate().await;
        quit.context("the MCP service failed")?;
        Ok(())
    })
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
            "{} is not a plugin's own folder (it is /, a folder directly under /, or holds the home folder); the plugin would see everything below it; set it to a folder of this plugin's own, or pass --no-storage",
            named()
        );
    }
    Ok(resolved)
}

/// The MCP side of one plugin session.
struct Handler {
    session: Arc<Session>,
    /// Held by a call while it runs, so that its deadline starts when it
    /// does (not while it waits for the call before it); concurrency-safe
    /// tools run on extra instances and do not queue.
    queue: tokio::sync::Mutex<()>,
    offer: map::Offer,
    info: ServerConfig,
    roots: roots::Roots,
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        self.info.clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.roots.expect(request.capabilities.roots.is_some());
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.roots.fetch(&context.peer).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.roots.fetch(&context.peer).await;
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.offer.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        if let Some((_, why)) = self.offer.withheld.iter().find(|(n, _)| n == name) {
            return Err(ErrorData::invalid_params(why.clone(), None));
        }
        if !self.offer.tools.iter().any(|t| t.name == name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool '{}'; tools/list lists the tools there are",
                    lingxi_wasm_host::printable(name)
                ),
                None,
            ));
        }
        let arguments =
            serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        self.roots.ready().await;
        let _turn = match self.offer.concurrency_safe.iter().any(|t| t == name) {
            true => None,
            false => Some(self.queue.lock().await),
        };
        // A receipt only for a client that asks for one (see map.rs).
        let asked = [request.meta.as_deref(), Some(&*context.meta)]
            .into_iter()
            .flatten()
            .any(|meta| meta.get(map::EFFECTS_META).is_some_and(|v| *v != false));
        let logged = tracing::enabled!(target: RECEIPT_TARGET, tracing::Level::DEBUG);
        let slot = (asked || logged).then(ReceiptSlot::new);
        let options = match &slot {
            Some(slot) => CallOptions::default().with_receipt(slot),
            None => CallOptions::default(),
        };
        let call = self.session.call_tool(name, &arguments, options);
        let mut result = match cancellable(&context, call).await? {
            Ok(text) => map::tool_result(text),
            Err(error) => map::tool_failure(&error),
        };
        if let Some(receipt) = slot.as_ref().and_then(ReceiptSlot::take) {
            if logged {
                let json = serde_json::to_string(&receipt).unwrap_or_default();
                let json = lingxi_wasm_host::printable(&json);
                tracing::debug!(target: RECEIPT_TARGET, "receipt {json}");
            }
            if asked {
                map::attach_receipt(&mut result, &receipt);
            }
        }
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(
            self.offer.prompts.clone(),
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let typed = request
            .arguments
            .as_ref()
            .and_then(|a| a.get(map::PROMPT_ARGUMENT))
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| v.to_string())
            });
        let arguments = map::command_arguments(typed.as_deref());
        self.roots.ready().await;
        let _turn = self.queue.lock().await;
        let run = (self.session).run_command(&request.name, arguments, CallOptions::default());
        match cancellable(&context, run).await? {
            Ok(result) => Ok(map::prompt_result(result).into()),
            Err(error @ CallError::NoSuchCommand { .. }) => Err(ErrorData::invalid_params(
                format!("{error}; prompts/list lists the prompts there are"),
                None,
            )),
            Err(error) => Err(ErrorData::internal_error(error.to_string(), None)),
        }
    }
}

/// `work`, unless the client cancels the request first: then the work is
/// dropped (a call running in the plugin stops; its instance is replaced).
async fn cancellable<T>(
    context: &RequestContext<RoleServer>,
    work: impl Future<Output = T>,
) -> Result<T, ErrorData> {
    tokio::select! {
        done = work => Ok(done),
        () = context.ct.cancelled() => Err(ErrorData::internal_error("the request was cancelled", None)),
    }
}
