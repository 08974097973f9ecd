//! Which files are read as plugins, and what a file is when it is plainly
//! not a component: a FIFO or a device is never read (it would block or
//! never end), nothing over the plugin-file limit is, and a packed plugin,
//! a core module, a native executable or a text file is named as such
//! before the engine is asked.

use std::path::Path;

use crate::error::LoadError;
use crate::limits::MAX_PLUGIN_FILE;

/// The bytes of plugin file `path`: a regular file, read up to the limit
/// of a plugin file whatever size it reports (a file under `/proc` may say
/// 0 and never end).
pub fn read_plugin_file(path: &Path) -> Result<Vec<u8>, LoadError> {
    use std::io::Read;
    regular_file(path)?;
    let error = |source| LoadError::Read {
        path: path.to_owned(),
        source,
    };
    // Opened without blocking (a FIFO put in its place after the check
    // above would block an open), then checked again on the open file.
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(error)?;
    if !file.metadata().map_err(error)?.is_file() {
        return Err(error(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, socket or device is never read)",
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_PLUGIN_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(error)?;
    if bytes.len() as u64 > MAX_PLUGIN_FILE {
        return Err(error(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("more than the {MAX_PLUGIN_FILE}-byte limit of a plugin file"),
        )));
    }
    Ok(bytes)
}

/// Refuses what must not be read as a plugin file: anything but a regular
/// file (a FIFO would block the reader forever, a device never end) and
/// files over [`MAX_PLUGIN_FILE`].
pub(crate) fn regular_file(path: &Path) -> Result<(), LoadError> {
    let refuse = |why: String| LoadError::Read {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, why),
    };
    let meta = std::fs::metadata(path).map_err(|source| LoadError::Read {
        path: path.to_owned(),
        source,
    })?;
    if meta.is_dir() {
        return Err(refuse("it is a directory, not a plugin file".into()));
    }
    if !meta.is_file() {
        return Err(refuse(
            "not a regular file (a FIFO, socket or device is never read)".into(),
        ));
    }
    if meta.len() > MAX_PLUGIN_FILE {
        return Err(refuse(format!(
            "{} bytes, more than the {MAX_PLUGIN_FILE}-byte limit of a plugin file",
            meta.len()
        )));
    }
    Ok(())
}

/// What `bytes` are if they are plainly not a component, from their first
/// bytes; `None` when they start like one (the engine says the rest).
pub(super) fn not_a_component(bytes: &[u8]) -> Option<std::borrow::Cow<'static, str>> {
    if !bytes.starts_with(b"\0asm") && crate::pack::has_trailer(bytes) {
        return Some(match crate::policy::wording::wording().program() {
            Some(program) => {
                format!("a packed plugin (run it directly, or `{program} inspect` / `call` it)")
                    .into()
            }
            None => "a packed plugin (run it directly)".into(),
        });
    }
    plain_kind(bytes).map(std::borrow::Cow::Borrowed)
}

/// What `bytes` are, from their first bytes, if not a component.
fn plain_kind(bytes: &[u8]) -> Option<&'static str> {
    const COMPONENT: [u8; 8] = *b"\0asm\x0d\0\x01\0";
    match bytes {
        [] => Some("an empty file"),
        _ if bytes.starts_with(&COMPONENT) => None,
        _ if bytes.starts_with(b"\0asm\x01\0\0\0") => {
            Some("a core WebAssembly module (built for wasm32-wasip1 or wasm32-unknown-unknown?)")
        }
        _ if bytes.starts_with(b"\0asm") => {
            Some("WebAssembly of a version this engine does not read")
        }
        _ if bytes.starts_with(b"\x7fELF") => Some(
            "a native ELF executable or library (built for the host? a packed plugin is run directly, or read with `inspect`)",
        ),
        _ if bytes.starts_with(b"MZ") => Some("a Windows executable"),
        [0xcf | 0xce, 0xfa, 0xed, 0xfe, ..] | [0xca, 0xfe, 0xba, 0xbe, ..] => {
            Some("a macOS executable")
        }
        _ if std::str::from_utf8(&bytes[..bytes.len().min(1024)]).is_ok()
            && !bytes[..bytes.len().min(1024)].contains(&0) =>
        {
            Some("a text file")
        }
        _ => Some("not WebAssembly (it does not start with the \\0asm magic)"),
    }
}
