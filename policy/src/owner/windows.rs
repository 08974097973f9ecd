//! [`super::access`] on Windows: the owner SID and the DACL of the file,
//! read with `GetNamedSecurityInfoW`, judged against this process's user.

use std::os::windows::ffi::OsStrExt;
use std::path::Path;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, GetNamedSecurityInfoW, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    ACCESS_ALLOWED_ACE, ACE_HEADER, ACL, DACL_SECURITY_INFORMATION, GetAce, GetTokenInformation,
    INHERIT_ONLY_ACE, OWNER_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID, TOKEN_OWNER,
    TOKEN_QUERY, TOKEN_USER, TokenOwner, TokenUser,
};
use windows_sys::Win32::System::SystemServices::ACCESS_ALLOWED_ACE_TYPE;
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

use super::{Access, Owner};

/// Principals that can change any file anyway: `SYSTEM`, `Administrators`,
/// `TrustedInstaller`.
const SYSTEM_SIDS: [&str; 3] = [
    "S-1-5-18",
    "S-1-5-32-544",
    "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464",
];

// Access rights (winnt.h). For a folder, READ_DATA lists it, WRITE_DATA
// adds a file and APPEND_DATA a subfolder.
const FILE_READ_DATA: u32 = 0x0001;
const FILE_WRITE_DATA: u32 = 0x0002;
const FILE_APPEND_DATA: u32 = 0x0004;
const FILE_WRITE_EA: u32 = 0x0010;
const FILE_DELETE_CHILD: u32 = 0x0040;
const FILE_WRITE_ATTRIBUTES: u32 = 0x0100;
const DELETE: u32 = 0x0001_0000;
const WRITE_DAC: u32 = 0x0004_0000;
const WRITE_OWNER: u32 = 0x0008_0000;
const GENERIC_ALL: u32 = 0x1000_0000;
const GENERIC_WRITE: u32 = 0x4000_0000;
const GENERIC_READ: u32 = 0x8000_0000;
/// Rights that let their holder read what it holds.
const READS_IT: u32 = FILE_READ_DATA | GENERIC_READ | GENERIC_ALL;
/// Rights that let their holder change the object itself.
const CHANGES_IT: u32 = FILE_WRITE_DATA
    | FILE_APPEND_DATA
    | FILE_WRITE_EA
    | FILE_DELETE_CHILD
    | FILE_WRITE_ATTRIBUTES
    | DELETE
    | WRITE_DAC
    | WRITE_OWNER
    | GENERIC_ALL
    | GENERIC_WRITE;
/// Rights that let their holder remove or rename a folder's entries (or
/// give themselves that right). Adding entries does not: like a folder
/// with the sticky bit, `C:\` lets every user add folders, not rename
/// those of others.
const RENAMES_ENTRIES: u32 = FILE_DELETE_CHILD | WRITE_DAC | WRITE_OWNER | GENERIC_ALL;

/// Frees what the security functions allocate with `LocalAlloc`.
struct Local(*mut core::ffi::c_void);

impl Drop for Local {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the pointer came from a function documented to return
            // memory to be freed with LocalFree, and is freed only here.
            unsafe { LocalFree(self.0) };
        }
    }
}

pub(super) fn access(path: &Path) -> std::io::Result<Access> {
    let me = CurrentUser::get()?;
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    let mut owner: PSID = std::ptr::null_mut();
    let mut dacl: *mut ACL = std::ptr::null_mut();
    let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: `wide` is NUL-terminated; the out-pointers are valid; `owner`
    // and `dacl` point into `descriptor`, which stays allocated until
    // `_descriptor` drops at the end of this function.
    let status = unsafe {
        GetNamedSecurityInfoW(
            wide.as_ptr(),
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
            &mut owner,
            std::ptr::null_mut(),
            &mut dacl,
            std::ptr::null_mut(),
            &mut descriptor,
        )
    };
    let _descriptor = Local(descriptor);
    if status != 0 {
        return Err(std::io::Error::from_raw_os_error(status as i32));
    }
    let owner_sid = sid_string(owner)?;
    let owner = if me.is(&owner_sid) {
        Owner::Me
    } else if SYSTEM_SIDS.contains(&owner_sid.as_str()) {
        Owner::System
    } else {
        Owner::Other(owner_sid)
    };
    if dacl.is_null() {
        // No DACL: everyone may do everything.
        return Ok(Access {
            owner,
            others_may_write: true,
            others_may_rename_entries: true,
            others_may_read: true,
        });
    }
    let mut rights = 0u32;
    // SAFETY: `dacl` is a valid ACL inside `descriptor`.
    let count = unsafe { (*dacl).AceCount };
    for index in 0..u32::from(count) {
        let mut ace: *mut core::ffi::c_void = std::ptr::null_mut();
        // SAFETY: index < AceCount; GetAce points `ace` into the ACL.
        if unsafe { GetAce(dacl, index, &mut ace) } == 0 || ace.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: every ACE starts with an ACE_HEADER.
        let header = unsafe { *(ace as *const ACE_HEADER) };
        if u32::from(header.AceType) != ACCESS_ALLOWED_ACE_TYPE
            || u32::from(header.AceFlags) & INHERIT_ONLY_ACE != 0
        {
            // Deny ACEs only take rights away; inherit-only ones apply to
            // what the folder will hold, not to it.
            continue;
        }
        let allowed = ace as *const ACCESS_ALLOWED_ACE;
        // SAFETY: an ACCESS_ALLOWED_ACE: its SID starts at SidStart.
        let (mask, sid) = unsafe { ((*allowed).Mask, &raw const (*allowed).SidStart) };
        let sid = sid_string(sid as PSID)?;
        if !me.is(&sid) && !SYSTEM_SIDS.contains(&sid.as_str()) {
            rights |= mask;
        }
    }
    Ok(Access {
        owner,
        others_may_write: rights & CHANGES_IT != 0,
        others_may_rename_entries: rights & RENAMES_ENTRIES != 0,
        others_may_read: rights & READS_IT != 0,
    })
}

/// This process's user and the owner its new files get (an elevated
/// administrator's files belong to `Administrators`).
struct CurrentUser {
    user: String,
    default_owner: String,
}

impl CurrentUser {
    fn get() -> std::io::Result<CurrentUser> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: the pseudo-handle of this process; `token` is valid out.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
            return Err(std::io::Error::last_os_error());
        }
        let read = |class| token_sid(token, class);
        let found = read(TokenUser).and_then(|user| {
            let default_owner = read(TokenOwner)?;
            Ok(CurrentUser {
                user,
                default_owner,
            })
        });
        // SAFETY: `token` was opened above and is closed once.
        unsafe { CloseHandle(token) };
        found
    }

    fn is(&self, sid: &str) -> bool {
        sid == self.user || sid == self.default_owner
    }
}

/// The SID a token holds for `class` (`TokenUser` or `TokenOwner`).
fn token_sid(
    token: HANDLE,
    class: windows_sys::Win32::Security::TOKEN_INFORMATION_CLASS,
) -> std::io::Result<String> {
    let mut len = 0u32;
    // SAFETY: asks for the size only (no buffer).
    unsafe { GetTokenInformation(token, class, std::ptr::null_mut(), 0, &mut len) };
    // u64 words: aligned for the structures below.
    let mut buffer = vec![0u64; (len as usize).div_ceil(8).max(1)];
    // SAFETY: `buffer` holds `len` bytes or more.
    let ok =
        unsafe { GetTokenInformation(token, class, buffer.as_mut_ptr().cast(), len, &mut len) };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: TokenUser fills a TOKEN_USER, TokenOwner a TOKEN_OWNER; the
    // SIDs they point to live in `buffer`, read before it is dropped.
    let sid = unsafe {
        if class == TokenUser {
            (*(buffer.as_ptr() as *const TOKEN_USER)).User.Sid
        } else {
            (*(buffer.as_ptr() as *const TOKEN_OWNER)).Owner
        }
    };
    sid_string(sid)
}

/// A SID as text (`S-1-5-18`).
fn sid_string(sid: PSID) -> std::io::Result<String> {
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: `sid` is a valid SID; `text` receives a LocalAlloc'd string.
    if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    let _text = Local(text.cast());
    // SAFETY: a NUL-terminated UTF-16 string.
    let len = (0..).take_while(|&i| unsafe { *text.add(i) } != 0).count();
    // SAFETY: `len` units before the NUL are readable.
    let units = unsafe { std::slice::from_raw_parts(text, len) };
    Ok(String::from_utf16_lossy(units))
}
