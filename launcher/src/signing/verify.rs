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
    let bad = |reason: String| Verdict::Bad { reason };
    if text.len() > MAX_SIGNATURE {
        return bad(format!(
            "{} bytes, more than a signature can be",
            text.len()
        ));
    }
    let signature = match SignatureBox::from_string(text) {
        Ok(s) => s,
        Err(e) => return bad(format!("not a minisign signature ({e})")),
    };
    let key = key_id(signature.keynum());
    // What the signed comment claims is checked first, by anyone: a
    // signature that names another plugin, version or component is not one
    // of this file, whoever's key made it.
    let comment = signature.trusted_comment().unwrap_or_default();
    let present = |name: &str| {
        comment
            .split(' ')
            .find_map(|part| part.strip_prefix(name)?.strip_prefix('='))
            .map(str::to_owned)
    };
    let field = |name: &str| present(name).unwrap_or_default();
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
    let signed_capabilities = present("capabilities");
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
            &signature,
            Cursor::new(component),
            true,
            false,
            false,
        ) {
            Ok(()) => {
                return Verdict::Verified {
                    key,
                    name: name.clone(),
                    capabilities: signed_capabilities.is_some(),
                };
            }
            Err(e) => failure = e.to_string(),
        }
    }
    bad(format!(
        "key {key}: {failure}: the component is not what was signed"
    ))
}
