//! How a message names a setting the user can change. The library's errors,
//! reports and log lines say which setting would allow or raise something as
//! data (a [`Setting`]); the words are the front end's: the launcher writes
//! flags (`--allow-net api.example.com:443`), the library's own default
//! writes policy-file keys (`allow-net = ["api.example.com:443"]`, or "the
//! timeout setting" where there is no value to write), the format
//! [`PolicySpec`](super::file::PolicySpec) reads.
//!
//! A front end installs its words once, at start, with [`set_wording`]
//! (like a global `tracing` subscriber): log lines are written deep inside
//! the sandbox, where no caller could pass words along.

use std::fmt;
use std::sync::OnceLock;

/// A setting a user changes to allow or raise something: one per field of
/// [`PolicySpec`](super::file::PolicySpec), plus the compile cache's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Setting {
    /// Capabilities granted ([`Grant::capabilities`](super::Grant::capabilities)).
    Grant,
    /// The workspace root.
    Workspace,
    /// Extra read-only directories.
    AllowRead,
    /// Extra read-write directories.
    AllowWrite,
    /// Network destinations under `networkAccess`.
    AllowNet,
    /// Environment variables passed to the plugin.
    Env,
    /// The deadline of one call, in seconds.
    Timeout,
    /// The memory limit of one instance, in MiB.
    MaxMemory,
    /// The root of the per-plugin data directories.
    DataRoot,
    /// No persistent storage.
    NoStorage,
    /// The data directory's quota, in MiB.
    StorageQuota,
    /// No argument validation against tool schemas.
    NoValidate,
    /// The deadline of one background task, in seconds.
    TaskTimeout,
    /// Most background tasks of one plugin running at once.
    MaxTasks,
    /// The compile cache's folder.
    CacheDir,
    /// No compile cache.
    NoCache,
}

impl Setting {
    /// Every setting, in the order reports list them.
    pub const ALL: [Setting; 16] = [
        Setting::Grant,
        Setting::Workspace,
        Setting::AllowRead,
        Setting::AllowWrite,
        Setting::AllowNet,
        Setting::Env,
        Setting::Timeout,
        Setting::MaxMemory,
        Setting::DataRoot,
        Setting::NoStorage,
        Setting::StorageQuota,
        Setting::NoValidate,
        Setting::TaskTimeout,
        Setting::MaxTasks,
        Setting::CacheDir,
        Setting::NoCache,
    ];

    /// Its key in a policy file, which is also the launcher's flag without
    /// its dashes (both are the field's name in kebab case).
    pub const fn key(self) -> &'static str {
        match self {
            Setting::Grant => "grant",
            Setting::Workspace => "workspace",
            Setting::AllowRead => "allow-read",
            Setting::AllowWrite => "allow-write",
            Setting::AllowNet => "allow-net",
            Setting::Env => "env",
            Setting::Timeout => "timeout",
            Setting::MaxMemory => "max-memory",
            Setting::DataRoot => "data-root",
            Setting::NoStorage => "no-storage",
            Setting::StorageQuota => "storage-quota",
            Setting::NoValidate => "no-validate",
            Setting::TaskTimeout => "task-timeout",
            Setting::MaxTasks => "max-tasks",
            Setting::CacheDir => "cache-dir",
            Setting::NoCache => "no-cache",
        }
    }

    /// What its value is, for words that write values in a syntax.
    const fn shape(self) -> Shape {
        match self {
            Setting::Grant
            | Setting::AllowRead
            | Setting::AllowWrite
            | Setting::AllowNet
            | Setting::Env => Shape::List,
            Setting::Timeout
            | Setting::MaxMemory
            | Setting::StorageQuota
            | Setting::TaskTimeout
            | Setting::MaxTasks => Shape::Number,
            Setting::NoStorage | Setting::NoValidate | Setting::NoCache => Shape::Switch,
            Setting::Workspace | Setting::DataRoot | Setting::CacheDir => Shape::Text,
        }
    }
}

enum Shape {
    List,
    Number,
    Switch,
    Text,
}

/// The words a front end uses for settings.
pub trait Wording: Send + Sync {
    /// The setting's name alone, e.g. `--allow-net` or `allow-net`.
    fn name(&self, setting: Setting) -> String;

    /// The setting given `value` (a placeholder such as `SECONDS` is a
    /// value too; empty for a switch), e.g. `--timeout 2.5`.
    fn setting(&self, setting: Setting, value: &str) -> String;

    /// How the user starts a disabled plugin again, after "start it again".
    fn restart(&self) -> String;
}

/// The library's own words: policy-file keys, in the file's syntax.
#[derive(Debug, Clone, Copy, Default)]
pub struct PolicyFileWording;

impl Wording for PolicyFileWording {
    fn name(&self, setting: Setting) -> String {
        setting.key().to_owned()
    }

    fn setting(&self, setting: Setting, value: &str) -> String {
        let key = setting.key();
        // A placeholder (`SECONDS`, `MIB`) is no value to write down: the
        // setting is named instead.
        if !value.is_empty() && value.chars().all(|c| c.is_ascii_uppercase()) {
            return format!("the {key} setting");
        }
        match setting.shape() {
            Shape::List => format!("{key} = [{value:?}]"),
            Shape::Number => format!("{key} = {value}"),
            Shape::Switch => format!("{key} = true"),
            Shape::Text => format!("{key} = {value:?}"),
        }
    }

    fn restart(&self) -> String {
        "(a new session, or a restart)".to_owned()
    }
}

static WORDING: OnceLock<&'static dyn Wording> = OnceLock::new();

/// Installs the process's words for settings; the first call wins (later
/// ones return `false`). Call it at start, before any plugin runs.
pub fn set_wording(wording: &'static dyn Wording) -> bool {
    WORDING.set(wording).is_ok()
}

/// The process's words: those given to [`set_wording`], else
/// [`PolicyFileWording`].
pub fn wording() -> &'static dyn Wording {
    WORDING.get().copied().unwrap_or(&PolicyFileWording)
}

impl fmt::Display for Setting {
    /// The setting's name in the process's words.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&wording().name(*self))
    }
}

/// `setting` given `value`, in the process's words (for messages).
pub fn worded(setting: Setting, value: impl fmt::Display) -> String {
    wording().setting(setting, &value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_words_are_policy_file_syntax() {
        let w = PolicyFileWording;
        assert_eq!(
            w.setting(Setting::AllowNet, "api.example.com:443"),
            r#"allow-net = ["api.example.com:443"]"#
        );
        assert_eq!(w.setting(Setting::Timeout, "2.5"), "timeout = 2.5");
        assert_eq!(w.setting(Setting::NoCache, ""), "no-cache = true");
        assert_eq!(w.setting(Setting::DataRoot, "/d"), r#"data-root = "/d""#);
        assert_eq!(
            w.setting(Setting::Timeout, "SECONDS"),
            "the timeout setting"
        );
    }

    #[test]
    fn every_policy_key_is_a_policy_file_key() {
        // Each setting but the cache's is a key of the policy file: a file
        // setting it parses (an unknown key would be refused).
        for setting in Setting::ALL {
            if matches!(setting, Setting::CacheDir | Setting::NoCache) {
                continue;
            }
            let value = match setting.shape() {
                Shape::List => r#"["1"]"#,
                Shape::Number => "1",
                Shape::Switch => "true",
                Shape::Text => r#""/""#,
            };
            let text = format!("{} = {value}", setting.key());
            let parsed = super::super::file::PolicySpec::from_toml(&text, "p.toml".as_ref());
            assert!(parsed.is_ok(), "{text}: {parsed:?}");
        }
    }
}
