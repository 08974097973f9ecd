//! Tool calls of a [`Session`], under their tool's contract: the arguments
//! are validated and the path parameters resolved first
//! ([`Session::prepare_tool`], so a host sees which files a call will touch
//! before it runs), a tool that requires approval waits for the set's
//! approval callback, and the tool's own timeout shortens the deadline.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::instance::{instance_in, locked, push_number};
use super::{Member, Session};
use crate::contract::{Checked, ContractError, ResolvedPath, Roots, ToolContract};
use crate::error::CallError;
use crate::limits::Deadline;
use crate::stdio::shown_name;

/// What an approval callback answers: `true` runs the call.
pub type ApprovalFuture = Pin<Box<dyn Future<Output = bool> + Send + 'static>>;

/// A host's approval callback, asked before every call to a tool that
/// requires approval (`x-lingxi-requires-approval`), with the call as the
/// plugin will get it.
pub type Approver = Arc<dyn Fn(&PreparedCall) -> ApprovalFuture + Send + Sync>;

/// A tool call that passed its contract and has not run yet: what the
/// plugin will get, and which files it names.
#[derive(Clone)]
pub struct PreparedCall {
    /// The plugin that offers the tool.
    pub plugin: String,
    /// The tool.
    pub tool: String,
    /// The arguments as the plugin will get them (path parameters
    /// replaced by their canonical absolute form).
    pub arguments: String,
    /// Its path parameters, as given and as resolved.
    pub paths: Vec<ResolvedPath>,
    /// Whether the set's approval callback is asked before it runs.
    pub requires_approval: bool,
    /// Whether it may run on an extra instance of the plugin when the
    /// session's instance is busy (`x-lingxi-concurrency-safe`).
    pub concurrency_safe: bool,
    /// The tool's own timeout, if it has one.
    pub timeout: Option<Duration>,
    member: Arc<Member>,
}

impl std::fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedCall")
            .field("plugin", &self.plugin)
            .field("tool", &self.tool)
            .field("arguments", &self.arguments)
            .field("paths", &self.paths)
            .field("requires_approval", &self.requires_approval)
            .field("concurrency_safe", &self.concurrency_safe)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// A tool of the session: its owner's index and entry, and its contract.
type Tool<'a> = (usize, &'a Arc<Member>, Option<&'a Arc<ToolContract>>);

impl Session {
    /// Runs tool `name` with `arguments` (the model's JSON text), under the
    /// owner's call timeout and the tool's contract.
    pub async fn call_tool(&self, name: &str, arguments: &str) -> Result<String, CallError> {
        self.call_tool_within(name, arguments, None).await
    }

    /// The same with its own deadline (`None`: the owner's call timeout;
    /// the tool's own timeout shortens either). Checking the contract counts
    /// against it; the approval callback does not: the deadline of the call
    /// itself starts when it is approved. Dropping the future cancels the
    /// call: the instance is replaced.
    pub async fn call_tool_within(
        &self,
        name: &str,
        arguments: &str,
        timeout: Option<Duration>,
    ) -> Result<String, CallError> {
        let (index, member, contract) = self.tool(name)?;
        let annotations = contract.map(|c| c.annotations());
        if annotations.is_some_and(|a| a.requires_approval) {
            let prepared = self.prepare_within(name, arguments, timeout).await?;
            return self.call_prepared_within(&prepared, timeout).await;
        }
        // No approval to ask: checked and run within one deadline, without
        // a `PreparedCall` (no copies on the way of every call).
        let deadline = self.deadline(member, timeout);
        let checked = self.checked(member, contract, name, arguments, deadline);
        let checked = checked.await?;
        let arguments = checked.arguments.as_deref().unwrap_or(arguments);
        let limit = annotations.and_then(|a| a.timeout);
        let safe = annotations.is_some_and(|a| a.concurrency_safe);
        self.run_tool(index, name, arguments, deadline, limit, safe)
            .await
    }

    /// Checks a call of tool `name` against its contract without running
    /// it: validates `arguments`, resolves its path parameters (within the
    /// owner's call timeout). The result says which files the call names;
    /// run it with [`Session::call_prepared`].
    pub async fn prepare_tool(
        &self,
        name: &str,
        arguments: &str,
    ) -> Result<PreparedCall, CallError> {
        self.prepare_within(name, arguments, None).await
    }

    async fn prepare_within(
        &self,
        name: &str,
        arguments: &str,
        timeout: Option<Duration>,
    ) -> Result<PreparedCall, CallError> {
        let (_, member, contract) = self.tool(name)?;
        let deadline = self.deadline(member, timeout);
        let checked = self.checked(member, contract, name, arguments, deadline);
        let checked = checked.await?;
        let annotations = contract.map(|c| c.annotations());
        Ok(PreparedCall {
            plugin: member.id().to_owned(),
            tool: name.to_owned(),
            arguments: checked.arguments.unwrap_or_else(|| arguments.to_owned()),
            paths: checked.paths,
            requires_approval: annotations.is_some_and(|a| a.requires_approval),
            concurrency_safe: annotations.is_some_and(|a| a.concurrency_safe),
            timeout: annotations.and_then(|a| a.timeout),
            member: member.clone(),
        })
    }

    /// Tool `name`: its owner's index and entry, and its contract.
    fn tool(&self, name: &str) -> Result<Tool<'_>, CallError> {
        let Some(&index) = self.members.tools.get(name) else {
            return Err(CallError::NoSuchTool {
                name: shown_name(name),
            });
        };
        let member = &self.members.list[index];
        Ok((index, member, member.contracts.tool(name)))
    }

    /// `arguments` checked against `contract` within `deadline`.
    async fn checked(
        &self,
        member: &Member,
        contract: Option<&Arc<ToolContract>>,
        name: &str,
        arguments: &str,
        deadline: Deadline,
    ) -> Result<Checked, CallError> {
        let Some(contract) = contract else {
            return Ok(Checked::default());
        };
        let label = || format!("tool.execute '{}'", shown_name(name));
        let roots = || self.roots(member);
        let checking = contract.check_within(arguments, roots, member.validate, deadline, label);
        checking.await
    }

    /// Runs a call [`Session::prepare_tool`] made, asking the set's approval
    /// callback first if the tool requires approval.
    pub async fn call_prepared(&self, call: &PreparedCall) -> Result<String, CallError> {
        self.call_prepared_within(call, None).await
    }

    /// The same with its own deadline (`None`: the owner's call timeout),
    /// counted once the call is approved.
    pub async fn call_prepared_within(
        &self,
        prepared: &PreparedCall,
        timeout: Option<Duration>,
    ) -> Result<String, CallError> {
        let label = || format!("tool.execute '{}'", shown_name(&prepared.tool));
        let index = self
            .members
            .list
            .iter()
            .position(|m| Arc::ptr_eq(m, &prepared.member));
        let Some(index) = index else {
            return Err(CallError::NoSuchTool {
                name: shown_name(&prepared.tool),
            });
        };
        if prepared.requires_approval {
            let refused = |reason| CallError::Refused {
                call: label(),
                reason,
            };
            let approver = self
                .approver
                .as_ref()
                .ok_or_else(|| refused(ContractError::NoApprover))?;
            if !approver(prepared).await {
                return Err(refused(ContractError::NotApproved));
            }
        }
        let member = &self.members.list[index];
        let deadline = self.deadline(member, timeout);
        let (tool, arguments) = (&prepared.tool, &prepared.arguments);
        let (limit, safe) = (prepared.timeout, prepared.concurrency_safe);
        self.run_tool(index, tool, arguments, deadline, limit, safe)
            .await
    }

    /// Runs tool `name` of plugin `index` with `arguments` as they are,
    /// within `deadline` and its own `limit` from when it starts; on an
    /// extra instance if the tool is `safe` to run concurrently and the
    /// session's instance is busy.
    async fn run_tool(
        &self,
        index: usize,
        name: &str,
        arguments: &str,
        deadline: Deadline,
        limit: Option<Duration>,
        safe: bool,
    ) -> Result<String, CallError> {
        let call_number = self.calls.fetch_add(1, Ordering::Relaxed) + 1;
        let member = &self.members.list[index];
        let label = || format!("tool.execute '{}'", shown_name(name));
        let spare;
        let slot = if safe {
            spare = self.free_slot(index);
            &spare
        } else {
            &self.slots[index]
        };
        let mut guard = locked(slot, member, &self.context, deadline, label).await?;
        let instance = instance_in(&mut guard, member)?;
        // The call's strings reuse the last call's buffers.
        let call = &mut instance.call;
        for (field, value) in [
            (&mut call.tool_name, name),
            (&mut call.arguments, arguments),
            (&mut call.session_id, &self.context.id),
        ] {
            field.clear();
            field.push_str(value);
        }
        call.tool_call_id.clear();
        call.tool_call_id.push_str(&self.context.id);
        call.tool_call_id.push('-');
        push_number(&mut call.tool_call_id, call_number);
        instance
            .host
            .call_tool_by_ref(&instance.call, deadline, limit)
            .await
    }

    /// A deadline from now: `timeout` or the owner's call timeout.
    fn deadline(&self, member: &Member, timeout: Option<Duration>) -> Deadline {
        Deadline::after(timeout.unwrap_or(member.limits.call_timeout))
    }

    /// Where `member`'s path parameters may point in this session.
    fn roots(&self, member: &Member) -> Roots {
        let snapshot = self.context.snapshot();
        let workspace = member.grant.workspace.clone().or_else(|| {
            let workspace = snapshot.as_ref()?.workspace.as_ref()?;
            Some(workspace.root_path.clone().into())
        });
        Roots::of(&member.policy, &member.grant, workspace.as_deref())
    }
}
