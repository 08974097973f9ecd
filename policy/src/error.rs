//! Why a policy cannot be used ([`PolicyError`]): each error names the
//! setting it is about as data, worded in the process's words.

use std::path::PathBuf;

use crate::net::NetRuleError;
use crate::settings::Setting;
use crate::wording::worded;

/// A policy that cannot be used. Each error names the setting it is about
/// as data; its text words it in the process's words ([`super::wording`]).
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The policy file could not be read.
    #[error("cannot read policy file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The policy file is not valid.
    #[error("policy file {}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the TOML parser said.
        message: String,
    },
    /// A secret setting that cannot be used (the text names it).
    #[error("{0}")]
    Secret(String),
    /// An unknown capability name.
    #[error(
        "{}: unknown capability; use projectRead, projectWrite, processExecution, networkAccess or none",
        worded(Setting::Grant, .0)
    )]
    Capability(String),
    /// A directory that does not exist or cannot be resolved.
    #[error("{}: {source}; give an existing directory", worded(*setting, path.display()))]
    Directory {
        /// The setting.
        setting: Setting,
        /// The directory.
        path: PathBuf,
        /// Why it cannot be used.
        source: std::io::Error,
    },
    /// A relative directory: it would be resolved against whatever folder
    /// the launcher happens to run in (a LingXi host starts plugins in the
    /// plugin's own folder).
    #[error(
        "{}: directories in a policy must be absolute paths (a relative one would depend on the folder the plugin is started in); write it from /",
        worded(*setting, path.display())
    )]
    Relative {
        /// The setting.
        setting: Setting,
        /// The directory as given.
        path: PathBuf,
    },
    /// A folder under the root written in a form that could leave it.
    #[error(
        "{}: after {{root}} only folder names may follow, never .. (e.g. {{root}}/out)",
        worded(*setting, path.display())
    )]
    UnderRoot {
        /// The setting.
        setting: Setting,
        /// The folder as given.
        path: PathBuf,
    },
    /// A bad network rule.
    #[error(transparent)]
    Net(#[from] NetRuleError),
    /// `none` given together with capabilities.
    #[error(
        "{}: `none` cannot be combined with capabilities; give either none or the capabilities to grant",
        worded(Setting::Grant, .0)
    )]
    Contradiction(String),
    /// A bad environment entry.
    #[error("{}: write KEY or KEY=VALUE with a non-empty KEY", worded(Setting::Env, .0))]
    Env(String),
    /// A limit out of its range.
    #[error("{}: {expected}{}", worded(*setting, value), example.map(|e| format!(", e.g. {}", worded(*setting, e))).unwrap_or_default())]
    Limit {
        /// The setting.
        setting: Setting,
        /// The value given.
        value: String,
        /// What it must be.
        expected: &'static str,
        /// A good value.
        example: Option<&'static str>,
    },
}
