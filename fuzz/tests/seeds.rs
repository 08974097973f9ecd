//! Replays every seed (`fuzz/corpus/<target>/`) and every crash reproducer
//! (`fuzz/regressions/<target>/`) through its fuzz target: this is how CI
//! runs the fuzzers' inputs. `write_pack_seeds` (ignored) regenerates the
//! packed-file seeds from `pack::build`.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use lingxi_wasm_fuzz::TARGETS;
use lingxi_wasm_pack::{self as pack, PackHeader};

fn dir(kind: &str, target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(kind)
        .join(target)
}

/// The files of `folder` (none if it does not exist), sorted.
fn files(folder: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = match fs::read_dir(folder) {
        Ok(entries) => entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file() && !p.ends_with(".gitkeep"))
            .collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    files
}

#[test]
fn every_seed_and_regression_holds() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for (name, target) in TARGETS {
        let seeds = files(&dir("corpus", name));
        assert!(!seeds.is_empty(), "fuzz/corpus/{name} has no seeds");
        for file in seeds.iter().chain(&files(&dir("regressions", name))) {
            let bytes = fs::read(file).unwrap();
            ran += 1;
            if catch_unwind(AssertUnwindSafe(|| target(&bytes))).is_err() {
                failures.push(file.display().to_string());
            }
        }
    }
    assert!(failures.is_empty(), "failed: {failures:#?}");
    assert!(ran > 10 * TARGETS.len(), "only {ran} inputs");
}

/// A header from JSON, so that this keeps compiling as fields are added.
fn header(
    format: u32,
    component: &[u8],
    precompiled: &[u8],
    extra: serde_json::Value,
) -> PackHeader {
    let mut json = serde_json::json!({
        "format": format,
        "pluginId": "com.example.p",
        "pluginVersion": "1.0.0",
        "declared": ["projectRead"],
        "policy": {"grant": null, "workspace": null, "timeout": null, "max-memory": null,
                   "data-root": null, "storage-quota": null},
        "componentSha256": pack::sha256_hex(component),
        "precompiledBlake3": pack::blake3_hex(precompiled),
        "componentLen": component.len(),
        "precompiledLen": precompiled.len(),
        "engine": "e",
    });
    if let (Some(json), serde_json::Value::Object(extra)) = (json.as_object_mut(), extra) {
        json.extend(extra);
    }
    serde_json::from_value(json).unwrap()
}

/// A payload without padding, as format 1 wrote it.
fn unpadded(header: &PackHeader, component: &[u8], precompiled: &[u8]) -> Vec<u8> {
    let json = serde_json::to_vec(header).unwrap();
    let mut payload = (json.len() as u32).to_le_bytes().to_vec();
    payload.extend_from_slice(&json);
    payload.extend_from_slice(component);
    payload.extend_from_slice(precompiled);
    payload
}

/// A padded payload (format 2 on) after a launcher of the length that
/// makes the padding empty; returns that length and the payload.
fn aligned(header: &PackHeader, component: &[u8], precompiled: &[u8]) -> (u16, Vec<u8>) {
    let json_len = serde_json::to_vec(header).unwrap().len();
    let before_code = 4 + json_len + component.len();
    let align = pack::CODE_ALIGN as usize;
    let launcher = (align - before_code % align) % align;
    let file = pack::build(&vec![0x7f; launcher], header, component, precompiled).unwrap();
    let payload = file[launcher..file.len() - 56].to_vec();
    assert_eq!(
        payload.len(),
        before_code + precompiled.len(),
        "padding left"
    );
    (launcher as u16, payload)
}

/// A payload as `build` lays it (the component compressed from format 5)
/// after a launcher of the length that makes the padding empty.
fn aligned_as_built(header: &PackHeader, component: &[u8], precompiled: &[u8]) -> (u16, Vec<u8>) {
    let file = pack::build(&[], header, component, precompiled).unwrap();
    let json_len = u32::from_le_bytes(file[..4].try_into().unwrap()) as usize;
    let built: PackHeader = serde_json::from_slice(&file[4..4 + json_len]).unwrap();
    let before_code = 4 + json_len + built.component_len as usize;
    let align = pack::CODE_ALIGN as usize;
    let launcher = align - before_code;
    let file = pack::build(&vec![0x7f; launcher], header, component, precompiled).unwrap();
    let payload = file[launcher..file.len() - 56].to_vec();
    assert_eq!(
        payload.len() + launcher,
        align + precompiled.len(),
        "padding left"
    );
    (launcher as u16, payload)
}

/// A `pack` input: the mode byte, then a whole file (even modes) or a
/// launcher length and a payload.
fn input(mode: u8, launcher: u16, payload: &[u8]) -> Vec<u8> {
    let mut bytes = vec![mode];
    let mut rest = launcher.to_le_bytes().to_vec();
    rest.extend_from_slice(payload);
    if mode & 1 == 1 {
        bytes.extend_from_slice(&rest);
    } else {
        // The file the same payload makes with a whole-payload trailer.
        bytes.extend_from_slice(&lingxi_wasm_fuzz::pack_file(&[&[1], &rest[..]].concat()));
    }
    bytes
}

#[test]
#[ignore = "writes fuzz/corpus/pack; run it after changing the packed format"]
fn write_pack_seeds() {
    let out = dir("corpus", "pack");
    fs::create_dir_all(&out).unwrap();
    for old in files(&out) {
        fs::remove_file(old).unwrap();
    }
    let seed = |name: &str, bytes: Vec<u8>| {
        assert!(bytes.len() < 4096, "{name}: {} bytes", bytes.len());
        fs::write(out.join(name), bytes).unwrap();
    };
    let (comp, pre) = (&b"\0asm\x0d\0\x01\0COMP"[..], &b"PRE"[..]);
    let none = serde_json::json!({});
    let v1 = unpadded(&header(1, comp, pre, none.clone()), comp, pre);
    seed("file-format1.bin", input(0, 8, &v1));
    seed("payload-format1.bin", input(1, 8, &v1));
    let newer = unpadded(
        &header(pack::FORMAT + 1, comp, pre, none.clone()),
        comp,
        pre,
    );
    seed("payload-newer-format.bin", input(1, 8, &newer));
    let (n, v2) = aligned(&header(2, comp, pre, none.clone()), comp, pre);
    seed("payload-format2.bin", input(1, n, &v2));
    let (n, v3) = aligned(&header(3, comp, pre, none.clone()), comp, pre);
    seed("payload-format3.bin", input(3, n, &v3));
    let (n, v4) = aligned(&header(4, comp, pre, none.clone()), comp, pre);
    seed("payload-format4.bin", input(3, n, &v4));
    // Format 5: the component as `build` stores it, compressed (one that
    // shrinks: a few bytes are stored as they are).
    let comp5 = [&comp[..8], &b"COMPONENT ".repeat(30)].concat();
    let (n, v5) = aligned_as_built(&header(5, &comp5, pre, none), &comp5, pre);
    seed("payload-format5.bin", input(3, n, &v5));
    let rich = header(
        3,
        comp,
        b"",
        serde_json::json!({
            "policy": {"grant": ["projectRead", "networkAccess"], "workspace": "/tmp",
                "allow-read": ["/usr"], "allow-net": ["*.example.org:*", "[::1]:80"],
                "env": ["A=1"], "timeout": 2.5, "max-memory": 256, "data-root": null,
                "no-storage": true, "storage-quota": 16, "no-validate": false},
            "manifest": {"id": "com.example.p", "name": "P", "version": "1.0.0",
                "description": "d", "capabilities": ["projectRead"]},
            "signature": "untrusted comment: x\nRWQ=\n",
            "base": "lingxi-wasm-rt 0.1.0 (runtime-only)"
        }),
    );
    let (n, v3) = aligned(&rich, comp, b"");
    seed("payload-format3-policy-manifest.bin", input(3, n, &v3));
    seed(
        "file-plain-launcher.bin",
        b"\0\x7fELF a plain launcher".to_vec(),
    );
}

/// The packed-file seeds are packed files the reader accepts (or refuses
/// as newer), so the fuzzer starts past the digest checks.
#[test]
fn pack_seeds_are_packed_files() {
    for file in files(&dir("corpus", "pack")) {
        let bytes = fs::read(&file).unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let read = pack::parse_bytes(Path::new(&name), &lingxi_wasm_fuzz::pack_file(&bytes));
        match name.as_str() {
            "file-plain-launcher.bin" => assert!(matches!(read, Ok(None)), "{name}"),
            "payload-newer-format.bin" => assert!(
                matches!(read, Err(pack::PackError::Unsupported { .. })),
                "{name}: {read:?}"
            ),
            _ => assert!(matches!(read, Ok(Some(_))), "{name}: {read:?}"),
        }
    }
}
