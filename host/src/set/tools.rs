//! Tool calls of a [`Session`], under their tool's contract: the arguments
//! are validated and the path parameters resolved first
//! ([`Session::prepare_tool`], so a host sees which files a call will touch
//! before it runs), a tool that requires approval waits for the set's
//! approval callback, and the tool's own timeout shortens the deadline.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::approval::PreparedCall;
use super::instance::{instance_in, locked, push_number};
use super::{Member, Session};
use crate::contract::{Checked, ContractError, Contracts, Roots, ToolContract};
use crate::deadline::Deadline;
use crate::effects::ReceiptSlot;
use crate::error::CallError;
use crate::options::CallOptions;
use crate::text::shown_name;

/// Who answers a tool: its owner's index in [`Members::list`](super::Members) and the
/// tool's contract, if it declared one.
#[derive(Clone)]
pub(crate) struct ToolOwner {
    pub(crate) index: usize,
    pub(crate) contract: Option<Arc<ToolContract>>,
}

impl ToolOwner {
    /// Tool `name` of the `index`th plugin, whose contracts are `contracts`.
    pub(super) fn of(index: usize, contracts: &Contracts, name: &str) -> ToolOwner {
        ToolOwner {
            index,
            contract: contracts.tool(name).cloned(),
        }
    }
}

/// A tool of the session: its owner's index and entry, and its contract.
type Tool<'a> = (usize, &'a Arc<Member>, Option<&'a Arc<ToolContract>>);

/// How one tool call runs: within `deadline`, and within its own `limit`
/// from when it starts; on an extra instance if the tool is `safe` to run
/// concurrently and the session's instance is busy; leaving its receipt
/// in `receipt`.
struct Run<'a> {
    deadline: Deadline,
    limit: Option<Duration>,
    safe: bool,
    receipt: Option<&'a ReceiptSlot>,
}

impl Session {
    /// Runs tool `name` with `arguments` (the model's JSON text) under the
    /// tool's contract, within the options' deadline (by default the owner's
    /// call timeout; the tool's own timeout shortens either). Checking the
    /// contract counts against it; the approval callback does not: the
    /// deadline of the call itself starts when it is approved. Dropping the
    /// future cancels the call: the instance is replaced.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: &str,
        options: CallOptions,
    ) -> Result<String, CallError> {
        let (index, member, contract) = self.tool(name)?;
        let annotations = contract.map(|c| c.annotations());
        // Steps with futures of their own are boxed, so the future of
        // every call stays small (a call's future is as large as the
        // largest it may hold, and is moved as a whole).
        if annotations.is_some_and(|a| a.requires_approval) {
            let prepared = Box::pin(self.prepare(name, arguments, &options)).await?;
            return Box::pin(self.call_prepared(&prepared, options)).await;
        }
        // No approval to ask: checked and run within one deadline, without
        // a `PreparedCall` (no copies on the way of every call).
        let deadline = options.deadline(&member.limits);
        // Arguments nothing looks at make no future on the way of the call.
        let checked = match contract {
            Some(c) if c.looks_at_arguments(member.validate) => {
                Box::pin(self.checked(member, contract, name, arguments, deadline)).await?
            }
            _ => Checked::default(),
        };
        let arguments = checked.arguments.as_deref().unwrap_or(arguments);
        let run = Run {
            deadline,
            limit: annotations.and_then(|a| a.timeout),
            safe: annotations.is_some_and(|a| a.concurrency_safe),
            receipt: options.receipt.as_ref(),
        };
        self.run_tool(index, name, arguments, run).await
    }

    /// Checks a call of tool `name` against its contract without running
    /// it: validates `arguments`, resolves its path parameters (within the
    /// options' deadline). The result says which files the call names; run
    /// it with [`Session::call_prepared`].
    pub async fn prepare_tool(
        &self,
        name: &str,
        arguments: &str,
        options: CallOptions,
    ) -> Result<PreparedCall, CallError> {
        self.prepare(name, arguments, &options).await
    }

    async fn prepare(
        &self,
        name: &str,
        arguments: &str,
        options: &CallOptions,
    ) -> Result<PreparedCall, CallError> {
        let (_, member, contract) = self.tool(name)?;
        let deadline = options.deadline(&member.limits);
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
        let Some(owner) = self.members.tools.get(name) else {
            return Err(CallError::NoSuchTool {
                name: shown_name(name),
            });
        };
        let member = &self.members.list[owner.index];
        Ok((owner.index, member, owner.contract.as_ref()))
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
        crate::plugin::check_by(contract, arguments, roots, member.validate, deadline, label).await
    }

    /// Runs a call [`Session::prepare_tool`] made, asking the set's approval
    /// callback first if the tool requires approval; the options' deadline
    /// counts from the approval.
    pub async fn call_prepared(
        &self,
        prepared: &PreparedCall,
        options: CallOptions,
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
        let run = Run {
            deadline: options.deadline(&member.limits),
            limit: prepared.timeout,
            safe: prepared.concurrency_safe,
            receipt: options.receipt.as_ref(),
        };
        self.run_tool(index, &prepared.tool, &prepared.arguments, run)
            .await
    }

    /// Runs tool `name` of plugin `index` with `arguments` as they are, as
    /// `run` says.
    async fn run_tool(
        &self,
        index: usize,
        name: &str,
        arguments: &str,
        run: Run<'_>,
    ) -> Result<String, CallError> {
        let Run {
            deadline,
            limit,
            safe,
            receipt,
        } = run;
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
        instance.host.record_into(receipt);
        instance
            .host
            .call_tool_by_ref(&instance.call, deadline, limit)
            .await
    }

    /// Where `member`'s path parameters may point in this session.
    fn roots(&self, member: &Member) -> Roots {
        let snapshot = self.context.snapshot();
        let root = snapshot.as_ref().and_then(|s| s.workspace.as_ref());
        let folders = member
            .grant
            .folders(root.map(|w| std::path::Path::new(&w.root_path)));
        Roots::of(&member.policy, &folders.grant, folders.workspace.as_deref())
    }
}
