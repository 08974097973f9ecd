//! `install`, `list`, `uninstall`: putting packed plugins where an
//! unmodified LingXi host discovers them (spec §6): the global folder
//! `~/.lingxiagent/plugins/`, or `<project>/.lingxi/plugins/`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use lingxi_wasm_host::pack::{self, PackError};
use lingxi_wasm_host::printable;
use lingxi_wasm_policy::{places, storage};

use crate::executable::write_executable;
use crate::fetch::{Fetched, origin_change, origin_line};
use crate::grants::{Grants, chosen, describe, grant_changes, list_or_none, no_silent_escalation};
use crate::packed;
use crate::signing::{self, Trust, Verdict};

/// The folder plugins are installed in: the project's, or the global one.
pub fn plugin_dir(project: Option<&Path>) -> Result<PathBuf> {
    match project {
        Some(project) => Ok(project.join(".lingxi").join("plugins")),
        None => Ok(places::lingxi_home()
            .context(
                "this user has no home folder: cannot find ~/.lingxiagent/plugins (use --project DIR)",
            )?
            .join("plugins")),
    }
}

/// The file a plugin of `id` is installed as in `dir`: `<id>`, or
/// `<id>.exe` on Windows (where LingXi runs `.exe` files).
fn installed_file(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}{}", std::env::consts::EXE_SUFFIX))
}

/// How `install` places a plugin.
pub struct Options<'a> {
    /// The project to install into, or global.
    pub project: Option<&'a Path>,
    /// Replace a different file of the same name.
    pub force: bool,
    /// Which grants it gets.
    pub grants: Grants,
    /// The keys whose signatures count.
    pub trust: Trust,
    /// Refuse what no trusted key signed.
    pub signed_only: bool,
    /// Record every session into this folder.
    pub record: Option<&'a Path>,
    /// Install even if it could reach more than the installed version.
    pub accept_new_grants: bool,
}

/// `install`: packs (or repacks) and places the executable, named after the
/// plugin id, atomically; refuses to replace a different plugin unless `force`.
/// A signature must hold if its key is trusted (and be there at all with
/// `signed_only`); the installed file keeps it.
pub fn install(
    tokio: &tokio::runtime::Runtime,
    runtime: &lingxi_wasm_host::Runtime,
    input: &Fetched,
    options: Options,
) -> Result<()> {
    let Options {
        project,
        force,
        grants,
        trust,
        signed_only,
        record,
        accept_new_grants,
    } = options;
    if let Some(project) = project
        && !project.is_dir()
    {
        bail!(
            "--project {}: no such folder; give the project's existing root folder",
            project.display()
        );
    }
    let dir = plugin_dir(project)?;
    let name = input.shown();
    // The file is read once: the bytes whose signature is checked are the
    // bytes installed (a path read twice can change in between).
    let file = lingxi_wasm_host::read_plugin_file(&input.path)?;
    let existing = pack::parse_bytes(&input.path, &file)?;
    // Before the component is ever run (packing asks it what it is).
    let signing = match &input.pulled {
        Some(pulled) => pulled_signature(&name, &pulled.signatures, &file, &trust, signed_only)?,
        None => check_signature(&name, existing.as_ref(), &trust, signed_only)?,
    };
    let (component, spec) = chosen(&name, file, existing, grants)?;
    let record = record.map(record_dir).transpose()?;
    let options = packed::PackOptions {
        signing,
        record,
        base: None,
        target: None,
        origin: input.origin(),
    };
    let (header, bytes) = packed::pack_bytes(tokio, runtime, &component, &name, spec, options)?;
    // The header just made holds the component's own id and version (the
    // input's header is anyone's to edit): the kept signature must hold
    // for them too.
    let verdict = signing::verify(&trust, &header, &component);
    if !matches!(verdict, Verdict::Unsigned) {
        judge(&name, &verdict, signed_only)?;
    }
    let id = &header.plugin_id;
    if !storage::is_safe_id(id) {
        bail!(
            "plugin id {id:?} cannot be installed: ids must be 1-64 characters of a-z, 0-9, '.' and '-', start and end with a letter or digit, and contain no '..' or '--'"
        );
    }
    let target = installed_file(&dir, id);
    let installed = target.exists().then(|| pack::read(&target));
    // Never more reach than what is replaced without saying so, --force or
    // not. Only this plugin, readable, shows what it reached; a copy of
    // ours that cannot be read (damaged, a newer format) counts as reaching
    // nothing, so everything this one reaches needs accepting; another
    // file replaced with --force gets its grants printed as new.
    let mut changes = Vec::new();
    let escalation =
        |old| no_silent_escalation(&target, old, &header, accept_new_grants, "installed");
    match installed {
        None => {}
        Some(Ok(Some(old))) if old.header.plugin_id == *id => {
            if let Some(line) = origin_change(old.header.origin.as_ref(), header.origin.as_ref()) {
                println!("{}", printable(&line));
            }
            escalation(Some(&old.header))?;
            changes = grant_changes(&old.header.policy, &header.policy);
        }
        Some(Err(PackError::Damaged { .. } | PackError::Unsupported { .. })) => escalation(None)?,
        Some(_) if force => println!(
            "note: {} was not a plugin of lingxi-wasm-run that can be read: every grant below is new",
            target.display()
        ),
        Some(Ok(Some(old))) => bail!(
            "{} holds another plugin ({}); pass --force to replace it",
            target.display(),
            old.header.plugin_id
        ),
        Some(_) => bail!(
            "{} exists and is not a plugin packed by lingxi-wasm-run; pass --force to replace it",
            target.display()
        ),
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_executable(&target, &bytes)?;
    if !changes.is_empty() {
        println!("grants changed from the installed version:");
        for line in &changes {
            println!("{}", printable(line));
        }
    }
    println!(
        "installed {} {} at {}",
        id,
        printable(&header.plugin_version),
        target.display()
    );
    println!("declares       {}", list_or_none(&header.declared));
    for line in describe(&header.policy) {
        println!("{line}");
    }
    if let Some(origin) = &header.origin {
        println!("{}", printable(&origin_line(origin)));
    }
    println!("signature      {verdict}");
    if let Some(dir) = &header.record {
        println!("records        every session into {}", dir.display());
    }
    Ok(())
}

/// The folder `--record` names, made absolute (the plugin starts in its own
/// folder) and created now, so that a mistake shows at install.
fn record_dir(dir: &Path) -> Result<PathBuf> {
    let dir = std::path::absolute(dir)
        .with_context(|| format!("--record {}: cannot resolve it", dir.display()))?;
    lingxi_wasm_launcher::record::create_folder(&dir)
        .with_context(|| format!("--record {}: cannot create it", dir.display()))?;
    if !dir.is_dir() {
        bail!("--record {}: not a folder", dir.display());
    }
    // Recordings hold every request: a folder others can write is one
    // where they could delete or replace them.
    use lingxi_wasm_launcher::private;
    let dir = private::check(&dir).map_err(|e| {
        anyhow::anyhow!(
            "--record {}: {e}; others could delete or replace recordings",
            dir.display()
        )
    })?;
    Ok(dir)
}

/// `list`: installed wrapped plugins in the project folder, then globally.
pub fn list(project: Option<&Path>, trust: &Trust) -> Result<()> {
    let mut places = Vec::new();
    if let Some(project) = project {
        places.push(("project", plugin_dir(Some(project))?));
    }
    places.push(("global", plugin_dir(None)?));
    let mut found = 0;
    let mut out = String::new();
    macro_rules! outln {
        ($($arg:tt)*) => {{
            out += &format!($($arg)*);
            out.push('\n');
        }};
    }
    for (scope, dir) in &places {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        paths.sort();
        for path in paths {
            match pack::read(&path) {
                Ok(Some(p)) => {
                    found += 1;
                    let h = &p.header;
                    outln!(
                        "{} {} ({scope})",
                        printable(&h.plugin_id),
                        printable(&h.plugin_version)
                    );
                    outln!("  path           {}", path.display());
                    outln!("  declares       {}", list_or_none(&h.declared));
                    for line in describe(&h.policy) {
                        outln!("  {line}");
                    }
                    if let Some(origin) = &h.origin {
                        outln!("  {}", origin_line(origin));
                    }
                    outln!("  digest         sha256:{}", p.digest);
                    outln!("  component      ok (sha256:{})", h.component_sha256);
                    outln!(
                        "  signature      {}",
                        signing::verify(trust, h, p.component())
                    );
                    if let Some(dir) = &h.record {
                        outln!("  records        every session into {}", dir.display());
                    }
                }
                Ok(None) => {} // a native plugin: not ours to describe
                Err(e) => {
                    found += 1;
                    let state = match e {
                        PackError::Unsupported { .. } => "NEWER FORMAT",
                        _ => "DAMAGED",
                    };
                    outln!("{} ({scope})", path.display());
                    outln!("  integrity      {state}: {e}");
                }
            }
        }
    }
    // Headers are anyone's to edit, file names too: every line is shown
    // through `printable`.
    print!("{}", lingxi_wasm_host::printable_lines(&out));
    if found == 0 {
        let looked: Vec<String> = places
            .iter()
            .map(|(_, d)| d.display().to_string())
            .collect();
        println!(
            "no plugins packed by lingxi-wasm-run are installed (looked in {}; --project DIR looks in another project)",
            looked.join(" and ")
        );
    }
    Ok(())
}

/// `uninstall`: removes the plugin; its data directory only with `purge`.
pub fn uninstall(
    id: &str,
    project: Option<&Path>,
    purge: bool,
    data_root: Option<&Path>,
) -> Result<()> {
    if !storage::is_safe_id(id) {
        bail!("{id:?} is not a plugin id (1-64 of a-z 0-9 . -, alphanumeric ends, no .. or --)");
    }
    let target = installed_file(&plugin_dir(project)?, id);
    match pack::read(&target) {
        Ok(Some(p)) if p.header.plugin_id == id => {}
        Err(PackError::Damaged { .. } | PackError::Unsupported { .. }) => {}
        Ok(_) => bail!(
            "{} is not a plugin packed by lingxi-wasm-run; remove it by hand",
            target.display()
        ),
        Err(PackError::Io { .. } | PackError::NotRunning { .. }) => {
            let here = std::env::current_dir().ok();
            let in_here = here
                .as_deref()
                .filter(|_| project.is_none())
                .and_then(|dir| plugin_dir(Some(dir)).ok())
                .map(|dir| installed_file(&dir, id))
                .filter(|p| p.exists());
            match in_here {
                Some(found) => bail!(
                    "{id} is not installed at {}, but it is in this project ({}): add --project .",
                    target.display(),
                    found.display()
                ),
                None => bail!("{id} is not installed at {}", target.display()),
            }
        }
    }
    std::fs::remove_file(&target).with_context(|| format!("cannot remove {}", target.display()))?;
    println!("removed {}", target.display());
    let data = data_root
        .map(Path::to_path_buf)
        .or_else(storage::default_root)
        .map(|root| root.join(id));
    match (purge, data) {
        (true, Some(data)) if data.exists() => {
            std::fs::remove_dir_all(&data)
                .with_context(|| format!("cannot remove {}", data.display()))?;
            println!("removed its data {}", data.display());
        }
        (false, Some(data)) if data.exists() => {
            println!("kept its data {} (remove it with --purge)", data.display());
        }
        _ => {}
    }
    Ok(())
}

mod signatures;
use signatures::{check_signature, judge, pulled_signature};
