//! [`PluginSet`]: many plugins in one process, for an agent host. Each
//! plugin is loaded once (compiled, linked, asked for its manifest and its
//! registrations); tool and command names are unique across the set; the
//! [`Catalog`] lists them for a model; a [`Session`] gives every plugin an
//! instance of its own for one conversation.
//!
//! Loading folders is in [`load`], the catalog in [`catalog`], sessions and
//! calls in [`session`].

mod approval;
mod catalog;
mod instance;
mod load;
mod replace;
mod session;
mod tools;

use tools::ToolOwner;

pub use approval::{ApprovalFuture, Approver, PreparedCall};
pub use catalog::{Catalog, CatalogCommand, CatalogTool};
pub use replace::NewGrants;
pub use session::{HookOutcome, Session};

use std::collections::HashMap;
use std::sync::Arc;

use crate::bindings::lingxi::plugin::types as wit;
use crate::contract::{Contracts, ProblemKind, Severity};
use crate::engine::{PluginComponent, Runtime};
use crate::error::{Clash, SetError};
use crate::limits::Limits;
use crate::limits::{MAX_NAME, SESSION_TASKS};
use crate::observe::{Counters, LogSink, Origin, Stats};
use crate::plugin::PluginHost;
use crate::policy::{Grant, Policy};

/// One plugin of a set, as loaded.
pub(crate) struct Member {
    pub(crate) component: PluginComponent,
    pub(crate) grant: Grant,
    pub(crate) limits: Limits,
    pub(crate) policy: Policy,
    /// What it registered when it was loaded.
    pub(crate) handshake: wit::Handshake,
    /// Where it was loaded from (for messages).
    pub(crate) source: String,
    pub(crate) counters: Arc<Counters>,
    pub(crate) sink: Option<LogSink>,
    /// Its tools' contracts, compiled once from `handshake`.
    pub(crate) contracts: Arc<Contracts>,
    /// Whether tool arguments are validated against their schemas.
    pub(crate) validate: bool,
}

impl Member {
    pub(crate) fn id(&self) -> &str {
        &self.component.manifest().id
    }

    /// Whose lines its output is in session `session`, and where they go.
    pub(crate) fn origin(&self, session: &Arc<str>) -> Origin {
        Origin {
            plugin: self.id().into(),
            session: session.clone(),
            sink: self.sink.clone(),
            // Set from the grant by the plugin's host (`PluginHost`).
            redactor: None,
        }
    }
}

/// The plugins of a set and who owns which name. Sessions keep the version
/// they were opened with; adding a plugin makes a new one.
#[derive(Default, Clone)]
pub(crate) struct Members {
    pub(crate) list: Vec<Arc<Member>>,
    /// Tool name → who answers it (one lookup on the way of a call, with
    /// foldhash: a few nanoseconds where SipHash took tens; its seed is
    /// random per process, and the names are the loaded plugins' own).
    pub(crate) tools: HashMap<String, ToolOwner, foldhash::fast::RandomState>,
    /// Command name or alias, lower-cased (LingXi routes commands
    /// case-insensitively) → index in `list`.
    pub(crate) commands: HashMap<String, usize>,
}

/// Many sandboxed plugins, each with its own grant and limits, for an agent
/// host: load them ([`PluginSet::load_file`], [`PluginSet::load_dir`],
/// [`PluginSet::add`]), list their tools ([`PluginSet::catalog`]), open a
/// [`Session`] per conversation.
///
/// A packed executable's component is compiled here; its native code never
/// runs, its precompiled code is never used and the grants packed into it
/// are ignored: [`PluginOptions`] decide (by default nothing is granted).
/// Ids are unique and tool and command names belong to the plugin added
/// first; a plugin whose names clash, or are not printable, is refused.
///
/// ```no_run
/// use lingxi_wasm_host::{CallOptions, PluginOptions, PluginSet, Runtime, RuntimeConfig};
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let mut set = PluginSet::new(Runtime::with_config(RuntimeConfig::pooled(1000))?);
/// for (path, loaded) in set.load_dir("plugins".as_ref(), |_| PluginOptions::default()).await? {
///     if let Err(refused) = loaded {
///         eprintln!("{}: {refused}", path.display());
///     }
/// }
/// let session = set.session("conversation-1", None)?;
/// let answer = session.call_tool("probe.echo", r#"{"q":1}"#, CallOptions::default()).await?;
/// session.close().await;
/// # Ok(())
/// # }
/// ```
pub struct PluginSet {
    runtime: Runtime,
    members: Arc<Members>,
    initialize: wit::InitializeRequest,
    limits: Limits,
    approver: Option<Approver>,
    /// Most background tasks running at once in one session.
    session_tasks: usize,
}

/// How a plugin joins a set. `Default` grants nothing ([`no_grant`]).
#[derive(Clone)]
pub struct PluginOptions {
    /// What the user grants it: nothing by default. (`Grant::default()`
    /// grants whatever the manifest declares, the launcher's default.)
    pub grant: Grant,
    /// Its limits; `None` takes the set's.
    pub limits: Option<Limits>,
    /// Where its log lines and output go besides `tracing`.
    pub log_sink: Option<LogSink>,
    /// Whether tool arguments are validated against their tool's
    /// `inputSchema` (default `true`). `false` is for plugins whose schemas
    /// are known to be wrong: such a schema then no longer refuses the
    /// plugin. Path parameters, timeouts and approval apply either way.
    pub validate_arguments: bool,
}

impl Default for PluginOptions {
    fn default() -> Self {
        PluginOptions {
            grant: no_grant(),
            limits: None,
            log_sink: None,
            validate_arguments: true,
        }
    }
}

impl PluginOptions {
    /// Options with `grant`.
    pub fn grant(grant: Grant) -> Self {
        PluginOptions {
            grant,
            ..PluginOptions::default()
        }
    }
}

/// Why the names a plugin registers cannot go into a catalog, if they
/// cannot: empty or over-long ones, ones with control characters or spaces
/// (they would forge log lines and break a model's tool list). Names it
/// registers twice are the contract's (`contract::consistency`).
fn bad_names(handshake: &wit::Handshake) -> Option<String> {
    let bad = |kind: &str, name: &str| {
        let shown = crate::text::shown_name(name);
        if name.is_empty() || name.len() > MAX_NAME {
            Some(format!(
                "its {kind} '{shown}' is empty or longer than {MAX_NAME} bytes"
            ))
        } else if name
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || crate::text::invisible(c))
        {
            Some(format!(
                "its {kind} '{shown}' contains control characters, spaces or invisible characters"
            ))
        } else {
            None
        }
    };
    if let Some(reason) = bad("id", &handshake.manifest.id) {
        return Some(reason);
    }
    for tool in &handshake.tools {
        if let Some(reason) = bad("tool name", &tool.name) {
            return Some(reason);
        }
    }
    for command in &handshake.commands {
        for name in std::iter::once(&command.name).chain(&command.aliases) {
            if let Some(reason) = bad("command name", name) {
                return Some(reason);
            }
        }
    }
    None
}

/// Grants nothing: the plugin runs with no capability at all.
pub fn no_grant() -> Grant {
    Grant {
        capabilities: Some(Vec::new()),
        ..Grant::default()
    }
}

impl PluginSet {
    /// An empty set on `runtime`, with default limits, that initializes its
    /// plugins with `hostIPCVersion` 1 and no `coreVersion` (set another
    /// request with [`PluginSet::with_initialize`]).
    pub fn new(runtime: Runtime) -> Self {
        PluginSet {
            runtime,
            members: Arc::default(),
            initialize: wit::InitializeRequest {
                host_ipc_version: Some(1),
                core_version: None,
            },
            limits: Limits::default(),
            approver: None,
            session_tasks: SESSION_TASKS,
        }
    }

    /// At most `n` background tasks running at once in each session opened
    /// from now on, over all its plugins (each plugin also within its own
    /// [`Limits::max_tasks`]); by default [`SESSION_TASKS`].
    pub fn with_session_tasks(mut self, n: usize) -> Self {
        self.session_tasks = n;
        self
    }

    /// Asks `approve` before every call to a tool that requires approval
    /// (`x-lingxi-requires-approval`), in sessions opened from now on, with
    /// the call as the plugin will get it (its resolved paths included);
    /// `false` refuses the call. Without a callback such tools are refused.
    pub fn with_approval<F, A>(mut self, approve: F) -> Self
    where
        F: Fn(&PreparedCall) -> A + Send + Sync + 'static,
        A: Future<Output = bool> + Send + 'static,
    {
        self.approver = Some(Arc::new(move |call: &PreparedCall| -> ApprovalFuture {
            Box::pin(approve(call))
        }));
        self
    }

    /// Limits for plugins added later without limits of their own.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The `plugin.initialize` request every instance gets.
    pub fn with_initialize(mut self, request: wit::InitializeRequest) -> Self {
        self.initialize = request;
        self
    }

    /// The runtime the set loads with.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// Adds a loaded plugin: initializes it once, in a sandbox with its
    /// grant, to learn what it registers, and refuses it if its id is taken
    /// or one of its tool or command names belongs to a plugin already in
    /// the set (every clash is named with its owner). `source` names it in
    /// messages (its file).
    pub async fn add(
        &mut self,
        component: PluginComponent,
        source: &str,
        options: PluginOptions,
    ) -> Result<&wit::Manifest, SetError> {
        let id = component.manifest().id.clone();
        if let Some(first) = self.members.list.iter().find(|m| m.id() == id) {
            return Err(SetError::DuplicateId {
                plugin: crate::text::shown_name(&id),
                first: first.source.clone(),
                second: source.to_owned(),
            });
        }
        let limits = options.limits.unwrap_or_else(|| self.limits.clone());
        let counters = Arc::new(Counters::default());
        let mut origin = Origin::new(&id);
        origin.session = "(loading)".into();
        origin.sink = options.log_sink.clone();
        let grant = options.grant;
        let mut host = PluginHost::with_origin(
            component.clone(),
            grant.clone(),
            limits.clone(),
            origin,
            counters.clone(),
            None,
        );
        let handshake = host
            .initialize(self.initialize.clone())
            .await
            .map_err(|source| SetError::Initialize {
                plugin: id.clone(),
                source,
            })?;
        if let Err(e) = host.deactivate().await {
            tracing::warn!(plugin = %id, "deactivate after loading failed: {e}");
        }
        if let Some(reason) = bad_names(&handshake) {
            return Err(SetError::BadName {
                plugin: crate::text::shown_name(&id),
                from: source.to_owned(),
                reason,
            });
        }
        let validate = options.validate_arguments;
        let contracts = host.contracts().cloned().unwrap_or_default();
        let problems: Vec<_> = contracts
            .problems()
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .filter(|p| validate || p.kind != ProblemKind::Schema)
            .cloned()
            .collect();
        if !problems.is_empty() {
            return Err(SetError::Contract {
                plugin: crate::text::shown_name(&id),
                from: source.to_owned(),
                problems,
            });
        }
        let clashes = self.clashes(&handshake);
        if !clashes.is_empty() {
            return Err(SetError::Clash {
                plugin: id,
                from: source.to_owned(),
                clashes,
            });
        }
        let policy = host.policy().clone();
        drop(host);

        let members = Arc::make_mut(&mut self.members);
        let index = members.list.len();
        for tool in &handshake.tools {
            let owner = ToolOwner::of(index, &contracts, &tool.name);
            members.tools.insert(tool.name.clone(), owner);
        }
        for command in &handshake.commands {
            for name in std::iter::once(&command.name).chain(&command.aliases) {
                members.commands.insert(name.to_lowercase(), index);
            }
        }
        members.list.push(Arc::new(Member {
            component,
            grant,
            limits,
            policy,
            handshake,
            source: source.to_owned(),
            counters,
            sink: options.log_sink,
            contracts,
            validate,
        }));
        Ok(members.list[index].component.manifest())
    }

    /// The names `handshake` registers that another plugin owns.
    fn clashes(&self, handshake: &wit::Handshake) -> Vec<Clash> {
        let owner = |index: usize| self.members.list[index].id().to_owned();
        let mut clashes = Vec::new();
        for tool in &handshake.tools {
            if let Some(taken) = self.members.tools.get(&tool.name) {
                clashes.push(Clash::tool(&tool.name, owner(taken.index)));
            }
        }
        for command in &handshake.commands {
            for name in std::iter::once(&command.name).chain(&command.aliases) {
                if let Some(&index) = self.members.commands.get(&name.to_lowercase()) {
                    clashes.push(Clash::command(name, owner(index)));
                }
            }
        }
        clashes
    }

    /// Ids of the plugins in the set, in the order they were added.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.members.list.iter().map(|m| m.id())
    }

    /// Calls, errors, traps, instances and time of plugin `id`, over all
    /// sessions; `None` if no such plugin is in the set.
    pub fn stats(&self, id: &str) -> Option<Stats> {
        let member = self.members.list.iter().find(|m| m.id() == id)?;
        Some(member.counters.read())
    }

    /// Every tool and command with its owner, descriptor and effective
    /// capabilities.
    pub fn catalog(&self) -> Catalog {
        Catalog::of(&self.members)
    }

    /// A session: every plugin gets an instance of its own for it, made on
    /// the session's first call to that plugin and initialized, that sees
    /// `snapshot` (and later ones given to [`Session::set_snapshot`]).
    /// Dropping the session deactivates and frees its instances. A session
    /// keeps the plugins the set had when it was opened: plugins added
    /// later are in later sessions only.
    pub fn session(
        &self,
        id: impl Into<String>,
        snapshot: Option<wit::RuntimeSnapshot>,
    ) -> Result<Session, crate::error::SnapshotError> {
        Session::open(
            id.into(),
            self.members.clone(),
            self.initialize.clone(),
            snapshot,
            self.approver.clone(),
            self.session_tasks,
        )
    }
}

#[cfg(test)]
mod tests;
