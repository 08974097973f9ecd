//! Every setting a user changes, declared once. One row below gives a
//! setting's field of [`PolicySpec`] (its type, its doc comment, which is
//! also its flag's help, and its `clap` attributes), its [`Setting`] name,
//! what its value is (a list, a number, a switch or a text) and whether it
//! is a grant or a limit. Everything else is derived from the rows: the
//! policy file's key and the front end's flag (the field's name in kebab
//! case, as serde and clap derive them, and as [`Setting::key`] gives it),
//! [`Setting::ALL`], how a message writes the setting with a value
//! ([`wording`](crate::wording)), how two specs merge
//! ([`PolicySpec::merge`]), and which settings a learned policy copies
//! from its ceiling ([`PolicySpec::written`]).
//!
//! The test below holds the rows against what serde reads and writes,
//! both ways: a field without a setting, or a setting without a field,
//! fails it.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// What a setting's value is, for words that write values in a syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueShape {
    /// Repeatable: a list in the policy file.
    List,
    /// A number.
    Number,
    /// On or off (a flag without a value).
    Switch,
    /// One text: a path.
    Text,
}

/// What a setting decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// What the plugin may reach (compared on upgrades, learned from use).
    Grant,
    /// How much it may use (copied as given into a learned policy).
    Limit,
    /// A front end's own setting, not a key of the policy file (the
    /// compile cache's).
    FrontEnd,
}

/// How a field of one spec is laid over the same field of another
/// ([`PolicySpec::merge`]): a value given wins, a list is added to, a
/// switch turned on stays on.
trait Merge {
    fn merge(self, over: Self) -> Self;
}

impl<T> Merge for Option<T> {
    fn merge(self, over: Self) -> Self {
        over.or(self)
    }
}

impl<T> Merge for Vec<T> {
    fn merge(mut self, over: Self) -> Self {
        self.extend(over);
        self
    }
}

impl Merge for bool {
    fn merge(self, over: Self) -> Self {
        self || over
    }
}

/// A field's value as the policy file writes it, if it is set.
trait Written {
    fn written(&self) -> Option<String>;
}

impl Written for Option<f64> {
    fn written(&self) -> Option<String> {
        self.map(|v| format!("{v:?}"))
    }
}

impl Written for Option<usize> {
    fn written(&self) -> Option<String> {
        self.map(|v| v.to_string())
    }
}

impl Written for Option<u64> {
    fn written(&self) -> Option<String> {
        self.map(|v| v.to_string())
    }
}

impl Written for bool {
    fn written(&self) -> Option<String> {
        self.then(|| "true".to_owned())
    }
}

impl Written for Option<PathBuf> {
    fn written(&self) -> Option<String> {
        self.as_ref().map(|p| toml_string(&p.display().to_string()))
    }
}

impl Written for Option<Vec<String>> {
    fn written(&self) -> Option<String> {
        self.as_ref().map(|values| toml_list(values))
    }
}

impl Written for Vec<String> {
    fn written(&self) -> Option<String> {
        (!self.is_empty()).then(|| toml_list(self))
    }
}

impl Written for Vec<PathBuf> {
    fn written(&self) -> Option<String> {
        let values: Vec<String> = self.iter().map(|p| p.display().to_string()).collect();
        (!values.is_empty()).then(|| toml_list(&values))
    }
}

/// A TOML string (a JSON string is a TOML basic string).
pub(crate) fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

/// A TOML array of strings on one line.
pub(crate) fn toml_list(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| toml_string(v)).collect();
    format!("[{}]", quoted.join(", "))
}

macro_rules! settings {
    (
        $(
            $(#[doc = $doc:literal])*
            #[setting($variant:ident, $shape:ident, $kind:ident)]
            $(#[$attr:meta])*
            $field:ident: $ty:ty,
        )*
        front_end:
        $(
            $(#[doc = $fdoc:literal])*
            #[setting($fvariant:ident, $fshape:ident)]
            $ffield:ident,
        )*
    ) => {
        /// Grant and limit settings as written by the user: the launcher's
        /// grant flags (this struct is their `clap` arguments, with the
        /// `cli` feature) and the keys of a policy file are the same
        /// fields, each declared once (`settings.rs`).
        /// [`PolicySpec::resolve`] checks them into the
        /// [`Grant`](crate::Grant) and [`Limits`](crate::Limits) the
        /// sandbox uses. The doc comment of each field is also its flag's
        /// help.
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[cfg_attr(feature = "cli", derive(clap::Args))]
        #[serde(deny_unknown_fields, rename_all = "kebab-case")]
        pub struct PolicySpec {
            $(
                $(#[doc = $doc])*
                $(#[$attr])*
                pub $field: $ty,
            )*
        }

        /// A setting a user changes to allow or raise something: one per
        /// field of [`PolicySpec`], plus the compile cache's.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Setting {
            $( $(#[doc = $doc])* $variant, )*
            $( $(#[doc = $fdoc])* $fvariant, )*
        }

        /// The fields' names, in [`Setting::ALL`]'s order.
        const FIELDS: &[&str] = &[$(stringify!($field),)* $(stringify!($ffield),)*];

        impl Setting {
            /// Every setting, in the order of the flags (the fields).
            pub const ALL: [Setting; FIELDS.len()] =
                [$(Setting::$variant,)* $(Setting::$fvariant,)*];

            /// What its value is.
            pub const fn shape(self) -> ValueShape {
                match self {
                    $(Setting::$variant => ValueShape::$shape,)*
                    $(Setting::$fvariant => ValueShape::$fshape,)*
                }
            }

            /// What it decides.
            pub const fn kind(self) -> Kind {
                match self {
                    $(Setting::$variant => Kind::$kind,)*
                    $(Setting::$fvariant => Kind::FrontEnd,)*
                }
            }
        }

        impl PolicySpec {
            /// Lays `over` on top of `self`: its values win, its lists are
            /// added, its switches turned on stay on.
            pub fn merge(self, over: PolicySpec) -> PolicySpec {
                PolicySpec {
                    $( $field: Merge::merge(self.$field, over.$field), )*
                }
            }

            /// `setting`'s value as the policy file writes it (`2.5`,
            /// `true`, `["a", "b"]`), if this spec sets it.
            pub fn written(&self, setting: Setting) -> Option<String> {
                match setting {
                    $(Setting::$variant => Written::written(&self.$field),)*
                    $(Setting::$fvariant => None,)*
                }
            }
        }
    };
}

settings! {
    /// Capabilities to grant, as wire names separated by commas
    /// (projectRead, projectWrite, processExecution, networkAccess), or `none`.
    /// Repeatable. Default: whatever the plugin's manifest declares.
    #[setting(Grant, List, Grant)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "CAPS", value_delimiter = ','))]
    grant: Option<Vec<String>>,

    /// Workspace root to mount for projectRead/projectWrite. Default: the
    /// `workspace.rootPath` of the host's snapshots; `{root}/DIR` is DIR
    /// under that root, for whichever project the host opens.
    #[setting(Workspace, Text, Grant)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    workspace: Option<PathBuf>,

    /// Also mount DIR read-only (needs projectRead or projectWrite); `{root}/DIR`
    /// is DIR under the host's workspace root. Repeatable.
    #[setting(AllowRead, List, Grant)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    #[serde(default)]
    allow_read: Vec<PathBuf>,

    /// Also mount DIR read-write (needs projectWrite); `{root}/DIR` is DIR
    /// under the host's workspace root. Repeatable.
    #[setting(AllowWrite, List, Grant)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "DIR"))]
    #[serde(default)]
    allow_write: Vec<PathBuf>,

    /// Allow network destinations host:port under networkAccess (e.g.
    /// api.example.com:443, *.example.com:*, 127.0.0.1:8000-8100). Repeatable.
    /// Without any, networkAccess reaches nothing; '*:*' is every destination.
    #[setting(AllowNet, List, Grant)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "HOST:PORT"))]
    #[serde(default)]
    allow_net: Vec<String>,

    /// Pass an environment variable: KEY (its value at start) or KEY=VALUE.
    /// Repeatable. The plugin sees no other variable.
    #[setting(Env, List, Grant)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "KEY[=VALUE]"))]
    #[serde(default)]
    env: Vec<String>,

    /// Hand the plugin the secret NAME, read from the keyring where
    /// `secret set PLUGIN_ID NAME` keeps it. NAME@HOST also binds it to
    /// HOST (`*.example.com`: every host under it): an HTTP request that
    /// carries its value anywhere else is refused. Repeatable.
    #[setting(Secret, List, Grant)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "NAME[@HOST]"))]
    #[serde(default)]
    secret: Vec<String>,

    /// Deadline of one call, in seconds [default: 2.5, under LingXi's 3.0 s
    /// watchdog so the host gets an explanatory error].
    #[setting(Timeout, Number, Limit)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECONDS"))]
    timeout: Option<f64>,

    /// Memory limit of the plugin instance, in MiB [default: 256].
    #[setting(MaxMemory, Number, Limit)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "MIB"))]
    max_memory: Option<usize>,

    /// Root of the per-plugin data directories; the plugin gets
    /// `<DIR>/<plugin id>/`, mounted read-write at /lingxi/data
    /// [default: ~/.lingxiagent/plugin-data].
    #[setting(DataRoot, Text, Grant)]
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "DIR", conflicts_with = "no_storage")
    )]
    data_root: Option<PathBuf>,

    /// Give the plugin no persistent storage.
    #[setting(NoStorage, Switch, Grant)]
    #[cfg_attr(feature = "cli", arg(long))]
    #[serde(default)]
    no_storage: bool,

    /// Size quota of the plugin's data directory, in MiB [default: 64].
    #[setting(StorageQuota, Number, Limit)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "MIB"))]
    storage_quota: Option<u64>,

    /// Deadline of one background task, in seconds, from its start
    /// [default: 600]. A task is stopped then, whatever it does.
    #[setting(TaskTimeout, Number, Limit)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECONDS"))]
    task_timeout: Option<f64>,

    /// Most background tasks the plugin may run at once [default: 4]; one
    /// more start is refused. 0 runs none.
    #[setting(MaxTasks, Number, Limit)]
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    max_tasks: Option<usize>,

    /// Do not validate tool arguments against the tool's inputSchema (for
    /// plugins whose schemas are known to be wrong). Path parameters and
    /// per-tool timeouts still apply.
    #[setting(NoValidate, Switch, Limit)]
    #[cfg_attr(feature = "cli", arg(long))]
    #[serde(default)]
    no_validate: bool,

    front_end:

    /// The compile cache's folder.
    #[setting(CacheDir, Text)]
    cache_dir,

    /// No compile cache.
    #[setting(NoCache, Switch)]
    no_cache,

    /// Which compiler makes native code of a plugin run as it is compiled
    /// (serving a component, check, call, learn, mcp).
    #[setting(Compiler, Text)]
    compiler,

    /// How long one registry pull or push may take.
    #[setting(RegistryTimeout, Number)]
    registry_timeout,

    /// A registry host that may be reached over plain HTTP.
    #[setting(AllowHttpRegistry, Text)]
    allow_http_registry,

    /// The CA certificates a registry's TLS is verified against.
    #[setting(RegistryCa, Text)]
    registry_ca,
}

impl Setting {
    /// Its key in a policy file, which is also the launcher's flag without
    /// its dashes: the field's name in kebab case, as serde and clap derive
    /// them.
    pub fn key(self) -> &'static str {
        static KEYS: OnceLock<Vec<String>> = OnceLock::new();
        let keys = KEYS.get_or_init(|| FIELDS.iter().map(|f| f.replace('_', "-")).collect());
        keys.get(self as usize).map_or("", String::as_str)
    }

    /// Whether it is a key of the policy file (every setting but a front
    /// end's own).
    pub const fn in_policy_file(self) -> bool {
        !matches!(self.kind(), Kind::FrontEnd)
    }

    /// The settings of `kind`, in [`Setting::ALL`]'s order.
    pub fn of_kind(kind: Kind) -> impl Iterator<Item = Setting> {
        Setting::ALL.into_iter().filter(move |s| s.kind() == kind)
    }
}

#[cfg(test)]
mod tests;
