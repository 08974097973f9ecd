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

use super::Grant;
use super::settings::Setting;
use super::wording::worded;
use crate::Capability;
pub use crate::error::PolicyError;
use crate::limits::{Limits, MAX_CALL_TIMEOUT, TASK_TIMEOUT_RANGE};

pub use crate::settings::PolicySpec;

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
        // Every setting by name: a new folder setting does not compile
        // until it is made absolute here (or said to be no folder).
        let PolicySpec {
            workspace,
            allow_read,
            allow_write,
            data_root,
            grant: _,
            allow_net: _,
            env: _,
            secret: _,
            timeout: _,
            max_memory: _,
            no_storage: _,
            storage_quota: _,
            task_timeout: _,
            max_tasks: _,
            no_validate: _,
        } = &mut self;
        if let Some(dir) = workspace {
            absolute(Setting::Workspace, dir)?;
        }
        for dir in allow_read {
            absolute(Setting::AllowRead, dir)?;
        }
        for dir in allow_write {
            absolute(Setting::AllowWrite, dir)?;
        }
        if let Some(dir) = data_root {
            absolute(Setting::DataRoot, dir)?;
        }
        Ok(self)
    }

    /// [`PolicySpec::resolve`] with this process's environment: a bare
    /// `env` entry `KEY` passes the value `KEY` has here.
    pub fn resolve_from_environment(&self) -> Result<(Grant, Limits), PolicyError> {
        self.resolve(|key| std::env::var(key).ok())
    }

    /// Checks everything and resolves directories to absolute paths.
    /// `lookup_env` reads the environment of the process that runs the
    /// plugin for bare `KEY` entries.
    pub fn resolve(
        &self,
        lookup_env: impl Fn(&str) -> Option<String>,
    ) -> Result<(Grant, Limits), PolicyError> {
        // Every field, by name: a setting added to `settings.rs` does not
        // compile until it is resolved here (or said to be a front end's).
        let PolicySpec {
            grant,
            workspace,
            allow_read,
            allow_write,
            allow_net,
            env,
            secret,
            timeout,
            max_memory,
            data_root: data_root_dir,
            no_storage,
            storage_quota,
            task_timeout,
            max_tasks,
            // The front end's: whether it checks arguments against schemas.
            no_validate: _,
        } = self;
        let capabilities = match grant {
            None => None,
            Some(names) => Some(parse_capabilities(names)?),
        };
        let folders = super::folders::resolve(workspace.as_slice(), allow_read, allow_write)?;
        let grant = Grant {
            capabilities,
            workspace: folders.workspace,
            in_root: folders.in_root,
            allow_read: folders.allow_read,
            allow_write: folders.allow_write,
            mounted_from: folders.mounted_from,
            allow_net: allow_net
                .iter()
                .map(|r| r.parse())
                .collect::<Result<_, _>>()?,
            env: parse_env(env, lookup_env)?,
            secrets: crate::secrets::parse_secret_rules(secret).map_err(PolicyError::Secret)?,
            data_root: match (*no_storage, data_root_dir) {
                (true, _) => None,
                (false, Some(root)) => Some(data_root(root)?),
                (false, None) => crate::storage::default_root(),
            },
            data_dir: None,
        };
        let mut limits = Limits::default();
        if let Some(seconds) = *timeout {
            // Checked as a Duration: 1e-300 s is above 0 but a zero deadline.
            limits.call_timeout = Duration::try_from_secs_f64(seconds)
                .ok()
                .filter(|t| !t.is_zero() && *t <= MAX_CALL_TIMEOUT)
                .ok_or_else(|| PolicyError::Limit {
                    setting: Setting::Timeout,
                    value: seconds.to_string(),
                    expected: "give a number of seconds above 0 and at most 3600",
                    example: Some("2.5"),
                })?;
        }
        if let Some(seconds) = *task_timeout {
            limits.task_timeout = Duration::try_from_secs_f64(seconds)
                .ok()
                .filter(|t| TASK_TIMEOUT_RANGE.contains(t))
                .ok_or_else(|| PolicyError::Limit {
                    setting: Setting::TaskTimeout,
                    value: seconds.to_string(),
                    expected: "give a number of seconds from 0.001 to 86400 (a day)",
                    example: Some("600"),
                })?;
        }
        if let Some(n) = *max_tasks {
            limits.max_tasks = n;
        }
        if let Some(mib) = *max_memory {
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
        if let Some(mib) = *storage_quota {
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
                "{}: not set in {}'s environment; the plugin will not see it",
                worded(Setting::Env, key),
                crate::wording::program()
            ),
        }
    }
    Ok(env)
}

#[cfg(test)]
mod tests;
