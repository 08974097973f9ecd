//! What a base (`lingxi-wasm-run`, `lingxi-wasm-rt`) says of itself in its
//! own bytes: `pack --target` builds on a base made for another platform,
//! which cannot be run here to ask it, so the base carries a mark naming
//! the version of lingxi-wasm (and so of wasmtime, pinned per version) and
//! the target it was built for. Precompiled code is made by this version's
//! engine configuration for that target; a base of another version or
//! target would refuse it at every start, so `pack` refuses it first.

/// Starts the mark, as it stands in a base's bytes.
pub const MARK_START: &[u8] = b"\0LINGXI-WASM-BASE/1 ";

/// The mark: `MARK_START`, `lingxi-wasm VERSION TARGET`, a NUL.
pub static MARK: &str = concat!(
    "\0LINGXI-WASM-BASE/1 lingxi-wasm ",
    env!("CARGO_PKG_VERSION"),
    " ",
    env!("LINGXI_WASM_TARGET"),
    "\0"
);

/// The target triple this build is for (`x86_64-pc-windows-gnu`).
pub const TARGET: &str = env!("LINGXI_WASM_TARGET");

/// Keeps the mark in the executable: called at every start (a static that
/// nothing reads may be dropped by the linker).
pub fn keep() {
    std::hint::black_box(MARK.as_ptr());
}

/// What a mark says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// The lingxi-wasm version (`0.1.0`).
    pub version: String,
    /// The target triple.
    pub target: String,
}

/// Finds the mark in an executable's bytes (the first whole one: the
/// bytes of `MARK_START` alone may stand elsewhere too).
pub fn find(bytes: &[u8]) -> Option<Mark> {
    memchr::memmem::find_iter(bytes, MARK_START)
        .find_map(|at| parse(&bytes[at + MARK_START.len()..]))
}

/// The mark whose text starts `rest`.
fn parse(rest: &[u8]) -> Option<Mark> {
    let end = memchr::memchr(0, &rest[..rest.len().min(256)])?;
    let text = std::str::from_utf8(&rest[..end]).ok()?;
    let mut words = text.split(' ');
    match (words.next(), words.next(), words.next(), words.next()) {
        (Some("lingxi-wasm"), Some(version), Some(target), None) => Some(Mark {
            version: version.to_owned(),
            target: target.to_owned(),
        }),
        _ => None,
    }
}

/// The file name of an executable for `target` (a Rust target triple, e.g.
/// `x86_64-pc-windows-gnu`): `name.exe` for Windows targets.
pub fn exe_name_for(name: &str, target: &str) -> String {
    if target.contains("-windows") {
        format!("{name}.exe")
    } else {
        name.to_owned()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn windows_executables_end_in_exe() {
        assert_eq!(super::exe_name_for("p", "x86_64-pc-windows-gnu"), "p.exe");
        assert_eq!(super::exe_name_for("p", "aarch64-apple-darwin"), "p");
        assert_eq!(super::exe_name_for("p", "aarch64-unknown-linux-gnu"), "p");
    }

    #[test]
    fn a_mark_is_found_where_it_stands() {
        let mut bytes = b"\x7fELF....".to_vec();
        bytes.extend_from_slice(super::MARK_START);
        bytes.extend_from_slice(b"other data\0");
        bytes.extend_from_slice(super::MARK.as_bytes());
        bytes.extend_from_slice(b"more");
        let mark = super::find(&bytes).unwrap();
        assert_eq!(mark.version, env!("CARGO_PKG_VERSION"));
        assert_eq!(mark.target, super::TARGET);
        assert_eq!(super::find(b"no mark here"), None);
        assert_eq!(super::find(b"\0LINGXI-WASM-BASE/1 lingxi-wasm 1"), None);
    }
}
