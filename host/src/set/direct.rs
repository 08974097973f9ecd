//! Calls addressed to one plugin of a session, exactly as the JSONL
//! protocol makes them: the caller's own tool-call ids, command names and
//! initialize request, no routing by name (the plugin answers unknown names
//! itself). `lingxi-wasm-run` serves one plugin this way: a
//! [`Session::single`] over its [`PluginHost`].

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use super::instance::{Instance, empty_call, instance_in, lock_bounded, prepared};
use super::session::Context;
use super::{Member, Members, Session};
use crate::bindings::lingxi::plugin::types as wit;
use crate::error::CallError;
use crate::limits::Deadline;
use crate::plugin::PluginHost;
use crate::stdio::shown_name;

impl Session {
    /// A session of one plugin, over a host already made: nothing is
    /// called until the first request (unlike a set's sessions, its
    /// instance is initialized only by [`Session::initialize`]).
    pub fn single(id: impl Into<String>, host: PluginHost) -> Session {
        let manifest = host.manifest().clone();
        let member = Member {
            component: host.component().clone(),
            grant: host.grant().clone(),
            limits: host.limits().clone(),
            policy: host.policy().clone(),
            handshake: wit::Handshake {
                manifest: manifest.clone(),
                ipc_version: 1,
                sdk_version: None,
                tools: Vec::new(),
                commands: Vec::new(),
                supported_hooks: Vec::new(),
            },
            source: manifest.id.clone(),
            counters: host.counters(),
            sink: host.log_sink(),
            contracts: Default::default(),
            validate: host.validates(),
        };
        let members = Members {
            list: vec![Arc::new(member)],
            ..Members::default()
        };
        let instance = Instance {
            host,
            snapshot_version: 0,
            call: empty_call(),
        };
        Session {
            context: Arc::new(Context {
                id: id.into().into(),
                initialize: wit::InitializeRequest {
                    host_ipc_version: Some(1),
                    core_version: None,
                },
                snapshot: Mutex::new(None),
                snapshot_version: AtomicU64::new(0),
                // The caller sends `plugin.initialize` itself.
                auto_initialize: false,
            }),
            members: Arc::new(members),
            slots: vec![Arc::new(tokio::sync::Mutex::new(Some(instance)))].into(),
            spares: vec![Default::default()].into(),
            calls: AtomicU64::new(0),
            approver: None,
        }
    }

    fn index_of(&self, plugin: &str) -> Result<usize, CallError> {
        let list = &self.members.list;
        list.iter()
            .position(|m| m.id() == plugin)
            .ok_or_else(|| CallError::NoSuchPlugin {
                plugin: shown_name(plugin),
            })
    }

    /// `plugin.initialize` of plugin `plugin` with `request`, which its
    /// later restarts replay; answers its handshake.
    pub async fn initialize(
        &self,
        plugin: &str,
        request: wit::InitializeRequest,
    ) -> Result<wit::Handshake, CallError> {
        let index = self.index_of(plugin)?;
        let member = &self.members.list[index];
        let deadline = Deadline::after(member.limits.call_timeout);
        let label = || "plugin.initialize".to_owned();
        let mut guard = lock_bounded(&self.slots[index], deadline, &label).await?;
        let instance = prepared(&mut guard, member, &self.context);
        let before = instance.host.contracts().cloned();
        let handshake = instance.host.initialize(request).await?;
        // New contracts (the first handshake, or one that changed): what is
        // wrong with them is said once; the handshake is passed on as it is.
        if let Some(contracts) = instance.host.contracts()
            && before.is_none_or(|b| !Arc::ptr_eq(&b, contracts))
        {
            for problem in contracts.problems() {
                tracing::warn!(plugin = %plugin, "{problem}");
            }
        }
        Ok(handshake)
    }

    /// `tool.execute` of `call`, as it is, by plugin `plugin`.
    pub async fn execute_tool(
        &self,
        plugin: &str,
        call: wit::ToolCall,
    ) -> Result<String, CallError> {
        let index = self.index_of(plugin)?;
        let label = || format!("tool.execute '{}'", shown_name(&call.tool_name));
        let (mut guard, deadline) = self.lock_within(index, None, label).await?;
        let instance = instance_in(&mut guard, &self.members.list[index])?;
        instance.host.call_tool_checked(&call, deadline).await
    }

    /// `command.execute` of `call`, as it is, by plugin `plugin`.
    pub async fn execute_command(
        &self,
        plugin: &str,
        call: wit::CommandCall,
    ) -> Result<wit::CommandResult, CallError> {
        let index = self.index_of(plugin)?;
        let label = || format!("command.execute '{}'", shown_name(&call.command_name));
        let (mut guard, deadline) = self.lock_within(index, None, label).await?;
        let instance = instance_in(&mut guard, &self.members.list[index])?;
        instance.host.execute_command_by(call, deadline).await
    }

    /// `hook.emit` of `payload` to plugin `plugin` only.
    pub async fn emit_to(&self, plugin: &str, payload: wit::HookPayload) -> Result<(), CallError> {
        let index = self.index_of(plugin)?;
        let label = || format!("hook.emit '{}'", payload.event.wire_name());
        let (mut guard, deadline) = self.lock_within(index, None, label).await?;
        let instance = instance_in(&mut guard, &self.members.list[index])?;
        instance.host.emit_hook_by(payload, deadline).await
    }
}
