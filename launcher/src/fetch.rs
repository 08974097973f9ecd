//! A plugin named on the command line, found: a file, or an `oci://`
//! reference pulled into the content-addressed store (a second use reads
//! the store, not the network). Every command that takes a plugin takes it
//! through here; what it then does with the file is its own.

use std::ffi::OsStr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use lingxi_wasm_host::{CompileCache, Setting};
pub use lingxi_wasm_registry::Tags;
use lingxi_wasm_registry::{Client, Pulled, Reference, RegistryOptions, Store};

use crate::cli::RegistryArgs;

/// A plugin as the command line names it.
#[derive(Debug, Clone)]
pub enum PluginSource {
    /// A file (or, for `mcp`, a folder).
    File(PathBuf),
    /// An artifact in an OCI registry.
    Registry(Reference),
}

/// Reads a plugin argument: `oci://…` is a reference (refused if
/// malformed), anything else a path (not necessarily UTF-8).
#[derive(Debug, Clone, Copy)]
pub struct SourceParser;

impl clap::builder::TypedValueParser for SourceParser {
    type Value = PluginSource;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<PluginSource, clap::Error> {
        match value.to_str() {
            Some(text) if Reference::is_reference(text) => Reference::parse(text)
                .map(PluginSource::Registry)
                .map_err(|e| clap::Error::raw(clap::error::ErrorKind::ValueValidation, e)),
            _ => Ok(PluginSource::File(PathBuf::from(value))),
        }
    }
}

/// Where a plugin came from, when it came from a registry.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The file to read.
    pub path: PathBuf,
    /// The pull, for a reference.
    pub pulled: Option<Pulled>,
}

impl Fetched {
    /// How messages name it: the reference, or the file.
    pub fn shown(&self) -> String {
        match &self.pulled {
            Some(pulled) => pulled.reference.to_string(),
            None => self.path.display().to_string(),
        }
    }

    /// The pinned reference and digest it was pulled as.
    pub fn origin(&self) -> Option<lingxi_wasm_host::pack::Origin> {
        self.pulled
            .as_ref()
            .map(|p| lingxi_wasm_host::pack::Origin {
                reference: p.reference.to_string(),
                digest: p.digest.to_string(),
            })
    }
}

/// The content-addressed store of pulled artifacts: `oci` in the compile
/// cache's default folder (`$LINGXI_WASM_CACHE`, else the platform's cache
/// folder), checked as that is.
pub fn store() -> Result<Store> {
    let dir = CompileCache::default_dir().context(
        "no cache folder for pulled plugins: set LINGXI_WASM_CACHE to an absolute folder (or HOME / XDG_CACHE_HOME)",
    )?;
    Ok(Store::new(dir.join("oci")))
}

impl RegistryArgs {
    /// The registry client these flags ask for.
    pub fn client(&self) -> Result<Client> {
        let mut options = RegistryOptions::default();
        if let Some(seconds) = self.registry_timeout {
            anyhow::ensure!(
                (1..=86_400).contains(&seconds),
                "{} takes seconds, from 1 to 86400",
                Setting::RegistryTimeout
            );
            options.timeout = std::time::Duration::from_secs(seconds);
        }
        options.plain_http = self.allow_http_registry.clone();
        options.ca_file = self.registry_ca.clone();
        Ok(Client::new(options)?)
    }
}

/// `source` as a file: itself, or its pull (from the store when it has
/// it; a tag as `tags` says). A registry's refusal leaves nothing in the
/// store.
pub fn fetch(
    tokio: &tokio::runtime::Runtime,
    source: &PluginSource,
    registry: &RegistryArgs,
    tags: Tags,
) -> Result<Fetched> {
    let reference = match source {
        PluginSource::File(path) => {
            return Ok(Fetched {
                path: path.clone(),
                pulled: None,
            });
        }
        PluginSource::Registry(reference) => reference,
    };
    let client = registry.client()?;
    let store = store()?;
    let pulled = tokio.block_on(lingxi_wasm_registry::pull(&client, &store, reference, tags))?;
    eprintln!(
        "note: {} is {}{}",
        pulled.reference,
        pulled.digest,
        if pulled.from_store {
            " (from the store, not the network)"
        } else {
            ""
        }
    );
    Ok(Fetched {
        path: pulled.component.clone(),
        pulled: Some(pulled),
    })
}

/// How `list`, `inspect` and `install` say where a plugin came from.
pub fn origin_line(origin: &lingxi_wasm_host::pack::Origin) -> String {
    format!("from           {} ({})", origin.reference, origin.digest)
}

/// What changed of where the installed version came from, if it came from
/// a registry: an upgrade by tag shows the digest it moves from and to.
pub fn origin_change(
    old: Option<&lingxi_wasm_host::pack::Origin>,
    new: Option<&lingxi_wasm_host::pack::Origin>,
) -> Option<String> {
    match (old, new) {
        (Some(old), Some(new)) if old.digest != new.digest => Some(format!(
            "the artifact changes from {} ({}) to {} ({})",
            old.reference, old.digest, new.reference, new.digest
        )),
        (Some(old), None) => Some(format!(
            "the installed version came from {} ({}); this one is a local file",
            old.reference, old.digest
        )),
        _ => None,
    }
}

/// What `inspect` says of a pulled plugin before the plugin itself: the
/// reference, the digests, and its registry signatures judged.
pub fn describe_pull(input: &Fetched, trust: &crate::signing::Trust) -> Result<()> {
    let Some(pulled) = &input.pulled else {
        return Ok(());
    };
    let component = std::fs::read(&input.path)
        .with_context(|| format!("cannot read {}", input.path.display()))?;
    let (_, verdict) = crate::signing::choose(trust, &pulled.signatures, &component);
    println!("reference      {}", pulled.reference);
    println!("digest         {}", pulled.digest);
    println!("component      {}", pulled.component_digest);
    println!(
        "signature      {verdict} (of {} in the registry)",
        pulled.signatures.len()
    );
    Ok(())
}
