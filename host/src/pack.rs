//! Packed plugins: one native executable that a LingXi host can spawn with
//! no arguments. It is the launcher itself with a payload appended:
//!
//! ```text
//! [launcher executable][payload][trailer]
//! payload = header length (u32 LE) | header JSON | component | precompiled
//! trailer = MAGIC (16 bytes) | payload length (u64 LE) | SHA-256 of payload
//! ```
//!
//! The header names the plugin, the grants it was packed with, and the sizes
//! and digests of the two blobs. The whole payload is verified against the
//! trailer's digest before anything in it is used, so a truncated or tampered
//! file is refused with a clear message and never runs half a plugin.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::policy::file::PolicySpec;

/// Marks the end of a packed executable.
pub const MAGIC: &[u8; 16] = b"LINGXI-WASM-PK01";
const TRAILER_LEN: u64 = 16 + 8 + 32;
/// Largest payload accepted (a sanity bound against a corrupt length).
const MAX_PAYLOAD: u64 = 1 << 30;

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
    /// Length of the portable component.
    pub component_len: u64,
    /// Length of the precompiled component (0 if none).
    pub precompiled_len: u64,
    /// The engine compatibility hash the precompiled component was made for.
    pub engine: String,
}

/// The verified contents of a packed executable, read from a memory map of
/// the file (nothing is copied).
#[derive(Debug)]
pub struct Packed {
    /// The header.
    pub header: PackHeader,
    /// SHA-256 (hex) of the whole payload, as in the trailer.
    pub digest: String,
    /// Length of the launcher part (everything before the payload).
    pub launcher_len: u64,
    map: memmap2::Mmap,
    component: std::ops::Range<usize>,
    precompiled: std::ops::Range<usize>,
}

impl Packed {
    /// The portable component.
    pub fn component(&self) -> &[u8] {
        &self.map[self.component.clone()]
    }

    /// The precompiled component for [`PackHeader::engine`].
    pub fn precompiled(&self) -> &[u8] {
        &self.map[self.precompiled.clone()]
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
    /// The payload is damaged.
    #[error("{} is a damaged packed plugin ({reason}); reinstall it with `lingxi-wasm-run install`", path.display())]
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

/// Appends a payload to `launcher` (the bytes of a plain, unpacked launcher).
/// Fails only if the header cannot be encoded.
pub fn build(
    launcher: &[u8],
    header: &PackHeader,
    component: &[u8],
    precompiled: &[u8],
) -> Result<Vec<u8>, serde_json::Error> {
    let header_json = serde_json::to_vec(header)?;
    let mut payload =
        Vec::with_capacity(4 + header_json.len() + component.len() + precompiled.len());
    payload.extend_from_slice(&(header_json.len() as u32).to_le_bytes());
    payload.extend_from_slice(&header_json);
    payload.extend_from_slice(component);
    payload.extend_from_slice(precompiled);
    let mut out = Vec::with_capacity(launcher.len() + payload.len() + TRAILER_LEN as usize);
    out.extend_from_slice(launcher);
    out.extend_from_slice(&payload);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(&payload));
    Ok(out)
}

/// Reads and verifies the payload of `path`. `Ok(None)` if the file carries
/// no trailer at all (a plain launcher).
pub fn read(path: &Path) -> Result<Option<Packed>, PackError> {
    let io_err = |source| PackError::Io {
        path: path.to_owned(),
        source,
    };
    let damaged = |reason: String| PackError::Damaged {
        path: path.to_owned(),
        reason,
    };
    let file = File::open(path).map_err(io_err)?;
    let size = file.metadata().map_err(io_err)?.len();
    if size < TRAILER_LEN {
        return Ok(None);
    }
    // SAFETY: the map is read-only. Running executables cannot be written in
    // place (ETXTBSY) and `install` replaces files by rename, so the bytes do
    // not change under us; everything read is verified below before use.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err)?;
    let len = map.len();
    let trailer = &map[len - TRAILER_LEN as usize..];
    if &trailer[..16] != MAGIC {
        return Ok(None);
    }
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(&trailer[16..24]);
    let payload_len = u64::from_le_bytes(len_bytes);
    if payload_len > MAX_PAYLOAD || payload_len + TRAILER_LEN > size {
        return Err(damaged(format!(
            "payload length {payload_len} does not fit in {size} bytes"
        )));
    }
    let launcher_len = size - TRAILER_LEN - payload_len;
    let start = launcher_len as usize;
    let payload = &map[start..start + payload_len as usize];
    let digest = Sha256::digest(payload);
    if digest.as_slice() != &trailer[24..] {
        return Err(damaged(
            "digest mismatch: the embedded plugin was changed or cut".into(),
        ));
    }
    let header_len = payload
        .get(..4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .ok_or_else(|| damaged("no header".into()))?;
    let header_bytes = payload
        .get(4..4 + header_len)
        .ok_or_else(|| damaged("header length out of range".into()))?;
    let header: PackHeader = serde_json::from_slice(header_bytes)
        .map_err(|e| damaged(format!("unreadable header: {e}")))?;
    let body = start + 4 + header_len;
    let component_len = usize::try_from(header.component_len).unwrap_or(usize::MAX);
    let precompiled_len = usize::try_from(header.precompiled_len).unwrap_or(usize::MAX);
    if component_len.checked_add(precompiled_len) != Some(payload.len() - 4 - header_len) {
        return Err(damaged("blob lengths do not match the payload".into()));
    }
    // The payload digest covers both blobs; `component_sha256` identifies the
    // component for people (`list`, `inspect`) and for `install`'s checks.
    Ok(Some(Packed {
        header,
        digest: digest.iter().map(|b| format!("{b:02x}")).collect(),
        launcher_len,
        component: body..body + component_len,
        precompiled: body + component_len..body + component_len + precompiled_len,
        map,
    }))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn header(component: &[u8]) -> PackHeader {
        PackHeader {
            format: 1,
            plugin_id: "com.example.p".into(),
            plugin_version: "1.0.0".into(),
            declared: vec!["projectRead".into()],
            policy: PolicySpec::default(),
            component_sha256: sha256_hex(component),
            component_len: component.len() as u64,
            precompiled_len: 3,
            engine: "e".into(),
        }
    }

    fn write(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut f, bytes).unwrap();
        f
    }

    #[test]
    fn round_trip_and_plain_files() {
        let packed = build(b"LAUNCHER", &header(b"COMP"), b"COMP", b"PRE").unwrap();
        let f = write(&packed);
        let read_back = read(f.path()).unwrap().unwrap();
        assert_eq!(read_back.component(), b"COMP");
        assert_eq!(read_back.precompiled(), b"PRE");
        assert_eq!(read_back.launcher_len, 8);
        assert_eq!(launcher_bytes(f.path()).unwrap(), b"LAUNCHER");
        assert!(read(write(b"just a launcher").path()).unwrap().is_none());
    }

    #[test]
    fn tampering_and_truncation_are_detected() {
        let packed = build(b"LAUNCHER", &header(b"COMP"), b"COMP", b"PRE").unwrap();
        let mut tampered = packed.clone();
        tampered[10] ^= 1;
        let err = read(write(&tampered).path()).unwrap_err().to_string();
        assert!(err.contains("digest mismatch"), "{err}");
        let mut cut = packed[..8].to_vec();
        cut.extend_from_slice(&packed[12..]);
        let err = read(write(&cut).path()).unwrap_err().to_string();
        assert!(err.contains("damaged packed plugin"), "{err}");
    }
}
