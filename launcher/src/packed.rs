//! Packed executables: `pack`, `inspect`, and running as one.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use lingxi_wasm_host::convert;
use lingxi_wasm_host::pack::{self, PackHeader, Packed};
use lingxi_wasm_host::types::InitializeRequest;
use lingxi_wasm_host::{PluginHost, PolicySpec, Runtime, printable};

use crate::cli::CacheArgs;

/// Runs as a packed plugin. With no arguments (how LingXi spawns plugins)
/// it serves the protocol; `inspect`, `--help` and `--version` still work.
pub fn run(packed: Packed) -> Result<()> {
    // Arguments are read as given (a non-UTF-8 one is an error, not a panic).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let args: Vec<&str> = args
        .iter()
        .map(|a| {
            a.to_str()
                .with_context(|| format!("argument {a:?} is not valid UTF-8; a packed plugin takes no arguments, or `inspect`, `--help`, `--version`"))
        })
        .collect::<Result<_>>()?;
    let header = &packed.header;
    if !args.is_empty() {
        crate::quiet_on_closed_pipe();
    }
    let tokio = crate::tokio()?;
    match args.as_slice() {
        [] => {
            let runtime = Runtime::new()?;
            // SAFETY: `packed` comes from `pack::read_self`: the executable
            // this process is running.
            let component =
                tokio.block_on(unsafe { runtime.load_own_packed(&packed, &header.plugin_id) })?;
            crate::serve(tokio, component, &header.policy, header.record.as_deref())
        }
        ["inspect"] => {
            let runtime = crate::runtime(&CacheArgs {
                cache_dir: None,
                no_cache: true,
            })?;
            // SAFETY: as above, this executable's own payload.
            let component =
                tokio.block_on(unsafe { runtime.load_own_packed(&packed, &header.plugin_id) })?;
            let (grant, limits) = resolve(&header.policy)?;
            // The keys of the user's trusted-keys file (a packed file takes
            // no flags).
            let trust = crate::signing::Trust::load(None, &[])?;
            let verdict = crate::signing::verify(&trust, header, packed.component());
            print_inspection(
                &tokio,
                PluginHost::new(component, grant, limits),
                Some((&packed, verdict)),
            )
        }
        ["--version" | "-V"] => {
            println!(
                "lingxi-wasm-run {} (packed plugin {} {})",
                env!("CARGO_PKG_VERSION"),
                printable(&header.plugin_id),
                printable(&header.plugin_version)
            );
            Ok(())
        }
        ["--help" | "-h"] => {
            println!(
                "{id} {version}: a LingXi plugin packed by lingxi-wasm-run.\n\n\
                 Run with no arguments it speaks the LingXi JSON-Lines protocol on stdin/stdout,\n\
                 sandboxed with the grants it was packed with; a LingXi host starts it that way.\n\n\
                 Usage: {exe} [inspect | --help | --version]\n\n  \
                 inspect    print the manifest, tools, commands, hooks and grants\n  \
                 --version  print versions",
                id = printable(&header.plugin_id),
                version = printable(&header.plugin_version),
                exe = std::env::args_os()
                    .next()
                    .map(|a| a.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            );
            Ok(())
        }
        other => bail!(
            "a packed plugin takes no arguments (got {other:?}); try `inspect`, `--help` or `--version`"
        ),
    }
}

fn resolve(spec: &PolicySpec) -> Result<(lingxi_wasm_host::Grant, lingxi_wasm_host::Limits)> {
    Ok(spec.resolve(|key| std::env::var(key).ok())?)
}

/// `pack`: the running launcher + component + precompiled code + grants.
pub fn pack(
    tokio: &tokio::runtime::Runtime,
    component_path: &Path,
    output: &Path,
    spec: PolicySpec,
    key: Option<&minisign::SecretKey>,
) -> Result<()> {
    let component = std::fs::read(component_path)
        .with_context(|| format!("cannot read component {}", component_path.display()))?;
    let name = component_path.display().to_string();
    let signing = key.map_or(Signing::None, Signing::Key);
    let (header, bytes) = pack_bytes(tokio, &component, &name, spec, signing, None)?;
    write_executable(output, &bytes)?;
    eprintln!(
        "packed {} {} into {} ({} KiB)",
        printable(&header.plugin_id),
        printable(&header.plugin_version),
        output.display(),
        bytes.len() / 1024
    );
    Ok(())
}

/// The signature a packed file gets.
pub enum Signing<'a> {
    /// None.
    None,
    /// A new one, made with this key.
    Key(&'a minisign::SecretKey),
    /// One that signed this same component before (`install` keeps it).
    Keep(String),
}

/// Builds a packed executable of `component` (`name` is what messages call
/// it, e.g. the user's file); returns its header and bytes.
pub fn pack_bytes(
    tokio: &tokio::runtime::Runtime,
    component: &[u8],
    name: &str,
    spec: PolicySpec,
    signing: Signing,
    record: Option<std::path::PathBuf>,
) -> Result<(PackHeader, Vec<u8>)> {
    // Check the grants now (directories exist, rules parse), not at first start.
    let (grant, _) = resolve(&spec)?;
    let runtime = Runtime::new()?;
    let (loaded, precompiled) = tokio.block_on(runtime.load_and_precompile(component, name))?;
    let policy = lingxi_wasm_host::Policy::decide(&loaded.manifest().capabilities, &grant);
    for line in policy.report(&grant) {
        eprintln!("note: {} {line}", printable(&loaded.manifest().id));
    }
    let manifest = loaded.manifest();
    let header = PackHeader {
        format: pack::FORMAT,
        plugin_id: manifest.id.clone(),
        plugin_version: manifest.version.clone(),
        declared: manifest
            .capabilities
            .iter()
            .map(|c| c.wire_name().to_owned())
            .collect(),
        policy: spec,
        component_sha256: pack::sha256_hex(component),
        component_len: component.len() as u64,
        precompiled_len: precompiled.len() as u64,
        engine: runtime.engine_hash(),
        manifest: Some(convert::manifest(manifest.clone())),
        signature: match signing {
            Signing::None => None,
            Signing::Key(key) => Some(crate::signing::sign(
                key,
                component,
                &manifest.id,
                &manifest.version,
            )?),
            Signing::Keep(text) => Some(text),
        },
        record,
    };
    let exe = std::env::current_exe().context("cannot locate the running executable")?;
    let launcher = pack::launcher_bytes(&exe)?;
    let bytes = pack::build(&launcher, &header, component, &precompiled)
        .context("cannot encode the pack header")?;
    Ok((header, bytes))
}

/// Writes atomically (temporary file in the same folder, renamed), mode 0755.
pub fn write_executable(path: &Path, bytes: &[u8]) -> Result<()> {
    if path.is_dir() {
        bail!(
            "{} is a folder; give the file to write, e.g. {}",
            path.display(),
            path.join("my-plugin").display()
        );
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        bail!(
            "cannot write {}: the folder {} does not exist",
            path.display(),
            dir.display()
        );
    }
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write into {}", dir.display()))?;
    tmp.write_all(bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o755))?;
    }
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// `inspect FILE`: a component or a packed plugin. A packed file's own
/// precompiled code is never used: its portable component is compiled here.
pub fn inspect(
    tokio: &tokio::runtime::Runtime,
    file: &Path,
    runtime: &Runtime,
    trust: &crate::signing::Trust,
) -> Result<()> {
    match pack::read(file)? {
        Some(packed) => {
            let component =
                tokio.block_on(runtime.load_packed(&packed, &packed.header.plugin_id))?;
            let (grant, limits) = resolve(&packed.header.policy)?;
            let verdict = crate::signing::verify(trust, &packed.header, packed.component());
            print_inspection(
                tokio,
                PluginHost::new(component, grant, limits),
                Some((&packed, verdict)),
            )
        }
        None => {
            let component = tokio.block_on(runtime.load_file(file))?;
            let (grant, limits) = resolve(&PolicySpec::default())?;
            print_inspection(tokio, PluginHost::new(component, grant, limits), None)
        }
    }
}

/// Prints the handshake (activating the plugin, running no tool) and grants.
fn print_inspection(
    tokio: &tokio::runtime::Runtime,
    mut host: PluginHost,
    packed: Option<(&Packed, crate::signing::Verdict)>,
) -> Result<()> {
    let request = InitializeRequest {
        host_ipc_version: Some(1),
        core_version: None,
    };
    let handshake = tokio
        .block_on(host.initialize(request))
        .context("the plugin failed to initialize")?;
    let m = &handshake.manifest;
    let names = |caps: &[lingxi_wasm_host::types::Capability]| {
        let names: Vec<_> = caps.iter().map(|c| c.wire_name()).collect();
        if names.is_empty() {
            "(none)".to_owned()
        } else {
            names.join(", ")
        }
    };
    let mut out = String::new();
    // Everything the plugin wrote is shown through `printable`: no escape
    // sequence reaches the terminal, no line is forged.
    let p = |text: &str| printable(text).into_owned();
    out += &format!(
        "plugin       {} {} ({})\n",
        p(&m.id),
        p(&m.version),
        p(&m.name)
    );
    out += &format!("description  {}\n", p(&m.description));
    if let Some(author) = &m.author {
        out += &format!("author       {}\n", p(author));
    }
    out += &format!("declares     {}\n", names(&m.capabilities));
    out += &format!("granted      {}\n", names(host.policy().effective()));
    for line in host.policy().report(host.grant()) {
        out += &format!("note         {line}\n");
    }
    for t in &handshake.tools {
        out += &format!("tool         {}: {}\n", p(&t.name), p(&t.description));
        if let Some(contract) = host.contracts().and_then(|c| c.tool(&t.name)) {
            out += &format!("  contract   {}\n", p(&crate::check::describe(contract)));
        }
    }
    for c in &handshake.commands {
        let aliases = if c.aliases.is_empty() {
            String::new()
        } else {
            format!(" ({})", p(&c.aliases.join(", ")))
        };
        out += &format!(
            "command      /{}{aliases}: {}\n",
            p(&c.name),
            p(&c.description)
        );
    }
    let hooks: Vec<_> = handshake
        .supported_hooks
        .iter()
        .map(|h| h.wire_name())
        .collect();
    out += &format!(
        "hooks        {}\n",
        if hooks.is_empty() {
            "(none)".into()
        } else {
            hooks.join(", ")
        }
    );
    if let Some((packed, verdict)) = packed {
        out += &format!("signature    {verdict}\n");
        if let Some(dir) = &packed.header.record {
            out += &format!("records      every session into {}\n", dir.display());
        }
        out += &format!("digest       sha256:{}\n", packed.digest);
        out += &format!(
            "component    sha256:{}\n",
            p(&packed.header.component_sha256)
        );
        for line in crate::install::describe(&packed.header.policy) {
            out += &format!("grant        {line}\n");
        }
    }
    print!("{out}");
    let _ = tokio.block_on(host.deactivate());
    Ok(())
}
