//! Whether what `install` is given may be installed, judged by its
//! signature before its component is ever run: a packed file's own, or the
//! signatures an artifact has in its registry.

use anyhow::{Result, bail};
use lingxi_wasm_host::pack;

use crate::packed::Signing;
use crate::signing::{self, Trust, Verdict};

/// The signature of a pulled component: one a trusted key made of it if
/// any; else refused with `signed_only`, or installed without one (an
/// unknown key's kept, for a later `--trust`).
pub(super) fn pulled_signature(
    name: &str,
    texts: &[String],
    component: &[u8],
    trust: &Trust,
    signed_only: bool,
) -> Result<Signing<'static>> {
    let (text, verdict) = signing::choose(trust, texts, component);
    match (&verdict, signed_only) {
        (Verdict::Unsigned, true) => bail!(
            "{name} has no signature in its registry, and --signed-only refuses it; the author attaches one with `lingxi-wasm-run push --sign KEY`"
        ),
        (Verdict::Bad { .. }, true) => {
            bail!("{name}: {verdict}, and --signed-only refuses it; nothing was installed or run")
        }
        (Verdict::Bad { .. }, false) => {
            eprintln!(
                "note: {name}: a signature in the registry does not hold ({verdict}); installing it as unsigned"
            )
        }
        _ => judge(name, &verdict, signed_only)?,
    }
    Ok(text.map_or(Signing::None, Signing::Keep))
}

/// The signature `input` brings, checked: a bad one is always refused; an
/// unsigned package or an unknown key only with `signed_only`.
pub(super) fn check_signature(
    input: &str,
    packed: Option<&pack::Packed>,
    trust: &Trust,
    signed_only: bool,
) -> Result<Signing<'static>> {
    let packed = match packed {
        Some(packed) => packed,
        // A bare component carries no signature.
        None if signed_only => bail!(
            "{input} is not a signed package, and --signed-only refuses it; install a file made by `pack --sign`"
        ),
        None => return Ok(Signing::None),
    };
    let verdict = signing::verify(trust, &packed.header, packed.component());
    judge(input, &verdict, signed_only)?;
    Ok(packed
        .header
        .signature
        .clone()
        .map_or(Signing::None, Signing::Keep))
}

/// Refuses `input` if its signature's `verdict` forbids installing it.
pub(super) fn judge(input: &str, verdict: &Verdict, signed_only: bool) -> Result<()> {
    match (verdict, signed_only) {
        (Verdict::Bad { .. }, _) => bail!(
            "{input}: {verdict}; it was not installed (the file was changed after it was signed, or signed for another plugin)"
        ),
        (verdict, _) if verdict.trusted() => {}
        (_, true) => bail!(
            "{input} is {verdict}, and --signed-only refuses it; pass the author's public key with --trust KEY.pub (or add it to {}), or drop --signed-only",
            signing::default_keys_file()
                .map(|f| f.display().to_string())
                .unwrap_or_else(|| "--trusted-keys FILE".into())
        ),
        (_, false) => eprintln!("note: {input}: {verdict}"),
    }
    Ok(())
}
