//! What a user writes to grant things: command-line flags or a TOML policy
//! file (`--policy FILE`), both as a [`PolicySpec`] of plain strings, turned
//! into a checked [`Grant`] and [`Limits`] by [`PolicySpec::resolve`].
//!
//! ```toml
//! grant = ["projectRead", "networkAccess"]   # or ["none"]; absent: as declared
//! workspace = "/home/me/project"   # or "{root}/out": under the host's root
//! allow-read = ["/usr/share/dict"]
//! allow-write = ["/tmp/plugin-out"]
//! allow-net = ["api.example.com:443", "*.example.org:*"]
//! env = ["LANG", "MODE=fast"]
//! timeout = 2.5          # seconds per call
//! max-memory = 256       # MiB
//! data-root = "/home/me/.lingxiagent/plugin-data"
//! storage-quota = 64     # MiB
//! task-timeout = 600     # seconds per background task
//! max-tasks = 4          # background tasks running at once
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Grant;
use super::wording::{Setting, worded};
use crate::Capability;
pub use crate::error::PolicyError;
use crate::limits::Limits;

/// Grant and limit settings as written by the user: the launcher's grant
/// flags (this struct is their `clap` arguments, with the `cli` feature)
/// and the keys of a policy file are the same fields, each declared here
/// once. [`PolicySpec::resolve`] checks them into the [`Grant`] and
/// [`Limits`] the sandbox uses. The doc comment of each field is also its
/// flag's help.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PolicySpec {
    /// Capabilities to grant, as wire names separated by commas
    /// (projectRead, projectWrite, processExecution, networkAccess), or `none`.
    /// Repeatable. Default: whatever the plugin's manifest declares.
    #[cfg_attr(feature = "cli", arg(long, value_name = "CAPS", value_delimiter = ','))]
    pub grant: Option<Vec<String>>,

    /// Workspace root to mount for projectRead/projectWrite. Default: the
    /// `workspace.rootPath` of the host's snapshots; `{root}/DIR` is DIR
    /// under that root, for whichever project the host opens.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    pub workspace: Option<PathBuf>,

    /// Also mount DIR read-only (needs projectRead or projectWrite); `{root}/DIR`
    /// is DIR under the host's workspace root. Repeatable.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    #[serde(default)]
    pub allow_read: Vec<PathBuf>,

    /// Also mount DIR read-write (needs projectWrite); `{root}/DIR` is DIR
    /// under the host's workspace root. Repeatable.
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    #[serde(default)]
    pub allow_write: Vec<PathBuf>,

    /// Allow network destinations host:port under networkAccess (e.g.
    /// api.example.com:443, *.example.com:*, 127.0.0.1:8000-8100). Repeatable.
    /// Without any, networkAccess reaches nothing; '*:*' is every destination.
    #[cfg_attr(feature = "cli", arg(long, value_name = "HOST:PORT"))]
    #[serde(default)]
    pub allow_net: Vec<String>,

    /// Pass an environment variable: KEY (its value at start) or KEY=VALUE.
    /// Repeatable. The plugin sees no other variable.
    #[cfg_attr(feature = "cli", arg(long, value_name = "KEY[=VALUE]"))]
    #[serde(default)]
    pub env: Vec<String>,

    /// Deadline of one call, in seconds [default: 2.5, under LingXi's 3.0 s
    /// watchdog so the host gets an explanatory error].
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECONDS"))]
    pub timeout: Option<f64>,

    /// Memory limit of the plugin instance, in MiB [default: 256].
    #[cfg_attr(feature = "cli", arg(long, value_name = "MIB"))]
    pub max_memory: Option<usize>,

    /// Root of the per-plugin data directories; the plugin gets
    /// `<DIR>/<plugin id>/`, mounted read-write at /lingxi/data
    /// [default: ~/.lingxiagent/plugin-data].
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "DIR", conflicts_with = "no_storage")
    )]
    pub data_root: Option<PathBuf>,

    /// Give the plugin no persistent storage.
    #[cfg_attr(feature = "cli", arg(long))]
    #[serde(default)]
    pub no_storage: bool,

    /// Size quota of the plugin's data directory, in MiB [default: 64].
    #[cfg_attr(feature = "cli", arg(long, value_name = "MIB"))]
    pub storage_quota: Option<u64>,

    /// Deadline of one background task, in seconds, from its start
    /// [default: 600]. A task is stopped then, whatever it does.
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECONDS"))]
    pub task_timeout: Option<f64>,

    /// Most background tasks the plugin may run at once [default: 4]; one
    /// more start is refused. 0 runs none.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub max_tasks: Option<usize>,

    /// Do not validate tool arguments against the tool's inputSchema (for
    /// plugins whose schemas are known to be wrong). Path parameters and
    /// per-tool timeouts still apply.
    #[cfg_attr(feature = "cli", arg(long))]
    #[serde(default)]
    pub no_validate: bool,
}

impl PolicySpec {
    /// Reads a TOML policy file. Unknown keys are errors: a typo in a
    /// security policy must not pass silently.
    pub fn from_file(path: &Path) -> Result<Self, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::from_toml(&text, path)
    }

    /// Parses the text of a policy file (`path` only names it in errors).
    pub fn from_toml(text: &str, path: &Path) -> Result<Self, PolicyError> {
        toml::from_str(text).map_err(|e| PolicyError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })
    }

    /// The same settings with every directory made absolute against the
    /// current directory (for flags; a policy file's must be absolute).
    pub fn with_absolute_paths(mut self) -> Result<PolicySpec, PolicyError> {
        fn absolute(setting: Setting, path: &mut PathBuf) -> Result<(), PolicyError> {
            if super::under_root::parse(path).is_some() {
                return Ok(());
            }
            *path = std::path::absolute(&*path).map_err(|source| PolicyError::Directory {
                setting,
                path: path.clone(),
                source,
            })?;
            Ok(())
        }
        if let Some(dir) = &mut self.workspace {
            absolute(Setting::Workspace, dir)?;
        }
        for dir in &mut self.allow_read {
            absolute(Setting::AllowRead, dir)?;
        }
        for dir in &mut self.allow_write {
            absolute(Setting::AllowWrite, dir)?;
        }
        if let Some(dir) = &mut self.data_root {
            absolute(Setting::DataRoot, dir)?;
        }
        Ok(self)
    }

    /// Lays `over` on top of `self`: its scalars win, its lists are added.
    pub fn merge(mut self, over: PolicySpec) -> PolicySpec {
        self.grant = over.grant.or(self.grant);
        self.workspace = over.workspace.or(self.workspace);
        self.allow_read.extend(over.allow_read);
        self.allow_write.extend(over.allow_write);
        self.allow_net.extend(over.allow_net);
        self.env.extend(over.env);
        self.timeout = over.timeout.or(self.timeout);
        self.max_memory = over.max_memory.or(self.max_memory);
        self.data_root = over.data_root.or(self.data_root);
        self.no_storage |= over.no_storage;
        self.storage_quota = over.storage_quota.or(self.storage_quota);
        self.no_validate |= over.no_validate;
        self.task_timeout = over.task_timeout.or(self.task_timeout);
        self.max_tasks = over.max_tasks.or(self.max_tasks);
        self
    }

    /// Checks everything and resolves directories to absolute paths.
    /// `lookup_env` reads the launcher's environment for bare `KEY` entries.
    pub fn resolve(
        &self,
        lookup_env: impl Fn(&str) -> Option<String>,
    ) -> Result<(Grant, Limits), PolicyError> {
        let capabilities = match &self.grant {
            None => None,
            Some(names) => Some(parse_capabilities(names)?),
        };
        let folders = super::folders::resolve(
            self.workspace.as_slice(),
            &self.allow_read,
            &self.allow_write,
        )?;
        let grant = Grant {
            capabilities,
            workspace: folders.workspace,
            in_root: folders.in_root,
            allow_read: folders.allow_read,
            allow_write: folders.allow_write,
            mounted_from: folders.mounted_from,
            allow_net: self
                .allow_net
                .iter()
                .map(|r| r.parse())
                .collect::<Result<_, _>>()?,
            env: parse_env(&self.env, lookup_env)?,
            data_root: match (self.no_storage, &self.data_root) {
                (true, _) => None,
                (false, Some(root)) => Some(data_root(root)?),
                (false, None) => crate::storage::default_root(),
            },
            data_dir: None,
        };
        let mut limits = Limits::default();
        if let Some(seconds) = self.timeout {
            // Checked as a Duration: 1e-300 s is above 0 but a zero deadline.
            limits.call_timeout = Duration::try_from_secs_f64(seconds)
                .ok()
                .filter(|t| !t.is_zero() && *t <= Duration::from_secs(3600))
                .ok_or_else(|| PolicyError::Limit {
                    setting: Setting::Timeout,
                    value: seconds.to_string(),
                    expected: "give a number of seconds above 0 and at most 3600",
                    example: Some("2.5"),
                })?;
        }
        if let Some(seconds) = self.task_timeout {
            limits.task_timeout = Duration::try_from_secs_f64(seconds)
                .ok()
                .filter(|t| *t >= Duration::from_millis(1) && *t <= Duration::from_secs(86_400))
                .ok_or_else(|| PolicyError::Limit {
                    setting: Setting::TaskTimeout,
                    value: seconds.to_string(),
                    expected: "give a number of seconds from 0.001 to 86400 (a day)",
                    example: Some("600"),
                })?;
        }
        if let Some(n) = self.max_tasks {
            limits.max_tasks = n;
        }
        if let Some(mib) = self.max_memory {
            // A wasm32 plugin addresses its memory with 32 bits: more than
            // 4 GiB is a limit it can never reach, so it limits nothing.
            limits.max_memory_bytes = mib
                .checked_mul(1024 * 1024)
                .filter(|_| (1..=crate::limits::MAX_MEMORY_MIB).contains(&mib))
                .ok_or_else(|| PolicyError::Limit {
                    setting: Setting::MaxMemory,
                    value: mib.to_string(),
                    expected: "give a number of MiB from 1 to 4096: a wasm32 plugin addresses its memory with 32 bits, so it can never use more than 4 GiB",
                    example: Some("256"),
                })?;
        }
        if let Some(mib) = self.storage_quota {
            limits.max_storage_bytes =
                mib.checked_mul(1024 * 1024)
                    .ok_or_else(|| PolicyError::Limit {
                        setting: Setting::StorageQuota,
                        value: mib.to_string(),
                        expected: "too large",
                        example: None,
                    })?;
        }
        Ok((grant, limits))
    }
}

/// The data root: absolute, canonical if it exists (it is created on first
/// use), and without `..` if it does not.
fn data_root(root: &Path) -> Result<PathBuf, PolicyError> {
    let setting = Setting::DataRoot;
    if !root.is_absolute() {
        return Err(PolicyError::Relative {
            setting,
            path: root.to_owned(),
        });
    }
    match dunce::canonicalize(root) {
        Ok(canonical) => Ok(canonical),
        Err(_)
            if root
                .components()
                .all(|c| !matches!(c, std::path::Component::ParentDir)) =>
        {
            Ok(root.to_owned())
        }
        Err(source) => Err(PolicyError::Directory {
            setting,
            path: root.to_owned(),
            source,
        }),
    }
}

/// Capability wire names; `none` stands for no capability.
pub fn parse_capabilities(names: &[String]) -> Result<Vec<Capability>, PolicyError> {
    let names: Vec<&str> = names
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .collect();
    if names.contains(&"none") && names.len() > 1 {
        return Err(PolicyError::Contradiction(names.join(",")));
    }
    let mut granted = Vec::new();
    for name in names.into_iter().filter(|n| *n != "none") {
        let capability =
            Capability::from_wire(name).ok_or_else(|| PolicyError::Capability(name.to_owned()))?;
        if !granted.contains(&capability) {
            granted.push(capability);
        }
    }
    Ok(granted)
}

fn parse_env(
    entries: &[String],
    lookup_env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, PolicyError> {
    let mut env = Vec::new();
    for entry in entries {
        let (key, value) = match entry.split_once('=') {
            Some((key, value)) => (key, Some(value.to_owned())),
            None => (entry.as_str(), None),
        };
        if key.is_empty() || key.contains('\0') {
            return Err(PolicyError::Env(entry.clone()));
        }
        match value.or_else(|| lookup_env(key)) {
            Some(value) => env.push((key.to_owned(), value)),
            None => tracing::warn!(
                "{}: not set in the launcher's environment; the plugin will not see it",
                worded(Setting::Env, key)
            ),
        }
    }
    Ok(env)
}

#[cfg(test)]
mod tests;
