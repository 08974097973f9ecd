use super::*;

/// `__LINKEDIT`'s file offset in [`base`].
const LINKEDIT_AT: usize = 0x4000;
/// The dummy old signature's offset and length in [`base`].
const OLD_SIG_AT: usize = 0x4200;
const OLD_SIG_LEN: usize = 0x40;
/// Offset of the `__LINKEDIT` command in [`base`]: after the header,
/// `__PAGEZERO` and `__TEXT` with its one section.
const LINKEDIT_CMD: usize = 32 + 72 + 72 + 80;
/// Offset of `LC_SYMTAB` in [`base`].
const SYMTAB_CMD: usize = LINKEDIT_CMD + 72;
/// The string table's offset in [`base`]: it ends 6 bytes before the old
/// signature, as ld64 leaves it.
const STROFF: usize = 0x4100;
/// Offset of `LC_CODE_SIGNATURE` in [`base`].
const SIG_CMD: usize = SYMTAB_CMD + 24;

/// Appends `v` little-endian.
fn le32_put(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` little-endian.
fn le64_put(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends an `LC_SEGMENT_64`, with one 0x100-byte `__text` section at
/// `sect_off` unless that is 0.
fn segment_cmd(out: &mut Vec<u8>, name: &str, vm: (u64, u64), file: (u64, u64), sect_off: u32) {
    let nsects = u32::from(sect_off != 0);
    le32_put(out, LC_SEGMENT_64);
    le32_put(out, 72 + 80 * nsects);
    let mut n = [0u8; 16];
    n[..name.len()].copy_from_slice(name.as_bytes());
    out.extend_from_slice(&n);
    for v in [vm.0, vm.1, file.0, file.1] {
        le64_put(out, v);
    }
    for v in [7, 5, nsects, 0] {
        le32_put(out, v);
    }
    if nsects == 1 {
        let mut s = [0u8; 80];
        s[..6].copy_from_slice(b"__text");
        s[16..22].copy_from_slice(b"__TEXT");
        s[32..40].copy_from_slice(&(vm.0 + u64::from(sect_off)).to_le_bytes());
        s[40..48].copy_from_slice(&0x100u64.to_le_bytes());
        s[48..52].copy_from_slice(&sect_off.to_le_bytes());
        s[64..68].copy_from_slice(&0x8000_0400u32.to_le_bytes());
        out.extend_from_slice(&s);
    }
}

/// A minimal arm64 `MH_EXECUTE`: `__PAGEZERO`, `__TEXT` (one page, code at
/// 0x3f00), `__LINKEDIT` (0x100 bytes of symbols, 0xfa of strings, padding
/// then, if `signed`, a dummy old signature of 0x40 bytes).
fn base_with(signed: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let sizeofcmds = 72 + 152 + 72 + 24 + if signed { 16 } else { 0 };
    for v in [
        0xfeed_facf,
        0x0100_000c,
        0,
        MH_EXECUTE,
        4 + u32::from(signed),
    ] {
        le32_put(&mut out, v);
    }
    for v in [sizeofcmds, 0x0020_0085, 0] {
        le32_put(&mut out, v);
    }
    segment_cmd(&mut out, "__PAGEZERO", (0, 1 << 32), (0, 0), 0);
    segment_cmd(&mut out, "__TEXT", (1 << 32, 0x4000), (0, 0x4000), 0x3f00);
    let linkedit_len = if signed { 0x240 } else { 0x200 };
    let linkedit = ((1 << 32) + 0x4000, 0x4000);
    segment_cmd(&mut out, "__LINKEDIT", linkedit, (0x4000, linkedit_len), 0);
    for v in [LC_SYMTAB, 24, 0x4000, 0x10, STROFF as u32, 0xfa] {
        le32_put(&mut out, v);
    }
    if signed {
        for v in [LC_CODE_SIGNATURE, 16, OLD_SIG_AT as u32, OLD_SIG_LEN as u32] {
            le32_put(&mut out, v);
        }
    }
    out.resize(0x3f00, 0);
    out.resize(0x4000, 0xc3); // "code"
    out.resize(STROFF, 0x5e); // symbols
    out.resize(STROFF + 0xfa, b's'); // strings
    out.resize(OLD_SIG_AT, 0);
    if signed {
        out.extend_from_slice(&0xfade_0cc0u32.to_be_bytes());
        out.resize(OLD_SIG_AT + OLD_SIG_LEN, 0xee);
    }
    out
}

/// The signed [`base_with`].
fn base() -> Vec<u8> {
    base_with(true)
}

/// `unsigned_part(base)` + zero padding to 16 + `payload`, padded again.
fn with_payload(base: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut file = unsigned_part(base).unwrap().to_vec();
    file.resize(file.len().next_multiple_of(SIGNATURE_ALIGN), 0);
    file.extend_from_slice(payload);
    file.resize(file.len().next_multiple_of(SIGNATURE_ALIGN), 0);
    file
}

/// The big-endian `u32` at `at` (signature fields).
fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}

/// The big-endian `u64` at `at`.
fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

/// A deterministic generator for the payloads and the damage loop.
struct Rng(u64);

impl Rng {
    /// xorshift64.
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `n` bytes.
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Checks everything `seal` promises of `out`, sealed from `file`.
fn check_sealed(file: &[u8], out: &[u8], id: &str) {
    let code_limit = file.len();
    assert_eq!(signed_end(out).unwrap(), Some(code_limit as u64));
    let layout = parse(out).unwrap();
    let sig = layout.signature.unwrap();
    assert_eq!(sig.off, code_limit as u64);
    assert_eq!(sig.off + sig.size, out.len() as u64);
    let linkedit = layout.linkedit.unwrap();
    assert_eq!(linkedit.fileoff, LINKEDIT_AT as u64);
    assert_eq!(linkedit.file_end(), out.len() as u64);
    assert_eq!(linkedit.vmsize, linkedit.filesize.next_multiple_of(0x4000));
    // The string table reaches the signature: no gap for `codesign`.
    let strings = layout.strings.unwrap();
    assert_eq!(strings.off, STROFF as u64);
    assert_eq!(strings.off + strings.size, code_limit as u64);
    // Past the load commands, the caller's bytes are untouched.
    assert_eq!(out[layout.cmds_end..code_limit], file[layout.cmds_end..]);

    let s = &out[code_limit..];
    assert_eq!(be32(s, 0), 0xfade_0cc0);
    assert_eq!(be32(s, 4) as usize, s.len());
    assert_eq!((be32(s, 8), be32(s, 12), be32(s, 16)), (1, 0, 20));
    let cd = &s[20..];
    let slots = code_limit.div_ceil(4096);
    assert_eq!(be32(cd, 0), 0xfade_0c02);
    assert_eq!(be32(cd, 4) as usize, cd.len());
    assert_eq!(be32(cd, 8), 0x20400);
    assert_eq!(be32(cd, 12), 0x20002);
    let hash_off = be32(cd, 16) as usize;
    let ident_off = be32(cd, 20) as usize;
    assert_eq!(ident_off, 88);
    assert_eq!(&cd[ident_off..hash_off], format!("{id}\0").as_bytes());
    assert_eq!(be32(cd, 24), 0); // nSpecialSlots
    assert_eq!(be32(cd, 28) as usize, slots);
    assert_eq!(be32(cd, 32) as usize, code_limit);
    assert_eq!(cd[36..40], [32, 2, 0, 12]);
    assert_eq!(be64(cd, 56), 0); // codeLimit64
    assert_eq!((be64(cd, 64), be64(cd, 72), be64(cd, 80)), (0, 0x4000, 1));
    assert_eq!(hash_off + slots * 32, cd.len());
    for (i, page) in out[..code_limit].chunks(4096).enumerate() {
        let hash = &cd[hash_off + i * 32..][..32];
        assert_eq!(hash, Sha256::digest(page).as_slice(), "page {i}");
    }
}

#[test]
fn recognizes_only_thin_64_bit_little_endian() {
    assert!(is_macho(&base()));
    assert!(!is_macho(b"\x7fELF"));
    assert!(!is_macho(&[0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2]));
    assert!(!is_macho(&[0xcf, 0xfa]));
}

#[test]
fn seals_a_payload_inside_linkedit() {
    let base = base();
    assert_eq!(unsigned_part(&base).unwrap(), &base[..OLD_SIG_AT]);
    let payload = Rng(7).bytes(3 * 4096 + 123);
    let file = with_payload(&base, &payload);
    let out = seal(file.clone(), "com.example.p").unwrap();
    check_sealed(&file, &out, "com.example.p");
    // A sealed file is itself a base: its unsigned part is everything
    // before the new signature.
    assert_eq!(unsigned_part(&out).unwrap(), &out[..file.len()]);
}

#[test]
fn seals_a_page_multiple_and_an_empty_payload() {
    let base = base();
    let mut file = unsigned_part(&base).unwrap().to_vec();
    file.resize(0x5000, 1);
    check_sealed(&file, &seal(file.clone(), "x").unwrap(), "x");
    let file = unsigned_part(&base).unwrap().to_vec();
    check_sealed(&file, &seal(file.clone(), "x").unwrap(), "x");
}

#[test]
fn adds_the_signature_command_to_an_unsigned_base() {
    let base = base_with(false);
    assert_eq!(signed_end(&base).unwrap(), None);
    assert_eq!(unsigned_part(&base).unwrap(), &base[..]);
    let file = with_payload(&base, b"payload");
    let out = seal(file.clone(), "id").unwrap();
    assert_eq!(le32(&out, 16), 5);
    assert_eq!(le32(&out, 20) as usize, SIG_CMD + 16 - 32);
    // The new command is part of the header the signature covers.
    let mut expected = file.clone();
    expected[..SIG_CMD + 16].copy_from_slice(&out[..SIG_CMD + 16]);
    check_sealed(&expected, &out, "id");
}

#[test]
fn resizes_only_a_last_string_table() {
    // A file sealed with a large payload, resealed with a small one from
    // the bytes before its payload: the stretched table shrinks back.
    let big = seal(with_payload(&base(), &[9; 30_000]), "id").unwrap();
    let mut file = big[..OLD_SIG_AT].to_vec();
    file.extend_from_slice(&[b's'; 32]);
    check_sealed(&file, &seal(file.clone(), "id").unwrap(), "id");

    // A table followed by other content is left alone.
    let mut early = base();
    early[SYMTAB_CMD + 20..][..4].copy_from_slice(&0x80u32.to_le_bytes());
    let out = seal(with_payload(&early, b"p"), "id").unwrap();
    assert_eq!(parse(&out).unwrap().strings.unwrap().size, 0x80);

    // The bytes to seal end inside the base's strings.
    let cut = unsigned_part(&base()).unwrap()[..STROFF - 0x80].to_vec();
    let err = seal(cut, "id").unwrap_err();
    assert!(
        matches!(
            err,
            MachoError::Truncated {
                what: "string table",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn refuses_an_unsigned_base_without_header_room() {
    let mut base = base_with(false);
    // Content right after the load commands: no room for a new one.
    base[SIG_CMD] = 1;
    let err = seal(with_payload(&base, b"p"), "id").unwrap_err();
    assert!(matches!(err, MachoError::NoRoom { .. }), "{err}");
}

#[test]
fn sanitizes_the_identifier() {
    assert_eq!(sanitize("com.example.p"), "com.example.p");
    assert_eq!(sanitize("a b\0c\u{e9}"), "a_b_c_");
    assert_eq!(sanitize(""), "plugin");
    assert_eq!(sanitize(&"x".repeat(500)).len(), MAX_IDENTIFIER);
    let file = with_payload(&base(), b"p");
    check_sealed(&file, &seal(file.clone(), "é x").unwrap(), "__x");
}

#[test]
fn refuses_what_it_cannot_sign() {
    let base = base();
    let expect = |bytes: &[u8], what: fn(&MachoError) -> bool| {
        let err = unsigned_part(bytes).unwrap_err();
        assert!(what(&err), "unexpected error: {err}");
        assert!(!err.to_string().is_empty());
    };
    let mut fat = base.clone();
    fat[..4].copy_from_slice(&[0xca, 0xfe, 0xba, 0xbe]);
    expect(&fat, |e| matches!(e, MachoError::Fat));
    let mut thin32 = base.clone();
    thin32[..4].copy_from_slice(&[0xce, 0xfa, 0xed, 0xfe]);
    expect(&thin32, |e| matches!(e, MachoError::ThirtyTwoBit));
    let mut big = base.clone();
    big[..4].copy_from_slice(&[0xfe, 0xed, 0xfa, 0xcf]);
    expect(&big, |e| matches!(e, MachoError::BigEndian));
    expect(b"#!/bin/sh\n", |e| matches!(e, MachoError::NotMacho { .. }));
    expect(&base[..3], |e| matches!(e, MachoError::Truncated { .. }));
    expect(&base[..20], |e| matches!(e, MachoError::Truncated { .. }));
    expect(&base[..200], |e| matches!(e, MachoError::Truncated { .. }));
    let mut huge = base.clone();
    huge[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
    expect(&huge, |e| matches!(e, MachoError::Truncated { .. }));
    let mut many = base.clone();
    many[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
    expect(&many, |e| matches!(e, MachoError::BadLoadCommand { .. }));
    let mut zero = base.clone();
    zero[SIG_CMD + 4..SIG_CMD + 8].copy_from_slice(&0u32.to_le_bytes());
    expect(&zero, |e| matches!(e, MachoError::BadLoadCommand { .. }));
    let mut past = base.clone();
    past[LINKEDIT_CMD + 4..LINKEDIT_CMD + 8].copy_from_slice(&4096u32.to_le_bytes());
    expect(&past, |e| matches!(e, MachoError::BadLoadCommand { .. }));
    let mut sects = base.clone();
    sects[LINKEDIT_CMD + 64..LINKEDIT_CMD + 68].copy_from_slice(&1u32.to_le_bytes());
    expect(&sects, |e| matches!(e, MachoError::BadLoadCommand { .. }));
    let mut beyond = base.clone();
    beyond[SIG_CMD + 8..SIG_CMD + 12].copy_from_slice(&0x10_0000u32.to_le_bytes());
    expect(&beyond, |e| {
        matches!(e, MachoError::SignatureNotAtEnd { .. })
    });
    let mut early = base.clone();
    early[SIG_CMD + 12..SIG_CMD + 16].copy_from_slice(&0x10u32.to_le_bytes());
    expect(&early, |e| {
        matches!(e, MachoError::SignatureNotAtEnd { .. })
    });
    let mut appended = base.clone();
    appended.extend_from_slice(b"plain appended payload");
    expect(&appended, |e| {
        matches!(e, MachoError::LinkeditNotAtEnd { .. })
    });
    expect(&base[..base.len() - 1], |e| {
        matches!(e, MachoError::LinkeditNotAtEnd { .. })
    });
    let mut renamed = base.clone();
    renamed[LINKEDIT_CMD + 8..LINKEDIT_CMD + 18].copy_from_slice(b"__DATA\0\0\0\0");
    expect(&renamed, |e| matches!(e, MachoError::NoSegment { .. }));
    let mut moved = base.clone();
    // __TEXT reaching past __LINKEDIT in memory.
    moved[32 + 72 + 32..][..8].copy_from_slice(&0x8000u64.to_le_bytes());
    expect(&moved, |e| matches!(e, MachoError::LinkeditNotLast));

    let odd = unsigned_part(&base).unwrap()[..OLD_SIG_AT - 1].to_vec();
    let err = seal(odd, "id").unwrap_err();
    assert_eq!(err, MachoError::Unaligned { len: 0x41ff });
    let short = base[..0x3ff0].to_vec();
    let err = seal(short, "id").unwrap_err();
    assert!(matches!(err, MachoError::Truncated { .. }), "{err}");
}

#[test]
fn signed_end_reads_a_prefix() {
    let base = base();
    assert_eq!(signed_end(&base[..0x200]).unwrap(), Some(OLD_SIG_AT as u64));
    assert!(signed_end(&base[..0x100]).is_err());
    assert_eq!(signed_end(b"\x7fELF and more").unwrap(), None);
    assert_eq!(signed_end(b"").unwrap(), None);
}

#[test]
fn damaged_files_are_refused_never_a_panic() {
    let sealed = seal(with_payload(&base(), b"payload"), "id").unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..3000 {
        let mut bytes = if round % 2 == 0 {
            base()
        } else {
            sealed.clone()
        };
        for _ in 0..1 + rng.next() % 4 {
            // Mostly the header and load commands, where the offsets are.
            let at = match rng.next() % 4 {
                0 => rng.next() as usize % bytes.len(),
                _ => rng.next() as usize % 0x200,
            };
            bytes[at] ^= 1 << (rng.next() % 8);
            if rng.next().is_multiple_of(3) {
                let put = rng.next().to_le_bytes();
                let end = (at + 4).min(bytes.len());
                bytes[at..end].copy_from_slice(&put[..end - at]);
            }
        }
        if rng.next().is_multiple_of(4) {
            bytes.truncate(rng.next() as usize % bytes.len());
        }
        let _ = is_macho(&bytes);
        let _ = signed_end(&bytes);
        if let Ok(part) = unsigned_part(&bytes) {
            let mut file = part.to_vec();
            file.resize(file.len().next_multiple_of(SIGNATURE_ALIGN), 0);
            let _ = seal(file, "id");
        }
        bytes.truncate(bytes.len() / 16 * 16);
        let _ = seal(bytes, "id");
    }
}
