//! The MCP side of one sandbox session: an rmcp [`ServerHandler`] that
//! lists what [`ServerState::offer`] holds and runs calls in its own
//! [`Session`] of the plugin set. Over stdio there is one for the whole
//! connection; over HTTP one per MCP session, or one per request with
//! `--stateless`.

use std::sync::Arc;

use lingxi_wasm_host::types::RuntimeSnapshot;
use lingxi_wasm_host::{CallError, CallOptions, PluginSet, ReceiptSlot, Session, SnapshotError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorData, GetPromptRequestParams,
    GetPromptResponse, InitializeRequestParams, InitializeResult, ListPromptsResult,
    ListToolsResult, PaginatedRequestParams, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{RoleServer, ServerHandler};

use super::approval::{self, AcceptedCalls, Answer, Asker};
use super::tasks::{McpTasks, Place};
use super::{map, roots};

/// What every handler of one server shares.
pub struct ServerState {
    /// The plugins; each handler opens a session of its own.
    pub set: PluginSet,
    /// What is offered over MCP.
    pub offer: map::Offer,
    /// The server's description.
    pub info: ServerConfig,
    /// The workspace a session starts with (stdio: until the client's
    /// roots say otherwise).
    pub snapshot: Option<RuntimeSnapshot>,
    /// The plugins' call timeout: how long a stopping server waits for a
    /// call in progress.
    pub call_timeout: std::time::Duration,
    /// The key of approval request states.
    pub seal: approval::Seal,
    /// How long an MCP task is kept: the plugins' task deadline, then how
    /// long a result is kept.
    pub task_ttl: std::time::Duration,
    /// Most MCP tasks one place keeps at once.
    pub task_records: usize,
    /// Where stateless requests' tasks live (made on first use).
    pub request_tasks: std::sync::OnceLock<Option<Arc<Place>>>,
}

/// Where a handler serves.
pub enum Channel {
    /// stdin/stdout: the client's roots are followed.
    Stdio,
    /// An HTTP session (its ticket counts it while it lives).
    Session(Box<dyn Send + Sync>),
    /// One HTTP request, with no channel back to the client.
    Request,
}

/// The MCP side of one plugin-set session.
pub struct Handler {
    pub(super) shared: Arc<ServerState>,
    pub(super) session: Arc<Session>,
    /// Held by a call while it runs, so that its deadline starts when it
    /// does (not while it waits for the call before it); concurrency-safe
    /// tools run on extra instances and do not queue.
    queue: tokio::sync::Mutex<()>,
    /// Follows the client's MCP roots (stdio only: over the network a
    /// client's `file://` roots name another machine's folders, and the
    /// workspace is the server's to choose).
    roots: Option<roots::Roots>,
    /// Calls the user accepted.
    desk: Arc<AcceptedCalls>,
    /// Whether the server can send the client requests (`elicitation/create`).
    pub(super) back_channel: bool,
    /// Where plugin tasks become MCP tasks for a connection that outlives
    /// its requests (stdio, an HTTP session): its own.
    pub(super) tasks: Option<Arc<Place>>,
    /// Whether it serves HTTP (a request without a session, or of
    /// 2026-07-28, is served on its own: its tasks live in the server's
    /// place).
    pub(super) http: bool,
    _ticket: Option<Box<dyn Send + Sync>>,
}

impl Handler {
    /// A handler with a new session `id` of the shared set.
    pub fn open(
        shared: Arc<ServerState>,
        id: String,
        channel: Channel,
    ) -> Result<Self, SnapshotError> {
        let desk = Arc::new(AcceptedCalls::default());
        let accepted = desk.clone();
        let session = shared.set.session(id, shared.snapshot.clone())?;
        let session = Arc::new(session.with_approval(move |call| {
            let approved = accepted.take(call);
            async move { approved }
        }));
        let http = !matches!(channel, Channel::Stdio);
        let (roots, back_channel, ticket) = match channel {
            Channel::Stdio => (Some(roots::Roots::new(session.clone())), true, None),
            Channel::Session(ticket) => (None, true, Some(ticket)),
            Channel::Request => (None, false, None),
        };
        let tasks = (back_channel && !shared.offer.starts_task.is_empty()).then(|| {
            Arc::new(Place {
                session: session.clone(),
                desk: desk.clone(),
                mcp_tasks: McpTasks::new(shared.task_ttl, shared.task_records),
            })
        });
        Ok(Handler {
            shared,
            session,
            queue: tokio::sync::Mutex::new(()),
            roots,
            desk,
            back_channel,
            tasks,
            http,
            _ticket: ticket,
        })
    }

    /// The session (to deactivate its instances when the server stops).
    pub fn session(&self) -> Arc<Session> {
        self.session.clone()
    }

    async fn roots_ready(&self) {
        if let Some(roots) = &self.roots {
            roots.ready().await;
        }
    }

    /// Runs `name`: a tool that requires approval once its user accepted.
    async fn run(
        &self,
        (session, desk): (&Session, &AcceptedCalls),
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        options: CallOptions,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        let arguments =
            serde_json::Value::Object(request.arguments.clone().unwrap_or_default()).to_string();
        self.roots_ready().await;
        let Some(why) = self.shared.offer.needs_asking(name) else {
            let _turn = self.turn(name).await;
            let call = session.call_tool(name, &arguments, options);
            return Ok(finished(cancellable(context, call).await?).into());
        };
        let Some(asker) = approval::asker(context, self.back_channel) else {
            return Err(ErrorData::invalid_params(why.to_owned(), None));
        };
        // The contract first: the user is shown the files the call names.
        let prepare = session.prepare_tool(name, &arguments, options.clone());
        let prepared = match cancellable(context, prepare).await? {
            Ok(prepared) => prepared,
            Err(error) => return Ok(map::tool_failure(&error).into()),
        };
        let answer = match asker {
            Asker::Live(peer) => cancellable(context, approval::ask_live(&peer, &prepared)).await?,
            Asker::Rounds => match &request.input_responses {
                None => return Ok(approval::input_required(&prepared, &self.shared.seal).into()),
                Some(responses) => {
                    let state = request.request_state.as_deref();
                    approval::answer_in(&prepared, responses, state, &self.shared.seal)
                        .map_err(|why| ErrorData::invalid_params(why, None))?
                }
            },
        };
        if answer != Answer::Accept {
            let refusal = answer.refusal(&prepared);
            return Ok(
                CallToolResult::error(vec![rmcp::model::ContentBlock::text(refusal)]).into(),
            );
        }
        desk.accept(&prepared);
        let _turn = self.turn(name).await;
        let call = session.call_prepared(&prepared, options);
        Ok(finished(cancellable(context, call).await?).into())
    }

    /// Waits for this session's instance unless tool `name` may run
    /// beside other calls.
    async fn turn(&self, name: &str) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match self.shared.offer.concurrency_safe.iter().any(|t| t == name) {
            true => None,
            false => Some(self.queue.lock().await),
        }
    }
}

/// A call's outcome as an MCP result.
fn finished(outcome: Result<String, CallError>) -> CallToolResult {
    match outcome {
        Ok(text) => map::tool_result(text),
        Err(error) => map::tool_failure(&error),
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        self.shared.info.clone()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if let Some(roots) = &self.roots {
            roots.expect(request.capabilities.roots.is_some());
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Some(roots) = &self.roots {
            roots.fetch(&context.peer).await;
        }
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        if let Some(roots) = &self.roots {
            roots.fetch(&context.peer).await;
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let asks = approval::asker(&context, self.back_channel).is_some();
        let tools = self.shared.offer.tools_for(asks);
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        if !self.shared.offer.tools.iter().any(|t| t.name == name) {
            let full = lingxi_wasm_host::printable(name);
            let shown: String = full.chars().take(200).collect();
            let cut = if shown.len() < full.len() { "…" } else { "" };
            return Err(ErrorData::invalid_params(
                format!("unknown tool '{shown}{cut}'; tools/list lists the tools there are"),
                None,
            ));
        }
        // A receipt only for a client that asks for one (see map.rs).
        let asked = [request.meta.as_deref(), Some(&*context.meta)]
            .into_iter()
            .flatten()
            .any(|meta| meta.get(map::EFFECTS_META).is_some_and(|v| *v != false));
        let logged = crate::logfmt::logs_receipts();
        // A call that starts a task, for a client that takes tasks: its
        // receipt names the task it started.
        let task_owner = self.shared.offer.task_owner(name).map(str::to_owned);
        // A plugin that has tasks is called where its tasks live: the
        // connection's own place, or the server's for a request served on
        // its own (so that a task outlives its request, and the plugin's
        // own status tool finds it).
        let place = match self.shared.offer.runs_tasks(name) {
            true => self.place(&context),
            false => None,
        };
        let as_task =
            task_owner.filter(|_| place.is_some() && McpTasks::client_takes_tasks(&context));
        let slot = (asked || logged || as_task.is_some()).then(ReceiptSlot::new);
        let options = match &slot {
            Some(slot) => CallOptions::default().with_receipt(slot),
            None => CallOptions::default(),
        };
        let (session, desk) = match &place {
            Some(place) => (place.session.clone(), place.desk.clone()),
            None => (self.session.clone(), self.desk.clone()),
        };
        let mut response = (self.run((&session, &desk), request, &context, options)).await?;
        if let (Some(receipt), CallToolResponse::Complete(result)) =
            (slot.as_ref().and_then(ReceiptSlot::take), &mut response)
        {
            // Logged whatever becomes of the answer: a call adopted as a
            // task did its work all the same.
            if logged {
                crate::logfmt::log_receipt(None, &receipt);
            }
            let place = place.as_deref();
            if let Some(task) = self.adopt(as_task.as_deref(), place, &receipt, result, &context) {
                return Ok(CallToolResponse::Task(task));
            }
            if asked {
                map::attach_receipt(result, &receipt);
            }
        }
        Ok(response)
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        self.place_of(&context)?.mcp_tasks.get(&request.task_id)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.place_of(&context)?.mcp_tasks.cancel(&request.task_id)
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.place_of(&context)?.mcp_tasks.get(&request.task_id)?;
        Err(ErrorData::invalid_params(
            "this server's tasks never ask for input: there is nothing to update",
            None,
        ))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(
            self.shared.offer.prompts.clone(),
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
        self.roots_ready().await;
        let _turn = self.queue.lock().await;
        // A plugin that has tasks is asked where its tasks live.
        let place = match self.shared.offer.command_runs_tasks(&request.name) {
            true => self.place(&context),
            false => None,
        };
        let session = place.map_or_else(|| self.session.clone(), |p| p.session.clone());
        let run = session.run_command(&request.name, arguments, CallOptions::default());
        match cancellable(&context, run).await? {
            Ok(result) => Ok(map::prompt_result(result).into()),
            Err(error @ CallError::NoSuchCommand { .. }) => Err(ErrorData::invalid_params(
                format!("{error}; prompts/list lists the prompts there are"),
                None,
            )),
            Err(error) => Err(ErrorData::internal_error(
                map::with_workspace_hint(error.to_string()),
                None,
            )),
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
