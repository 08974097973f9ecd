//! An independent check that a Mach-O's embedded ad hoc code signature
//! covers the whole file, as the macOS kernel would check its pages: for
//! tests only.
//!
//! It is written from Apple's `mach-o/loader.h` and `cs_blobs.h`, not from
//! the signer in `pack/src/macho.rs`, and shares no code with it, so a
//! mistake in the signer shows here instead of being repeated. It decides
//! whether a file passes: a SuperBlob with a SHA-256 ad hoc CodeDirectory
//! whose page hashes match every byte up to the signature, inside a
//! `__LINKEDIT` that ends the file.

use sha2::{Digest, Sha256};

/// What a signature that passed says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The CodeDirectory's `codeLimit`: how many bytes of the file it hashes
    /// (equal to the signature's offset).
    pub code_limit: u64,
    /// The CodeDirectory's `nCodeSlots`: how many page hashes it holds.
    pub code_slots: u32,
    /// The bytes hashed by each slot.
    pub page_size: u64,
    /// The CodeDirectory's identifier.
    pub identifier: String,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:?}: {} pages of {} bytes cover {} bytes",
            self.identifier, self.code_slots, self.page_size, self.code_limit
        )
    }
}

/// A segment from an `LC_SEGMENT_64` command.
struct Seg {
    /// Its name, NULs removed.
    name: String,
    /// `vmsize`.
    vmsize: u64,
    /// `fileoff`.
    fileoff: u64,
    /// `filesize`.
    filesize: u64,
}

/// Reads integers at offsets of one byte slice, naming the slice in errors.
struct View<'a> {
    /// The bytes.
    bytes: &'a [u8],
    /// What they are, for messages.
    name: &'static str,
}

impl View<'_> {
    /// `n` bytes at `off`.
    fn take(&self, off: u64, n: u64) -> Result<&[u8], String> {
        let end = off
            .checked_add(n)
            .ok_or_else(|| format!("{}: offset {off} + {n} overflows", self.name))?;
        match (usize::try_from(off), usize::try_from(end)) {
            (Ok(s), Ok(e)) if e <= self.bytes.len() => Ok(&self.bytes[s..e]),
            _ => Err(format!(
                "{}: bytes {off}..{end} are past its end ({})",
                self.name,
                self.bytes.len()
            )),
        }
    }

    /// Little-endian `u32` (Mach-O structures of an arm64/x86_64 file).
    fn le32(&self, off: u64) -> Result<u32, String> {
        let b = self.take(off, 4)?;
        Ok(u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16 | u32::from(b[3]) << 24)
    }

    /// Little-endian `u64`.
    fn le64(&self, off: u64) -> Result<u64, String> {
        Ok(u64::from(self.le32(off)?) | u64::from(self.le32(off + 4)?) << 32)
    }

    /// Big-endian `u32` (code signature structures).
    fn be32(&self, off: u64) -> Result<u32, String> {
        let b = self.take(off, 4)?;
        Ok(u32::from(b[3]) | u32::from(b[2]) << 8 | u32::from(b[1]) << 16 | u32::from(b[0]) << 24)
    }

    /// Big-endian `u64`.
    fn be64(&self, off: u64) -> Result<u64, String> {
        Ok(u64::from(self.be32(off)?) << 32 | u64::from(self.be32(off + 4)?))
    }

    /// The byte at `off`.
    fn byte(&self, off: u64) -> Result<u8, String> {
        Ok(self.take(off, 1)?[0])
    }
}

/// Checks that `file`, a whole thin 64-bit little-endian Mach-O, carries an
/// ad hoc SHA-256 signature at the end of `__LINKEDIT`, at the end of the
/// file, whose every page hash matches. `Err` says the first thing wrong.
pub fn verify(file: &[u8]) -> Result<Report, String> {
    let mach = View {
        bytes: file,
        name: "Mach-O",
    };
    // mach_header_64: magic, cputype, cpusubtype, filetype, ncmds,
    // sizeofcmds, flags, reserved.
    if mach.le32(0)? != 0xfeed_facf {
        return Err(format!("magic {:#x} is not MH_MAGIC_64", mach.le32(0)?));
    }
    let filetype = mach.le32(12)?;
    let ncmds = mach.le32(16)?;
    let sizeofcmds = u64::from(mach.le32(20)?);
    mach.take(32, sizeofcmds)?;

    let mut segs: Vec<Seg> = Vec::new();
    let mut code_sig: Option<(u64, u64)> = None;
    // (symoff, symbols' bytes, stroff, strsize) from LC_SYMTAB.
    let mut symtab: Option<(u64, u64, u64, u64)> = None;
    let mut off = 32u64;
    for i in 0..ncmds {
        let cmd = mach.le32(off)?;
        let cmdsize = u64::from(mach.le32(off + 4)?);
        if cmdsize < 8 || off + cmdsize > 32 + sizeofcmds {
            return Err(format!("load command {i} has a bad cmdsize {cmdsize}"));
        }
        if cmd == 0x19 {
            // segment_command_64: cmd, cmdsize, segname[16], vmaddr, vmsize,
            // fileoff, filesize, ...
            let raw = mach.take(off + 8, 16)?;
            let name: String = raw
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as char)
                .collect();
            segs.push(Seg {
                name,
                vmsize: mach.le64(off + 32)?,
                fileoff: mach.le64(off + 40)?,
                filesize: mach.le64(off + 48)?,
            });
        } else if cmd == 0x1d {
            // linkedit_data_command: cmd, cmdsize, dataoff, datasize.
            if code_sig.is_some() {
                return Err("two LC_CODE_SIGNATURE commands".into());
            }
            code_sig = Some((
                u64::from(mach.le32(off + 8)?),
                u64::from(mach.le32(off + 12)?),
            ));
        } else if cmd == 0x2 {
            // symtab_command: cmd, cmdsize, symoff, nsyms, stroff, strsize;
            // an nlist_64 is 16 bytes.
            symtab = Some((
                u64::from(mach.le32(off + 8)?),
                u64::from(mach.le32(off + 12)?) * 16,
                u64::from(mach.le32(off + 16)?),
                u64::from(mach.le32(off + 20)?),
            ));
        }
        off += cmdsize;
    }
    let (dataoff, datasize) = code_sig.ok_or("no LC_CODE_SIGNATURE")?;
    let find = |name: &str| {
        segs.iter()
            .find(|s| s.name == name)
            .ok_or(format!("no {name} segment"))
    };
    let linkedit = find("__LINKEDIT")?;
    let text = find("__TEXT")?;
    let sig_end = dataoff + datasize;
    let file_len = file.len() as u64;
    if sig_end > file_len {
        return Err(format!(
            "signature {dataoff}+{datasize} runs past the file ({file_len} bytes)"
        ));
    }
    if sig_end != file_len {
        return Err(format!(
            "the file goes on for {} bytes after the signature",
            file_len - sig_end
        ));
    }
    let linkedit_end = linkedit.fileoff.saturating_add(linkedit.filesize);
    if dataoff < linkedit.fileoff || linkedit_end != sig_end {
        return Err(format!(
            "signature {dataoff}..{sig_end} is not at the end of __LINKEDIT {}..{linkedit_end}",
            linkedit.fileoff
        ));
    }
    if linkedit.vmsize < linkedit.filesize {
        return Err("__LINKEDIT vmsize is below its filesize".into());
    }
    // dyld refuses __LINKEDIT contents that overlap or leave the segment.
    if let Some((symoff, symlen, stroff, strsize)) = symtab {
        for (what, at, n) in [
            ("symbol table", symoff, symlen),
            ("string table", stroff, strsize),
        ] {
            if n > 0 && (at < linkedit.fileoff || at + n > dataoff) {
                return Err(format!(
                    "{what} {at}+{n} is not inside __LINKEDIT before the signature ({dataoff})"
                ));
            }
        }
    }
    for s in &segs {
        if s.name != "__LINKEDIT" && s.fileoff.saturating_add(s.filesize) > linkedit.fileoff {
            return Err(format!("segment {} reaches into __LINKEDIT", s.name));
        }
    }

    // The signature: a SuperBlob (magic, length, count, then count
    // {type, offset} entries), all big-endian.
    let blob = View {
        bytes: &file[dataoff as usize..],
        name: "code signature",
    };
    if blob.be32(0)? != 0xfade_0cc0 {
        return Err(format!("SuperBlob magic {:#x}", blob.be32(0)?));
    }
    let sb_len = u64::from(blob.be32(4)?);
    if sb_len > datasize {
        return Err(format!("SuperBlob length {sb_len} > datasize {datasize}"));
    }
    let superblob = View {
        bytes: blob.take(0, sb_len)?,
        name: "SuperBlob",
    };
    let count = superblob.be32(8)?;
    let mut cd_at = None;
    for k in 0..u64::from(count) {
        let slot = superblob.be32(12 + 8 * k)?;
        let at = superblob.be32(16 + 8 * k)?;
        if slot == 0 {
            cd_at = Some(u64::from(at));
        }
    }
    let cd_at = cd_at.ok_or("no CodeDirectory (slot 0) in the SuperBlob")?;
    if superblob.be32(cd_at)? != 0xfade_0c02 {
        return Err("slot 0 is not a CodeDirectory".into());
    }
    let cd_len = u64::from(superblob.be32(cd_at + 4)?);
    let cd = View {
        bytes: superblob.take(cd_at, cd_len)?,
        name: "CodeDirectory",
    };
    let version = cd.be32(8)?;
    let flags = cd.be32(12)?;
    let hash_offset = u64::from(cd.be32(16)?);
    let ident_offset = u64::from(cd.be32(20)?);
    let n_code_slots = cd.be32(28)?;
    let code_limit32 = cd.be32(32)?;
    let hash_size = cd.byte(36)?;
    let hash_type = cd.byte(37)?;
    let platform = cd.byte(38)?;
    let page_shift = cd.byte(39)?;
    let n_special_slots = u64::from(cd.be32(24)?);
    let scatter_offset = cd.be32(44)?;
    let team_offset = cd.be32(48)?;
    // As the kernel's cs_validate_codedirectory: the special slots' hashes
    // sit before hashOffset; no scatter vector (none is written); a team id,
    // if any, is a NUL-terminated string inside the CodeDirectory.
    if n_special_slots * 32 > hash_offset {
        return Err(format!(
            "{n_special_slots} special slots do not fit before hashOffset {hash_offset}"
        ));
    }
    if scatter_offset != 0 || platform != 0 {
        return Err(format!(
            "scatterOffset {scatter_offset}, platform {platform}: neither is expected"
        ));
    }
    if team_offset != 0 {
        // `take` checks the offset lies inside; the string must end inside.
        cd.take(u64::from(team_offset), 0)?;
        if !cd.bytes[team_offset as usize..].contains(&0) {
            return Err("team id is not NUL-terminated".into());
        }
    }
    if version < 0x20400 {
        return Err(format!("CodeDirectory version {version:#x} has no execSeg"));
    }
    if flags & 0x2 == 0 {
        return Err(format!("flags {flags:#x} lack CS_ADHOC"));
    }
    if hash_type != 2 || hash_size != 32 {
        return Err(format!(
            "hash type {hash_type} size {hash_size}, not SHA-256"
        ));
    }
    if !(12..=16).contains(&page_shift) {
        return Err(format!("page size 2^{page_shift}"));
    }
    let code_limit64 = cd.be64(56)?;
    let code_limit = if code_limit64 != 0 {
        code_limit64
    } else {
        u64::from(code_limit32)
    };
    if code_limit != dataoff {
        return Err(format!(
            "codeLimit {code_limit} != signature offset {dataoff}"
        ));
    }
    let page = 1u64 << page_shift;
    if u64::from(n_code_slots) != code_limit.div_ceil(page) {
        return Err(format!(
            "nCodeSlots {n_code_slots} for {code_limit} bytes in pages of {page}"
        ));
    }
    if (cd.be64(64)?, cd.be64(72)?) != (text.fileoff, text.filesize) {
        return Err("execSegBase/execSegLimit are not __TEXT's".into());
    }
    // MH_EXECUTE is the main binary: CS_EXECSEG_MAIN_BINARY.
    let exec_seg_flags = cd.be64(80)?;
    if (filetype == 2) != (exec_seg_flags & 1 == 1) {
        return Err(format!(
            "execSegFlags {exec_seg_flags:#x} for file type {filetype}"
        ));
    }
    let id_bytes = cd.take(ident_offset, cd_len.saturating_sub(ident_offset))?;
    let nul = id_bytes
        .iter()
        .position(|&c| c == 0)
        .ok_or("identifier is not NUL-terminated")?;
    let identifier = String::from_utf8(id_bytes[..nul].to_vec())
        .map_err(|_| "identifier is not UTF-8".to_string())?;

    let hashes = cd.take(hash_offset, u64::from(n_code_slots) * 32)?;
    for (n, expected) in hashes.chunks(32).enumerate() {
        let start = n as u64 * page;
        let end = (start + page).min(code_limit);
        let actual = Sha256::digest(&file[start as usize..end as usize]);
        if actual.as_slice() != expected {
            return Err(format!(
                "page {n} (bytes {start}..{end}) does not match its hash"
            ));
        }
    }
    Ok(Report {
        code_limit,
        code_slots: n_code_slots,
        page_size: page,
        identifier,
    })
}
