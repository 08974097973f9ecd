//! A plugin's tool contracts: compiled from its handshake, whether they
//! validate, the roots its path parameters may point into, and a tool call
//! checked against them (see [`crate::contract`]).

use std::sync::Arc;

use super::PluginHost;
use super::call::Call;
use crate::bindings::lingxi::plugin::types as wit;
use crate::contract::{Checked, ContractError, Contracts, Roots, ToolContract};
use crate::deadline::{Deadline, Expired};
use crate::error::CallError;

impl PluginHost {
    /// Whether tool arguments are validated against their tool's
    /// `inputSchema` before the plugin sees them (on by default; off is for
    /// plugins whose schemas are known to be wrong). Path parameters and
    /// per-tool timeouts apply either way.
    pub fn set_validation(&mut self, validate: bool) {
        self.validate = validate;
    }

    /// Whether tool arguments are validated.
    pub fn validates(&self) -> bool {
        self.validate
    }

    /// The tools' contracts, from the last accepted handshake.
    pub fn contracts(&self) -> Option<&Arc<Contracts>> {
        self.contracts.as_ref()
    }

    /// Contracts compiled elsewhere from the same plugin (a set's), so the
    /// handshake of this instance does not compile them again.
    pub(crate) fn share_contracts(&mut self, contracts: Arc<Contracts>) {
        self.contracts = Some(contracts);
    }

    /// The directories path parameters may point into, under the latest
    /// snapshot's root (the folders named under it as found when the
    /// snapshot was accepted, or when the instance last started).
    pub fn roots(&self) -> Roots {
        let mounts = &self.mounts;
        Roots::of(&self.policy, mounts.grant(&self.grant), self.known_root())
    }

    /// `tool.execute` under its tool's contract, within `deadline`.
    pub(crate) async fn call_tool_checked(
        &mut self,
        call: &wit::ToolCall,
        deadline: Deadline,
    ) -> Result<String, CallError> {
        if self.contracts.is_none() {
            // A tool before `plugin.initialize` activates the plugin lazily
            // (spec §3): activate it here, as an initialize without params
            // would, so its contracts are known before its first call.
            let request = wit::InitializeRequest {
                host_ipc_version: None,
                core_version: None,
            };
            // The receipt asked for is the tool call's.
            let receipt = self.recording.take();
            self.initialize_by(request, deadline).await?;
            self.recording = receipt;
        }
        let contracts = self.contracts.as_ref();
        let Some(tool) = contracts.and_then(|c| c.tool(&call.tool_name)).cloned() else {
            return self.call_tool_by_ref(call, deadline, None).await;
        };
        let tool_limit = tool.annotations().timeout;
        let label = || Call::Tool(call).to_string();
        let checked = check_by(
            &tool,
            &call.arguments,
            || self.roots(),
            self.validate,
            deadline,
            label,
        )
        .await?;
        match checked.arguments {
            Some(arguments) => {
                let call = wit::ToolCall {
                    arguments,
                    ..call.clone()
                };
                self.call_tool_by_ref(&call, deadline, tool_limit).await
            }
            None => self.call_tool_by_ref(call, deadline, tool_limit).await,
        }
    }
}

/// [`ToolContract::check`] within `deadline`, off the async thread when it
/// is heavy ([`ToolContract::is_heavy`]); `call` names the call in errors.
pub(crate) async fn check_by(
    contract: &Arc<ToolContract>,
    arguments: &str,
    roots: impl FnOnce() -> Roots,
    validate: bool,
    deadline: Deadline,
    call: impl Fn() -> String,
) -> Result<Checked, CallError> {
    let refused = |reason| CallError::Refused {
        call: call(),
        reason,
    };
    if !contract.is_heavy(arguments) {
        return contract
            .check(arguments, &Roots::default(), validate)
            .map_err(refused);
    }
    let (contract, arguments, roots) = (contract.clone(), arguments.to_owned(), roots());
    let checking =
        tokio::task::spawn_blocking(move || contract.check(&arguments, &roots, validate));
    match deadline.run(checking).await {
        Ok(Ok(checked)) => checked.map_err(refused),
        Ok(Err(e)) => Err(refused(ContractError::Unchecked {
            reason: e.to_string(),
        })),
        Err(Expired) => Err(CallError::Timeout {
            call: format!("{} (checking its path parameters)", call()),
            limit: deadline.budget(),
        }),
    }
}
