//! Where a payload goes in a macOS executable, and the ad hoc code signature
//! that covers it.
//!
//! macOS on arm64 refuses to run pages that the code signature does not
//! cover, and bytes appended after the linker's signature are outside it. So
//! a packed Mach-O carries its payload inside `__LINKEDIT`, before a new
//! signature (the layout vercel/pkg and .NET single-file bundles use):
//!
//! ```text
//! [base up to its old signature][caller's bytes: padding | payload | trailer][ad hoc signature]
//! ```
//!
//! `__LINKEDIT` is extended to the end of the new signature and
//! `LC_CODE_SIGNATURE` points at it, so a reader finds the trailer just before
//! [`signed_end`], not at the end of the file. The string table, when it is
//! the base's last `__LINKEDIT` content, is stretched over the caller's bytes
//! so that `__LINKEDIT` has no gap that `codesign` would refuse to re-sign.
//!
//! The signature is the kind ld64 and zig write when they link: a SuperBlob
//! holding one SHA-256 CodeDirectory with a hash of each 4 KiB page before it,
//! flagged ad hoc and linker-signed, with no requirements and no entitlements.
//! Being linker-signed, it is replaced by a plain `codesign -s` (no `--force`).
//!
//! Only thin, 64-bit, little-endian files (arm64, x86_64) are handled. Every
//! offset read from a file is checked: a packed file read back is untrusted.

use sha2::{Digest, Sha256};

/// `mach_header_64.magic` as a little-endian file stores it.
const MAGIC_64: [u8; 4] = [0xcf, 0xfa, 0xed, 0xfe];
/// Size of `mach_header_64`.
const HEADER_LEN: usize = 32;
/// `LC_SEGMENT_64`.
const LC_SEGMENT_64: u32 = 0x19;
/// `LC_CODE_SIGNATURE`.
const LC_CODE_SIGNATURE: u32 = 0x1d;
/// `LC_SYMTAB`.
const LC_SYMTAB: u32 = 0x2;
/// Size of `segment_command_64` (before its sections).
const SEGMENT_LEN: usize = 72;
/// Size of `section_64`.
const SECTION_LEN: usize = 80;
/// Size of `linkedit_data_command`.
const LINKEDIT_DATA_LEN: u32 = 16;
/// `MH_EXECUTE`: the main binary, whose CodeDirectory says so.
const MH_EXECUTE: u32 = 2;
/// `__LINKEDIT`'s vmsize is rounded to this: the arm64 page, a multiple of
/// x86_64's 4 KiB one.
const SEGMENT_ALIGN: u64 = 0x4000;
/// The signature's offset (and so the file up to it) is aligned to this, as
/// ld64 and `codesign` align it.
pub(crate) const SIGNATURE_ALIGN: usize = 16;
/// log2 of the hashed page size: 4 KiB, as `codesign` and ld64 use on both
/// architectures.
const PAGE_SHIFT: u8 = 12;
/// Size of a hashed page.
const PAGE: usize = 1 << PAGE_SHIFT;
/// Size of `CS_CodeDirectory` version 0x20400 (up to `execSegFlags`).
const CD_HEADER_LEN: usize = 88;
/// SuperBlob header (magic, length, count) plus its one blob index entry.
const SUPERBLOB_HEADER_LEN: usize = 12 + 8;
/// Longest identifier written; longer ones are cut.
const MAX_IDENTIFIER: usize = 128;

/// Why a file cannot be read or sealed as a thin 64-bit Mach-O.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MachoError {
    /// The file ends inside a structure.
    #[error("the Mach-O file ends at byte {len}, inside its {what} (which needs {needed} bytes)")]
    Truncated {
        /// The structure.
        what: &'static str,
        /// Bytes it needs from the start of the file.
        needed: u64,
        /// Bytes there are.
        len: u64,
    },
    /// A universal binary: holds several architectures' files.
    #[error("a universal (fat) Mach-O; use a single-architecture base (`lipo -thin`)")]
    Fat,
    /// A 32-bit Mach-O.
    #[error("a 32-bit Mach-O; only 64-bit bases are supported")]
    ThirtyTwoBit,
    /// A big-endian Mach-O.
    #[error("a big-endian Mach-O; only little-endian (arm64, x86_64) bases are supported")]
    BigEndian,
    /// Not a Mach-O at all.
    #[error("not a Mach-O file (magic {magic:02x?})")]
    NotMacho {
        /// The first bytes of the file.
        magic: [u8; 4],
    },
    /// A load command is malformed.
    #[error("load command {index} of the Mach-O is malformed: {reason}")]
    BadLoadCommand {
        /// Its index.
        index: u32,
        /// What is wrong.
        reason: &'static str,
    },
    /// A segment the signature needs is missing.
    #[error("the Mach-O has no {name} segment")]
    NoSegment {
        /// The segment's name.
        name: &'static str,
    },
    /// Another segment lies after `__LINKEDIT` in the file or in memory, so
    /// `__LINKEDIT` cannot grow.
    #[error("__LINKEDIT is not the Mach-O's last segment")]
    LinkeditNotLast,
    /// Bytes follow `__LINKEDIT` (or it claims more than the file holds).
    #[error(
        "__LINKEDIT ends at byte {linkedit_end} but the file at {len}: something was appended to the base, or it is cut"
    )]
    LinkeditNotAtEnd {
        /// Where `__LINKEDIT` ends.
        linkedit_end: u64,
        /// The file's length.
        len: u64,
    },
    /// The code signature does not end `__LINKEDIT`.
    #[error(
        "the code signature spans bytes {dataoff}..{signature_end}, not the end of __LINKEDIT ({linkedit_start}..{linkedit_end})"
    )]
    SignatureNotAtEnd {
        /// Where the signature starts.
        dataoff: u64,
        /// Where it ends.
        signature_end: u64,
        /// Where `__LINKEDIT` starts.
        linkedit_start: u64,
        /// Where `__LINKEDIT` ends.
        linkedit_end: u64,
    },
    /// The bytes to seal do not end on a `SIGNATURE_ALIGN` (16) boundary.
    #[error("the bytes to seal are {len} long, not a multiple of {SIGNATURE_ALIGN}")]
    Unaligned {
        /// Their length.
        len: u64,
    },
    /// An unsigned base has no room for an `LC_CODE_SIGNATURE` command.
    #[error(
        "no room for LC_CODE_SIGNATURE after the load commands (they end at byte {cmds_end}, the first content at {first_content}); relink the base with -headerpad or sign it"
    )]
    NoRoom {
        /// Where the load commands end.
        cmds_end: u64,
        /// Where the first section or segment content starts.
        first_content: u64,
    },
    /// The signed file would pass 4 GiB, the most a signature can cover.
    #[error("{len} bytes cannot be signed: a Mach-O code signature covers at most 4 GiB")]
    TooLarge {
        /// The signed file's length.
        len: u64,
    },
}

/// A segment load command, as far as signing needs it.
#[derive(Debug, Clone, Copy)]
struct Segment {
    /// File offset of the load command.
    at: usize,
    vmaddr: u64,
    vmsize: u64,
    fileoff: u64,
    filesize: u64,
}

impl Segment {
    /// Where its content ends in the file (checked when parsed).
    fn file_end(&self) -> u64 {
        self.fileoff + self.filesize
    }
}

/// Content of `__LINKEDIT` a load command points at: the code signature
/// (`dataoff`, `datasize`) or the string table (`stroff`, `strsize`).
#[derive(Debug, Clone, Copy)]
struct Blob {
    /// File offset of the load command.
    at: usize,
    /// File offset of the content.
    off: u64,
    /// Its size.
    size: u64,
}

/// What signing needs from a Mach-O's header and load commands.
#[derive(Debug)]
struct Layout {
    filetype: u32,
    ncmds: u32,
    /// Where the load commands end (`32 + sizeofcmds`).
    cmds_end: usize,
    text: Option<Segment>,
    linkedit: Option<Segment>,
    signature: Option<Blob>,
    strings: Option<Blob>,
    /// The furthest any other segment reaches in the file and in memory:
    /// `__LINKEDIT` may grow only if it lies past both.
    others_file_end: u64,
    others_vm_end: u64,
    /// The first byte of section or segment content after the header: where
    /// the room for one more load command ends.
    first_content: u64,
}

/// The little-endian `u32` at `at`. Callers check the range lies in `bytes`
/// first; past the end it is 0, never a panic.
fn le32(bytes: &[u8], at: usize) -> u32 {
    let b = bytes.get(at..at.saturating_add(4));
    b.and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

/// The little-endian `u64` at `at`, as [`le32`].
fn le64(bytes: &[u8], at: usize) -> u64 {
    let b = bytes.get(at..at.saturating_add(8));
    b.and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// Whether `bytes` start like a thin 64-bit little-endian Mach-O
/// (`MH_MAGIC_64`): arm64 and x86_64 executables.
pub(crate) fn is_macho(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC_64)
}

/// Refuses anything but a thin 64-bit little-endian Mach-O, naming what it is.
fn check_magic(bytes: &[u8]) -> Result<(), MachoError> {
    let magic: [u8; 4] = match bytes.get(..4).and_then(|b| b.try_into().ok()) {
        Some(magic) => magic,
        None => return Err(truncated("header", HEADER_LEN, bytes)),
    };
    match magic {
        MAGIC_64 => Ok(()),
        [0xca, 0xfe, 0xba, 0xbe | 0xbf] => Err(MachoError::Fat),
        [0xce, 0xfa, 0xed, 0xfe] => Err(MachoError::ThirtyTwoBit),
        [0xfe, 0xed, 0xfa, 0xce | 0xcf] => Err(MachoError::BigEndian),
        _ => Err(MachoError::NotMacho { magic }),
    }
}

/// `Truncated`: `bytes` end before `needed`, inside `what`.
fn truncated(what: &'static str, needed: usize, bytes: &[u8]) -> MachoError {
    MachoError::Truncated {
        what,
        needed: needed as u64,
        len: bytes.len() as u64,
    }
}

/// Reads the header and load commands; `bytes` may be just a prefix of the
/// file that holds them.
fn parse(bytes: &[u8]) -> Result<Layout, MachoError> {
    check_magic(bytes)?;
    if bytes.len() < HEADER_LEN {
        return Err(truncated("header", HEADER_LEN, bytes));
    }
    // At most 32 + 4 GiB: fits a 64-bit usize.
    let cmds_end = HEADER_LEN + le32(bytes, 20) as usize;
    if cmds_end > bytes.len() {
        return Err(truncated("load commands", cmds_end, bytes));
    }
    let mut layout = Layout {
        filetype: le32(bytes, 12),
        ncmds: le32(bytes, 16),
        cmds_end,
        text: None,
        linkedit: None,
        signature: None,
        strings: None,
        others_file_end: 0,
        others_vm_end: 0,
        first_content: u64::MAX,
    };
    let mut at = HEADER_LEN;
    // Each command takes at least 8 bytes of the load commands, so a huge
    // `ncmds` ends in an error, not a long loop.
    for index in 0..layout.ncmds {
        let bad = |reason| MachoError::BadLoadCommand { index, reason };
        if cmds_end - at < 8 {
            return Err(bad("it starts past the end of the load commands"));
        }
        let cmdsize = le32(bytes, at + 4) as usize;
        if cmdsize < 8 || cmdsize > cmds_end - at {
            return Err(bad("its size is below 8 or runs past the load commands"));
        }
        // In bounds: the whole command lies in `bytes`.
        let cmd = &bytes[at..at + cmdsize];
        match le32(cmd, 0) {
            LC_SEGMENT_64 => segment(cmd, at, &mut layout).map_err(bad)?,
            LC_CODE_SIGNATURE if cmdsize < LINKEDIT_DATA_LEN as usize => {
                return Err(bad("LC_CODE_SIGNATURE is shorter than 16 bytes"));
            }
            LC_CODE_SIGNATURE if layout.signature.is_some() => {
                return Err(bad("a second LC_CODE_SIGNATURE"));
            }
            LC_CODE_SIGNATURE => {
                layout.signature = Some(Blob {
                    at,
                    off: le32(cmd, 8).into(),
                    size: le32(cmd, 12).into(),
                });
            }
            LC_SYMTAB if cmdsize < 24 => return Err(bad("LC_SYMTAB is shorter than 24 bytes")),
            LC_SYMTAB => {
                layout.strings = Some(Blob {
                    at,
                    off: le32(cmd, 16).into(),
                    size: le32(cmd, 20).into(),
                });
            }
            _ => {}
        }
        at += cmdsize;
    }
    Ok(layout)
}

/// Records the `LC_SEGMENT_64` `cmd`, found at file offset `at`; `Err` says
/// what is wrong with it.
fn segment(cmd: &[u8], at: usize, layout: &mut Layout) -> Result<(), &'static str> {
    if cmd.len() < SEGMENT_LEN {
        return Err("LC_SEGMENT_64 is shorter than 72 bytes");
    }
    let seg = Segment {
        at,
        vmaddr: le64(cmd, 24),
        vmsize: le64(cmd, 32),
        fileoff: le64(cmd, 40),
        filesize: le64(cmd, 48),
    };
    let nsects = le32(cmd, 64) as usize;
    if (cmd.len() - SEGMENT_LEN) / SECTION_LEN < nsects {
        return Err("the segment's sections run past its command");
    }
    let vm_end = seg
        .vmaddr
        .checked_add(seg.vmsize)
        .ok_or("vmaddr + vmsize overflows")?;
    seg.fileoff
        .checked_add(seg.filesize)
        .ok_or("fileoff + filesize overflows")?;
    if seg.fileoff > 0 && seg.filesize > 0 {
        layout.first_content = layout.first_content.min(seg.fileoff);
    }
    for sect in cmd[SEGMENT_LEN..].chunks_exact(SECTION_LEN).take(nsects) {
        let offset = le32(sect, 48);
        // Zero-fill sections (S_ZEROFILL, S_GB_ZEROFILL,
        // S_THREAD_LOCAL_ZEROFILL) have no bytes in the file.
        if offset > 0 && !matches!(le32(sect, 64) & 0xff, 0x01 | 0x0c | 0x12) {
            layout.first_content = layout.first_content.min(offset.into());
        }
    }
    let name = &cmd[8..24];
    let again = Err("a second segment of the same name");
    if name.starts_with(b"__LINKEDIT\0") {
        if layout.linkedit.replace(seg).is_some() {
            return again;
        }
        return Ok(());
    }
    if name.starts_with(b"__TEXT\0") && layout.text.replace(seg).is_some() {
        return again;
    }
    layout.others_file_end = layout.others_file_end.max(seg.file_end());
    layout.others_vm_end = layout.others_vm_end.max(vm_end);
    Ok(())
}

/// The `__TEXT` and `__LINKEDIT` segments, if `__LINKEDIT` may grow: it is
/// the last segment both in the file and in memory.
fn segments(layout: &Layout) -> Result<(Segment, Segment), MachoError> {
    let text = layout
        .text
        .ok_or(MachoError::NoSegment { name: "__TEXT" })?;
    let linkedit = layout
        .linkedit
        .ok_or(MachoError::NoSegment { name: "__LINKEDIT" })?;
    if layout.others_file_end > linkedit.fileoff || layout.others_vm_end > linkedit.vmaddr {
        return Err(MachoError::LinkeditNotLast);
    }
    Ok((text, linkedit))
}

/// For a base: the bytes a payload follows, i.e. everything before the
/// base's code signature, or the whole file if it has none. Refuses fat,
/// 32-bit and big-endian files, a `__LINKEDIT` that is not the last segment
/// or does not end the file, and a signature that does not end `__LINKEDIT`:
/// in each, the payload could not be put where the signature covers it.
pub(crate) fn unsigned_part(base: &[u8]) -> Result<&[u8], MachoError> {
    let layout = parse(base)?;
    let (_, linkedit) = segments(&layout)?;
    let len = base.len() as u64;
    if linkedit.file_end() != len {
        return Err(MachoError::LinkeditNotAtEnd {
            linkedit_end: linkedit.file_end(),
            len,
        });
    }
    let Some(sig) = layout.signature else {
        return Ok(base);
    };
    let signature_end = sig.off + sig.size;
    if sig.off < linkedit.fileoff || signature_end != linkedit.file_end() {
        return Err(MachoError::SignatureNotAtEnd {
            dataoff: sig.off,
            signature_end,
            linkedit_start: linkedit.fileoff,
            linkedit_end: linkedit.file_end(),
        });
    }
    // In bounds: dataoff <= signature_end == len.
    Ok(&base[..sig.off as usize])
}

/// Where the signed content of a Mach-O ends: its `LC_CODE_SIGNATURE`'s
/// `dataoff`, so a packed file's trailer ends there. `None` if `bytes` is not
/// a thin 64-bit Mach-O or has no signature. `bytes` may be the whole file or
/// any prefix holding the header and load commands (`Truncated` says how many
/// bytes are needed when it is shorter). The offset is as the file says: the
/// caller checks it against the file's length.
pub(crate) fn signed_end(bytes: &[u8]) -> Result<Option<u64>, MachoError> {
    if !is_macho(bytes) {
        return Ok(None);
    }
    Ok(parse(bytes)?.signature.map(|sig| sig.off))
}

/// Where a Mach-O's code signature is: its offset and size, as
/// `LC_CODE_SIGNATURE` says (`None` if not a Mach-O or unsigned). As with
/// [`signed_end`], the caller checks them against the file.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub(crate) fn signature(bytes: &[u8]) -> Result<Option<(u64, u64)>, MachoError> {
    if !is_macho(bytes) {
        return Ok(None);
    }
    Ok(parse(bytes)?.signature.map(|sig| (sig.off, sig.size)))
}

/// Seals `file`, which is [`unsigned_part`] of a base followed by the
/// caller's bytes (padding, payload, trailer) and whose length is a multiple
/// of [`SIGNATURE_ALIGN`]: extends `__LINKEDIT` to the end of a new ad hoc
/// signature, points `LC_CODE_SIGNATURE` at it (adding that command to an
/// unsigned base, in the header padding) and appends the signature, whose
/// CodeDirectory covers every byte before it. What the header said of the
/// old signature and sizes is ignored and rewritten, so the part before the
/// payload of a file sealed earlier serves as well. `identifier` names the
/// code (the plugin id): kept to printable ASCII, other bytes become `_`.
pub(crate) fn seal(mut file: Vec<u8>, identifier: &str) -> Result<Vec<u8>, MachoError> {
    let len = file.len();
    if !len.is_multiple_of(SIGNATURE_ALIGN) {
        return Err(MachoError::Unaligned { len: len as u64 });
    }
    let layout = parse(&file)?;
    let (text, linkedit) = segments(&layout)?;
    if linkedit.fileoff > len as u64 {
        return Err(truncated("__LINKEDIT", linkedit.fileoff as usize, &file));
    }
    let id = sanitize(identifier);
    let slots = len.div_ceil(PAGE);
    let cd_len = CD_HEADER_LEN + id.len() + 1 + slots * 32;
    let sig_len = SUPERBLOB_HEADER_LEN + cd_len;
    let total = len as u64 + sig_len as u64;
    if total > u32::MAX.into() {
        return Err(MachoError::TooLarge { len: total });
    }
    if let Some(strings) = resized_strings(&layout, linkedit, len as u64)? {
        // Fits: below `len`, itself below 4 GiB.
        put(
            &mut file,
            strings.at + 20,
            &(strings.size as u32).to_le_bytes(),
        );
    }
    let sig_at = match layout.signature {
        Some(sig) => sig.at,
        None => add_signature_command(&mut file, &layout)?,
    };
    let filesize = total - linkedit.fileoff;
    let vmsize = filesize.div_ceil(SEGMENT_ALIGN) * SEGMENT_ALIGN;
    if linkedit.vmaddr.checked_add(vmsize).is_none() {
        return Err(MachoError::TooLarge { len: total });
    }
    // In bounds: parse checked every command lies in the load commands.
    put(&mut file, linkedit.at + 32, &vmsize.to_le_bytes());
    put(&mut file, linkedit.at + 48, &filesize.to_le_bytes());
    put(&mut file, sig_at + 8, &(len as u32).to_le_bytes());
    put(&mut file, sig_at + 12, &(sig_len as u32).to_le_bytes());

    // CS_EXECSEG_MAIN_BINARY for an executable.
    let exec_flags = u64::from(layout.filetype == MH_EXECUTE);
    let mut sig = Vec::with_capacity(sig_len);
    let words = [
        0xfade_0cc0,                           // SuperBlob magic: embedded signature
        sig_len as u32,                        // length
        1,                                     // count: one blob
        0,                                     // type: CSSLOT_CODEDIRECTORY
        SUPERBLOB_HEADER_LEN as u32,           // offset
        0xfade_0c02,                           // magic: CodeDirectory
        cd_len as u32,                         // length
        0x2_0400,                              // version: has execSeg fields
        0x2_0002,                              // flags: CS_ADHOC | CS_LINKER_SIGNED
        (CD_HEADER_LEN + id.len() + 1) as u32, // hashOffset
        CD_HEADER_LEN as u32,                  // identOffset
        0,                                     // nSpecialSlots
        slots as u32,                          // nCodeSlots
        len as u32,                            // codeLimit
    ];
    for word in words {
        sig.extend_from_slice(&word.to_be_bytes());
    }
    // hashSize, hashType (SHA-256), platform, log2 pageSize.
    sig.extend_from_slice(&[32, 2, 0, PAGE_SHIFT]);
    // spare2, scatterOffset, teamOffset, spare3: none.
    sig.extend_from_slice(&[0; 16]);
    // codeLimit64 (0: codeLimit holds it), execSegBase, execSegLimit, execSegFlags.
    for word in [0, text.fileoff, text.filesize, exec_flags] {
        sig.extend_from_slice(&u64::to_be_bytes(word));
    }
    sig.extend_from_slice(id.as_bytes());
    sig.push(0);
    for page in file.chunks(PAGE) {
        sig.extend_from_slice(&Sha256::digest(page));
    }
    debug_assert_eq!(sig.len(), sig_len);
    file.extend_from_slice(&sig);
    Ok(file)
}

/// The string table resized to end at `len`, if it is the last content of
/// the base's `__LINKEDIT`.
///
/// `codesign`, re-signing the file with a real identity, wants `__LINKEDIT`
/// without gaps, so (as vercel/pkg does) the string table is stretched over
/// the payload. It must then be the base's last `__LINKEDIT` content: ending
/// where its signature starts (or the file ends), give or take alignment
/// padding, as ld64, lld and zig lay it out. A stretched table that ends past
/// `len` (a file sealed before, resealed with a shorter payload) shrinks.
/// Otherwise it is left alone: the kernel and dyld accept the gap.
fn resized_strings(
    layout: &Layout,
    linkedit: Segment,
    len: u64,
) -> Result<Option<Blob>, MachoError> {
    let Some(strings) = layout.strings else {
        return Ok(None);
    };
    let old_end = layout.signature.map_or(linkedit.file_end(), |sig| sig.off);
    let strings_end = strings.off + strings.size;
    let padding = old_end.checked_sub(strings_end);
    let last =
        strings.off >= linkedit.fileoff && padding.is_some_and(|p| p < SIGNATURE_ALIGN as u64);
    if last && strings.off <= len {
        let size = len - strings.off;
        return Ok(Some(Blob { size, ..strings }));
    }
    if strings_end > len {
        // It would overlap the signature, which dyld refuses.
        return Err(MachoError::Truncated {
            what: "string table",
            needed: strings_end,
            len,
        });
    }
    Ok(None)
}

/// Adds an empty `LC_CODE_SIGNATURE` after the load commands of an unsigned
/// base, in the zero padding ld64 leaves before the first content; returns
/// its offset.
fn add_signature_command(file: &mut [u8], layout: &Layout) -> Result<usize, MachoError> {
    let at = layout.cmds_end;
    let end = at + LINKEDIT_DATA_LEN as usize;
    let room = file.get(at..end).filter(|b| b.iter().all(|&x| x == 0));
    if end as u64 > layout.first_content || room.is_none() {
        return Err(MachoError::NoRoom {
            cmds_end: at as u64,
            first_content: layout.first_content,
        });
    }
    let sizeofcmds = (end - HEADER_LEN) as u32;
    // No overflow: each of the `ncmds` commands parsed took 8 bytes or more
    // of at most 4 GiB of load commands.
    put(file, 16, &(layout.ncmds + 1).to_le_bytes());
    put(file, 20, &sizeofcmds.to_le_bytes());
    put(file, at, &LC_CODE_SIGNATURE.to_le_bytes());
    put(file, at + 4, &LINKEDIT_DATA_LEN.to_le_bytes());
    Ok(at)
}

/// Writes `bytes` at `at`, which the caller has checked lies in `file`.
fn put(file: &mut [u8], at: usize, bytes: &[u8]) {
    file[at..at + bytes.len()].copy_from_slice(bytes);
}

/// `identifier` as printable ASCII without spaces (others become `_`), cut
/// to [`MAX_IDENTIFIER`] bytes; `plugin` if empty.
fn sanitize(identifier: &str) -> String {
    let id: String = identifier
        .chars()
        .take(MAX_IDENTIFIER)
        .map(|c| if c.is_ascii_graphic() { c } else { '_' })
        .collect();
    if id.is_empty() { "plugin".into() } else { id }
}

#[cfg(test)]
mod tests;
