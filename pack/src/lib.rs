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
//! and digests of the two blobs. From format 3 the trailer's digest covers
//! the header length and the header, and each blob is checked against its
//! digest in the header before it is used: a start checks the header and
//! the code it maps, `read` the header and the component, and nobody hashes
//! a blob it does not use (an interpreter's component is tens of MB). Up to
//! format 2 the trailer's digest covers the whole payload. Either way a
//! truncated or damaged file is refused with a clear message and never runs
//! half a plugin.
//!
//! The digest detects corruption; it does not prove who made the file (it is
//! unkeyed: anyone can write a valid one). So the precompiled code of a file
//! is only ever used by that file itself when it runs ([`read_self`]); every
//! other reader ([`read`]: `inspect`, `install`, `list`) uses the header and
//! the portable component, which the sandbox compiles itself.

#![warn(missing_docs)]

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use lingxi_protocol::dto::ManifestDto;
use lingxi_wasm_policy::PolicySpec;

/// Marks the end of a packed executable.
pub const MAGIC: &[u8; 16] = b"LINGXI-WASM-PK01";
pub(crate) const TRAILER_LEN: u64 = 16 + 8 + 32;
use lingxi_wasm_policy::limits::{MAX_PACK_HEADER as MAX_HEADER, MAX_PACK_PAYLOAD as MAX_PAYLOAD};
/// The header format written by this version. Format 4: an empty
/// `allow-net` reaches nothing (every destination is `*:*`); a header of an
/// earlier format keeps the meaning it was packed with (see
/// [`PackHeader::keep_meaning`]).
pub const FORMAT: u32 = 4;
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
    /// SHA-256 (hex) of the portable component.
    pub component_sha256: String,
    /// BLAKE3 (hex) of the precompiled component (format 3 on): what a
    /// start checks before it maps the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precompiled_blake3: Option<String>,
    /// Length of the portable component.
    pub component_len: u64,
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

    /// The portable component: verified by [`read`]; after [`read_self`],
    /// call [`Packed::verify_component`] before using it.
    pub fn component(&self) -> &[u8] {
        &self.bytes.as_slice()[self.component.clone()]
    }

    /// Checks the component against its digest in the header, if that was
    /// not done when the file was read ([`read_self`] checks only the code
    /// a start maps).
    pub fn verify_component(&self) -> Result<(), PackError> {
        if self.component_checked || sha256_hex(self.component()) == self.header.component_sha256 {
            return Ok(());
        }
        Err(PackError::Damaged {
            path: PathBuf::from(&self.header.plugin_id),
            reason: "its component does not match the digest in its header".into(),
        })
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
/// which covers every byte before it (see `layout`).
pub fn build(
    launcher: &[u8],
    header: &PackHeader,
    component: &[u8],
    precompiled: &[u8],
) -> Result<Vec<u8>, BuildError> {
    let place = layout::Placement::on(launcher).map_err(|e| BuildError::Base(e.to_string()))?;
    let launcher = place.base;
    let header_json = serde_json::to_vec(header).map_err(BuildError::Header)?;
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
    /// The base cannot carry a payload where its platform needs it.
    #[error(
        "cannot pack on this base: {0}; use a plain base (the runtime-only base or the launcher, as built) for the platform"
    )]
    Base(String),
}

/// Reads and verifies the payload of `path`, into memory. `Ok(None)` if the
/// file carries no trailer at all (a plain launcher). Use this for every
/// file that is not the running executable.
pub fn read(path: &Path) -> Result<Option<Packed>, PackError> {
    let file = File::open(path).map_err(|source| PackError::Io {
        path: path.to_owned(),
        source,
    })?;
    read_from(path, file)
}

/// [`read`] from a file opened as `path`.
fn read_from(path: &Path, mut file: File) -> Result<Option<Packed>, PackError> {
    let io_err = |source| PackError::Io {
        path: path.to_owned(),
        source,
    };
    let size = file.metadata().map_err(io_err)?.len();
    if size < TRAILER_LEN {
        return Ok(None);
    }
    let size = layout::file_trailer_end(&mut file, size).map_err(io_err)?;
    let mut trailer = [0u8; TRAILER_LEN as usize];
    file.seek(SeekFrom::Start(size - TRAILER_LEN))
        .and_then(|_| file.read_exact(&mut trailer))
        .map_err(io_err)?;
    let Some(payload_len) = payload_len(path, &trailer, size)? else {
        return Ok(None);
    };
    let launcher_len = size - TRAILER_LEN - payload_len;
    let mut payload = Vec::new();
    file.seek(SeekFrom::Start(launcher_len))
        .and_then(|_| (&mut file).take(payload_len).read_to_end(&mut payload))
        .map_err(io_err)?;
    if payload.len() as u64 != payload_len {
        return Err(PackError::Damaged {
            path: path.to_owned(),
            reason: "the file was cut while it was read".into(),
        });
    }
    verify_payload(path, payload, launcher_len, &trailer, BlobsUsed::All).map(Some)
}

/// [`read`] on a whole file's bytes (`path` only names it in errors): the
/// same trailer and payload checks, for the fuzz targets (`fuzz/`).
#[doc(hidden)]
pub fn parse_bytes(path: &Path, file: &[u8]) -> Result<Option<Packed>, PackError> {
    parse(path, file, BlobsUsed::All)
}

/// A payload read into memory, verified for a reader that needs `need`.
fn verify_payload(
    path: &Path,
    payload: Vec<u8>,
    launcher_len: u64,
    trailer: &[u8],
    need: BlobsUsed,
) -> Result<Packed, PackError> {
    let range = 0..payload.len();
    verify(
        path,
        Bytes::Payload(payload),
        range,
        launcher_len,
        trailer,
        need,
    )
}

/// [`parse_bytes`] for a reader that needs `need`.
fn parse(path: &Path, file: &[u8], need: BlobsUsed) -> Result<Option<Packed>, PackError> {
    let file = &file[..layout::bytes_trailer_end(file) as usize];
    let size = file.len() as u64;
    let Some(trailer) = file
        .len()
        .checked_sub(TRAILER_LEN as usize)
        .map(|at| &file[at..])
    else {
        return Ok(None);
    };
    let Some(payload_len) = payload_len(path, trailer, size)? else {
        return Ok(None);
    };
    let launcher_len = size - TRAILER_LEN - payload_len;
    let payload = file[launcher_len as usize..][..payload_len as usize].to_vec();
    verify_payload(path, payload, launcher_len, trailer, need).map(Some)
}

/// Reads and verifies the running executable's own payload. On Linux it is
/// mapped from `/proc/self/exe` (the file that is running, even if its path
/// was renamed over since), which cannot be written while it runs; its
/// precompiled code may then run in place. Elsewhere it is read into memory.
pub fn read_self() -> Result<Option<Packed>, PackError> {
    #[cfg(target_os = "linux")]
    {
        // Messages name the file as the user knows it.
        let shown = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
        let path = shown.as_path();
        let io_err = |source| PackError::Io {
            path: path.to_owned(),
            source,
        };
        let file = File::open("/proc/self/exe").map_err(io_err)?;
        let size = file.metadata().map_err(io_err)?.len();
        if size < TRAILER_LEN {
            return Ok(None);
        }
        // SAFETY: the running executable: Linux refuses to open it for
        // writing while it runs (ETXTBSY), and `install` replaces files by
        // rename, which leaves this inode as it is.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err)?;
        let mut trailer = [0u8; TRAILER_LEN as usize];
        trailer.copy_from_slice(&map[map.len() - TRAILER_LEN as usize..]);
        let Some(payload_len) = payload_len(path, &trailer, size)? else {
            return Ok(None);
        };
        let launcher_len = size - TRAILER_LEN - payload_len;
        let range = launcher_len as usize..(size - TRAILER_LEN) as usize;
        let bytes = Bytes::OwnFile { file, map };
        verify(path, bytes, range, launcher_len, &trailer, BlobsUsed::Code).map(Some)
    }
    #[cfg(not(target_os = "linux"))]
    {
        // Read by path, then checked to be the running file (`running`).
        let exe = std::env::current_exe().map_err(|source| PackError::Io {
            path: PathBuf::from("(current executable)"),
            source,
        })?;
        let not_running = |reason| PackError::NotRunning {
            path: exe.clone(),
            reason,
        };
        let file = File::open(&exe).map_err(|source| PackError::Io {
            path: exe.clone(),
            source,
        })?;
        let io_err = |source| PackError::Io {
            path: exe.clone(),
            source,
        };
        let packed = read_from(&exe, file.try_clone().map_err(io_err)?)?;
        if let Some(packed) = &packed {
            running::check_open(&file).map_err(not_running)?;
            running::check(&exe, &packed.relied()).map_err(not_running)?;
        }
        Ok(packed)
    }
}

/// Whether `bytes` (a whole executable) carry a payload.
pub fn is_packed(bytes: &[u8]) -> bool {
    has_trailer(&bytes[..layout::bytes_trailer_end(bytes) as usize])
}

/// Whether `bytes` (a whole file) end with a packed plugin's trailer.
pub fn has_trailer(bytes: &[u8]) -> bool {
    let len = bytes.len();
    len >= TRAILER_LEN as usize && &bytes[len - TRAILER_LEN as usize..][..16] == MAGIC
}

/// The payload length a trailer gives, checked against the file size;
/// `None` if the trailer is not ours.
fn payload_len(path: &Path, trailer: &[u8], size: u64) -> Result<Option<u64>, PackError> {
    if &trailer[..16] != MAGIC {
        return Ok(None);
    }
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(&trailer[16..24]);
    let payload_len = u64::from_le_bytes(len_bytes);
    if payload_len > MAX_PAYLOAD || payload_len + TRAILER_LEN > size {
        return Err(PackError::Damaged {
            path: path.to_owned(),
            reason: format!("payload length {payload_len} does not fit in {size} bytes"),
        });
    }
    Ok(Some(payload_len))
}

/// Which blob a reader is about to use, and so must verify.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BlobsUsed {
    /// Both blobs (`read`: inspect, install, list report on the whole file).
    All,
    /// The precompiled code (`read_self`: a start, mapped on Linux).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Code,
}

/// Verifies the payload (`range` of `bytes`; at file offset `launcher_len`)
/// against the trailer, parses the header and the blob layout, and checks
/// the blob `need` names against its digest.
fn verify(
    path: &Path,
    bytes: Bytes,
    range: std::ops::Range<usize>,
    launcher_len: u64,
    trailer: &[u8],
    need: BlobsUsed,
) -> Result<Packed, PackError> {
    let damaged = |reason: &str| PackError::Damaged {
        path: path.to_owned(),
        reason: reason.to_owned(),
    };
    let start = range.start;
    let payload = &bytes.as_slice()[range];
    let header_len = payload
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(|| damaged("no header"))?;
    let header_bytes = payload
        .get(4..4usize.saturating_add(header_len))
        .filter(|_| header_len <= MAX_HEADER)
        .ok_or_else(|| damaged("header length out of range"))?;
    // Format 3 on: the trailer covers the header; before, the whole payload.
    let header_digest = Sha256::digest(&payload[..4 + header_len]);
    let (whole, digest) = if header_digest.as_slice() == &trailer[24..] {
        (false, header_digest)
    } else {
        (true, Sha256::digest(payload))
    };
    let parsed = serde_json::from_slice::<PackHeader>(header_bytes);
    if let Ok(header) = &parsed
        && header.format > FORMAT
    {
        return Err(PackError::Unsupported {
            path: path.to_owned(),
            format: header.format,
        });
    }
    let cut = "digest mismatch: the embedded plugin was changed or cut";
    if digest.as_slice() != &trailer[24..] {
        return Err(damaged(cut));
    }
    let header = parsed.map_err(|e| damaged(&format!("unreadable header: {e}")))?;
    if whole != (header.format <= 2) {
        return Err(damaged(cut));
    }
    // Offsets below are into `bytes`; padding depends on file offsets.
    let body = start + 4 + header_len;
    let file_body = launcher_len + 4 + header_len as u64;
    let component_len = usize::try_from(header.component_len).unwrap_or(usize::MAX);
    let precompiled_len = usize::try_from(header.precompiled_len).unwrap_or(usize::MAX);
    let pad = match header.format {
        1 => 0,
        _ => padding(file_body.saturating_add(component_len as u64)) as usize,
    };
    let blobs = component_len
        .checked_add(pad)
        .and_then(|n| n.checked_add(precompiled_len));
    // A Mach-O's payload ends in up to 15 zeros, up to its signature.
    let rest = payload.len() - 4 - header_len;
    let tail = blobs.and_then(|b| rest.checked_sub(b));
    let tail_ok = tail.is_some_and(|t| {
        t < macho::SIGNATURE_ALIGN && payload[payload.len() - t..].iter().all(|b| *b == 0)
    });
    if !tail_ok {
        return Err(damaged("blob lengths do not match the payload"));
    }
    let code = body + component_len + pad;
    let mut header = header;
    header.keep_meaning();
    let mut packed = Packed {
        header,
        digest: digest.iter().map(|b| format!("{b:02x}")).collect(),
        launcher_len,
        component: body..body + component_len,
        precompiled: code..code + precompiled_len,
        bytes,
        component_checked: whole,
    };
    if whole {
        return Ok(packed);
    }
    // A start hashes only the code it maps (the component may be tens of
    // MB); the other readers report on the whole file.
    let code_digest = packed.header.precompiled_blake3.as_deref();
    let code_ok = || code_digest == Some(blake3_hex(packed.precompiled()).as_str());
    if precompiled_len > 0 && !code_ok() {
        return Err(damaged(
            "its precompiled code does not match the digest in its header",
        ));
    }
    if need == BlobsUsed::All || precompiled_len == 0 {
        packed
            .verify_component()
            .map_err(|_| damaged("its component does not match the digest in its header"))?;
        packed.component_checked = true;
    }
    Ok(packed)
}

/// The plain launcher bytes of `path`: the file without its payload, if any.
pub fn launcher_bytes(path: &Path) -> Result<Vec<u8>, PackError> {
    let bytes = std::fs::read(path).map_err(|source| PackError::Io {
        path: path.to_owned(),
        source,
    })?;
    match read(path)? {
        Some(packed) => Ok(bytes[..packed.launcher_len as usize].to_vec()),
        None => Ok(bytes),
    }
}

mod layout;
mod macho;
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
