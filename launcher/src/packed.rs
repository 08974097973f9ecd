//! Packed executables: `pack`, `inspect`, and running as one.

use std::path::Path;

use anyhow::{Context, Result, bail};
use lingxi_wasm_host::convert;
use lingxi_wasm_host::pack::{self, PackHeader, Packed};
use lingxi_wasm_host::types::InitializeRequest;
use lingxi_wasm_host::{PluginComponent, PluginHost, PolicySpec, Runtime, printable};

use crate::cli::CacheArgs;
use crate::executable::write_executable;

/// Runs as a packed plugin (see `serve::run_packed`); `inspect` prints
/// what it declares and is granted, its signature and digests.
pub fn run(packed: Packed) -> Result<()> {
    lingxi_wasm_launcher::serve::run_packed(packed, "lingxi-wasm-run", |tokio, packed| {
        let header = &packed.header;
        let runtime = crate::runtime(&CacheArgs {
            cache_dir: None,
            no_cache: true,
        })?;
        // SAFETY: `packed` comes from `pack::read_self`: the executable
        // this process is running.
        let component =
            tokio.block_on(unsafe { runtime.load_own_packed(packed, &header.plugin_id) })?;
        let (grant, limits) = header.policy.resolve_from_environment()?;
        // The keys of the user's trusted-keys file (a packed file takes
        // no flags).
        let trust = crate::signing::Trust::load(None, &[])?;
        packed.verify_component()?;
        let verdict = crate::signing::verify(&trust, header, packed.component());
        let file_len = std::env::current_exe()
            .and_then(std::fs::metadata)
            .map_or(0, |m| m.len());
        print_inspection(
            tokio,
            PluginHost::new(component, grant, limits),
            Some((packed, verdict, file_len)),
        )
    })
}

/// `pack`: the running launcher + component + precompiled code + grants.
pub fn pack(
    tokio: &tokio::runtime::Runtime,
    runtime: &Runtime,
    input: &crate::fetch::Fetched,
    output: &Path,
    spec: PolicySpec,
    options: PackOptions,
) -> Result<()> {
    let component = std::fs::read(&input.path)
        .with_context(|| format!("cannot read component {}", input.path.display()))?;
    let name = input.shown();
    // A pulled component keeps a signature of it from its registry (the
    // first that signed these bytes, whoever's key: `install` judges it).
    let options = match (&options.signing, &input.pulled) {
        (Signing::None, Some(pulled)) => PackOptions {
            signing: crate::signing::choose(
                &crate::signing::Trust::default(),
                &pulled.signatures,
                &component,
            )
            .0
            .map_or(Signing::None, Signing::Keep),
            ..options
        },
        _ => options,
    };
    let (header, bytes) = pack_bytes(tokio, runtime, &component, &name, spec, options)?;
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

/// How a packed file is made, besides its component and grants.
pub struct PackOptions<'a> {
    /// Its signature.
    pub signing: Signing<'a>,
    /// The folder it records its sessions into.
    pub record: Option<std::path::PathBuf>,
    /// The executable it is built on (`--base`; see `base::choose`).
    pub base: Option<&'a Path>,
    /// The platform it is for (`--target`; see `cross`), if not this one.
    pub target: Option<&'a str>,
    /// The registry artifact its component was pulled as, if it was.
    pub origin: Option<pack::Origin>,
}

/// Builds a packed executable of `component` (`name` is what messages call
/// it, e.g. the user's file); returns its header and bytes.
pub fn pack_bytes(
    tokio: &tokio::runtime::Runtime,
    runtime: &Runtime,
    component: &[u8],
    name: &str,
    spec: PolicySpec,
    options: PackOptions,
) -> Result<(PackHeader, Vec<u8>)> {
    let (header, bytes, _) = pack_loaded(tokio, runtime, component, name, spec, options)?;
    Ok((header, bytes))
}

/// The same on `runtime`, also returning the component as loaded there
/// (compiled once, for a caller that runs it too).
pub fn pack_loaded(
    tokio: &tokio::runtime::Runtime,
    runtime: &Runtime,
    component: &[u8],
    name: &str,
    spec: PolicySpec,
    options: PackOptions,
) -> Result<(PackHeader, Vec<u8>, PluginComponent)> {
    let PackOptions {
        signing,
        record,
        base,
        target,
        origin,
    } = options;
    // Check the grants now (directories exist, rules parse), not at first start.
    let (grant, _) = spec.resolve_from_environment()?;
    // Another platform's code is compiled for it; the component is loaded
    // here too, to ask it what it is.
    let target = target.filter(|t| *t != lingxi_wasm_launcher::identity::TARGET);
    let cross = target.map(|t| crate::cross::base(t, base)).transpose()?;
    let (loaded, precompiled, engine) = match target {
        None => {
            let (loaded, code) = tokio.block_on(runtime.load_and_precompile(component, name))?;
            (loaded, code, runtime.engine_hash())
        }
        Some(target) => {
            let loaded = tokio.block_on(runtime.load_bytes(component, name))?;
            let (code, engine) = lingxi_wasm_host::precompile_for(target, component)?;
            (loaded, code, engine)
        }
    };
    let policy = lingxi_wasm_host::Policy::decide(&loaded.declared(), &grant);
    for line in policy.report(&grant) {
        eprintln!("note: {} {line}", printable(&loaded.manifest().id));
    }
    let manifest = loaded.manifest();
    let header = PackHeader {
        format: pack::FORMAT,
        plugin_id: manifest.id.clone(),
        plugin_version: manifest.version.clone(),
        declared: declared(manifest),
        policy: spec,
        component_sha256: pack::sha256_hex(component),
        precompiled_blake3: Some(pack::blake3_hex(&precompiled)),
        component_len: component.len() as u64,
        component_compressed: None,
        precompiled_len: precompiled.len() as u64,
        engine,
        manifest: Some(convert::manifest(manifest.clone())),
        signature: match signing {
            Signing::None => None,
            Signing::Key(key) => Some(crate::signing::sign(
                key,
                component,
                crate::signing::Signed {
                    id: &manifest.id,
                    version: &manifest.version,
                    capabilities: &declared(manifest),
                },
            )?),
            Signing::Keep(text) => Some(text),
        },
        record,
        base: None,
        origin,
    };
    if let (Some(cross), Some(target)) = (cross, target) {
        // It cannot be started here: its base and code were checked instead.
        let mut header = header;
        header.base = Some(cross.described);
        let bytes = pack::build(&cross.executable, &header, component, &precompiled)?;
        eprintln!(
            "note: packed for {target}: it was not started here (another platform); start it there once to check it"
        );
        return Ok((header, bytes, loaded));
    }
    // Which base it is packed on (a closure: it returns from several places).
    let on_a_base = || -> Result<(PackHeader, Vec<u8>)> {
        let base = crate::base::choose(base)?;
        let on = |base: &crate::base::Base| -> Result<(PackHeader, Vec<u8>)> {
            let launcher = pack::launcher_bytes(&base.path)?;
            let mut header = header.clone();
            header.base = Some(base.version.clone());
            let bytes = pack::build(&launcher, &header, component, &precompiled)?;
            Ok((header, bytes))
        };
        let packed = on(&base)?;
        if base.is_this_launcher() {
            return Ok(packed);
        }
        // Another base must serve this plugin (the runtime-only base cannot
        // compile): start it once, as LingXi would, without its recording.
        let trial = match header.record {
            Some(_) => {
                let mut quiet = header.clone();
                quiet.record = None;
                let launcher = pack::launcher_bytes(&base.path)?;
                pack::build(&launcher, &quiet, component, &precompiled)?
            }
            None => packed.1.clone(),
        };
        match crate::base::smoke_start(&trial) {
            Ok(()) => Ok(packed),
            Err(e) if base.explicit => Err(e.context(format!(
                "the file packed on {} does not start; pack without --base",
                base.path.display()
            ))),
            Err(e) => {
                eprintln!(
                    "note: the file packed on {} does not start ({e:#}); packing on this launcher instead",
                    base.path.display()
                );
                on(&crate::base::this_launcher()?)
            }
        }
    };
    let (header, bytes) = on_a_base()?;
    Ok((header, bytes, loaded))
}

/// The wire names of the capabilities `manifest` declares.
pub(crate) fn declared(manifest: &lingxi_wasm_host::types::Manifest) -> Vec<String> {
    manifest
        .capabilities
        .iter()
        .map(|c| c.wire_name().to_owned())
        .collect()
}

/// How `header` differs from what its component says of itself, if it
/// does. The header is not signed and anyone can edit it; the component's
/// own manifest is what a signature is judged against and what `install`
/// packs.
pub(crate) fn header_mismatch(
    header: &PackHeader,
    manifest: &lingxi_wasm_host::types::Manifest,
) -> Option<String> {
    let said = |id: &str, version: &str, declared: &[String]| {
        format!(
            "{id} {version} declaring {}",
            if declared.is_empty() {
                "nothing".into()
            } else {
                declared.join(", ")
            }
        )
    };
    let own = declared(manifest);
    if header.plugin_id != manifest.id
        || header.plugin_version != manifest.version
        || header.declared != own
    {
        return Some(format!(
            "its header says {}, but its component is {}",
            said(&header.plugin_id, &header.plugin_version, &header.declared),
            said(&manifest.id, &manifest.version, &own)
        ));
    }
    match &header.manifest {
        // Every file of format 3 on carries the manifest a start answers with.
        None if header.format >= 3 => Some("its header has no manifest".into()),
        Some(m) if *m != convert::manifest(manifest.clone()) => Some(
            "the manifest in its header (what a start answers with) is not its component's".into(),
        ),
        _ => None,
    }
}

/// `inspect FILE`: a component or a packed plugin. A packed file's own
/// precompiled code is never used: its portable component is compiled here.
pub fn inspect(
    tokio: &tokio::runtime::Runtime,
    input: &crate::fetch::Fetched,
    runtime: &Runtime,
    trust: &crate::signing::Trust,
) -> Result<()> {
    let file = input.path.as_path();
    crate::fetch::describe_pull(input, trust)?;
    match pack::read(file)? {
        Some(packed) => {
            let component =
                tokio.block_on(runtime.load_packed(&packed, &packed.header.plugin_id))?;
            // What the file says of itself must be what its component says
            // (then its signature is judged against the component's id).
            let mismatch = header_mismatch(&packed.header, component.manifest());
            let (grant, limits) = packed.header.policy.resolve_from_environment()?;
            let verdict = crate::signing::verify(trust, &packed.header, packed.component());
            let bad = matches!(verdict, crate::signing::Verdict::Bad { .. });
            let file_len = std::fs::metadata(file).map_or(0, |m| m.len());
            print_inspection(
                tokio,
                PluginHost::new(component, grant, limits),
                Some((&packed, verdict, file_len)),
            )?;
            if let Some(mismatch) = mismatch {
                bail!(
                    "{}: {mismatch}: the file was altered after it was packed, and its native part may run another plugin; do not run it (`install` repacks it from its component)",
                    file.display()
                );
            }
            if bad {
                bail!(
                    "{}: the signature does not hold; do not install or run this file",
                    file.display()
                );
            }
            Ok(())
        }
        None => {
            let component = tokio.block_on(runtime.load_file(file))?;
            let (grant, limits) = PolicySpec::default().resolve_from_environment()?;
            print_inspection(tokio, PluginHost::new(component, grant, limits), None)
        }
    }
}

/// What a packed file of `file_len` bytes is made of: the native
/// executable it was packed on, its portable component (as stored, and its
/// own length when compressed), its precompiled code, and the rest (the
/// header, padding to a page, the trailer).
fn made_of(packed: &Packed, file_len: u64) -> String {
    let mb = |n: u64| n as f64 / 1e6;
    let (base, component, native) = (
        packed.launcher_len,
        packed.header.component_len,
        packed.header.precompiled_len,
    );
    let rest = file_len.saturating_sub(base.saturating_add(component).saturating_add(native));
    let decoded = match &packed.header.component_compressed {
        Some(how) => format!(" ({:.2} uncompressed)", mb(how.len)),
        None => String::new(),
    };
    format!(
        "{:.2} MB: base {:.2}, component {:.2}{decoded}, native code {:.2}, header and padding {:.2}",
        mb(file_len),
        mb(base),
        mb(component),
        mb(native),
        mb(rest)
    )
}

/// Prints the handshake (activating the plugin, running no tool) and grants.
fn print_inspection(
    tokio: &tokio::runtime::Runtime,
    mut host: PluginHost,
    packed: Option<(&Packed, crate::signing::Verdict, u64)>,
) -> Result<()> {
    // Contracts are described as the packed grants run them.
    if let Some((packed, _, _)) = &packed {
        host.set_validation(!packed.header.policy.no_validate);
    }
    let request = InitializeRequest {
        host_ipc_version: Some(1),
        core_version: None,
    };
    let handshake = tokio
        .block_on(host.initialize(request))
        .context("the plugin failed to initialize")?;
    let m = &handshake.manifest;
    let names = |caps: &[lingxi_wasm_policy::Capability]| {
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
    out += &format!(
        "declares     {}\n",
        names(&lingxi_wasm_host::convert::capabilities(&m.capabilities))
    );
    out += &format!("granted      {}\n", names(host.policy().effective()));
    for line in host.policy().report(host.grant()) {
        out += &format!("note         {line}\n");
    }
    for t in &handshake.tools {
        out += &format!("tool         {}: {}\n", p(&t.name), p(&t.description));
        if let Some(contract) = host.contracts().and_then(|c| c.tool(&t.name)) {
            let described = crate::check::describe(contract, host.validates());
            out += &format!("  contract   {}\n", p(&described));
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
    if let Some((packed, verdict, file_len)) = packed {
        out += &format!("made of      {}\n", made_of(packed, file_len));
        out += &format!("signature    {verdict}\n");
        if let Some(origin) = &packed.header.origin {
            out += &format!("from         {} ({})\n", origin.reference, origin.digest);
        }
        if let Some(dir) = &packed.header.record {
            out += &format!("records      every session into {}\n", dir.display());
        }
        if let Some(base) = &packed.header.base {
            out += &format!("runs on      {}\n", p(base));
        }
        // The signature and the digests cover the payload, not the
        // executable part before it.
        out +=
            "native part  not covered by the signature; `install` replaces it with your own base\n";
        out += &format!("digest       sha256:{}\n", packed.digest);
        out += &format!(
            "component    sha256:{}\n",
            p(&packed.header.component_sha256)
        );
        for line in crate::grants::describe(&packed.header.policy) {
            out += &format!("grant        {line}\n");
        }
    }
    // Header fields are anyone's to edit: every line through `printable`.
    print!("{}", lingxi_wasm_host::printable_lines(&out));
    let _ = tokio.block_on(host.deactivate());
    Ok(())
}
