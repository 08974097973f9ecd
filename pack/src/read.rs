//! Reading a packed file: the trailer, the header, the blob layout, and
//! the digests of the blobs a reader uses ([`read`] for any file,
//! [`read_self`] for the running executable).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use lingxi_wasm_policy::limits::MAX_PACK_COMPRESSION;

use super::{
    Bytes, COMPRESSED_FROM, FORMAT, MAGIC, MAX_HEADER, MAX_PAYLOAD, PackError, PackHeader, Packed,
    TRAILER_LEN, blake3_hex, compress, layout, macho, padding,
};

/// Reads and verifies the payload of `path`, into memory. `Ok(None)` if the
/// file carries no trailer at all (a plain launcher). Use this for every
/// file that is not the running executable.
pub fn read(path: &Path) -> Result<Option<Packed>, PackError> {
    let file = File::open(path).map_err(|source| PackError::Io {
        path: path.to_owned(),
        source,
    })?;
    read_from(path, file, BlobsUsed::All)
}

/// [`read`] from a file opened as `path`, for a reader that needs `need`.
fn read_from(path: &Path, mut file: File, need: BlobsUsed) -> Result<Option<Packed>, PackError> {
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
    verify_payload(path, payload, launcher_len, &trailer, need).map(Some)
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
pub(super) fn parse(
    path: &Path,
    file: &[u8],
    need: BlobsUsed,
) -> Result<Option<Packed>, PackError> {
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
        // Like a start on Linux, it checks the code it runs; the component
        // only if it must be compiled ([`Packed::verify_component`]).
        let packed = read_from(&exe, file.try_clone().map_err(io_err)?, BlobsUsed::Code)?;
        if let Some(packed) = &packed {
            super::running::check_open(&file).map_err(not_running)?;
            super::running::check(&exe, &packed.relied()).map_err(not_running)?;
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
pub(super) enum BlobsUsed {
    /// Both blobs (`read`: inspect, install, list report on the whole file).
    All,
    /// The precompiled code (`read_self`: a start).
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
    if header.format == 0 {
        return Err(damaged("format 0, which no version writes"));
    }
    match &header.component_compressed {
        Some(_) if header.format < COMPRESSED_FROM => {
            return Err(damaged(&format!(
                "a compressed component in format {}, which stores it as it is",
                header.format
            )));
        }
        Some(how) if how.len > MAX_PAYLOAD => {
            return Err(damaged(&format!(
                "its component would decompress to {} bytes, over the {MAX_PAYLOAD} a plugin may have",
                how.len
            )));
        }
        Some(how) if !compress::within_bound(header.component_len, how) => {
            return Err(damaged(&format!(
                "its component would decompress to {} bytes from {}, over {MAX_PACK_COMPRESSION} times as many",
                how.len, header.component_len
            )));
        }
        _ => {}
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
        decoded: std::sync::OnceLock::new(),
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
        packed.verify_component().map_err(|e| match e {
            // Named by its path, not by the plugin id it claims.
            PackError::Damaged { reason, .. } => damaged(&reason),
            other => other,
        })?;
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
