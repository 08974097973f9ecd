//! Pulling a plugin's component: its manifest (by tag or digest), its
//! config and its one layer, each checked against its digest and size as
//! it streams in, and the signatures that refer to it; all kept in the
//! [`Store`] only once everything checked, so that a refused pull leaves
//! nothing. A reference the store already resolved is not looked up again.

use std::io::Write;
use std::path::PathBuf;

use futures_util::StreamExt;
use lingxi_wasm_policy::limits::{
    MAX_PLUGIN_FILE, MAX_REGISTRY_CONFIG, MAX_REGISTRY_MANIFEST, MAX_REGISTRY_SIGNATURE,
    MAX_REGISTRY_SIGNATURES,
};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use reqwest::{Method, StatusCode};

use crate::client::{Client, Scope, Session, header};
use crate::component::looks_like_component;
use crate::digest::{Digest, Verifier};
use crate::error::RegistryError;
use crate::layout::{
    ComponentManifest, Descriptor, INDEX_TYPE, Index, MANIFEST_TYPE, PluginLabels,
    check_signature_manifest, referrers_tag, signatures_listed,
};
use crate::reference::Reference;
use crate::store::Store;

/// A component pulled, or found in the store.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// The reference as given.
    pub reference: Reference,
    /// The manifest's digest: what the reference resolved to.
    pub digest: Digest,
    /// The component's file in the store.
    pub component: PathBuf,
    /// The component's digest.
    pub component_digest: Digest,
    /// What the artifact's annotations say of the plugin, if they are ours.
    pub labels: Option<PluginLabels>,
    /// The signatures that refer to the manifest (minisign texts).
    pub signatures: Vec<String>,
    /// Whether it came from the store, without the network.
    pub from_store: bool,
}

impl Pulled {
    /// The reference pinned to what it resolved to.
    pub fn pinned(&self) -> Reference {
        self.reference.pinned(self.digest)
    }
}

/// Where a tag is resolved: a digest names its content for good, a tag
/// only for now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tags {
    /// What the store resolved it to before, if it did (a second use does
    /// not go to the network).
    FromStore,
    /// What the registry says it is now (an upgrade by tag).
    FromRegistry,
}

/// `reference`'s component: from `store` if it has it (a tag as `tags`
/// says), else from the registry within the client's deadline.
pub async fn pull(
    client: &Client,
    store: &Store,
    reference: &Reference,
    tags: Tags,
) -> Result<Pulled, RegistryError> {
    store.open()?;
    let known = reference.digest().copied().or_else(|| {
        (tags == Tags::FromStore)
            .then(|| store.tag(reference))
            .flatten()
    });
    if let Some(digest) = known
        && let Some(pulled) = from_store(store, reference, digest)
    {
        return Ok(pulled);
    }
    client
        .within(reference, from_registry(client, store, reference))
        .await
}

/// What the store has of `digest`, if it has all of it.
fn from_store(store: &Store, reference: &Reference, digest: Digest) -> Option<Pulled> {
    let manifest = store.blob(&digest, MAX_REGISTRY_MANIFEST as u64)?;
    let checked = ComponentManifest::check(&manifest, MAX_PLUGIN_FILE).ok()?;
    let component = store.checked_blob_path(&checked.layer_digest, checked.layer.size)?;
    let signatures = store
        .referrers(&digest)?
        .iter()
        .filter_map(|d| store.blob(d, MAX_REGISTRY_SIGNATURE as u64))
        .filter_map(|b| String::from_utf8(b).ok())
        .collect();
    Some(Pulled {
        reference: reference.clone(),
        digest,
        component,
        component_digest: checked.layer_digest,
        labels: checked.labels,
        signatures,
        from_store: true,
    })
}

async fn from_registry(
    client: &Client,
    store: &Store,
    reference: &Reference,
) -> Result<Pulled, RegistryError> {
    let mut session = client.session(reference, Scope::Pull).await?;
    let (manifest, digest) = manifest(&mut session).await?;
    let checked =
        ComponentManifest::check(&manifest, MAX_PLUGIN_FILE).map_err(|why| session.refused(why))?;
    let config = small_blob(&mut session, &checked.config, MAX_REGISTRY_CONFIG).await?;
    let layer = component_layer(&mut session, store, &checked).await?;
    let signatures = signatures(&mut session, &digest).await?;
    // Everything checked: now it is kept.
    store.put_blob(&Digest::of(&config), &config)?;
    let component = store.blob_path(&checked.layer_digest);
    layer
        .persist(&component)
        .map_err(|e| RegistryError::Store {
            path: component.clone(),
            why: format!("cannot keep the component: {}", e.error),
        })?;
    let mut kept = Vec::new();
    for (signature_manifest, text) in &signatures {
        store.put_blob(&Digest::of(signature_manifest), signature_manifest)?;
        let text_digest = Digest::of(text.as_bytes());
        store.put_blob(&text_digest, text.as_bytes())?;
        kept.push(text_digest);
    }
    store.put_referrers(&digest, &kept)?;
    store.put_blob(&digest, &manifest)?;
    if reference.digest().is_none() {
        store.put_tag(reference, &digest)?;
    }
    Ok(Pulled {
        reference: reference.clone(),
        digest,
        component,
        component_digest: checked.layer_digest,
        labels: checked.labels,
        signatures: signatures.into_iter().map(|(_, text)| text).collect(),
        from_store: false,
    })
}

/// The manifest the reference names, and its digest.
async fn manifest(session: &mut Session<'_>) -> Result<(Vec<u8>, Digest), RegistryError> {
    let reference = session.reference().clone();
    let wanted = reference.wanted();
    let url = session.url(&format!("manifests/{wanted}"));
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, header(&format!("{MANIFEST_TYPE}, {INDEX_TYPE}")));
    let response = session.send(Method::GET, &url, headers, None).await?;
    if response.status() != StatusCode::OK {
        return Err(session.status(response.status(), &format!("the manifest {wanted}")));
    }
    let media_type = content_type(&response);
    let announced = response
        .headers()
        .get("docker-content-digest")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = session
        .read_capped(response, MAX_REGISTRY_MANIFEST, "its manifest")
        .await?;
    if media_type.as_deref() == Some(INDEX_TYPE)
        || media_type
            .as_deref()
            .is_some_and(|t| t.contains("manifest.list"))
    {
        return Err(session
            .refused("it is an index of several manifests, not one component's manifest".into()));
    }
    let digest = Digest::of(&bytes);
    if let Some(asked) = reference.digest()
        && *asked != digest
    {
        return Err(session.refused(format!(
            "the manifest it sent has digest {digest}, not the {asked} asked for"
        )));
    }
    if let Some(announced) = announced
        && Digest::parse(&announced).is_ok_and(|a| a != digest)
    {
        return Err(session.refused(format!(
            "the manifest it sent has digest {digest}, not the {} it announced",
            crate::shown(&announced)
        )));
    }
    Ok((bytes, digest))
}

/// A small blob (a config, a signature), checked against its descriptor.
async fn small_blob(
    session: &mut Session<'_>,
    descriptor: &Descriptor,
    cap: usize,
) -> Result<Vec<u8>, RegistryError> {
    let digest = descriptor
        .parsed_digest()
        .map_err(|why| session.refused(why))?;
    if descriptor.size > cap as u64 {
        return Err(session.refused(format!(
            "blob {digest} is announced as {} bytes, more than the {cap} accepted",
            descriptor.size
        )));
    }
    let url = session.url(&format!("blobs/{digest}"));
    let response = session
        .send(Method::GET, &url, HeaderMap::new(), None)
        .await?;
    if response.status() != StatusCode::OK {
        return Err(session.status(response.status(), &format!("blob {digest}")));
    }
    let bytes = session
        .read_capped(
            response,
            descriptor.size as usize,
            &format!("blob {digest}"),
        )
        .await?;
    let mut verifier = Verifier::new(digest, descriptor.size);
    verifier
        .update(&bytes)
        .and_then(|()| verifier.finish())
        .map_err(|m| session.refused(format!("blob {digest}: {m}")))?;
    Ok(bytes)
}

/// The component layer, streamed into a temporary file of the store and
/// checked as it comes; the caller keeps it.
async fn component_layer(
    session: &mut Session<'_>,
    store: &Store,
    checked: &ComponentManifest,
) -> Result<tempfile::NamedTempFile, RegistryError> {
    let digest = checked.layer_digest;
    let url = session.url(&format!("blobs/{digest}"));
    let response = session
        .send(Method::GET, &url, HeaderMap::new(), None)
        .await?;
    if response.status() != StatusCode::OK {
        return Err(session.status(response.status(), &format!("the component {digest}")));
    }
    let size = checked.layer.size;
    if response.content_length().is_some_and(|n| n != size) {
        return Err(session.refused(format!(
            "it announced the component as {size} bytes and sends another length"
        )));
    }
    let mut file = store.temporary()?;
    let write_error = |e: std::io::Error| RegistryError::Store {
        path: store.dir().to_owned(),
        why: format!("cannot write the component: {e}"),
    };
    let mut verifier = Verifier::new(digest, size);
    let mut head = Vec::with_capacity(8);
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| session.transport(e))?;
        verifier
            .update(&chunk)
            .map_err(|m| session.refused(format!("the component: {m}")))?;
        if head.len() < 8 {
            head.extend(chunk.iter().take(8 - head.len()));
            if head.len() == 8 && !looks_like_component(&head) {
                return Err(session.refused("its layer is not a WebAssembly component".into()));
            }
        }
        file.write_all(&chunk).map_err(write_error)?;
    }
    verifier
        .finish()
        .map_err(|m| session.refused(format!("the component: {m}")))?;
    if head.len() < 8 {
        return Err(session.refused("its layer is not a WebAssembly component".into()));
    }
    file.as_file().sync_all().map_err(write_error)?;
    Ok(file)
}

/// The signatures that refer to manifest `digest`: the referrers API, or
/// its fallback tag where the registry has no such API. A registry with
/// neither has none to give.
async fn signatures(
    session: &mut Session<'_>,
    digest: &Digest,
) -> Result<Vec<(Vec<u8>, String)>, RegistryError> {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, header(INDEX_TYPE));
    let url = session.url(&format!(
        "referrers/{digest}?artifactType={}",
        crate::layout::SIGNATURE_ARTIFACT_TYPE
    ));
    let response = session
        .send(Method::GET, &url, headers.clone(), None)
        .await?;
    let response = if response.status() == StatusCode::OK
        && content_type(&response).as_deref() == Some(INDEX_TYPE)
    {
        response
    } else {
        let url = session.url(&format!("manifests/{}", referrers_tag(digest)));
        let fallback = session.send(Method::GET, &url, headers, None).await?;
        match fallback.status() {
            StatusCode::OK => fallback,
            StatusCode::NOT_FOUND => return Ok(Vec::new()),
            other => return Err(session.status(other, "the list of signatures")),
        }
    };
    let bytes = session
        .read_capped(response, MAX_REGISTRY_MANIFEST, "its list of signatures")
        .await?;
    let index: Index = serde_json::from_slice(&bytes).map_err(|e| {
        session.refused(format!("its list of signatures is not an OCI index ({e})"))
    })?;
    let mut found = Vec::new();
    for listed in signatures_listed(&index, MAX_REGISTRY_SIGNATURES) {
        let manifest_digest = listed.parsed_digest().map_err(|why| session.refused(why))?;
        let url = session.url(&format!("manifests/{manifest_digest}"));
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, header(MANIFEST_TYPE));
        let response = session.send(Method::GET, &url, headers, None).await?;
        if response.status() != StatusCode::OK {
            return Err(session.status(response.status(), &format!("signature {manifest_digest}")));
        }
        let manifest = session
            .read_capped(response, MAX_REGISTRY_MANIFEST, "a signature's manifest")
            .await?;
        if Digest::of(&manifest) != manifest_digest {
            return Err(session.refused(format!(
                "the signature manifest it sent is not {manifest_digest}"
            )));
        }
        let layer = check_signature_manifest(&manifest, digest, MAX_REGISTRY_SIGNATURE as u64)
            .map_err(|why| session.refused(why))?;
        let text = small_blob(session, &layer, MAX_REGISTRY_SIGNATURE).await?;
        let text = String::from_utf8(text)
            .map_err(|_| session.refused("a signature is not text".into()))?;
        found.push((manifest, text));
    }
    Ok(found)
}

fn content_type(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim().to_owned())
}
