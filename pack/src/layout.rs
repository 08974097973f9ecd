//! Where a payload sits in each executable format: appended after the
//! image in ELF (Linux) and PE (Windows) files, so the trailer ends the
//! file; inside `__LINKEDIT` in Mach-O (macOS) files, before an ad hoc
//! signature that covers it ([`super::macho`]), so the trailer ends where
//! the signature starts.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use super::macho;
use super::{MAGIC, TRAILER_LEN};

/// Most of a file's start read to find a Mach-O's load commands.
const MAX_COMMANDS: u64 = 1 << 20;

/// Where a Mach-O's signature starts, if `prefix` (the start of a file of
/// `size` bytes) is one with a signature inside the file.
fn signature_start(prefix: &[u8], size: u64) -> Option<u64> {
    macho::signed_end(prefix)
        .ok()
        .flatten()
        .filter(|end| (TRAILER_LEN..=size).contains(end))
}

/// Where the trailer of an open file of `size` bytes ends: right before a
/// Mach-O's signature if a trailer stands there, else at the end.
pub(super) fn file_trailer_end(file: &mut File, size: u64) -> io::Result<u64> {
    let mut prefix = Vec::new();
    file.seek(SeekFrom::Start(0))?;
    file.by_ref()
        .take(MAX_COMMANDS.min(size))
        .read_to_end(&mut prefix)?;
    let Some(end) = signature_start(&prefix, size) else {
        return Ok(size);
    };
    let mut magic = [0u8; 16];
    file.seek(SeekFrom::Start(end - TRAILER_LEN))?;
    file.read_exact(&mut magic)?;
    Ok(if magic == *MAGIC { end } else { size })
}

/// The same for a whole file's bytes.
pub(super) fn bytes_trailer_end(bytes: &[u8]) -> u64 {
    let size = bytes.len() as u64;
    let prefix = &bytes[..bytes.len().min(MAX_COMMANDS as usize)];
    signature_start(prefix, size)
        .filter(|end| {
            let at = (end - TRAILER_LEN) as usize;
            bytes.get(at..at + 16) == Some(&MAGIC[..])
        })
        .unwrap_or(size)
}

/// How a payload is laid onto a base.
pub(super) struct Placement<'a> {
    /// The bytes the payload follows.
    pub(super) base: &'a [u8],
    /// Whether the file is a Mach-O to seal once the trailer is written.
    pub(super) macho: bool,
}

impl<'a> Placement<'a> {
    /// The placement on `base`: a Mach-O loses its old signature.
    pub(super) fn on(base: &'a [u8]) -> Result<Self, macho::MachoError> {
        if macho::is_macho(base) {
            return Ok(Placement {
                base: macho::unsigned_part(base)?,
                macho: true,
            });
        }
        Ok(Placement { base, macho: false })
    }

    /// Zero bytes to put after the last blob so that the file with its
    /// trailer is `payload` bytes past the base and ends where a Mach-O
    /// signature may start (none elsewhere).
    pub(super) fn tail(&self, payload: usize) -> usize {
        if !self.macho {
            return 0;
        }
        let end = self.base.len() + payload + TRAILER_LEN as usize;
        end.next_multiple_of(macho::SIGNATURE_ALIGN) - end
    }

    /// The finished file: a Mach-O is signed over every byte.
    pub(super) fn finish(&self, file: Vec<u8>, id: &str) -> Result<Vec<u8>, macho::MachoError> {
        if self.macho {
            macho::seal(file, id)
        } else {
            Ok(file)
        }
    }
}
