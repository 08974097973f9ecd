//! Target `pack`: a packed executable's bytes through the reader of
//! `pack/src/lib.rs` (`parse_bytes`: what `read` checks, on bytes).
//! The first byte picks how the rest is used ([`pack_file`]):
//! - `mode & 1 == 0`: the rest is the whole file, as found on disk;
//! - otherwise two bytes (u16 LE) give a launcher length `n` and the rest
//!   is a payload; the file is `n` filler bytes, the payload and a valid
//!   trailer, so the fuzzer gets past the digests to the header and the
//!   blob layout: `mode & 3 == 1` digests the whole payload (formats 1-2),
//!   `mode & 3 == 3` the header (format 3 on), after writing the digests of
//!   the blobs where the header places them into the header (not the
//!   component's when the header says it is compressed: that digest is of
//!   the decoded component, so a seed's stays as it was written).
//!
//! Invariants: no panic; a file without the magic is no packed file, and a
//! file the reader accepts has the trailer; the launcher, payload and
//! trailer add up to the file; the trailer's digest is the payload's (up to
//! format 2) or the header's (format 3 on), and then both blobs match their
//! digests in the header; the format is one this version reads; the
//! component as stored and the precompiled blob are the payload's bytes right
//! after the header and at its very end, of the lengths the header gives, and
//! (format 2 on) the precompiled code sits at a file offset that is a
//! multiple of `CODE_ALIGN`; packing the same header and blobs again with
//! `build` reads back the same (the component stored compressed, of its own
//! length, or as it is); the packed grants parse (or fail) without
//! panicking; errors name the file.

use std::borrow::Cow;
use std::path::Path;

use lingxi_wasm_pack::{self as pack, PackHeader};
use lingxi_wasm_policy::file::parse_capabilities;
use lingxi_wasm_policy::net::NetRule;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::json::close;
use crate::{Violation, ensure};

const TARGET: &str = "pack";
const TRAILER_LEN: usize = 16 + 8 + 32;
const NAME: &str = "fuzz.packed";

/// See the module documentation.
pub fn check(data: &[u8]) -> Result<(), Violation> {
    check_file(&pack_file(data))
}

/// The file the bytes of a `pack` input stand for (see the module
/// documentation).
pub fn pack_file(data: &[u8]) -> Cow<'_, [u8]> {
    let (mode, rest) = match data.split_first() {
        Some((mode, rest)) if mode & 1 == 1 => (*mode, rest),
        Some((_, rest)) => return Cow::Borrowed(rest),
        None => return Cow::Borrowed(data),
    };
    let (n, payload) = match rest {
        [lo, hi, payload @ ..] => (usize::from(u16::from_le_bytes([*lo, *hi])), payload),
        _ => (0, rest),
    };
    let payload = match mode & 3 {
        3 => with_blob_digests(payload),
        _ => payload.to_vec(),
    };
    let covered = match mode & 3 {
        3 => header_part(&payload),
        _ => &payload[..],
    };
    let mut file = vec![0x7f; n];
    file.extend_from_slice(&payload);
    file.extend_from_slice(pack::MAGIC);
    file.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    file.extend_from_slice(&Sha256::digest(covered));
    Cow::Owned(file)
}

/// The header length field and the header (clamped to the payload).
fn header_part(payload: &[u8]) -> &[u8] {
    let header_len = match payload {
        [a, b, c, d, ..] => u32::from_le_bytes([*a, *b, *c, *d]) as usize,
        _ => 0,
    };
    &payload[..header_len.saturating_add(4).min(payload.len())]
}

/// `payload` with the digests of the blobs where its header places them
/// (the component first, the precompiled code last) written into the
/// header, if it is a JSON object with the two lengths.
fn with_blob_digests(payload: &[u8]) -> Vec<u8> {
    let header = header_part(payload);
    let Some(json) = header.get(4..) else {
        return payload.to_vec();
    };
    let body = &payload[header.len()..];
    let Ok(Value::Object(mut object)) = serde_json::from_slice::<Value>(json) else {
        return payload.to_vec();
    };
    let len = |key: &str| object.get(key).and_then(Value::as_u64);
    let (Some(component_len), Some(precompiled_len)) = (len("componentLen"), len("precompiledLen"))
    else {
        return payload.to_vec();
    };
    let (Ok(component_len), Ok(precompiled_len)) = (
        usize::try_from(component_len),
        usize::try_from(precompiled_len),
    ) else {
        return payload.to_vec();
    };
    let component = body.get(..component_len).unwrap_or(body);
    let precompiled = (body.len().checked_sub(precompiled_len))
        .and_then(|at| body.get(at..))
        .unwrap_or(&[]);
    if !object.contains_key("componentCompressed") {
        object.insert("componentSha256".into(), pack::sha256_hex(component).into());
    }
    object.insert(
        "precompiledBlake3".into(),
        pack::blake3_hex(precompiled).into(),
    );
    let Ok(json) = serde_json::to_vec(&object) else {
        return payload.to_vec();
    };
    let mut out = (json.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&json);
    out.extend_from_slice(body);
    out
}

fn check_file(file: &[u8]) -> Result<(), Violation> {
    let path = Path::new(NAME);
    let packed = match pack::parse_bytes(path, file) {
        Ok(None) => {
            ensure!(
                !pack::has_trailer(file),
                "a file with the trailer is not packed"
            );
            return Ok(());
        }
        Err(e) => {
            ensure!(
                e.to_string().contains(NAME),
                "error {e} does not name the file"
            );
            return Ok(());
        }
        Ok(Some(packed)) => packed,
    };
    ensure!(pack::has_trailer(file), "accepted without the trailer");
    let header = &packed.header;
    let launcher_len = usize::try_from(packed.launcher_len).unwrap_or(usize::MAX);
    ensure!(
        launcher_len <= file.len().saturating_sub(TRAILER_LEN),
        "launcher of {launcher_len} bytes in a file of {}",
        file.len()
    );
    let payload = &file[launcher_len..file.len() - TRAILER_LEN];
    let covered = match header.format {
        ..=2 => payload,
        _ => header_part(payload),
    };
    ensure!(
        packed.digest == pack::sha256_hex(covered),
        "digest {} is not the one of format {}",
        packed.digest,
        header.format
    );
    ensure!(
        header.format <= pack::FORMAT,
        "format {} accepted",
        header.format
    );
    if header.format >= 3 {
        let code = packed.precompiled();
        ensure!(
            pack::sha256_hex(packed.component()) == header.component_sha256
                && (code.is_empty()
                    || header.precompiled_blake3.as_deref()
                        == Some(pack::blake3_hex(code).as_str())),
            "format {} blobs accepted without their digests",
            header.format
        );
    }
    let header_len = match payload {
        [a, b, c, d, ..] => u32::from_le_bytes([*a, *b, *c, *d]) as usize,
        _ => usize::MAX,
    };
    let component = (header_len.checked_add(4))
        .and_then(|start| payload.get(start..))
        .and_then(|rest| rest.get(..usize::try_from(header.component_len).ok()?));
    ensure!(
        component == Some(packed.stored_component()),
        "the component is not the {} bytes after the header",
        header.component_len
    );
    let precompiled = usize::try_from(header.precompiled_len)
        .ok()
        .and_then(|n| payload.len().checked_sub(n))
        .map(|at| &payload[at..]);
    ensure!(
        precompiled == Some(packed.precompiled()),
        "the precompiled blob is not the last {} bytes",
        header.precompiled_len
    );
    if header.format != 1 && !packed.precompiled().is_empty() {
        let at = launcher_len + payload.len() - packed.precompiled().len();
        ensure!(
            (at as u64).is_multiple_of(pack::CODE_ALIGN),
            "precompiled code at file offset {at}"
        );
    }
    if let Some(grant) = &header.policy.grant {
        let _ = parse_capabilities(grant);
    }
    for rule in &header.policy.allow_net {
        let _ = rule.parse::<NetRule>();
    }
    rebuild(&file[..launcher_len], &packed)
}

/// Packs the header and blobs again and reads them back.
fn rebuild(launcher: &[u8], packed: &pack::Packed) -> Result<(), Violation> {
    let mut header = packed.header.clone();
    header.format = pack::FORMAT;
    header.component_sha256 = pack::sha256_hex(packed.component());
    header.precompiled_blake3 = Some(pack::blake3_hex(packed.precompiled()));
    let built = pack::build(launcher, &header, packed.component(), packed.precompiled());
    // A part before the payload that starts as a Mach-O but is no base
    // to seal is refused by name: not a violation.
    if let Err(pack::BuildError::Base(_)) = built {
        return Ok(());
    }
    let Ok(built) = built else {
        return Err(Violation {
            target: TARGET,
            what: format!("a header that was read cannot be written: {built:?}"),
        });
    };
    let again = pack::parse_bytes(Path::new(NAME), &built);
    let Ok(Some(again)) = again else {
        return Err(Violation {
            target: TARGET,
            what: format!("a rebuilt file does not read back: {again:?}"),
        });
    };
    // `build` sets how the component is stored: compressed, of its own
    // length, or as it is (when that is no larger, or shrinks too much).
    let stored = again.header.component_compressed;
    let decoded = packed.component().len() as u64;
    ensure!(
        stored.map_or(again.header.component_len, |how| how.len) == decoded
            && again.header.component_len == again.stored_component().len() as u64,
        "rebuilt component stored as {stored:?} in {} bytes",
        again.header.component_len
    );
    header.component_len = again.header.component_len;
    header.component_compressed = stored;
    ensure!(
        same_header(&again.header, &header)
            && again.component() == packed.component()
            && again.precompiled() == packed.precompiled()
            && again.launcher_len == packed.launcher_len,
        "rebuilt {header:?} read back as {:?}",
        again.header
    );
    Ok(())
}

/// Headers are equal, the timeout up to JSON's float precision.
fn same_header(a: &PackHeader, b: &PackHeader) -> bool {
    let timeouts = match (a.policy.timeout, b.policy.timeout) {
        (Some(x), Some(y)) => close(x, y),
        (x, y) => x == y,
    };
    let mut a = a.clone();
    a.policy.timeout = b.policy.timeout;
    timeouts && a == *b
}
