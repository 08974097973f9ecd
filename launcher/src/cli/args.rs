//! The groups of flags several commands share: grants, the compile cache,
//! trusted keys, how a packed executable is made.

use std::path::PathBuf;

use clap::Args;
use lingxi_wasm_host::{Compiler, PolicySpec, Setting};

/// How a packed executable is made (`pack`, `export`).
#[derive(Debug, Args)]
pub struct PackArgs {
    /// Sign the component with this minisign secret key (see `keygen`);
    /// `install` checks the signature against the keys a user trusts.
    #[arg(long, value_name = "KEY")]
    pub sign: Option<PathBuf>,
    /// The executable to build on: `lingxi-wasm-rt` (runtime-only,
    /// smaller, starts faster) or a `lingxi-wasm-run` of this version
    /// [default: lingxi-wasm-rt beside this launcher, else this launcher].
    #[arg(long, value_name = "FILE")]
    pub base: Option<PathBuf>,
    /// Pack for another platform (a Rust target triple, e.g.
    /// x86_64-pc-windows-gnu, aarch64-apple-darwin): the code is compiled
    /// for it, on --base, a base built for it by `scripts/cross`.
    #[arg(long, value_name = "TRIPLE", requires = "base")]
    pub target: Option<String>,
    #[command(flatten)]
    pub grants: Box<GrantArgs>,
    #[command(flatten)]
    pub cache: CacheArgs,
}

/// Package formats of `export`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ExportFormat {
    /// Agent Plugins 1.0.0 (plugin.json, mcp.json, skills/): what Lime loads.
    AgentPlugin,
}

/// The public keys whose signatures count.
#[derive(Debug, Args)]
pub struct TrustArgs {
    /// Trust signatures by this key: a `.pub` file from `keygen` (or
    /// minisign), or the key itself (its `RW…` line). Repeatable.
    #[arg(long, value_name = "KEY")]
    pub trust: Vec<String>,
    /// A file of trusted public keys, one per line, each may follow an
    /// `untrusted comment:` line naming it [default:
    /// ~/.lingxiagent/lingxi-wasm-trusted-keys, if it exists].
    #[arg(long, value_name = "FILE")]
    pub trusted_keys: Option<PathBuf>,
}

impl TrustArgs {
    /// The keys these flags name.
    pub fn load(&self) -> anyhow::Result<crate::signing::Trust> {
        crate::signing::Trust::load(self.trusted_keys.as_deref(), &self.trust)
    }
}

/// Grants and limits: the policy settings (declared once, in the host's
/// [`PolicySpec`], as flags and policy-file keys) and `--policy`.
#[derive(Debug, Args)]
pub struct GrantArgs {
    #[command(flatten)]
    pub settings: PolicySpec,

    // A TOML policy file with the same settings (its help, which names
    // the keys, is made from their declaration).
    #[arg(long, value_name = "FILE", help = policy_file_help())]
    pub policy: Option<PathBuf>,
}

/// The compile cache.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// Where compiled components, and each compiled function, are cached
    /// [default: $LINGXI_WASM_CACHE, else lingxi-wasm in the platform's
    /// cache folder].
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    pub cache_dir: Option<PathBuf>,

    /// Compile the whole component every time, keeping nothing.
    #[arg(long)]
    pub no_cache: bool,
}

/// The compiler of a run that compiles to run now (serving a component,
/// `check`, `call`, `learn`, `mcp`); what is packed or installed is always
/// Cranelift's.
#[derive(Debug, Args)]
pub struct CompilerArgs {
    /// Which compiler makes native code of the plugin: cranelift (the
    /// fastest code) or winch (a Python or JavaScript plugin compiles
    /// about four times faster, its code runs 1.4-1.8 times slower: for an
    /// author's check and call after each edit). Each compiler's code is
    /// cached apart from the other's; a packed plugin's own code is
    /// Cranelift's, so with winch its component is compiled again.
    #[arg(long, value_enum, value_name = "NAME", default_value_t = Compiler::Cranelift)]
    pub compiler: Compiler,
}

impl GrantArgs {
    /// Whether any grant or limit was given (so `install` repacks).
    pub fn any(&self) -> bool {
        self.settings != PolicySpec::default() || self.policy.is_some()
    }

    /// The policy file (if any) with these flags laid over it. `no_storage`
    /// is kept apart: it is applied when the spec is resolved. Directories
    /// given as flags are relative to the current directory; in a policy
    /// file they must be absolute.
    pub fn spec(&self) -> anyhow::Result<PolicySpec> {
        let file = match &self.policy {
            Some(path) => PolicySpec::from_file(path)?,
            None => PolicySpec::default(),
        };
        Ok(file.merge(self.settings.clone().with_absolute_paths()?))
    }
}

/// `--policy`'s help, naming every key of the policy file (the settings'
/// keys, from their one declaration).
fn policy_file_help() -> String {
    let keys: Vec<&str> = Setting::ALL
        .into_iter()
        .filter(|s| s.in_policy_file())
        .map(Setting::key)
        .collect();
    format!(
        "A TOML policy file with the same settings ({}); flags given here override or extend it",
        keys.join(", ")
    )
}

/// How registries are reached, for a plugin named `oci://…`.
#[derive(Debug, Args)]
pub struct RegistryArgs {
    /// How long one registry pull or push may take, in seconds, from its
    /// first request to its last byte [default: 300].
    #[arg(long, value_name = "SECONDS")]
    pub registry_timeout: Option<u64>,

    /// Reach this registry (HOST or HOST:PORT) over plain HTTP, unencrypted
    /// and unauthenticated; this machine's registries (localhost, loopback
    /// addresses) may be anyway. Repeatable.
    #[arg(long, value_name = "HOST", value_parser = registry_host)]
    pub allow_http_registry: Vec<String>,

    /// Verify registries' TLS against the CA certificates of this PEM file
    /// alone, instead of the system's trusted roots.
    #[arg(long, value_name = "FILE")]
    pub registry_ca: Option<PathBuf>,
}

/// A registry's `HOST` or `HOST:PORT`, as a reference names it: no
/// pattern, scheme or path, which would allow nothing or more than meant.
fn registry_host(text: &str) -> Result<String, String> {
    let plain = !text.contains(['@', '/', '*']);
    match lingxi_wasm_registry::Reference::parse(&format!("oci://{text}/repository")) {
        Ok(reference) if plain => Ok(reference.registry().to_owned()),
        _ => Err(format!(
            "{} is not a registry host: give HOST or HOST:PORT as a reference names it (e.g. registry.lan:5000), one per flag",
            lingxi_wasm_policy::text::shown_within(text, 80)
        )),
    }
}
