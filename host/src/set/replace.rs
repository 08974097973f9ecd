//! Replacing a plugin of a set (a new version of it, or new grants)
//! without silent escalation: a replacement that could reach anything the
//! plugin in place could not (`policy/src/upgrade.rs`) is refused unless the
//! caller accepts it explicitly. Sessions already open keep the plugin
//! they were opened with.

use std::sync::Arc;

use super::{Members, PluginOptions, PluginSet};
use crate::bindings::lingxi::plugin::types as wit;
use crate::engine::PluginComponent;
use crate::error::SetError;
use crate::policy::upgrade::{Reach, increases};
use crate::text::shown_name;

/// Whether a replacement may reach more than the plugin it replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewGrants {
    /// Refuse it, naming every increase ([`SetError::NewGrants`]).
    Refuse,
    /// Accept it: the caller showed the increases to the user, who agreed.
    Accept,
}

impl PluginSet {
    /// Puts `component` in the place of the plugin with its id, for
    /// sessions opened from now on: loaded and checked as
    /// [`PluginSet::add`] checks a plugin (names, contracts, clashes with
    /// the others). A replacement that could reach more than the plugin in
    /// place (a capability it declares or is granted, a folder, a host
    /// rule, a variable, storage) is refused unless `new_grants` accepts
    /// it. On any refusal the set is unchanged.
    pub async fn replace(
        &mut self,
        component: PluginComponent,
        source: &str,
        options: PluginOptions,
        new_grants: NewGrants,
    ) -> Result<&wit::Manifest, SetError> {
        let id = component.manifest().id.clone();
        let Some(index) = self.members.list.iter().position(|m| m.id() == id) else {
            return Err(SetError::NotInSet {
                plugin: shown_name(&id),
                from: source.to_owned(),
            });
        };
        let old = &self.members.list[index];
        let before = Reach::of_grant(&old.component.declared(), &old.grant, old.validate);
        let after = Reach::of_grant(
            &component.declared(),
            &options.grant,
            options.validate_arguments,
        );
        let more = increases(&before, &after);
        if !more.is_empty() && new_grants == NewGrants::Refuse {
            return Err(SetError::NewGrants {
                plugin: shown_name(&id),
                from: source.to_owned(),
                increases: more,
            });
        }
        let kept = self.members.clone();
        let others = kept.list.iter().filter(|m| m.id() != id).cloned().collect();
        self.members = Arc::new(Members::of(others));
        if let Err(refused) = self.add(component, source, options).await {
            self.members = kept;
            return Err(refused);
        }
        // Back in the place of the one it replaced.
        let mut list = self.members.list.clone();
        if let Some(new) = list.pop() {
            list.insert(index, new);
        }
        self.members = Arc::new(Members::of(list));
        Ok(self.members.list[index].component.manifest())
    }
}

impl Members {
    /// The members `list`, with who owns which name.
    fn of(list: Vec<Arc<super::Member>>) -> Members {
        let mut members = Members {
            list,
            ..Members::default()
        };
        for (index, member) in members.list.iter().enumerate() {
            for tool in &member.handshake.tools {
                let owner = super::tools::ToolOwner::of(index, &member.contracts, &tool.name);
                members.tools.insert(tool.name.clone(), owner);
            }
            for command in &member.handshake.commands {
                for name in std::iter::once(&command.name).chain(&command.aliases) {
                    members.commands.insert(name.to_lowercase(), index);
                }
            }
        }
        members
    }
}
