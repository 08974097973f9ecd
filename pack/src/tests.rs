use super::*;

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
    let packed = build(b"LAUNCHER", &header(b"COMP"), b"COMP", b"PRE").unwrap();
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
