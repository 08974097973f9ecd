//! Checking a package's signature: what its signed comment claims (plugin,
//! version, component, declared capabilities) against the file, then the
//! signature against the keys a user trusts.

use std::fmt;
use std::io::Cursor;

use lingxi_wasm_host::pack::{PackHeader, sha256_hex};
use lingxi_wasm_host::printable;
use minisign::SignatureBox;

use super::{MAX_SIGNATURE, Trust, key_id};

/// What the signature of a packed plugin says.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// No signature.
    Unsigned,
    /// Signed by a trusted key, and the signature holds. `capabilities`:
    /// the signature also covers the capabilities the plugin declares (an
    /// older signature covers only the plugin, version and component).
    Verified {
        key: String,
        name: String,
        capabilities: bool,
    },
    /// Signed by a key the user does not trust: nothing is proven.
    UnknownKey { key: String },
    /// A signature that is malformed, does not hold, or is for other bytes.
    Bad { reason: String },
}

impl Verdict {
    /// Whether the package may be installed under `--signed-only`.
    pub fn trusted(&self) -> bool {
        matches!(self, Verdict::Verified { .. })
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::Unsigned => write!(f, "unsigned"),
            Verdict::Verified {
                key,
                name,
                capabilities,
            } => {
                write!(f, "signed by key {key} ({}), verified", printable(name))?;
                if !*capabilities {
                    f.write_str(" (an older signature: it covers the component, not the capabilities it declares)")?;
                }
                Ok(())
            }
            Verdict::UnknownKey { key } => write!(
                f,
                "signed by key {key}, which you do not trust: not verified (trust it with --trust KEY.pub)"
            ),
            Verdict::Bad { reason } => write!(f, "BAD SIGNATURE: {reason}"),
        }
    }
}

/// Checks the signature in `header` against `component` and `trust`.
pub fn verify(trust: &Trust, header: &PackHeader, component: &[u8]) -> Verdict {
    let Some(text) = &header.signature else {
        return Verdict::Unsigned;
    };
    let signature = match parse(text) {
        Ok(signature) => signature,
        Err(verdict) => return verdict,
    };
    let bad = |reason: String| Verdict::Bad { reason };
    let key = key_id(signature.keynum());
    // What the signed comment claims is checked first, by anyone: a
    // signature that names another plugin, version or component is not one
    // of this file, whoever's key made it.
    let claims = Claims::of(&signature);
    let field = |name: &str| claims.field(name).unwrap_or_default();
    let (id, version, sha) = (field("plugin"), field("version"), field("component-sha256"));
    if id != header.plugin_id || version != header.plugin_version || sha != sha256_hex(component) {
        return bad(format!(
            "key {key} signed plugin {} {} (component sha256:{}), but this file holds {} {} (sha256:{})",
            printable(&id),
            printable(&version),
            printable(&sha),
            printable(&header.plugin_id),
            printable(&header.plugin_version),
            sha256_hex(component)
        ));
    }
    // A signature of the new format covers the declared capabilities: the
    // header's list and the manifest a packed start reads must both be
    // what was signed.
    let signed_capabilities = claims.field("capabilities");
    if let Some(signed) = &signed_capabilities {
        let sorted = |names: &mut Vec<String>| {
            names.sort();
            names.dedup();
            names.join(",")
        };
        let mut signed: Vec<String> = signed
            .split(',')
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect();
        let signed = sorted(&mut signed);
        let claims = [
            Some(header.declared.clone()),
            header.manifest.as_ref().map(|m| m.capabilities.clone()),
        ];
        for mut claim in claims.into_iter().flatten() {
            let claimed = sorted(&mut claim);
            if claimed != signed {
                return bad(format!(
                    "key {key} signed {} {} declaring capabilities [{}], but this file declares [{}]",
                    printable(&id),
                    printable(&version),
                    printable(&signed),
                    printable(&claimed)
                ));
            }
        }
    }
    by_trusted_key(trust, &signature, component, signed_capabilities.is_some())
}

/// The signature among `texts` (an artifact's signatures in a registry)
/// that a trusted key made of `component`, judged before the component is
/// ever run: the component digest it signed, and the key. What it claims
/// of the plugin (id, version, capabilities) is [`verify`]'s to check, once
/// the component is asked what it is. Without such a signature: the most
/// telling verdict of the others (an unknown key, else a bad one), and the
/// text of an unknown key's signature, kept for a later `--trust`.
pub fn choose(trust: &Trust, texts: &[String], component: &[u8]) -> (Option<String>, Verdict) {
    let mut unknown = None;
    let mut bad = None;
    for text in texts {
        let verdict = before_run(trust, text, component);
        match verdict {
            Verdict::Verified { .. } => return (Some(text.clone()), verdict),
            Verdict::UnknownKey { .. } if unknown.is_none() => {
                unknown = Some((Some(text.clone()), verdict))
            }
            Verdict::Bad { .. } if bad.is_none() => bad = Some((None, verdict)),
            _ => {}
        }
    }
    unknown.or(bad).unwrap_or((None, Verdict::Unsigned))
}

/// `text` judged against `component` alone: its signed component digest
/// and its key.
fn before_run(trust: &Trust, text: &str, component: &[u8]) -> Verdict {
    let signature = match parse(text) {
        Ok(signature) => signature,
        Err(verdict) => return verdict,
    };
    let claims = Claims::of(&signature);
    let sha = claims.field("component-sha256").unwrap_or_default();
    if sha != sha256_hex(component) {
        return Verdict::Bad {
            reason: format!(
                "key {} signed component sha256:{}, but this one is sha256:{}",
                key_id(signature.keynum()),
                printable(&sha),
                sha256_hex(component)
            ),
        };
    }
    by_trusted_key(
        trust,
        &signature,
        component,
        claims.field("capabilities").is_some(),
    )
}

/// A signature's text, read.
fn parse(text: &str) -> Result<SignatureBox, Verdict> {
    let bad = |reason: String| Verdict::Bad { reason };
    if text.len() > MAX_SIGNATURE {
        return Err(bad(format!(
            "{} bytes, more than a signature can be",
            text.len()
        )));
    }
    SignatureBox::from_string(text).map_err(|e| bad(format!("not a minisign signature ({e})")))
}

/// What a signature's signed comment says: `name=value` words.
struct Claims(String);

impl Claims {
    fn of(signature: &SignatureBox) -> Self {
        Claims(signature.trusted_comment().unwrap_or_default())
    }

    fn field(&self, name: &str) -> Option<String> {
        self.0
            .split(' ')
            .find_map(|part| part.strip_prefix(name)?.strip_prefix('='))
            .map(str::to_owned)
    }
}

/// Whether a key the user trusts made `signature` of `component`.
fn by_trusted_key(
    trust: &Trust,
    signature: &SignatureBox,
    component: &[u8],
    capabilities: bool,
) -> Verdict {
    let key = key_id(signature.keynum());
    // Key ids are not secret: every trusted key with this id is tried.
    let mut candidates = trust
        .keys
        .iter()
        .filter(|(k, _)| k.keynum() == signature.keynum())
        .peekable();
    if candidates.peek().is_none() {
        return Verdict::UnknownKey { key };
    }
    let mut failure = String::new();
    for (public, name) in candidates {
        match minisign::verify(
            public,
            signature,
            Cursor::new(component),
            true,
            false,
            false,
        ) {
            Ok(()) => {
                return Verdict::Verified {
                    key,
                    name: name.clone(),
                    capabilities,
                };
            }
            Err(e) => failure = e.to_string(),
        }
    }
    Verdict::Bad {
        reason: format!("key {key}: {failure}: the component is not what was signed"),
    }
}
