//! Command-line arguments.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

mod args;
pub use args::{
    CacheArgs, CompilerArgs, ExportFormat, GrantArgs, PackArgs, RegistryArgs, TrustArgs,
};

use crate::fetch::PluginSource;

/// Run a LingXi plugin component (wasm32-wasip2) in a deny-by-default sandbox,
/// speaking the LingXi JSON-Lines plugin protocol on stdin/stdout.
///
/// A capability is granted only if the plugin declares it AND it is granted
/// here. Logs and everything the plugin prints go to stderr; stdout carries
/// protocol lines only.
#[derive(Debug, Parser)]
#[command(
    name = "lingxi-wasm-run",
    version,
    after_help = ENVIRONMENT,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The plugin component (.wasm) to run, or an `oci://` reference.
    #[arg(required = true, value_parser = crate::fetch::SourceParser)]
    pub component: Option<PluginSource>,

    #[command(flatten)]
    pub grants: GrantArgs,

    #[command(flatten)]
    pub cache: CacheArgs,

    #[command(flatten)]
    pub compiler: CompilerArgs,

    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// The environment variables the launcher reads, for `--help`.
const ENVIRONMENT: &str = "\
Environment:
  LINGXI_WASM_LOG    log filter for stderr: a level (error, warn, info, debug, trace)
                     or directives such as lingxi_wasm=debug [default: info]
  LINGXI_WASM_CACHE  folder of the compile cache (absolute) [default: lingxi-wasm
                     in the platform's cache folder: $XDG_CACHE_HOME or ~/.cache
                     (Linux), ~/Library/Caches (macOS), %LOCALAPPDATA% (Windows)]
  XDG_CACHE_HOME     see LINGXI_WASM_CACHE
  LINGXI_WASM_KEY_PASSWORD
                     the password of a secret key (keygen, pack --sign);
                     without it, it is asked on the terminal
  LINGXI_WASM_RECEIPTS
                     a file `record` names for a plugin it runs: each call's
                     receipt is appended to it, for the recording
  LINGXI_WASM_REGISTRY_USERNAME, LINGXI_WASM_REGISTRY_PASSWORD
                     credentials for the registries of oci:// plugins (push,
                     install, …) [default: docker's config.json]
  DOCKER_CONFIG      the folder of docker's config.json [default: ~/.docker]
  XDG_RUNTIME_DIR    Linux: the session bus of the keyring that `secret` and
                     --secret use is $XDG_RUNTIME_DIR/bus, unless
                     DBUS_SESSION_BUS_ADDRESS names it
  HOME               where ~/.lingxiagent/plugin-data (plugin storage) and
                     ~/.lingxiagent/plugins (install, list, uninstall) are
                     (Windows: the profile folder, %USERPROFILE%)
The plugin sees none of these: only what --env passes.";

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Pack a component and its grants into one native executable that a
    /// LingXi host runs like any plugin (no arguments needed).
    Pack {
        /// The plugin component (.wasm), or an `oci://` reference.
        #[arg(value_parser = crate::fetch::SourceParser)]
        component: PluginSource,
        /// Where to write the executable.
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
        #[command(flatten)]
        pack: PackArgs,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Pack (if needed) and install a plugin where a LingXi host finds it:
    /// `~/.lingxiagent/plugins/ID`, or `DIR/.lingxi/plugins/ID` with --project.
    Install {
        /// A component (.wasm), a packed plugin, or an `oci://` reference
        /// (its registry signatures are judged as a packed plugin's).
        #[arg(value_parser = crate::fetch::SourceParser)]
        input: PluginSource,
        /// Install into this project instead of globally.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Replace a different file of the same name.
        #[arg(long)]
        force: bool,
        /// Install over the installed version of the plugin even if this
        /// one could reach more (a capability it now declares or is
        /// granted, a folder, a host, a variable): every increase is
        /// printed. Without it such an install is refused.
        #[arg(long)]
        accept_new_grants: bool,
        /// Keep the grants packed into INPUT (all are printed). Without it,
        /// a packed INPUT gets only the grants stated with flags now.
        #[arg(long)]
        keep_grants: bool,
        /// Refuse a package that is unsigned or not signed by a trusted key.
        #[arg(long)]
        signed_only: bool,
        /// Record every session the host runs into a new file in DIR (see
        /// `record` and `replay`). Requests may hold secrets: so may DIR.
        #[arg(long, value_name = "DIR")]
        record: Option<PathBuf>,
        #[command(flatten)]
        trust: TrustArgs,
        #[command(flatten)]
        grants: Box<GrantArgs>,
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Push a plugin's component to an OCI registry as the Wasm OCI
    /// artifact wkg and Wassette read (config
    /// application/vnd.wasm.config.v0+json, one application/wasm layer),
    /// its id, version and declared capabilities as annotations; with
    /// --sign, its package signature as an OCI 1.1 referrer. Prints the
    /// digest. Credentials: docker's config.json (`docker login`), or
    /// LINGXI_WASM_REGISTRY_USERNAME and LINGXI_WASM_REGISTRY_PASSWORD.
    Push {
        /// A component (.wasm), or a packed plugin (its component is
        /// pushed, with its signature unless --sign makes another).
        component: PathBuf,
        /// Where: oci://HOST:PORT/REPOSITORY:TAG (the port may be left out,
        /// and the tag, which is then latest).
        #[arg(value_parser = parse_reference)]
        reference: lingxi_wasm_registry::Reference,
        /// Sign the component with this minisign secret key (see `keygen`):
        /// the signature covers its id, version and declared capabilities.
        #[arg(long, value_name = "KEY")]
        sign: Option<PathBuf>,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Keep, list and remove the secrets plugins are granted by name
    /// (`--secret NAME`): values in the platform's keyring, never on the
    /// command line or in a packed file.
    Secret {
        #[command(subcommand)]
        action: crate::secret::SecretCommand,
    },
    /// List the installed plugins packed by lingxi-wasm-run (project, then global).
    List {
        /// Also look in this project [default: the current directory].
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        #[command(flatten)]
        trust: TrustArgs,
    },
    /// Remove an installed plugin (its data directory stays unless --purge).
    Uninstall {
        /// The plugin id.
        id: String,
        /// Remove it from this project instead of globally.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Also delete its data directory.
        #[arg(long)]
        purge: bool,
        /// Root of the data directories [default: ~/.lingxiagent/plugin-data].
        #[arg(long, value_name = "DIR")]
        data_root: Option<PathBuf>,
    },
    /// Call one tool, slash command or hook of a plugin and print the
    /// answer, without writing JSONL: `call PLUGIN TOOL '{"text":"hi"}'`,
    /// `call PLUGIN /command args…`, `call PLUGIN --hook sessionStart`.
    /// The plugin gets a snapshot of the current folder (or --workspace):
    /// its path, and its git repository and branch if any.
    Call {
        /// A component (.wasm), a packed plugin (which brings its grants;
        /// flags given here are laid over them, as over a --policy file),
        /// or an `oci://` reference.
        #[arg(value_parser = crate::fetch::SourceParser)]
        plugin: PluginSource,
        /// A tool name, or `/` and a command name or alias.
        target: Option<String>,
        /// The tool's JSON arguments (one argument), or the command's
        /// arguments, or the hook's subject id. Options may come anywhere;
        /// an argument that starts with `-` goes after `--`.
        args: Vec<String>,
        /// Emit this hook event (e.g. sessionStart) instead.
        #[arg(long, value_name = "EVENT")]
        hook: Option<String>,
        /// Print the raw JSON-Lines response instead of the result.
        #[arg(long)]
        json: bool,
        /// Write the call's receipt to FILE as JSON: what it did, counted
        /// where the plugin meets WASI (files and bytes, folders, hosts,
        /// variables, HTTP requests, refusals, time, memory, output).
        #[arg(long, value_name = "FILE")]
        effects: Option<PathBuf>,
        #[command(flatten)]
        grants: Box<GrantArgs>,
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        compiler: CompilerArgs,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Learn the narrowest policy a plugin needs: run it in a recording
    /// sandbox, never granting more than the grant flags given (the
    /// ceiling; by default what it declares, within --workspace or the
    /// current folder), through the calls named (in the order given), and
    /// write a policy file for --policy that covers what they used, each
    /// rule under a comment naming the calls that needed it. What the
    /// plugin tried beyond the ceiling is reported and not added.
    Learn {
        /// A component (.wasm), a packed plugin (which brings its grants
        /// as the ceiling; flags given here are laid over them), or an
        /// `oci://` reference.
        #[arg(value_parser = crate::fetch::SourceParser)]
        plugin: PluginSource,
        /// Call a tool with its JSON arguments. Repeatable.
        #[arg(long, num_args = 2, value_names = ["TOOL", "ARGS"], action = clap::ArgAction::Append)]
        call: Vec<String>,
        /// Run a slash command line, e.g. "/stats src". Repeatable.
        #[arg(long, value_name = "LINE")]
        command: Vec<String>,
        /// Send the requests of a session recorded by `record` or
        /// `install --record`. Repeatable.
        #[arg(long, value_name = "RECORDING")]
        replay: Vec<PathBuf>,
        /// The policy file to write.
        #[arg(short, long, value_name = "FILE")]
        output: PathBuf,
        /// Replace FILE if it exists.
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        grants: Box<GrantArgs>,
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        compiler: CompilerArgs,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Serve a plugin's tools (and its slash commands, as prompts) over the
    /// Model Context Protocol, in the same sandbox: on stdin/stdout (an MCP
    /// client starts `lingxi-wasm-run mcp PLUGIN [grant flags]`), or over
    /// streamable HTTP with --http. The workspace is the client's first
    /// MCP root (stdio only), else --workspace, else the current folder
    /// (unless it is /, directly under / or the home folder); PLUGIN_DATA,
    /// when set, is the data directory.
    Mcp {
        /// A component (.wasm), a packed plugin (which brings its grants;
        /// flags given here are laid over them, as over a --policy file),
        /// or a folder of plugins served as one (each gets the flags'
        /// grants; names that clash stop the server), or an `oci://`
        /// reference.
        #[arg(value_parser = crate::fetch::SourceParser)]
        plugin: PluginSource,
        #[command(flatten)]
        http: crate::mcp::HttpArgs,
        #[command(flatten)]
        grants: Box<GrantArgs>,
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        compiler: CompilerArgs,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Export a plugin as a package for other agent hosts: with
    /// `--format agent-plugin`, an Agent Plugins 1.0.0 package (Lime Plugin
    /// v3 loads it) whose MCP server is the packed plugin, with its grants.
    Export {
        /// A component (.wasm), a packed plugin, or an `oci://` reference.
        #[arg(value_parser = crate::fetch::SourceParser)]
        input: PluginSource,
        /// The package format.
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// The folder to write the package into: new, empty, or an earlier
        /// export of the same plugin (updated in place).
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        /// Update an earlier export even if this one could reach more (a
        /// capability it now declares or is granted, a folder, a host, a
        /// variable): every increase is printed. Without it such an update
        /// is refused.
        #[arg(long)]
        accept_new_grants: bool,
        /// Keep the grants packed into INPUT (all are printed). Without it,
        /// a packed INPUT gets only the grants stated with flags now.
        #[arg(long)]
        keep_grants: bool,
        /// The package's MCP server is the one serving at URL over
        /// streamable HTTP (this plugin run with `mcp --http`, behind a
        /// proxy) instead of the packed plugin on stdio. HTTPS unless the
        /// host is localhost or a loopback address; no user name, no
        /// fragment (Lime's rules). No token is written: package data is
        /// visible to all. bin/ still holds the packed plugin, to serve it.
        #[arg(long, value_name = "URL")]
        mcp_url: Option<String>,
        #[command(flatten)]
        pack: PackArgs,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Print what a component or packed plugin declares and is granted,
    /// without running any tool.
    Inspect {
        /// A component (.wasm), a packed plugin, or an `oci://` reference
        /// (where it came from and its registry signatures are shown too).
        #[arg(value_parser = crate::fetch::SourceParser)]
        file: PluginSource,
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        trust: TrustArgs,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Run any LingXi plugin (a component, a packed plugin, a native
    /// executable) between the host and itself, passing every byte
    /// through, and record each request and response with timings:
    /// `record --out session.jsonl -- ./my-plugin`.
    Record {
        /// The recording to write (never over an existing file).
        #[arg(short, long, value_name = "FILE")]
        out: PathBuf,
        /// The plugin and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "PLUGIN")]
        plugin: Vec<String>,
    },
    /// Send a recording's requests (or a conformance transcript's) to a
    /// plugin and diff its responses against the recorded ones. Exit
    /// status 0 when all match, 1 when one differs, 2 when the replay
    /// could not run.
    Replay {
        /// The recording.
        file: PathBuf,
        /// Do not compare this value: a member name anywhere (observedAt)
        /// or a path (/result/stats/*/ms). Repeatable.
        #[arg(long, value_name = "RULE")]
        mask: Vec<String>,
        /// Seconds to wait for each response.
        #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
        timeout: f64,
        /// The plugin to replay against, after `--` (the command a
        /// recording names is shown, never run).
        #[arg(last = true, value_name = "PLUGIN")]
        plugin: Vec<String>,
    },
    /// Make a minisign key pair for signing packages: PREFIX.key (secret)
    /// and PREFIX.pub (what users pass to `install --trust`).
    Keygen {
        /// Path prefix of the two files.
        #[arg(short, long, value_name = "PREFIX")]
        output: PathBuf,
        /// Leave the secret key unencrypted (otherwise its password is
        /// asked, or read from LINGXI_WASM_KEY_PASSWORD).
        #[arg(long)]
        no_password: bool,
    },
    /// Validate a plugin before publishing or installing it: the component
    /// and its world, imports this host cannot provide, the manifest, the
    /// handshake (names, aliases, IPC version, hooks), every tool schema and
    /// annotation, capabilities against imports, size, compile time and
    /// memory, and a smoke exchange with nothing granted. Exit status 0
    /// only when there is no error.
    Check {
        /// A component (.wasm), a packed plugin (its component is
        /// checked), or an `oci://` reference.
        #[arg(value_parser = crate::fetch::SourceParser)]
        file: PluginSource,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// The compile cache, filled with the code compiled for the check
        /// so that the next call does not compile again.
        #[command(flatten)]
        cache: CacheArgs,
        #[command(flatten)]
        compiler: CompilerArgs,
        #[command(flatten)]
        registry: RegistryArgs,
    },
    /// Create a plugin project in a new folder: a probe-like skeleton (a
    /// tool with an input schema, a command, a hook), its build command, a
    /// test that replays one exchange through lingxi-wasm-run, and a README.
    New {
        /// The folder to create (must not exist, or be empty).
        dir: PathBuf,
        /// The language of the plugin.
        #[arg(long, value_enum)]
        lang: crate::new::Lang,
        /// The plugin id [default: `com.example.` and the folder name].
        #[arg(long)]
        id: Option<String>,
        /// The display name [default: the folder name].
        #[arg(long)]
        name: Option<String>,
        /// Rust only: the path of lingxi-plugin-sdk (lingxi-wasm/sdk/rust)
        /// [default: the SDK of the source tree this launcher was built from].
        #[arg(long, value_name = "DIR")]
        sdk: Option<PathBuf>,
    },
}

/// An `oci://` reference argument.
fn parse_reference(text: &str) -> Result<lingxi_wasm_registry::Reference, String> {
    lingxi_wasm_registry::Reference::parse(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;
