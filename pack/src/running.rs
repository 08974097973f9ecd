//! That the file a packed start read is the one this process runs, on
//! platforms where it is read by path (not Linux: it maps `/proc/self/exe`,
//! which is the running file). Its header decides which code runs, so a file
//! put at that path after the start must not be taken for it.
//!
//! - macOS: the kernel holds the CodeDirectory the process was started
//!   with; its hash (`csops(CS_OPS_CDHASH)`) must be the hash of the
//!   file's CodeDirectory, and the pages of the file that hold the header
//!   and the trailer must match that directory's page hashes. (The code
//!   is then checked against the header's digest as everywhere.)
//! - Windows: the file is held open so that nobody can write, rename or
//!   delete it while it is read, and its final path must be the path of
//!   the image this process maps (`GetMappedFileNameW`): a running
//!   executable moved away and replaced shows under its new name.

use std::path::Path;

/// Which bytes of the file a start relies on, besides its code: the header
/// and the trailer (file offsets, end exclusive).
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub(crate) struct Relied {
    /// The header, with its length prefix.
    pub(crate) header: std::ops::Range<u64>,
    /// The trailer.
    pub(crate) trailer: std::ops::Range<u64>,
}

/// Checks that `file`, opened by the running executable's path before it is
/// read, is the running executable (Windows; elsewhere [`check`] does).
pub(crate) fn check_open(file: &std::fs::File) -> Result<(), String> {
    #[cfg(windows)]
    return windows::check_open(file);
    #[cfg(not(windows))]
    {
        let _ = file;
        Ok(())
    }
}

/// Checks that `path`, read for a start, is the running executable.
pub(crate) fn check(path: &Path, relied: &Relied) -> Result<(), String> {
    #[cfg(target_os = "macos")]
    return macos::check(path, relied);
    #[cfg(not(target_os = "macos"))]
    {
        let _ = (path, relied);
        Ok(())
    }
}

#[cfg(target_os = "macos")]
mod macos {
    use std::io::{Read, Seek, SeekFrom};
    use std::path::Path;

    use sha2::{Digest, Sha256};

    use super::Relied;
    use crate::macho;

    /// `CS_OPS_CDHASH`: the running code's CodeDirectory hash (20 bytes).
    const CS_OPS_CDHASH: u32 = 5;
    const SUPERBLOB: u32 = 0xfade_0cc0;
    const CODE_DIRECTORY: u32 = 0xfade_0c02;
    const SHA256: u8 = 2;
    /// Largest signature read.
    const MAX_SIGNATURE: u64 = 16 << 20;

    unsafe extern "C" {
        /// libSystem's code-signing query.
        fn csops(pid: i32, ops: u32, useraddr: *mut u8, usersize: usize) -> i32;
    }

    fn be32(b: &[u8], at: usize) -> Option<u32> {
        Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
    }

    pub(super) fn check(path: &Path, relied: &Relied) -> Result<(), String> {
        let io = |e: std::io::Error| format!("cannot read it again: {e}");
        let mut file = std::fs::File::open(path).map_err(io)?;
        let mut prefix = Vec::new();
        (&mut file)
            .take(1 << 20)
            .read_to_end(&mut prefix)
            .map_err(io)?;
        let (off, size) = macho::signature(&prefix)
            .map_err(|e| e.to_string())?
            .ok_or("it has no code signature")?;
        if size > MAX_SIGNATURE {
            return Err(format!("its code signature of {size} bytes is too large"));
        }
        let mut signature = vec![0u8; size as usize];
        file.seek(SeekFrom::Start(off)).map_err(io)?;
        file.read_exact(&mut signature).map_err(io)?;
        let directory = code_directory(&signature).ok_or("its code signature is unreadable")?;
        let mut running = [0u8; 20];
        // SAFETY: csops writes at most `running.len()` bytes into it.
        let status = unsafe {
            csops(
                std::process::id() as i32,
                CS_OPS_CDHASH,
                running.as_mut_ptr(),
                running.len(),
            )
        };
        if status != 0 {
            return Err("the system does not say which code this process runs".into());
        }
        if Sha256::digest(directory)[..20] != running {
            return Err("its code signature is not the one this process was started with".into());
        }
        let hash_offset = be32(directory, 16).ok_or("short CodeDirectory")? as usize;
        let slots = be32(directory, 28).ok_or("short CodeDirectory")? as u64;
        let limit = be32(directory, 32).ok_or("short CodeDirectory")? as u64;
        let (hash_size, hash_type, page_shift) = match directory.get(36..40) {
            Some(&[size, kind, _, shift]) => (size as usize, kind, shift),
            _ => return Err("short CodeDirectory".into()),
        };
        if hash_type != SHA256 || hash_size != 32 || !(9..=16).contains(&page_shift) {
            return Err("its CodeDirectory is not SHA-256 with pages this checks".into());
        }
        let page = 1u64 << page_shift;
        for range in [&relied.header, &relied.trailer] {
            if range.end > limit {
                return Err("its payload lies outside its code signature".into());
            }
            for index in range.start / page..range.end.div_ceil(page) {
                if index >= slots {
                    return Err("its payload lies outside its code signature".into());
                }
                let start = index * page;
                let len = page.min(limit - start) as usize;
                let mut bytes = vec![0u8; len];
                file.seek(SeekFrom::Start(start)).map_err(io)?;
                file.read_exact(&mut bytes).map_err(io)?;
                let at = hash_offset + index as usize * hash_size;
                let expected = directory
                    .get(at..at + hash_size)
                    .ok_or("short CodeDirectory")?;
                if Sha256::digest(&bytes)[..] != *expected {
                    return Err(format!("its page {index} is not what its signature says"));
                }
            }
        }
        Ok(())
    }

    /// The CodeDirectory blob in a SuperBlob.
    fn code_directory(signature: &[u8]) -> Option<&[u8]> {
        if be32(signature, 0)? != SUPERBLOB {
            return None;
        }
        let count = be32(signature, 8)? as usize;
        (0..count.min(64)).find_map(|i| {
            let kind = be32(signature, 12 + i * 8)?;
            let at = be32(signature, 16 + i * 8)? as usize;
            if kind != 0 || be32(signature, at)? != CODE_DIRECTORY {
                return None;
            }
            let len = be32(signature, at + 4)? as usize;
            signature.get(at..at.checked_add(len)?)
        })
    }
}

#[cfg(windows)]
mod windows {
    use std::os::windows::io::AsRawHandle;

    use windows_sys::Win32::Storage::FileSystem::{
        BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
    };
    use windows_sys::Win32::System::LibraryLoader::GetModuleHandleW;
    use windows_sys::Win32::System::ProcessStatus::GetMappedFileNameW;
    use windows_sys::Win32::System::Threading::GetCurrentProcess;

    /// Longest NT path read (UTF-16 units).
    const MAX_PATH_UNITS: usize = 32 * 1024;

    /// The volume and file index of an open file: equal for two handles
    /// exactly when they are the same file.
    fn identity(file: &std::fs::File) -> Result<(u32, u32, u32), String> {
        // SAFETY: zeroed plain data, filled in by the call.
        let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: a valid open handle and a valid out-pointer.
        if unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) } == 0 {
            return Err(format!(
                "cannot tell which file it is: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok((
            info.dwVolumeSerialNumber,
            info.nFileIndexHigh,
            info.nFileIndexLow,
        ))
    }

    /// The file this process's image is mapped from, opened by the name the
    /// system gives it now (a file moved away shows under its new name).
    fn image_file() -> Result<std::fs::File, String> {
        let mut mapped = vec![0u16; MAX_PATH_UNITS];
        // SAFETY: the module handle of this process's executable (never
        // freed); the buffer holds `mapped.len()` units.
        let len = unsafe {
            let image = GetModuleHandleW(std::ptr::null());
            GetMappedFileNameW(
                GetCurrentProcess(),
                image.cast_const(),
                mapped.as_mut_ptr(),
                mapped.len() as u32,
            )
        } as usize;
        if len == 0 || len >= mapped.len() {
            return Err(format!(
                "cannot tell which file this process runs: {}",
                std::io::Error::last_os_error()
            ));
        }
        let name = String::from_utf16_lossy(&mapped[..len]);
        // An NT name, as a Win32 path: `\??\C:\…` (Wine) or
        // `\Device\HarddiskVolume2\…` (Windows).
        let path = match name.strip_prefix("\\??\\") {
            Some(rest) => format!("\\\\?\\{rest}"),
            None if name.starts_with('\\') => format!("\\\\?\\GLOBALROOT{name}"),
            None => name.clone(),
        };
        std::fs::File::open(&path)
            .map_err(|e| format!("cannot open {name}, which this process runs: {e}"))
    }

    pub(super) fn check_open(file: &std::fs::File) -> Result<(), String> {
        if identity(file)? != identity(&image_file()?)? {
            return Err("it is another file than the one this process runs".into());
        }
        Ok(())
    }
}
