//! Where a plugin's secrets are kept, and handing them to it at start.
//!
//! A value lives in the platform's keyring ([`keyring`]: the macOS
//! Keychain, the Windows Credential Manager, the freedesktop Secret
//! Service on Linux), under service `lingxi-wasm/PLUGIN_ID` and account
//! NAME. Where no keyring is reachable (a headless Linux), the user may
//! choose, explicitly (`secret set --store file`), the private file
//! `~/.lingxiagent/secrets.json`: the user's own, writable by nobody else,
//! as every folder above it (the same check as the trusted-keys file). The
//! same file lists every secret's name and store, never a keyring value,
//! so that `secret list` can name them (a keyring cannot be searched the
//! same way on every platform).
//!
//! A value is read when the plugin starts ([`load_values`]), by the
//! plugin's own id: a packed plugin LingXi spawns (no arguments, an
//! allow-list environment) reads its granted secrets itself. Nothing
//! secret is ever written into a packed file.

pub mod keyring;
mod shelf;

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use lingxi_wasm_host::policy::limits::KEYRING_START_WAIT;
use lingxi_wasm_host::policy::secrets::{Redactor, SecretGrant, SecretValue};
use lingxi_wasm_host::policy::{Grant, Limits, PolicyError, PolicySpec};

pub use shelf::{Entry, Shelf, Store};

/// Why a secret could not be stored, read or removed.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// No keyring answered (the reason as the platform gave it).
    #[error(
        "no keyring is reachable: {reason}. Start the platform's keyring (on Linux a Secret Service such as gnome-keyring-daemon on the session bus), or keep the secret in the private file {file} instead with `secret set --store file`"
    )]
    NoKeyring {
        /// What the platform said.
        reason: String,
        /// The file store's path, as the fallback.
        file: String,
    },
    /// The keyring did not answer in time (locked, waiting on a prompt).
    #[error(
        "the keyring did not answer within {seconds:.1} s (is it locked, or waiting for a password?); unlock it and try again"
    )]
    KeyringTimeout {
        /// How long it was given, in seconds.
        seconds: f64,
    },
    /// The keyring answered with an error.
    #[error("the keyring refused: {0}")]
    Keyring(String),
    /// The secrets file cannot be used.
    #[error("secrets file {path}: {why}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// No home folder to keep the secrets file in.
    #[error("no home folder: set HOME (USERPROFILE on Windows) to keep secrets")]
    NoHome,
    /// The name or the value cannot be a secret's.
    #[error("{0}")]
    Invalid(String),
}

/// `spec` resolved for plugin `plugin_id`, with its granted secrets' values
/// read ([`load_values`]): how a plugin this process runs gets its grants.
pub fn resolve(spec: &PolicySpec, plugin_id: &str) -> Result<(Grant, Limits), PolicyError> {
    let (mut grant, limits) = spec.resolve_from_environment()?;
    load_values(&mut grant, plugin_id);
    Ok((grant, limits))
}

/// Reads the value of every secret `grant` names for plugin `plugin_id`
/// from where it is kept. A secret without a value, or a store that does
/// not answer, is said on stderr (naming the command that sets it) and the
/// plugin starts all the same: asking for that secret tells it why. The
/// keyring is given [`KEYRING_START_WAIT`] in all: once it failed or did
/// not answer, it is not asked again.
pub fn load_values(grant: &mut Grant, plugin_id: &str) {
    if grant.secrets.is_empty() {
        return;
    }
    let shelf = match Shelf::open() {
        Ok(shelf) => shelf,
        Err(e) => {
            tracing::warn!(plugin = %plugin_id, "its secrets are not read: {e}");
            for secret in &mut grant.secrets {
                secret.unread = Some(e.to_string());
            }
            return;
        }
    };
    let started = Instant::now();
    let mut keyring_down: Option<String> = None;
    for secret in &mut grant.secrets {
        let wait = KEYRING_START_WAIT.saturating_sub(started.elapsed());
        let read = match &keyring_down {
            Some(why) if !shelf.in_file(plugin_id, &secret.name) => Err(why.clone()),
            _ => shelf.get(plugin_id, &secret.name, wait).map_err(|e| {
                let why = e.to_string();
                if matches!(
                    e,
                    SecretError::NoKeyring { .. } | SecretError::KeyringTimeout { .. }
                ) {
                    keyring_down = Some(why.clone());
                }
                why
            }),
        };
        match read {
            Ok(Some(value)) => secret.value = Some(value),
            Ok(None) => tracing::warn!(
                plugin = %plugin_id,
                "secret {} is granted but not set: set it with `{} secret set {plugin_id} {}`",
                secret.name,
                lingxi_wasm_host::policy::wording::program(),
                secret.name
            ),
            Err(why) => {
                tracing::warn!(plugin = %plugin_id, "secret {} cannot be read: {why}", secret.name);
                secret.unread = Some(why);
            }
        }
    }
    hide_in_log(&grant.secrets);
}

/// Every value this process read (the grants that hold them, and their
/// redactor), hidden in every line it logs, a dependency's trace line too:
/// the last guard, behind the host's own.
struct Hidden {
    grants: Vec<SecretGrant>,
    redactor: Option<Arc<Redactor>>,
}

static HIDDEN: RwLock<Hidden> = RwLock::new(Hidden {
    grants: Vec::new(),
    redactor: None,
});

fn hide_in_log(secrets: &[SecretGrant]) {
    let mut hidden = HIDDEN.write().unwrap_or_else(|e| e.into_inner());
    hidden
        .grants
        .extend(secrets.iter().filter(|s| s.value.is_some()).cloned());
    hidden.redactor = Redactor::of(&hidden.grants);
}

/// `line` as this process may log it: every value it read hidden.
pub fn hidden_in_log(line: &str) -> Cow<'_, str> {
    let redactor = HIDDEN
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .redactor
        .clone();
    match redactor {
        Some(redactor) => redactor.redact(line),
        None => Cow::Borrowed(line),
    }
}

/// A value as the user gave it, checked.
pub fn value_of(text: &str) -> Result<SecretValue, SecretError> {
    SecretValue::new(text).map_err(SecretError::Invalid)
}
