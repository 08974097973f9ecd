//! Packed plugins: one native executable that a LingXi host can spawn with
//! no arguments. It is the launcher itself with a payload appended:
//!
//! ```text
//! [launcher executable][payload][trailer]
//! payload = header length (u32 LE) | header JSON | component | padding | precompiled
//! trailer = MAGIC (16 bytes) | payload length (u64 LE) | SHA-256
//! ```
//!
//! The padding (zeros, format 2 on) puts the precompiled code at a file
//! offset that is a multiple of [`CODE_ALIGN`], so it can be mapped and run
//! in place instead of being copied (see `host/src/code.rs`).
//!
//! The header names the plugin, the grants it was packed with, and the sizes
//! and digests of the two blobs. From format 5 the component is stored
//! compressed ([`Compressed`]); its digest is of the component itself. From
//! format 3 the trailer's digest covers the header length and the header,
//! and each blob is checked against its digest in the header before it is
//! used: a start checks the header and the code it maps, `read` the header
//! and the component, and nobody hashes a blob it does not use (an
//! interpreter's component is tens of MB). Up to format 2 the trailer's
//! digest covers the whole payload. Either way a truncated or damaged file
//! is refused with a clear message and never runs half a plugin.
//!
//! The digest detects corruption; it does not prove who made the file (it is
//! unkeyed: anyone can write a valid one). So the precompiled code of a file
//! is only ever used by that file itself when it runs ([`read_self`]); every
//! other reader ([`read`]: `inspect`, `install`, `list`) uses the header and
//! the portable component, which the sandbox compiles itself.

#![warn(missing_docs)]

use std::fs::File;
use std::io;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use lingxi_protocol::dto::ManifestDto;
use lingxi_wasm_policy::PolicySpec;

/// Marks the end of a packed executable.
pub const MAGIC: &[u8; 16] = b"LINGXI-WASM-PK01";
pub(crate) const TRAILER_LEN: u64 = 16 + 8 + 32;
use lingxi_wasm_policy::limits::{MAX_PACK_HEADER as MAX_HEADER, MAX_PACK_PAYLOAD as MAX_PAYLOAD};
/// The header format written by this version. Format 5: the component is
/// stored compressed (`componentCompressed`). Format 4: an empty
/// `allow-net` reaches nothing (every destination is `*:*`); a header of an
/// earlier format keeps the meaning it was packed with (see
/// [`PackHeader::keep_meaning`]).
pub const FORMAT: u32 = 5;
/// The first format whose component may be stored compressed.
const COMPRESSED_FROM: u32 = 5;
/// File alignment of the precompiled code: a multiple of every page size in
/// use (4, 16 and 64 KiB).
pub const CODE_ALIGN: u64 = 64 * 1024;

/// Zero bytes needed after `offset` to reach a multiple of [`CODE_ALIGN`].
fn padding(offset: u64) -> u64 {
    offset.next_multiple_of(CODE_ALIGN) - offset
}

/// What a packed executable says about itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackHeader {
    /// Format version of this header.
    pub format: u32,
    /// Plugin id, version and declared capabilities, for `list`/`inspect`.
    pub plugin_id: String,
    /// The plugin's version.
    pub plugin_version: String,
    /// Capabilities the plugin declares (wire names).
    pub declared: Vec<String>,
    /// The grants and limits it runs with.
    pub policy: PolicySpec,
    /// SHA-256 (hex) of the portable component (decoded, when it is stored
    /// compressed).
    pub component_sha256: String,
    /// BLAKE3 (hex) of the precompiled component (format 3 on): what a
    /// start checks before it maps the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precompiled_blake3: Option<String>,
    /// Length of the portable component as stored in the file. [`build`]
    /// sets it.
    pub component_len: u64,
    /// How the component is stored, if compressed (format 5 on; [`build`]
    /// sets it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component_compressed: Option<Compressed>,
    /// Length of the precompiled component (0 if none).
    pub precompiled_len: u64,
    /// The engine compatibility hash the precompiled component was made for.
    pub engine: String,
    /// The manifest the component returned when it was packed (as in the
    /// handshake), so that a packed start needs no instance just to read it.
    /// Absent in files packed by older versions (the component is asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<ManifestDto>,
    /// A minisign signature of the portable component (`pack --sign`), as
    /// the text of a `.minisig` file. The payload digest covers it against
    /// damage; only a check against a key the user trusts proves anything
    /// (the launcher's `signing` module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// A folder (absolute) the plugin records each of its sessions into
    /// (`install --record DIR`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<PathBuf>,
    /// What the executable part is, as it says of itself
    /// (`lingxi-wasm-rt 0.1.0 (runtime-only)`); absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The registry artifact its component was pulled as (`install
    /// oci://…`), for `list` and `inspect`; absent for a local file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

/// Where a packed plugin's component came from: a registry reference and
/// the manifest digest it resolved to when it was pulled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The reference as the user gave it (`oci://HOST/REPO:TAG`).
    pub reference: String,
    /// The manifest's digest (`sha256:…`).
    pub digest: String,
}

/// The verified contents of a packed executable.
#[derive(Debug)]
pub struct Packed {
    /// The header.
    pub header: PackHeader,
    /// The trailer's SHA-256 (hex): of the header from format 3 (which
    /// holds the blobs' digests), of the whole payload before.
    pub digest: String,
    /// Length of the launcher part (everything before the payload).
    pub launcher_len: u64,
    bytes: Bytes,
    component: std::ops::Range<usize>,
    precompiled: std::ops::Range<usize>,
    /// Whether the component's bytes were checked against the header.
    component_checked: bool,
    /// The component decoded (a compressed one), or why it cannot be.
    decoded: std::sync::OnceLock<Result<Vec<u8>, String>>,
}

/// Where a packed file's bytes live.
#[derive(Debug)]
enum Bytes {
    /// The payload, read into memory: any file that is not the running
    /// executable (a concurrent truncation cannot fault a safe API).
    Payload(Vec<u8>),
    /// The whole running executable, mapped (Linux only: it cannot be
    /// written while it runs). Kept with its file so its code can be mapped.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    OwnFile { file: File, map: memmap2::Mmap },
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Payload(bytes) => bytes,
            Bytes::OwnFile { map, .. } => map,
        }
    }
}

impl Packed {
    /// The file offsets of the header and the trailer (read into memory).
    #[cfg(not(target_os = "linux"))]
    fn relied(&self) -> running::Relied {
        let start = self.launcher_len;
        let end = start + self.bytes.as_slice().len() as u64;
        running::Relied {
            header: start..start + self.component.start as u64,
            trailer: end..end + TRAILER_LEN,
        }
    }

    /// The portable component, decoded if it is stored compressed (then
    /// empty if it cannot be): verified by [`read`]; after [`read_self`],
    /// call [`Packed::verify_component`] before using it.
    pub fn component(&self) -> &[u8] {
        match self.decoded() {
            Some(Ok(decoded)) => decoded,
            Some(Err(_)) => &[],
            None => self.stored_component(),
        }
    }

    /// The component's bytes as the file stores them (compressed from
    /// format 5 on).
    pub fn stored_component(&self) -> &[u8] {
        &self.bytes.as_slice()[self.component.clone()]
    }

    /// The decoded component of a compressed one, decoded once.
    fn decoded(&self) -> Option<&Result<Vec<u8>, String>> {
        let how = self.header.component_compressed.as_ref()?;
        Some(
            self.decoded
                .get_or_init(|| compress::decode(self.stored_component(), how)),
        )
    }

    /// Checks the component against its digest in the header, if that was
    /// not done when the file was read ([`read_self`] checks only the code
    /// a start maps).
    pub fn verify_component(&self) -> Result<(), PackError> {
        let damaged = |reason: String| PackError::Damaged {
            path: PathBuf::from(&self.header.plugin_id),
            reason,
        };
        if let Some(Err(reason)) = self.decoded() {
            return Err(damaged(reason.clone()));
        }
        if self.component_checked || sha256_hex(self.component()) == self.header.component_sha256 {
            return Ok(());
        }
        Err(damaged(
            "its component does not match the digest in its header".into(),
        ))
    }

    /// The precompiled component for [`PackHeader::engine`]. Native code:
    /// only the running executable's own may ever be loaded (see
    /// the host's `Runtime::load_own_packed`).
    pub fn precompiled(&self) -> &[u8] {
        &self.bytes.as_slice()[self.precompiled.clone()]
    }

    /// The running executable's file and the offset of the precompiled
    /// component in it, if this was read by [`read_self`] from a map and
    /// the offset is aligned to [`CODE_ALIGN`] (format 2 on).
    #[cfg_attr(
        not(all(target_os = "linux", target_arch = "x86_64")),
        allow(dead_code)
    )]
    pub fn precompiled_in_file(&self) -> Option<(&File, u64)> {
        let Bytes::OwnFile { file, .. } = &self.bytes else {
            return None;
        };
        let offset = self.precompiled.start as u64;
        (offset.is_multiple_of(CODE_ALIGN) && !self.precompiled.is_empty())
            .then_some((file, offset))
    }
}

/// A packed executable that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// Reading the file failed.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// Packed by a newer `lingxi-wasm-run`, in a format this one cannot read.
    #[error("{} was packed in format {format}, newer than {this} reads (up to {FORMAT}); repack or reinstall it with this version, or update {program}", path.display(), this = this_reader(), program = lingxi_wasm_policy::wording::program())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// Its format.
        format: u32,
    },
    /// The file a start read is not the one this process runs (macOS,
    /// Windows: see `running`).
    #[error("{} is not the file this process was started from ({reason}); it was replaced while starting: start it again", path.display())]
    NotRunning {
        /// The file.
        path: PathBuf,
        /// What differs.
        reason: String,
    },
    /// The payload is damaged.
    #[error("{} is a damaged packed plugin ({reason}): its bytes are not the ones that were packed, so nothing of it runs; get a fresh copy from whoever published it (and check its signature), or pack it again from its component, then install that", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// Lowercase hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Lowercase hex BLAKE3.
pub fn blake3_hex(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// Lays a payload onto `launcher` (the bytes of a plain, unpacked base):
/// appended to an ELF or PE file; inside a Mach-O's `__LINKEDIT`, with
/// zeros after the last blob up to where the new ad hoc signature starts,
/// which covers every byte before it (see `layout`). `component` is the
/// component itself: from format 5 it is stored compressed, and the
/// header's `component_len` and `component_compressed` are set here.
pub fn build(
    launcher: &[u8],
    header: &PackHeader,
    component: &[u8],
    precompiled: &[u8],
) -> Result<Vec<u8>, BuildError> {
    let place = layout::Placement::on(launcher).map_err(|e| BuildError::Base(e.to_string()))?;
    let launcher = place.base;
    let mut header = header.clone();
    let encoded;
    header.component_compressed = None;
    let compressed = if header.format >= COMPRESSED_FROM {
        compress::encode(component).map_err(BuildError::Compress)?
    } else {
        None
    };
    let component = match compressed {
        Some((stored, how)) => {
            header.component_compressed = Some(how);
            encoded = stored;
            &encoded[..]
        }
        None => component,
    };
    header.component_len = component.len() as u64;
    let header_json = serde_json::to_vec(&header).map_err(BuildError::Header)?;
    let before_code = launcher.len() + 4 + header_json.len() + component.len();
    let pad = padding(before_code as u64) as usize;
    let mut payload =
        Vec::with_capacity(4 + header_json.len() + component.len() + pad + precompiled.len());
    payload.extend_from_slice(&(header_json.len() as u32).to_le_bytes());
    payload.extend_from_slice(&header_json);
    payload.extend_from_slice(component);
    payload.resize(payload.len() + pad, 0);
    payload.extend_from_slice(precompiled);
    payload.resize(payload.len() + place.tail(payload.len()), 0);
    let mut out = Vec::with_capacity(launcher.len() + payload.len() + TRAILER_LEN as usize);
    out.extend_from_slice(launcher);
    out.extend_from_slice(&payload);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    let covered = match header.format {
        ..=2 => &payload[..],
        _ => &payload[..4 + header_json.len()],
    };
    out.extend_from_slice(&Sha256::digest(covered));
    place
        .finish(out, &header.plugin_id)
        .map_err(|e| BuildError::Base(e.to_string()))
}

impl PackHeader {
    /// Gives a header of an earlier format the meaning it was packed with:
    /// before format 4, `networkAccess` with no `allow-net` rule reached
    /// every destination, so that grant is written out as `*:*` (what it
    /// must say now). The signature covers the plugin and what it
    /// declares, not the grants, so it holds; `inspect` shows the rule.
    pub fn keep_meaning(&mut self) {
        let network = "networkAccess";
        let granted = match &self.policy.grant {
            None => self.declared.iter().any(|c| c == network),
            Some(list) => list.iter().any(|c| c == network),
        };
        if self.format < 4 && granted && self.policy.allow_net.is_empty() {
            self.policy.allow_net = vec![lingxi_wasm_policy::net::ANY_DESTINATION.to_owned()];
        }
    }
}

/// Whether a payload can be laid onto `base` (a Mach-O must be laid out
/// as a linker writes it; see `layout`): what [`build`] would refuse.
pub fn check_base(base: &[u8]) -> Result<(), BuildError> {
    layout::Placement::on(base)
        .map(|_| ())
        .map_err(|e| BuildError::Base(e.to_string()))
}

/// Why a packed file cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The header cannot be encoded.
    #[error("cannot encode the pack header: {0}")]
    Header(serde_json::Error),
    /// The component cannot be compressed.
    #[error("cannot compress the component: {0}")]
    Compress(io::Error),
    /// The base cannot carry a payload where its platform needs it.
    #[error(
        "cannot pack on this base: {0}; use a plain base (the runtime-only base or the launcher, as built) for the platform"
    )]
    Base(String),
}

mod compress;
mod layout;
mod macho;
mod read;

pub use compress::{Codec, Compressed};
pub use read::{has_trailer, is_packed, launcher_bytes, parse_bytes, read, read_self};
#[cfg(not(target_os = "linux"))]
mod running;

#[cfg(test)]
mod tests;

/// What reads packed files here, for messages: `this lingxi-wasm-run` in
/// the launcher, `this host` elsewhere.
fn this_reader() -> String {
    match lingxi_wasm_policy::wording::wording().program() {
        Some(program) => format!("this {program}"),
        None => "this host".to_owned(),
    }
}

/// The crate's README (what crates.io shows), its example compiled and run
/// as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
