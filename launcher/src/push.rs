//! `push`: a plugin's component to an OCI registry, as the Wasm OCI
//! artifact (`lingxi_wasm_registry::layout`), signed with the same package
//! signature `pack --sign` makes, which covers the plugin's id, version,
//! component and declared capabilities.

use std::path::Path;

use anyhow::{Context, Result, bail};
use lingxi_wasm_host::{Runtime, pack, printable};
use lingxi_wasm_registry::layout::PluginLabels;
use lingxi_wasm_registry::{PushRequest, Reference};

use crate::cli::RegistryArgs;
use crate::signing::{self, Signed, Trust, Verdict};

/// What `push` is asked.
pub struct Push<'a> {
    /// A component or a packed plugin.
    pub input: &'a Path,
    /// Where to.
    pub reference: &'a Reference,
    /// The key to sign with, if any.
    pub key: Option<&'a minisign::SecretKey>,
    /// How the registry is reached.
    pub registry: &'a RegistryArgs,
}

/// Pushes, and prints the pushed reference pinned to its digest.
pub fn push(tokio: &tokio::runtime::Runtime, push: Push) -> Result<()> {
    let Push {
        input,
        reference,
        key,
        registry,
    } = push;
    let client = registry.client()?;
    let file = lingxi_wasm_host::read_plugin_file(input)?;
    let packed = pack::parse_bytes(input, &file)?;
    let component = match &packed {
        Some(packed) => packed.component(),
        None => &file[..],
    };
    // What the component says it is, asked of it (a packed file's header is
    // anyone's to edit).
    let runtime = Runtime::new()?;
    let name = input.display().to_string();
    let loaded = tokio.block_on(runtime.load_bytes(component, &name))?;
    let manifest = loaded.manifest();
    let capabilities = crate::packed::declared(manifest);
    let signature = match (key, &packed) {
        (Some(key), _) => Some(signing::sign(
            key,
            component,
            Signed {
                id: &manifest.id,
                version: &manifest.version,
                capabilities: &capabilities,
            },
        )?),
        // A packed file's own signature goes with it if it is one of this
        // component as it is now (whoever's key made it).
        (None, Some(packed)) => match (
            &packed.header.signature,
            signing::verify(&Trust::default(), &packed.header, component),
        ) {
            (None, _) => None,
            (Some(_), Verdict::Bad { reason }) => bail!(
                "{}: its signature does not hold ({reason}); push with --sign KEY to sign it anew",
                input.display()
            ),
            (Some(text), _) => Some(text.clone()),
        },
        (None, None) => None,
    };
    let signature = signature
        .map(|text| {
            let key = signing::signer(&text).context("the signature cannot be read")?;
            anyhow::Ok((text, key))
        })
        .transpose()?;
    let world = lingxi_wasm_registry::component::world_of(component)
        .map_err(|why| anyhow::anyhow!("{}: {why}", input.display()))?;
    let created = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .context("cannot tell the time")?;
    let request = PushRequest {
        component,
        world,
        labels: PluginLabels {
            id: manifest.id.clone(),
            version: manifest.version.clone(),
            capabilities,
        },
        created,
        signature,
    };
    let pushed = tokio.block_on(lingxi_wasm_registry::push(&client, reference, request))?;
    println!("pushed {}", reference.pinned(pushed.digest));
    println!("digest         {}", pushed.digest);
    println!(
        "plugin         {} {}",
        printable(&manifest.id),
        printable(&manifest.version)
    );
    match pushed.signature {
        Some(digest) if pushed.by_fallback_tag => println!(
            "signature      {digest} (a referrer, listed under the tag {}: the registry has no referrers API)",
            lingxi_wasm_registry::layout::referrers_tag(&pushed.digest)
        ),
        Some(digest) => println!("signature      {digest} (an OCI 1.1 referrer)"),
        None => println!(
            "signature      none (`install --signed-only` refuses it; push with --sign KEY)"
        ),
    }
    Ok(())
}
