//! What a plugin looks like in a registry: the Wasm OCI artifact layout of
//! the CNCF TAG Runtime ("wasm-oci"), which wkg, Wassette and Spin read — an
//! OCI image manifest whose config is `application/vnd.wasm.config.v0+json`
//! and whose one layer is the component (`application/wasm`) — with the
//! plugin's id, version and declared capabilities as annotations; and its
//! signature, an OCI 1.1 referrer of that manifest.
//!
//! The documents are small serde types of the fields this crate writes and
//! checks, not a general OCI model: a manifest read from a registry is
//! refused unless it is exactly this shape ([`ComponentManifest::check`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::digest::Digest;

/// An OCI image manifest.
pub const MANIFEST_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// An OCI image index (a list of manifests; the referrers fallback tag).
pub const INDEX_TYPE: &str = "application/vnd.oci.image.index.v1+json";
/// The config of a Wasm artifact.
pub const WASM_CONFIG_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The layer that is the component.
pub const WASM_LAYER_TYPE: &str = "application/wasm";
/// The empty config of an artifact that needs none (OCI 1.1).
pub const EMPTY_CONFIG_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// The empty config's bytes.
pub const EMPTY_CONFIG: &[u8] = b"{}";
/// What a lingxi-wasm package signature is, as an artifact type.
pub const SIGNATURE_ARTIFACT_TYPE: &str = "application/vnd.dev.lingxi-wasm.signature.v1";
/// The layer that holds the minisign signature text.
pub const SIGNATURE_LAYER_TYPE: &str = "application/vnd.dev.lingxi-wasm.signature.v1+minisign";

/// Annotation: the plugin's id (its manifest's `id`).
pub const ANNOTATION_ID: &str = "dev.lingxi.plugin.id";
/// Annotation: the plugin's version.
pub const ANNOTATION_VERSION: &str = "dev.lingxi.plugin.version";
/// Annotation: the capabilities the plugin declares, as wire names joined
/// by commas (empty: none).
pub const ANNOTATION_CAPABILITIES: &str = "dev.lingxi.plugin.capabilities";
/// Annotation: the id of the key a signature was made with.
pub const ANNOTATION_KEY: &str = "dev.lingxi.signature.key";
/// The standard annotations wkg and registries' web pages show.
pub const ANNOTATION_TITLE: &str = "org.opencontainers.image.title";
/// The standard version annotation.
pub const ANNOTATION_OCI_VERSION: &str = "org.opencontainers.image.version";

/// A pointer to content: its media type, digest and size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    /// What the content is.
    pub media_type: String,
    /// Its digest, as `sha256:HEX` text (checked where it is used).
    pub digest: String,
    /// Its length in bytes.
    pub size: u64,
    /// An artifact's type (in an index or referrers list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    /// Annotations (in an index or referrers list).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl Descriptor {
    /// A descriptor of `bytes` as `media_type`.
    pub fn of(media_type: &str, bytes: &[u8]) -> Self {
        Descriptor {
            media_type: media_type.to_owned(),
            digest: Digest::of(bytes).to_string(),
            size: bytes.len() as u64,
            artifact_type: None,
            annotations: BTreeMap::new(),
        }
    }

    /// The digest, parsed.
    pub fn parsed_digest(&self) -> Result<Digest, String> {
        Digest::parse(&self.digest)
    }
}

/// An OCI image manifest, as this crate writes and reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Always 2.
    pub schema_version: u32,
    /// [`MANIFEST_TYPE`].
    #[serde(default)]
    pub media_type: Option<String>,
    /// An artifact's type (a signature's), if it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    /// The config blob.
    pub config: Descriptor,
    /// The layers.
    pub layers: Vec<Descriptor>,
    /// The manifest this one refers to (a signature's component).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Descriptor>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// An OCI image index: the referrers API's answer and its fallback tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Index {
    /// Always 2.
    pub schema_version: u32,
    /// [`INDEX_TYPE`].
    #[serde(default)]
    pub media_type: Option<String>,
    /// The manifests listed.
    #[serde(default)]
    pub manifests: Vec<Descriptor>,
}

impl Index {
    /// An empty index.
    pub fn new() -> Self {
        Index {
            schema_version: 2,
            media_type: Some(INDEX_TYPE.to_owned()),
            manifests: Vec::new(),
        }
    }
}

impl Default for Index {
    fn default() -> Self {
        Index::new()
    }
}

/// The config of a Wasm artifact (the wasm-oci spec's fields).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    /// When it was made (RFC 3339).
    pub created: String,
    /// Who made it, if said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Always `wasm`.
    pub architecture: String,
    /// `wasip2` for a component.
    pub os: String,
    /// The layers' digests, in order.
    pub layer_digests: Vec<String>,
    /// The component's world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<ComponentWorld>,
}

/// The names a component imports and exports (the config's `component`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ComponentWorld {
    /// Its top-level exports (`lingxi:plugin/plugin@0.2.0`, …).
    pub exports: Vec<String>,
    /// Its top-level imports.
    pub imports: Vec<String>,
    /// The world it targets, if known.
    #[serde(default)]
    pub target: Option<String>,
}

/// What a plugin's artifact says of it, beside the component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginLabels {
    /// The manifest's id.
    pub id: String,
    /// The manifest's version.
    pub version: String,
    /// The capabilities it declares, as wire names.
    pub capabilities: Vec<String>,
}

impl PluginLabels {
    /// The annotations that carry these labels.
    pub fn annotations(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            (ANNOTATION_ID.to_owned(), self.id.clone()),
            (ANNOTATION_VERSION.to_owned(), self.version.clone()),
            (
                ANNOTATION_CAPABILITIES.to_owned(),
                self.capabilities.join(","),
            ),
            (ANNOTATION_TITLE.to_owned(), self.id.clone()),
            (ANNOTATION_OCI_VERSION.to_owned(), self.version.clone()),
        ])
    }

    /// The labels a manifest's annotations carry, if it has ours.
    pub fn from_annotations(annotations: &BTreeMap<String, String>) -> Option<Self> {
        let capabilities = annotations.get(ANNOTATION_CAPABILITIES)?;
        Some(PluginLabels {
            id: annotations.get(ANNOTATION_ID)?.clone(),
            version: annotations.get(ANNOTATION_VERSION)?.clone(),
            capabilities: capabilities
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect(),
        })
    }
}

/// The documents of a component's artifact, ready to push.
#[derive(Debug, Clone)]
pub struct ComponentArtifact {
    /// The config blob's bytes.
    pub config: Vec<u8>,
    /// The manifest's bytes (what its digest is of).
    pub manifest: Vec<u8>,
    /// The manifest's digest.
    pub digest: Digest,
}

impl ComponentArtifact {
    /// The artifact of `component` (its bytes), made at `created`, with
    /// `labels`.
    pub fn new(
        component: &[u8],
        world: ComponentWorld,
        labels: &PluginLabels,
        created: String,
    ) -> Self {
        let layer = Descriptor::of(WASM_LAYER_TYPE, component);
        let config = WasmConfig {
            created,
            author: None,
            architecture: "wasm".to_owned(),
            os: "wasip2".to_owned(),
            layer_digests: vec![layer.digest.clone()],
            component: Some(world),
        };
        let config = to_json(&config);
        let manifest = Manifest {
            schema_version: 2,
            media_type: Some(MANIFEST_TYPE.to_owned()),
            artifact_type: None,
            config: Descriptor::of(WASM_CONFIG_TYPE, &config),
            layers: vec![layer],
            subject: None,
            annotations: labels.annotations(),
        };
        let manifest = to_json(&manifest);
        ComponentArtifact {
            digest: Digest::of(&manifest),
            config,
            manifest,
        }
    }
}

/// The manifest of a signature of the manifest `subject` (its bytes' size
/// and digest), whose one layer is `signature`, made with key `key_id`.
pub fn signature_manifest(subject: &Descriptor, signature: &[u8], key_id: &str) -> Vec<u8> {
    let mut config = Descriptor::of(EMPTY_CONFIG_TYPE, EMPTY_CONFIG);
    config.annotations.clear();
    let manifest = Manifest {
        schema_version: 2,
        media_type: Some(MANIFEST_TYPE.to_owned()),
        artifact_type: Some(SIGNATURE_ARTIFACT_TYPE.to_owned()),
        config,
        layers: vec![Descriptor::of(SIGNATURE_LAYER_TYPE, signature)],
        subject: Some(subject.clone()),
        annotations: BTreeMap::from([(ANNOTATION_KEY.to_owned(), key_id.to_owned())]),
    };
    to_json(&manifest)
}

/// The referrers fallback tag of a manifest: `sha256-HEX` (OCI 1.1, for
/// registries without the referrers API).
pub fn referrers_tag(subject: &Digest) -> String {
    format!("sha256-{}", subject.hex())
}

/// A checked component manifest: one Wasm config, one component layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentManifest {
    /// The config's descriptor.
    pub config: Descriptor,
    /// The component layer's descriptor.
    pub layer: Descriptor,
    /// The component layer's digest.
    pub layer_digest: Digest,
    /// The plugin labels, if the artifact carries ours (one pushed by wkg
    /// does not).
    pub labels: Option<PluginLabels>,
}

impl ComponentManifest {
    /// Reads `bytes` as a component's manifest, or says why it is not one.
    pub fn check(bytes: &[u8], max_component: u64) -> Result<Self, String> {
        let manifest: Manifest = serde_json::from_slice(bytes)
            .map_err(|e| format!("its manifest is not an OCI image manifest ({e})"))?;
        if manifest.schema_version != 2 {
            return Err(format!(
                "its manifest has schemaVersion {}, not 2",
                manifest.schema_version
            ));
        }
        if let Some(media_type) = &manifest.media_type
            && media_type != MANIFEST_TYPE
        {
            return Err(format!(
                "its manifest is {}, not {MANIFEST_TYPE}",
                crate::shown(media_type)
            ));
        }
        if manifest.config.media_type != WASM_CONFIG_TYPE {
            return Err(format!(
                "its config is {}, not {WASM_CONFIG_TYPE}: it is not a Wasm artifact",
                crate::shown(&manifest.config.media_type)
            ));
        }
        let [layer] = manifest.layers.as_slice() else {
            return Err(format!(
                "it has {} layers; a Wasm component artifact has exactly one",
                manifest.layers.len()
            ));
        };
        if layer.media_type != WASM_LAYER_TYPE {
            return Err(format!(
                "its layer is {}, not {WASM_LAYER_TYPE}",
                crate::shown(&layer.media_type)
            ));
        }
        if layer.size > max_component {
            return Err(format!(
                "its component is {} bytes, more than the {max_component} a plugin file may be",
                layer.size
            ));
        }
        let layer_digest = layer.parsed_digest()?;
        manifest.config.parsed_digest()?;
        Ok(ComponentManifest {
            config: manifest.config.clone(),
            layer: layer.clone(),
            layer_digest,
            labels: PluginLabels::from_annotations(&manifest.annotations),
        })
    }
}

/// The signatures an index lists (a referrers answer or the fallback tag):
/// manifests of [`SIGNATURE_ARTIFACT_TYPE`], at most `max`.
pub fn signatures_listed(index: &Index, max: usize) -> Vec<Descriptor> {
    index
        .manifests
        .iter()
        .filter(|d| d.artifact_type.as_deref() == Some(SIGNATURE_ARTIFACT_TYPE))
        .take(max)
        .cloned()
        .collect()
}

/// Reads a signature manifest of the manifest `subject`: its one layer.
/// One that names another subject, or none, is refused.
pub fn check_signature_manifest(
    bytes: &[u8],
    subject: &Digest,
    max_signature: u64,
) -> Result<Descriptor, String> {
    let manifest: Manifest = serde_json::from_slice(bytes)
        .map_err(|e| format!("the signature's manifest is not an OCI image manifest ({e})"))?;
    if manifest.artifact_type.as_deref() != Some(SIGNATURE_ARTIFACT_TYPE) {
        return Err("the signature's manifest is not a lingxi-wasm signature".into());
    }
    let named = (manifest.subject.as_ref()).and_then(|d| d.parsed_digest().ok());
    if named.as_ref() != Some(subject) {
        return Err(format!(
            "a signature listed for {subject} names another subject ({})",
            named.map_or("none".to_owned(), |d| d.to_string())
        ));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err("the signature's manifest does not have exactly one layer".into());
    };
    if layer.media_type != SIGNATURE_LAYER_TYPE || layer.size > max_signature {
        return Err(format!(
            "the signature's layer is not a minisign signature of at most {max_signature} bytes"
        ));
    }
    layer.parsed_digest()?;
    Ok(layer.clone())
}

fn to_json<T: Serialize>(value: &T) -> Vec<u8> {
    // Serialising these types cannot fail: strings, numbers and maps with
    // string keys only.
    serde_json::to_vec(value).unwrap_or_default()
}

#[cfg(test)]
mod tests;
