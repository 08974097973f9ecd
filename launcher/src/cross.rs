//! `pack --target TRIPLE --base FILE`: packing for another platform. The
//! component is compiled here for that target (Cranelift cross-compiles,
//! `lingxi_wasm_host::precompile_for`) and put on a base built for it
//! (`scripts/cross`). Such a base cannot be run here, so it is judged by
//! its bytes instead of a trial start: its executable format and
//! architecture must be the target's, and its mark (`identity`) must name
//! this version and the target; anything else would refuse the code at
//! every start, so it is refused now, with the reason.

use std::path::Path;

use anyhow::{Context, Result, bail};
use lingxi_wasm_host::pack;
use object::{Architecture, BinaryFormat, Object};

use lingxi_wasm_launcher::identity;

/// The targets `pack --target` builds for (the README's platform table).
pub const TARGETS: [&str; 5] = [
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-pc-windows-gnu",
    "aarch64-apple-darwin",
    "x86_64-apple-darwin",
];

/// Largest base read (a debug launcher is ~200 MB).
const MAX_BASE: u64 = 1 << 30;

/// A base for another platform, checked.
pub struct CrossBase {
    /// The bytes a payload follows.
    pub executable: Vec<u8>,
    /// What it is, for the header (`lingxi-wasm 0.1.0 for x86_64-pc-windows-gnu`).
    pub described: String,
}

/// The executable format and architecture of `target`'s executables.
fn expected(target: &str) -> Result<(BinaryFormat, Architecture)> {
    if !TARGETS.contains(&target) {
        bail!(
            "--target {target}: not a target lingxi-wasm builds for; use one of {}",
            TARGETS.join(", ")
        );
    }
    let format = if target.contains("-windows") {
        BinaryFormat::Pe
    } else if target.contains("-apple-") {
        BinaryFormat::MachO
    } else {
        BinaryFormat::Elf
    };
    let arch = if target.starts_with("aarch64") {
        Architecture::Aarch64
    } else {
        Architecture::X86_64
    };
    Ok((format, arch))
}

/// Reads and checks the base `path` for `target` (see the module docs).
pub fn base(target: &str, path: Option<&Path>) -> Result<CrossBase> {
    let (format, arch) = expected(target)?;
    let build = format!(
        "build one with `scripts/cross {target} DIR` and pass --base DIR/lingxi-wasm-rt{}",
        if format == BinaryFormat::Pe {
            ".exe"
        } else {
            ""
        }
    );
    let Some(path) = path else {
        bail!("--target {target} needs --base FILE, a base built for {target}: {build}");
    };
    let shown = path.display();
    let size = std::fs::metadata(path)
        .with_context(|| format!("--base {shown}: cannot read it"))?
        .len();
    if size > MAX_BASE {
        bail!("--base {shown}: {size} bytes is too large for a base; {build}");
    }
    let bytes = std::fs::read(path).with_context(|| format!("--base {shown}: cannot read it"))?;
    let file = object::File::parse(&*bytes)
        .map_err(|e| anyhow::anyhow!("--base {shown}: not an executable ({e}); {build}"))?;
    if (file.format(), file.architecture()) != (format, arch) {
        bail!(
            "--base {shown} is a {:?} executable for {:?}, not one for {target} ({format:?}, {arch:?}); {build}",
            file.format(),
            file.architecture()
        );
    }
    let Some(mark) = identity::find(&bytes) else {
        bail!("--base {shown} is not a lingxi-wasm base (it carries no base mark); {build}");
    };
    let ours = env!("CARGO_PKG_VERSION");
    if mark.version != ours || mark.target != target {
        bail!(
            "--base {shown} is lingxi-wasm {} for {}, but this launcher packs for lingxi-wasm {ours} on {target}: its engine would refuse the code; {build}",
            lingxi_wasm_host::printable(&mark.version),
            lingxi_wasm_host::printable(&mark.target)
        );
    }
    if pack::is_packed(&bytes) {
        bail!("--base {shown} is a packed plugin, not a plain base; {build}");
    }
    if let Err(e) = pack::check_base(&bytes) {
        bail!("--base {shown}: {e}");
    }
    Ok(CrossBase {
        executable: bytes,
        described: format!("lingxi-wasm {ours} for {target}"),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn targets_name_their_format_and_architecture() {
        use object::{Architecture, BinaryFormat};
        let cases = [
            (
                "x86_64-pc-windows-gnu",
                BinaryFormat::Pe,
                Architecture::X86_64,
            ),
            (
                "aarch64-apple-darwin",
                BinaryFormat::MachO,
                Architecture::Aarch64,
            ),
            (
                "x86_64-apple-darwin",
                BinaryFormat::MachO,
                Architecture::X86_64,
            ),
            (
                "aarch64-unknown-linux-gnu",
                BinaryFormat::Elf,
                Architecture::Aarch64,
            ),
        ];
        for (target, format, arch) in cases {
            assert_eq!(super::expected(target).unwrap(), (format, arch), "{target}");
        }
        let e = super::expected("riscv64gc-unknown-linux-gnu").unwrap_err();
        assert!(e.to_string().contains("x86_64-pc-windows-gnu"), "{e}");
    }
}
