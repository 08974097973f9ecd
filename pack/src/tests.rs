use super::*;
use read::{BlobsUsed, parse};
use sha2::{Digest, Sha256};
use std::path::Path;

fn header(component: &[u8]) -> PackHeader {
    PackHeader {
        format: FORMAT,
        plugin_id: "com.example.p".into(),
        plugin_version: "1.0.0".into(),
        declared: vec!["projectRead".into()],
        policy: PolicySpec::default(),
        component_sha256: sha256_hex(component),
        precompiled_blake3: Some(blake3_hex(b"PRE")),
        component_len: component.len() as u64,
        component_compressed: None,
        precompiled_len: 3,
        engine: "e".into(),
        manifest: None,
        signature: None,
        record: None,
        base: None,
        origin: None,
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
    // The code is page-aligned in the file, so the file itself could
    // map it, but a file read by `read` (not the running executable) is
    // never mapped.
    let at = CODE_ALIGN as usize;
    assert_eq!(&packed[at..at + 3], b"PRE");
    assert!(read_back.precompiled_in_file().is_none());
    assert_eq!(read_back.launcher_len, 8);
    assert_eq!(launcher_bytes(f.path()).unwrap(), b"LAUNCHER");
    assert!(read(write(b"just a launcher").path()).unwrap().is_none());
}

/// A payload laid out without padding, as format 1 wrote it.
fn unpadded(format: u32) -> Vec<u8> {
    let mut old = header(b"COMP");
    old.format = format;
    let json = serde_json::to_vec(&old).unwrap();
    let mut payload = (json.len() as u32).to_le_bytes().to_vec();
    payload.extend_from_slice(&json);
    payload.extend_from_slice(b"COMPPRE");
    let mut file = b"LAUNCHER".to_vec();
    file.extend_from_slice(&payload);
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    file.extend_from_slice(&Sha256::digest(&payload));
    file
}

#[test]
fn format_1_files_without_padding_still_read() {
    let read_back = read(write(&unpadded(1)).path()).unwrap().unwrap();
    assert_eq!(read_back.component(), b"COMP");
    assert_eq!(read_back.precompiled(), b"PRE");
    assert!(read_back.precompiled_in_file().is_none());
}

#[test]
fn newer_formats_are_refused_with_a_way_out() {
    let err = read(write(&unpadded(FORMAT + 1)).path())
        .unwrap_err()
        .to_string();
    // In the library's own words (a front end names its command instead:
    // the launcher's e2e tests see `lingxi-wasm-run`).
    assert!(err.contains("newer than this host reads"), "{err}");
    assert!(err.contains("or update this host"), "{err}");
}

#[test]
fn tampering_and_truncation_are_detected() {
    let packed = build(b"LAUNCHER", &header(b"COMP"), b"COMP", b"PRE").unwrap();
    let mut tampered = packed.clone();
    tampered[8 + 4 + 2] ^= 1; // in the header
    let err = read(write(&tampered).path()).unwrap_err().to_string();
    assert!(err.contains("digest mismatch"), "{err}");
    let mut cut = packed[..8].to_vec();
    cut.extend_from_slice(&packed[12..]);
    let err = read(write(&cut).path()).unwrap_err().to_string();
    assert!(err.contains("damaged packed plugin"), "{err}");
}

/// Verifies a whole file in memory for a reader that needs `need`.
fn verify_as(file: &[u8], need: BlobsUsed) -> Result<Packed, PackError> {
    parse(Path::new("f"), file, need).map(|p| p.unwrap())
}

#[test]
fn each_reader_verifies_the_blob_it_uses() {
    // Format 4 stores the component as it is, so its bytes can be found.
    let mut stored_as_is = header(b"COMP");
    stored_as_is.format = 4;
    let packed = build(b"LAUNCHER", &stored_as_is, b"COMP", b"PRE").unwrap();
    let component_at = 8 + 4 + (u32::from_le_bytes(packed[8..12].try_into().unwrap()) as usize);
    let code_at = CODE_ALIGN as usize;
    assert_eq!(&packed[component_at..component_at + 4], b"COMP");

    // A damaged component: `read` refuses the file; a start (which maps
    // only the code) does not hash it, and checks it before compiling it.
    let mut bad_component = packed.clone();
    bad_component[component_at] ^= 1;
    let err = verify_as(&bad_component, BlobsUsed::All)
        .unwrap_err()
        .to_string();
    assert!(err.contains("component does not match"), "{err}");
    let start = verify_as(&bad_component, BlobsUsed::Code).unwrap();
    assert_eq!(start.precompiled(), b"PRE");
    assert!(start.verify_component().is_err());

    // Damaged code: a start refuses it, and so does `read` (list reports
    // on the whole file).
    let mut bad_code = packed.clone();
    bad_code[code_at] ^= 1;
    for need in [BlobsUsed::Code, BlobsUsed::All] {
        let err = verify_as(&bad_code, need).unwrap_err().to_string();
        assert!(err.contains("precompiled code does not match"), "{err}");
    }

    // The untouched file passes both, and the trailer covers the header:
    // the format a header claims cannot switch the digest's scope.
    assert!(verify_as(&packed, BlobsUsed::Code).is_ok());
    assert!(verify_as(&packed, BlobsUsed::All).is_ok());
    let mut old = header(b"COMP");
    old.format = 2;
    let mut relabeled = build(b"LAUNCHER", &old, b"COMP", b"PRE").unwrap();
    // A format-2 payload whose trailer holds only the header's digest.
    let n = relabeled.len();
    let header_part = 4 + u32::from_le_bytes(relabeled[8..12].try_into().unwrap()) as usize;
    let digest = Sha256::digest(&relabeled[8..8 + header_part]);
    relabeled[n - 32..].copy_from_slice(&digest);
    let err = verify_as(&relabeled, BlobsUsed::Code)
        .unwrap_err()
        .to_string();
    assert!(err.contains("digest mismatch"), "{err}");
}

/// Where the stored component of a built file starts, and its length.
fn stored_at(file: &[u8]) -> (usize, usize) {
    let packed = verify_as(file, BlobsUsed::All).unwrap();
    let at = 8 + 4 + (u32::from_le_bytes(file[8..12].try_into().unwrap()) as usize);
    (at, packed.stored_component().len())
}

#[test]
fn format_5_stores_the_component_compressed_and_checks_it_decoded() {
    let component = compress::tests::component(100_000);
    let packed = build(b"LAUNCHER", &header(&component), &component, b"PRE").unwrap();
    let (at, stored_len) = stored_at(&packed);
    assert!(
        stored_len < component.len() / 2,
        "stored in {stored_len} bytes"
    );
    let read_back = read(write(&packed).path()).unwrap().unwrap();
    assert_eq!(read_back.component(), &component[..]);
    assert_eq!(read_back.header.component_len, stored_len as u64);
    let how = read_back.header.component_compressed.unwrap();
    assert_eq!((how.codec, how.len), (Codec::Zstd, component.len() as u64));

    // A damaged stored byte: `read` refuses the file; a start (which maps
    // the code only) does not decode it, and refuses it before compiling.
    let mut damaged = packed.clone();
    damaged[at + stored_len / 2] ^= 0x55;
    let err = verify_as(&damaged, BlobsUsed::All).unwrap_err().to_string();
    assert!(
        err.contains("damaged packed plugin") && err.contains("component"),
        "{err}"
    );
    let start = verify_as(&damaged, BlobsUsed::Code).unwrap();
    assert_eq!(start.precompiled(), b"PRE");
    let err = start.verify_component().unwrap_err().to_string();
    assert!(err.contains("component"), "{err}");
}

/// `packed` with its header replaced by `edit` of it (the trailer's digest
/// made again, as whoever wrote the file could).
fn with_header(packed: &[u8], edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let header_len = u32::from_le_bytes(packed[8..12].try_into().unwrap()) as usize;
    let mut json: serde_json::Value = serde_json::from_slice(&packed[12..12 + header_len]).unwrap();
    let stored_len = json["componentLen"].as_u64().unwrap() as usize;
    let stored = &packed[12 + header_len..][..stored_len];
    edit(&mut json);
    let json = serde_json::to_vec(&json).unwrap();
    let mut payload = (json.len() as u32).to_le_bytes().to_vec();
    payload.extend_from_slice(&json);
    payload.extend_from_slice(stored);
    payload.resize(
        payload.len() + padding(8 + payload.len() as u64) as usize,
        0,
    );
    payload.extend_from_slice(b"PRE");
    let mut file = b"LAUNCHER".to_vec();
    file.extend_from_slice(&payload);
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    file.extend_from_slice(&Sha256::digest(&payload[..4 + json.len()]));
    file
}

#[test]
fn a_header_cannot_make_a_decoder_write_more_than_a_plugin_may_be() {
    let component = compress::tests::component(1 << 20);
    let packed = build(b"LAUNCHER", &header(&component), &component, b"PRE").unwrap();
    let stored = stored_at(&packed).1 as u64;
    let claim = |len: u64| with_header(&packed, |h| h["componentCompressed"]["len"] = len.into());
    // Claims 4 GiB: refused before anything is decoded or reserved.
    let err = verify_as(&claim(4 << 30), BlobsUsed::Code).err().unwrap();
    assert!(
        err.to_string()
            .contains("would decompress to 4294967296 bytes"),
        "{err}"
    );
    // Claims more than 64 times its stored bytes: refused the same way, so
    // a small file cannot make a reader hold a large component.
    let most = stored * lingxi_wasm_policy::limits::MAX_PACK_COMPRESSION;
    let err = verify_as(&claim(most + 1), BlobsUsed::Code).err().unwrap();
    assert!(err.to_string().contains("over 64 times as many"), "{err}");
    // Claims less than the frame holds: the decoder stops one byte past it.
    let err = verify_as(&claim(10), BlobsUsed::All).err().unwrap();
    assert!(
        err.to_string().contains("to more than the 10 bytes"),
        "{err}"
    );
    // A format that stores the component as it is cannot say otherwise.
    let old = with_header(&packed, |h| h["format"] = 4.into());
    let err = verify_as(&old, BlobsUsed::Code).err().unwrap().to_string();
    assert!(err.contains("a compressed component in format 4"), "{err}");
    // No version wrote format 0: it is not read as format 2.
    let err = read(write(&unpadded(0)).path()).unwrap_err().to_string();
    assert!(err.contains("format 0, which no version writes"), "{err}");
}
