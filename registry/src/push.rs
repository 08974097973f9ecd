//! Pushing a plugin's component as a Wasm OCI artifact, and attaching its
//! package signature as an OCI 1.1 referrer of the manifest — through the
//! registry's referrers support when it has one (it answers the manifest's
//! upload with `OCI-Subject`), else by the referrers tag schema (an index
//! under the tag `sha256-HEX` that lists the signatures).

use lingxi_wasm_policy::limits::MAX_REGISTRY_MANIFEST;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, LOCATION};
use reqwest::{Method, StatusCode};

use crate::client::{Client, Scope, Session, header};
use crate::digest::Digest;
use crate::error::RegistryError;
use crate::layout::{
    ComponentArtifact, ComponentWorld, Descriptor, EMPTY_CONFIG, INDEX_TYPE, Index, MANIFEST_TYPE,
    PluginLabels, SIGNATURE_ARTIFACT_TYPE, referrers_tag, signature_manifest,
};
use crate::reference::Reference;

/// What to push.
#[derive(Debug, Clone)]
pub struct PushRequest<'a> {
    /// The component's bytes.
    pub component: &'a [u8],
    /// Its top-level imports and exports.
    pub world: ComponentWorld,
    /// Its id, version and declared capabilities.
    pub labels: PluginLabels,
    /// When the artifact is said to be made (RFC 3339).
    pub created: String,
    /// The package signature to attach, and the id of its key.
    pub signature: Option<(String, String)>,
}

/// What a push made.
#[derive(Debug, Clone)]
pub struct Pushed {
    /// The manifest's digest.
    pub digest: Digest,
    /// The signature manifest's digest, if one was attached.
    pub signature: Option<Digest>,
    /// Whether the signature went by the referrers tag schema (the
    /// registry has no referrers support).
    pub by_fallback_tag: bool,
}

/// Pushes `request` to `reference` (a tag, not a digest) within the
/// client's deadline.
pub async fn push(
    client: &Client,
    reference: &Reference,
    request: PushRequest<'_>,
) -> Result<Pushed, RegistryError> {
    if reference.digest().is_some() {
        return Err(RegistryError::BadReference {
            reference: reference.to_string(),
            why: "a push names a tag to write, not a digest".into(),
        });
    }
    client
        .within(reference, push_now(client, reference, request))
        .await
}

async fn push_now(
    client: &Client,
    reference: &Reference,
    request: PushRequest<'_>,
) -> Result<Pushed, RegistryError> {
    let mut session = client.session(reference, Scope::Push).await?;
    let artifact = ComponentArtifact::new(
        request.component,
        request.world,
        &request.labels,
        request.created,
    );
    upload_blob(&mut session, &artifact.config).await?;
    upload_blob(&mut session, request.component).await?;
    let tag = reference.wanted();
    put_manifest(&mut session, &tag, &artifact.manifest, MANIFEST_TYPE).await?;
    let Some((text, key_id)) = request.signature else {
        return Ok(Pushed {
            digest: artifact.digest,
            signature: None,
            by_fallback_tag: false,
        });
    };
    let subject = Descriptor::of(MANIFEST_TYPE, &artifact.manifest);
    let signature = signature_manifest(&subject, text.as_bytes(), &key_id);
    let signature_digest = Digest::of(&signature);
    upload_blob(&mut session, EMPTY_CONFIG).await?;
    upload_blob(&mut session, text.as_bytes()).await?;
    let answered = put_manifest(
        &mut session,
        &signature_digest.to_string(),
        &signature,
        MANIFEST_TYPE,
    )
    .await?;
    let by_fallback_tag = !answered.contains_key("oci-subject");
    if by_fallback_tag {
        let mut listed = Descriptor::of(MANIFEST_TYPE, &signature);
        listed.artifact_type = Some(SIGNATURE_ARTIFACT_TYPE.to_owned());
        listed.annotations =
            std::collections::BTreeMap::from([(crate::layout::ANNOTATION_KEY.to_owned(), key_id)]);
        add_to_fallback_tag(&mut session, &artifact.digest, listed).await?;
    }
    Ok(Pushed {
        digest: artifact.digest,
        signature: Some(signature_digest),
        by_fallback_tag,
    })
}

/// Uploads `bytes` as a blob unless the registry has it: a monolithic
/// upload (POST, then PUT with the digest).
async fn upload_blob(session: &mut Session<'_>, bytes: &[u8]) -> Result<(), RegistryError> {
    let digest = Digest::of(bytes);
    let url = session.url(&format!("blobs/{digest}"));
    let head = session
        .send(Method::HEAD, &url, HeaderMap::new(), None)
        .await?;
    if head.status() == StatusCode::OK {
        return Ok(());
    }
    let url = session.url("blobs/uploads/");
    let started = session
        .send(Method::POST, &url, HeaderMap::new(), None)
        .await?;
    if started.status() != StatusCode::ACCEPTED {
        return Err(session.status(started.status(), "starting an upload"));
    }
    let location = started
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| session.refused("it started an upload without saying where".into()))?;
    let mut target = reqwest::Url::parse(&session.url(""))
        .and_then(|base| base.join(location))
        .map_err(|_| session.refused("its upload location is not a URL".into()))?;
    target
        .query_pairs_mut()
        .append_pair("digest", &digest.to_string());
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, header("application/octet-stream"));
    let put = session
        .send(Method::PUT, target.as_str(), headers, Some(bytes.to_vec()))
        .await?;
    if put.status() != StatusCode::CREATED {
        return Err(session.status(put.status(), &format!("the upload of blob {digest}")));
    }
    Ok(())
}

/// Puts a manifest (or index) under `name` (a tag or a digest); returns
/// the answer's headers.
async fn put_manifest(
    session: &mut Session<'_>,
    name: &str,
    bytes: &[u8],
    media_type: &str,
) -> Result<HeaderMap, RegistryError> {
    let url = session.url(&format!("manifests/{name}"));
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, header(media_type));
    let put = session
        .send(Method::PUT, &url, headers, Some(bytes.to_vec()))
        .await?;
    if put.status() != StatusCode::CREATED {
        return Err(session.status(put.status(), &format!("the manifest {name}")));
    }
    let ours = Digest::of(bytes);
    if let Some(announced) = put
        .headers()
        .get("docker-content-digest")
        .and_then(|v| v.to_str().ok())
        && Digest::parse(announced).is_ok_and(|d| d != ours)
    {
        return Err(session.refused(format!(
            "it filed the manifest under {}, not its digest {ours}",
            crate::shown(announced)
        )));
    }
    Ok(put.headers().clone())
}

/// Adds `listed` to the index under the referrers tag of `subject`.
async fn add_to_fallback_tag(
    session: &mut Session<'_>,
    subject: &Digest,
    listed: Descriptor,
) -> Result<(), RegistryError> {
    let tag = referrers_tag(subject);
    let url = session.url(&format!("manifests/{tag}"));
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, header(INDEX_TYPE));
    let found = session.send(Method::GET, &url, headers, None).await?;
    let mut index = match found.status() {
        StatusCode::OK => {
            let bytes = session
                .read_capped(found, MAX_REGISTRY_MANIFEST, "its list of signatures")
                .await?;
            serde_json::from_slice::<Index>(&bytes).map_err(|e| {
                session.refused(format!("its list of signatures is not an OCI index ({e})"))
            })?
        }
        StatusCode::NOT_FOUND => Index::new(),
        other => return Err(session.status(other, "the list of signatures")),
    };
    if index.manifests.iter().any(|d| d.digest == listed.digest) {
        return Ok(());
    }
    index.manifests.push(listed);
    let bytes = serde_json::to_vec(&index).unwrap_or_default();
    put_manifest(session, &tag, &bytes, INDEX_TYPE).await?;
    Ok(())
}
