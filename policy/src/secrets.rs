//! Secrets a plugin is granted by name (`--secret NAME`, or
//! `NAME@HOST` to bind it to the hosts it may be sent to): the rule
//! ([`SecretGrant`]), its value once a front end read it from the user's
//! keyring ([`SecretValue`], never shown: its `Debug` is `[secret]`), and
//! the [`Redactor`] that hides every value in the text a host writes and
//! finds a bound secret in an outgoing request to another host.
//!
//! The policy names secrets; it never holds their values. Values come from
//! the front end (the launcher's keyring, an embedding host's own store)
//! and live only in memory: [`Grant::secrets`](crate::Grant::secrets).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use crate::limits::{MAX_SECRET_BYTES, MIN_SECRET_BYTES};
use crate::settings::Setting;
use crate::wording::worded;

/// Longest secret name.
pub const MAX_SECRET_NAME: usize = 64;

/// One secret the user grants a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretGrant {
    /// Its name (letters, digits, `_`, `-` and `.`; at most
    /// [`MAX_SECRET_NAME`]).
    pub name: String,
    /// The hosts it may be sent to over HTTP (lower case; `*.example.com`
    /// is every host under example.com). Empty: not bound, it goes
    /// wherever the network allow-list lets the plugin reach.
    pub hosts: Vec<String>,
    /// Its value, once read from where the front end keeps it; `None`
    /// until then (the plugin asking for it is told it is not set).
    pub value: Option<SecretValue>,
    /// Why the front end could not read its value (a keyring that did
    /// not answer), when it tried: what the plugin asking for it is told.
    pub unread: Option<String>,
}

/// A secret's value. Shown nowhere: `Debug` prints `[secret]`.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(Arc<str>);

impl SecretValue {
    /// A value as read from a store, checked: at least
    /// [`MIN_SECRET_BYTES`] (a shorter one would be hidden everywhere it
    /// occurs by chance) and at most [`MAX_SECRET_BYTES`], one line.
    pub fn new(value: &str) -> Result<SecretValue, String> {
        let value = value.strip_suffix('\n').unwrap_or(value);
        let value = value.strip_suffix('\r').unwrap_or(value);
        if value.len() < MIN_SECRET_BYTES {
            return Err(format!(
                "a secret's value must be at least {MIN_SECRET_BYTES} bytes long (a shorter one would be hidden wherever it happens to occur in a plugin's output)"
            ));
        }
        if value.len() > MAX_SECRET_BYTES {
            return Err(format!(
                "a secret's value may be at most {MAX_SECRET_BYTES} bytes long"
            ));
        }
        if value.contains(['\n', '\r', '\0']) {
            return Err("a secret's value must be one line (no line break or NUL)".into());
        }
        // Text is shown with such characters replaced: a value holding one
        // would no longer be recognised where it is shown.
        if value.chars().any(|c| c.is_control() || is_invisible(c)) {
            return Err(
                "a secret's value must be printable text (no control or invisible characters)"
                    .into(),
            );
        }
        Ok(SecretValue(value.into()))
    }

    /// The value itself, for the plugin that was granted it and for the
    /// store that keeps it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Characters that change how text reads without showing (zero-width
/// spaces and joiners, direction marks and overrides, the byte-order mark).
fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[secret]")
    }
}

/// Whether `name` is a secret's name: 1 to [`MAX_SECRET_NAME`] of ASCII
/// letters, digits, `_`, `-` and `.`, starting with a letter or a digit.
pub fn is_secret_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.len() <= MAX_SECRET_NAME
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The secret settings as written (`NAME`, `NAME@HOST`), one grant per
/// name with its hosts gathered; a name given both bound and unbound, a
/// bad name or a bad host is refused, naming the setting.
pub fn parse_secret_rules(written: &[String]) -> Result<Vec<SecretGrant>, String> {
    let mut grants: Vec<(SecretGrant, bool)> = Vec::new();
    for entry in written {
        let (name, host) = match entry.split_once('@') {
            Some((name, host)) => (name, Some(host)),
            None => (entry.as_str(), None),
        };
        if !is_secret_name(name) {
            return Err(format!(
                "{}: a secret's name is 1 to {MAX_SECRET_NAME} of letters, digits, '_', '-' and '.', starting with a letter or a digit",
                worded(Setting::Secret, entry)
            ));
        }
        let host = match host {
            Some(host) => Some(bound_host(host).ok_or_else(|| {
                format!(
                    "{}: bind a secret to a host name or address without port or scheme, e.g. NAME@api.example.com or NAME@*.example.com",
                    worded(Setting::Secret, entry)
                )
            })?),
            None => None,
        };
        let at = grants.iter().position(|(g, _)| g.name == name);
        let (grant, unbound) = match at {
            Some(i) => &mut grants[i],
            None => {
                let fresh = SecretGrant {
                    name: name.to_owned(),
                    hosts: Vec::new(),
                    value: None,
                    unread: None,
                };
                grants.push((fresh, false));
                let last = grants.len() - 1;
                &mut grants[last]
            }
        };
        match host {
            Some(host) if !grant.hosts.contains(&host) => grant.hosts.push(host),
            Some(_) => {}
            None => *unbound = true,
        }
        if *unbound && !grant.hosts.is_empty() {
            return Err(format!(
                "{}: the secret is given both bound to a host and unbound; keep only NAME@HOST entries to bind it, or only NAME to let it go wherever the network allow-list allows",
                worded(Setting::Secret, name)
            ));
        }
    }
    Ok(grants.into_iter().map(|(g, _)| g).collect())
}

/// A host a secret is bound to, lower case, if it is one: a DNS name, an
/// address, or `*.` and a DNS name.
fn bound_host(host: &str) -> Option<String> {
    // `example.com.` is `example.com`.
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    let name = host.strip_prefix("*.").unwrap_or(&host);
    let name = name
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(name);
    let valid = !name.is_empty()
        && name.len() <= 253
        && (name.parse::<std::net::IpAddr>().is_ok()
            || name.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            }));
    valid.then_some(host)
}

/// Whether `host` (as a request names it) is one of `hosts`.
fn host_matches(hosts: &[String], host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let host = host.to_ascii_lowercase();
    hosts.iter().any(|rule| match rule.strip_prefix("*.") {
        Some(domain) => host.len() > domain.len() + 1 && host.ends_with(&format!(".{domain}")),
        None => rule.trim_start_matches('[').trim_end_matches(']') == host,
    })
}

/// The values of one plugin's secrets, for the text the host writes and
/// the requests it sends. Built from the grants that have a value.
#[derive(Default)]
pub struct Redactor {
    /// (name, value, hosts).
    secrets: Vec<(String, SecretValue, Vec<String>)>,
    /// What is looked for in text, lower case, with the secret it hides:
    /// each value whole, and each part of it between slashes of at least
    /// [`MIN_SECRET_BYTES`] (a path the plugin named with a value is shown
    /// cut at its slashes, or with `..` and `//` taken out).
    needles: Vec<(String, usize)>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.secrets.iter().map(|(n, _, _)| n.as_str()).collect();
        f.debug_struct("Redactor").field("secrets", &names).finish()
    }
}

impl Redactor {
    /// The redactor of `grants`, if any of them has a value.
    pub fn of(grants: &[SecretGrant]) -> Option<Arc<Redactor>> {
        let secrets: Vec<_> = (grants.iter())
            .filter_map(|g| Some((g.name.clone(), g.value.clone()?, g.hosts.clone())))
            .collect();
        let mut needles = Vec::new();
        for (i, (_, value, _)) in secrets.iter().enumerate() {
            let whole = value.expose().to_ascii_lowercase();
            let parts = whole
                .split('/')
                .filter(|p| p.len() >= MIN_SECRET_BYTES && p.len() < whole.len());
            needles.extend(parts.map(|p| (p.to_owned(), i)));
            needles.push((whole, i));
        }
        (!secrets.is_empty()).then(|| Arc::new(Redactor { secrets, needles }))
    }

    /// Where `text` holds a value (any case) or a part of one: merged
    /// ranges, each with the secrets it hides.
    fn found(&self, text: &str) -> Vec<(usize, usize, Vec<usize>)> {
        let lower = text.to_ascii_lowercase();
        let mut hits: Vec<(usize, usize, usize)> = Vec::new();
        for (needle, secret) in &self.needles {
            let mut from = 0;
            while let Some(at) = lower
                .get(from..)
                .and_then(|rest| rest.find(needle.as_str()))
            {
                hits.push((from + at, from + at + needle.len(), *secret));
                from += at + 1;
                while !lower.is_char_boundary(from) {
                    from += 1;
                }
            }
        }
        // The longest first where two start together: a value inside
        // another is hidden by it, one that runs past it is named too.
        hits.sort_by_key(|&(start, end, _)| (start, std::cmp::Reverse(end)));
        let mut merged: Vec<(usize, usize, Vec<usize>)> = Vec::new();
        for (start, end, secret) in hits {
            match merged.last_mut() {
                Some(last) if start < last.1 => {
                    if end > last.1 && !last.2.contains(&secret) {
                        last.2.push(secret);
                    }
                    last.1 = last.1.max(end);
                }
                _ => merged.push((start, end, vec![secret])),
            }
        }
        merged
    }

    /// `text` with every secret's value (in any case, or a part of it
    /// between slashes) replaced by `[secret NAME]`; where two values
    /// overlap, the whole stretch by `[secret A+B]`.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let found = self.found(text);
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end, secrets) in found {
            out.push_str(&text[at..start]);
            let names: Vec<&str> = secrets
                .iter()
                .map(|&i| self.secrets[i].0.as_str())
                .collect();
            out.push_str(&format!("[secret {}]", names.join("+")));
            at = end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// `text` redacted in place; whether anything was hidden.
    pub fn redact_string(&self, text: &mut String) -> bool {
        match self.redact(text) {
            Cow::Borrowed(_) => false,
            Cow::Owned(hidden) => {
                *text = hidden;
                true
            }
        }
    }

    /// Every string of `value` (keys too) redacted; whether anything was.
    pub fn redact_json(&self, value: &mut serde_json::Value) -> bool {
        match value {
            serde_json::Value::String(text) => self.redact_string(text),
            serde_json::Value::Array(items) => {
                (items.iter_mut()).fold(false, |hid, item| self.redact_json(item) | hid)
            }
            serde_json::Value::Object(map) => {
                let keys: Vec<String> = map.keys().cloned().collect();
                let mut hid = false;
                for key in keys {
                    let Some(mut item) = map.remove(&key) else {
                        continue;
                    };
                    hid |= self.redact_json(&mut item);
                    let mut key = key;
                    hid |= self.redact_string(&mut key);
                    map.insert(key, item);
                }
                hid
            }
            _ => false,
        }
    }

    /// Whether a request to `host` may not carry every secret it holds:
    /// the first secret bound to other hosts whose value, or its base64
    /// or hex form, is in `bytes`, as they are or percent-decoded (any
    /// spelling), with the hosts it is bound to.
    pub fn bound_elsewhere(&self, host: &str, bytes: &[u8]) -> Option<(&str, &[String])> {
        let mut seen = vec![
            bytes.to_vec(),
            percent_decoded(bytes, false),
            percent_decoded(bytes, true),
        ];
        seen.dedup();
        let lower: Vec<Vec<u8>> = seen.iter().map(|b| b.to_ascii_lowercase()).collect();
        self.secrets
            .iter()
            .filter(|(_, _, hosts)| !hosts.is_empty() && !host_matches(hosts, host))
            .find(|(_, value, _)| {
                let (exact, any_case) = encodings(value.expose());
                exact.iter().any(|e| seen.iter().any(|s| contains(s, e)))
                    || any_case
                        .iter()
                        .any(|e| lower.iter().any(|s| contains(s, e)))
            })
            .map(|(name, _, hosts)| (name.as_str(), hosts.as_slice()))
    }

    /// Whether any secret is bound to hosts other than `host`: a request
    /// to `host` must then be looked at before it is sent.
    pub fn binds_away_from(&self, host: &str) -> bool {
        (self.secrets.iter()).any(|(_, _, hosts)| !hosts.is_empty() && !host_matches(hosts, host))
    }
}

mod encodings;
use encodings::{contains, encodings, percent_decoded};

#[cfg(test)]
mod tests;
