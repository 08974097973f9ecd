//! What `oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:HEX]` names, checked as
//! the OCI distribution spec and the docker reference grammar write it, and
//! refused with the part that is wrong. A reference never names a local
//! file: a command line tells the two apart by the `oci://` prefix alone.

use std::fmt;

use crate::digest::Digest;
use crate::error::RegistryError;

/// The prefix that makes a command-line plugin argument a registry
/// reference instead of a file.
pub const SCHEME: &str = "oci://";

/// The tag a reference without a tag or a digest means, as wkg, oras and
/// docker read it.
pub const DEFAULT_TAG: &str = "latest";

/// Longest repository name (the docker reference grammar's limit).
const MAX_REPOSITORY: usize = 255;
/// Longest tag (the distribution spec's).
const MAX_TAG: usize = 128;
/// Longest registry host and port.
const MAX_REGISTRY: usize = 253 + 6;

/// An artifact in a registry: where it is and which version of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    registry: String,
    repository: String,
    tag: Option<String>,
    digest: Option<Digest>,
}

impl Reference {
    /// Whether a command-line argument is a registry reference rather than
    /// a path.
    pub fn is_reference(argument: &str) -> bool {
        // Any case: `OCI://…` is a mistyped reference, refused as one (and
        // never read as a path, which an error would show whole).
        argument
            .get(..SCHEME.len())
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case(SCHEME))
    }

    /// Parses `oci://HOST[:PORT]/REPOSITORY[:TAG][@sha256:HEX]`.
    pub fn parse(text: &str) -> Result<Self, RegistryError> {
        // `oci://USER:PASSWORD@HOST/…`: credentials do not go in a
        // reference (it is shown, logged and recorded), and the text before
        // the `@` is not repeated.
        // Whatever comes before an `@` that is not a final digest's is taken
        // for credentials (a password may hold a `/`), whatever the
        // scheme's case.
        let rest = text
            .get(..SCHEME.len())
            .filter(|scheme| scheme.eq_ignore_ascii_case(SCHEME))
            .and_then(|_| text.get(SCHEME.len()..));
        if let Some(rest) = rest
            && let Some((before, after)) = rest.split_once('@')
            && (!before.contains('/') || after.contains('/'))
        {
            return Err(RegistryError::BadReference {
                reference: format!("{SCHEME}…@{}", crate::shown(after)),
                why: format!(
                    "it carries credentials before its host; a reference never does: log in with docker login, or set {} and {}",
                    crate::env::USERNAME_ENV,
                    crate::env::PASSWORD_ENV
                ),
            });
        }
        let bad = |why: &str| RegistryError::BadReference {
            reference: crate::shown(text),
            why: why.to_owned(),
        };
        let rest = text
            .strip_prefix(SCHEME)
            .ok_or_else(|| bad("it does not start with oci://"))?;
        let (name, digest) = match rest.split_once('@') {
            Some((name, digest)) => (name, Some(Digest::parse(digest).map_err(|e| bad(&e))?)),
            None => (rest, None),
        };
        let (registry, path) = name
            .split_once('/')
            .ok_or_else(|| bad("it names no repository (oci://HOST/REPOSITORY:TAG)"))?;
        check_registry(registry).map_err(|e| bad(&e))?;
        // A tag follows the last component's `:`; a `:` before the last `/`
        // is not a tag.
        let last = path.rfind('/').map_or(0, |i| i + 1);
        let (repository, tag) = match path[last..].find(':') {
            Some(i) => (&path[..last + i], Some(&path[last + i + 1..])),
            None => (path, None),
        };
        check_repository(repository).map_err(|e| bad(&e))?;
        if let Some(tag) = tag {
            check_tag(tag).map_err(|e| bad(&e))?;
        }
        Ok(Reference {
            registry: registry.to_ascii_lowercase(),
            repository: repository.to_owned(),
            tag: tag.map(str::to_owned),
            digest,
        })
    }

    /// `HOST[:PORT]`, lowercase.
    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// The host without its port (brackets kept off an IPv6 address).
    pub fn host(&self) -> &str {
        let host = match self.registry.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => host,
            _ => &self.registry,
        };
        host.trim_start_matches('[').trim_end_matches(']')
    }

    /// The repository, as `team/plugin`.
    pub fn repository(&self) -> &str {
        &self.repository
    }

    /// The tag named, if any.
    pub fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }

    /// The digest named, if any: what is pulled must have it.
    pub fn digest(&self) -> Option<&Digest> {
        self.digest.as_ref()
    }

    /// What the registry is asked for: the digest when one is named (a tag
    /// beside it is only a label), else the tag, else [`DEFAULT_TAG`].
    pub fn wanted(&self) -> String {
        match (&self.digest, &self.tag) {
            (Some(digest), _) => digest.to_string(),
            (None, Some(tag)) => tag.clone(),
            (None, None) => DEFAULT_TAG.to_owned(),
        }
    }

    /// This reference pinned to `digest`, its tag kept as a label.
    pub fn pinned(&self, digest: Digest) -> Self {
        Reference {
            digest: Some(digest),
            ..self.clone()
        }
    }

    /// Whether the registry is this machine (a loopback name or address),
    /// where plain HTTP sends nothing over a network.
    pub fn is_loopback(&self) -> bool {
        let host = self.host();
        host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

/// `HOST[:PORT]`: DNS labels, an IPv4 address or a bracketed IPv6 address.
fn check_registry(registry: &str) -> Result<(), String> {
    if registry.is_empty() || registry.len() > MAX_REGISTRY {
        return Err("its registry host is empty or too long".into());
    }
    let (host, port) = if let Some(rest) = registry.strip_prefix('[') {
        let (ip, after) = rest
            .split_once(']')
            .ok_or("its IPv6 registry address has no closing ]")?;
        ip.parse::<std::net::Ipv6Addr>()
            .map_err(|_| format!("{ip} is not an IPv6 address"))?;
        let port = match after {
            "" => None,
            _ => Some(
                after
                    .strip_prefix(':')
                    .ok_or(format!("{registry} has something after its address"))?,
            ),
        };
        (None, port)
    } else {
        match registry.split_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(registry), None),
        }
    };
    if let Some(host) = host {
        let label_ok = |label: &str| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        };
        if !host.split('.').all(label_ok) {
            return Err(format!(
                "{host} is not a host name (letters, digits, - and . only)"
            ));
        }
    }
    if let Some(port) = port
        && port.parse::<u16>().map_or(true, |p| p == 0)
    {
        return Err(format!("{port} is not a port (1 to 65535)"));
    }
    Ok(())
}

/// Path components of lowercase letters and digits joined by `.`, `_`,
/// `__` or dashes, separated by `/`.
fn check_repository(repository: &str) -> Result<(), String> {
    if repository.is_empty() {
        return Err("its repository is empty".into());
    }
    if repository.len() > MAX_REPOSITORY {
        return Err(format!(
            "its repository is longer than {MAX_REPOSITORY} characters"
        ));
    }
    for component in repository.split('/') {
        if !component_ok(component) {
            return Err(format!(
                "its repository part {component:?} is not lowercase letters and digits joined by ., _, __ or -"
            ));
        }
    }
    Ok(())
}

fn component_ok(component: &str) -> bool {
    let bytes = component.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if !alnum(first) || !alnum(last) {
        return false;
    }
    // Separators: one `.`, one or two `_`, or any run of `-`.
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if alnum(b) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !alnum(bytes[i]) {
            i += 1;
        }
        let run = &component[start..i];
        let ok = run == "." || run == "_" || run == "__" || run.bytes().all(|b| b == b'-');
        if !ok {
            return false;
        }
    }
    true
}

/// A word character, then up to 127 word characters, `.` or `-`.
fn check_tag(tag: &str) -> Result<(), String> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let ok = !tag.is_empty()
        && tag.len() <= MAX_TAG
        && tag.bytes().next().is_some_and(word)
        && tag.bytes().all(|b| word(b) || b == b'.' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "its tag {:?} is not letters, digits, _, . and - (at most {MAX_TAG}, not starting with . or -)",
            crate::shown(tag)
        ))
    }
}

#[cfg(test)]
mod tests;
