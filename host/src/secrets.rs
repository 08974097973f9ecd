//! The host side of the plugin's secrets: `host-info.secret` (a granted
//! secret's value handed over and named in the call's receipt, or why
//! not, naming the setting that would grant it), and hiding every value in
//! what the host writes of a call: its result, its error text, its
//! receipt (output and log lines are hidden where they are emitted,
//! [`Origin::emit`](crate::observe)). Which secrets and hosts: the policy's
//! [`SecretGrant`] and [`Redactor`]; where a bound secret is refused on
//! its way out: `linker/http_gate.rs`.

use std::sync::Arc;

use crate::effects::Effects;
use crate::policy::Setting;
use crate::policy::receipt::Receipt;
use crate::policy::secrets::{Redactor, SecretGrant};
use crate::policy::wording::{program, worded};

/// The secrets one instance may be handed.
#[derive(Clone, Default)]
pub(crate) struct PluginSecrets {
    grants: Arc<[SecretGrant]>,
}

impl PluginSecrets {
    pub(crate) fn of(grants: &[SecretGrant]) -> Self {
        PluginSecrets {
            grants: grants.into(),
        }
    }

    /// `host-info.secret(name)`: the value, recorded by name; else why
    /// not (a refusal the receipt keeps, with the setting that allows it).
    pub(crate) fn hand(
        &self,
        plugin: &str,
        name: &str,
        effects: &Effects,
    ) -> Result<String, String> {
        let shown = crate::text::shown_name(name);
        let Some(grant) = self.grants.iter().find(|g| g.name == name) else {
            let allow = worded(Setting::Secret, &shown);
            effects.refused(|| format!("secret {shown}"), || allow.clone());
            return Err(format!(
                "secret {shown} is not granted to this plugin: grant it with {allow}"
            ));
        };
        match &grant.value {
            Some(value) => {
                effects.secret(name);
                Ok(value.expose().to_owned())
            }
            None => match &grant.unread {
                Some(why) => Err(format!(
                    "secret {shown} could not be read when the plugin started: {why}"
                )),
                None => Err(format!(
                    "secret {shown} is granted but has no value: set it with `{} secret set {plugin} {shown}`",
                    program()
                )),
            },
        }
    }
}

/// `receipt` with every secret's value hidden (a path or a destination the
/// plugin named with it).
pub(crate) fn hide_in_receipt(redactor: &Redactor, receipt: Receipt) -> Receipt {
    let Ok(mut json) = serde_json::to_value(&receipt) else {
        return receipt;
    };
    if !redactor.redact_json(&mut json) {
        return receipt;
    }
    serde_json::from_value(json).unwrap_or(receipt)
}
