//! The network allow-list (the `allow-net` setting, `host:port` rules), and
//! how it is enforced.
//!
//! Rules are `host:port`, like Spin's: host is `*` (any), `*.example.com`
//! (any subdomain), a name, or an IP literal (`[::1]` for IPv6); port is `*`,
//! a number, or a range `8000-8100`. Enforcement has two hooks:
//! - name lookup: the guest may only resolve names some rule allows, judged
//!   on the name exactly as WASI will look it up (percent-decoded, IDNA
//!   punycode, lower case); the addresses WASI's own lookup then hands the
//!   guest are remembered for that rule, as the guest reads them (one
//!   lookup, not a second one of ours that could answer differently);
//! - every socket address the guest binds, connects or sends to is checked:
//!   an IP literal rule, a `*` rule, or an address resolved from an allowed
//!   name, with a matching port. Anything else is refused (the guest sees
//!   `access-denied`) and logged with the setting that would allow it.

use std::collections::HashSet;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use super::settings::Setting;
use super::wording::worded;
use crate::limits::{MAX_LOGGED_DENIALS, MAX_LOGGED_HOST};

/// The host part of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    Any,
    /// Lower-case name, e.g. `api.example.com`.
    Name(String),
    /// `*.example.com`, stored as `.example.com`.
    Subdomains(String),
    Ip(IpAddr),
}

/// One `host:port` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetRule {
    host: HostPattern,
    ports: (u16, u16),
}

/// A rule that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}: {reason}; write host:port, e.g. api.example.com:443, *.example.com:*, 127.0.0.1:8080, [::1]:8000-8100 or *:443",
    worded(Setting::AllowNet, input)
)]
pub struct NetRuleError {
    input: String,
    reason: &'static str,
}

impl FromStr for NetRule {
    type Err = NetRuleError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let fail = |reason| NetRuleError {
            input: input.to_owned(),
            reason,
        };
        let (host, port) = input.rsplit_once(':').ok_or_else(|| fail("no port"))?;
        let host = host.trim().to_ascii_lowercase();
        // A fully qualified name (`example.com.`) is the same name; a
        // wildcard is never widened by it (`*.` stays an error).
        let host = match host.strip_suffix('.') {
            Some(name) if !name.is_empty() && !name.ends_with(['.', '*']) => name.to_owned(),
            _ => host,
        };
        let host = if host == "*" {
            HostPattern::Any
        } else if let Some(suffix) = host.strip_prefix("*.") {
            if suffix.is_empty() || suffix.contains('*') {
                return Err(fail("a wildcard must be a whole leading label"));
            }
            // Like a name: a suffix with spaces, control or non-ASCII
            // characters never matches a name as WASI resolves it, and would
            // not print back as the same rule.
            if !is_name(suffix) {
                return Err(fail("the host is not a name, an IP address or a wildcard"));
            }
            HostPattern::Subdomains(format!(".{suffix}"))
        } else if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            HostPattern::Ip(v6.parse().map_err(|_| fail("not an IPv6 address"))?)
        } else if let Ok(ip) = host.parse::<IpAddr>() {
            HostPattern::Ip(ip)
        } else if !host.is_empty() && is_name(&host) {
            HostPattern::Name(host)
        } else {
            return Err(fail("the host is not a name, an IP address or a wildcard"));
        };
        let port = port.trim();
        let ports = if port == "*" {
            (0, u16::MAX)
        } else if let Some((lo, hi)) = port.split_once('-') {
            let lo = lo.parse().map_err(|_| fail("bad port range"))?;
            let hi = hi.parse().map_err(|_| fail("bad port range"))?;
            if lo > hi {
                return Err(fail("the port range is backwards"));
            }
            (lo, hi)
        } else {
            let p = port.parse().map_err(|_| fail("the port is not a number"))?;
            (p, p)
        };
        Ok(NetRule { host, ports })
    }
}

/// Letters, digits, `-` and `.`: a host name as a rule writes it.
fn is_name(host: &str) -> bool {
    host.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
}

impl fmt::Display for NetRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            HostPattern::Any => f.write_str("*")?,
            HostPattern::Name(n) => f.write_str(n)?,
            HostPattern::Subdomains(s) => write!(f, "*{s}")?,
            HostPattern::Ip(IpAddr::V6(ip)) => write!(f, "[{ip}]")?,
            HostPattern::Ip(ip) => write!(f, "{ip}")?,
        }
        match self.ports {
            (0, u16::MAX) => f.write_str(":*"),
            (lo, hi) if lo == hi => write!(f, ":{lo}"),
            (lo, hi) => write!(f, ":{lo}-{hi}"),
        }
    }
}

impl NetRule {
    fn port_matches(&self, port: u16) -> bool {
        (self.ports.0..=self.ports.1).contains(&port)
    }

    /// Whether a name lookup of `name` is allowed by this rule.
    fn allows_name(&self, name: &str) -> bool {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        match &self.host {
            HostPattern::Any => true,
            HostPattern::Name(n) => *n == name,
            // A wildcard names hosts, never addresses: `*.0.0.1` does not
            // match 127.0.0.1.
            HostPattern::Subdomains(suffix) => {
                name.ends_with(suffix.as_str()) && name.parse::<IpAddr>().is_err()
            }
            HostPattern::Ip(ip) => name.parse::<IpAddr>().is_ok_and(|n| n == *ip),
        }
    }
}

/// A host name as WASI resolves it: percent-decoded, IDNA punycode, lower
/// case; IP literals in their canonical text (IPv6 without brackets). A
/// name WASI cannot parse is returned as given (WASI refuses it anyway).
fn normalize_host(name: &str) -> String {
    match url::Host::parse(name) {
        Ok(url::Host::Domain(domain)) => domain,
        Ok(url::Host::Ipv4(ip)) => ip.to_string(),
        Ok(url::Host::Ipv6(ip)) => ip.to_string(),
        Err(_) => name.to_owned(),
    }
}

/// What a denial says would allow `name` on `port`: the `allow-net` rule
/// (IPv6 in brackets, as rules are written), or that no rule can.
pub fn allow_hint(name: &str, port: &str) -> String {
    if name.len() > MAX_LOGGED_HOST {
        return format!(
            "a host name of {} bytes is not one any {} rule can allow",
            name.len(),
            Setting::AllowNet
        );
    }
    let host = match name.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => Ok(url::Host::Ipv4(ip)),
        Ok(IpAddr::V6(ip)) => Ok(url::Host::Ipv6(ip)),
        Err(_) => url::Host::parse(name),
    };
    match host {
        Ok(url::Host::Domain(domain)) => allow(format!("{domain}:{port}")),
        Ok(url::Host::Ipv4(ip)) => allow(format!("{ip}:{port}")),
        Ok(url::Host::Ipv6(ip)) => allow(format!("[{ip}]:{port}")),
        Err(_) => format!(
            "{name:?} is not a host name any {} rule can allow",
            Setting::AllowNet
        ),
    }
}

/// The rule that allows every destination: it must be written out, so
/// that no list allows anything by being empty.
pub const ANY_DESTINATION: &str = "*:*";

/// "allow it with" the rule, in the process's words.
pub fn allow(rule: String) -> String {
    format!("allow it with {}", worded(Setting::AllowNet, rule))
}

/// `name` for a log line: at most [`MAX_LOGGED_HOST`] bytes, printable.
fn shown(name: &str) -> String {
    let mut end = name.len().min(MAX_LOGGED_HOST);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    let cut = if end < name.len() { "…" } else { "" };
    format!("{}{cut}", crate::text::printable(&name[..end]))
}

/// The network state of one sandbox: the rules and the addresses resolved
/// from allowed names.
#[derive(Debug)]
pub struct NetGuard {
    rules: Vec<NetRule>,
    plugin_id: String,
    /// (address, index of the rule whose name resolved to it)
    resolved: Mutex<HashSet<(IpAddr, usize)>>,
    /// Denials so far (see [`MAX_LOGGED_DENIALS`]).
    denials: std::sync::atomic::AtomicU32,
    /// The first denial of the running call, for its error text.
    note: Mutex<Option<String>>,
    /// The plugin's secrets, hidden in what a denial says (a host name is
    /// the plugin's text).
    redactor: Option<Arc<crate::secrets::Redactor>>,
}

impl NetGuard {
    /// A guard for `rules`; an empty list allows nothing (every
    /// destination is the rule [`ANY_DESTINATION`]).
    pub fn new(plugin_id: &str, rules: &[NetRule]) -> Arc<Self> {
        NetGuard::hiding(plugin_id, rules, None)
    }

    /// [`NetGuard::new`] whose denials hide the values `redactor` holds.
    pub fn hiding(
        plugin_id: &str,
        rules: &[NetRule],
        redactor: Option<Arc<crate::secrets::Redactor>>,
    ) -> Arc<Self> {
        Arc::new(NetGuard {
            redactor,
            rules: rules.to_vec(),
            plugin_id: plugin_id.to_owned(),
            resolved: Mutex::new(HashSet::new()),
            denials: std::sync::atomic::AtomicU32::new(0),
            note: Mutex::new(None),
        })
    }

    /// A denial: `line` says what and which rule would allow it. Logged
    /// while [`may_log`](Self::may_log) allows; the running call's first is
    /// kept for its error text ([`take_note`](Self::take_note)).
    fn deny(&self, line: String) {
        let line = match &self.redactor {
            Some(redactor) => redactor.redact(&line).into_owned(),
            None => line,
        };
        if self.may_log() {
            tracing::warn!(plugin = %self.plugin_id, "{line}");
        }
        let mut note = self.note.lock().unwrap_or_else(|e| e.into_inner());
        if note.is_none() {
            *note = Some(line);
        }
    }

    /// The first denial since the last take: the running call's, when taken
    /// as a call starts and as it ends.
    pub fn take_note(&self) -> Option<String> {
        self.note.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// Whether this denial is logged: the first [`MAX_LOGGED_DENIALS`] of
    /// the instance are, then one line says later ones are not.
    fn may_log(&self) -> bool {
        let n = self
            .denials
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n == MAX_LOGGED_DENIALS {
            tracing::warn!(
                plugin = %self.plugin_id,
                "more network denials follow; they are not logged (the first {MAX_LOGGED_DENIALS} of this instance were)",
            );
        }
        n < MAX_LOGGED_DENIALS
    }

    /// Checks a name lookup. `None` if denied (and logged); else the rules
    /// whose allowed addresses must be learnt from the lookup's answers
    /// (empty when only `*` or IP rules matched). The name is judged as
    /// WASI will resolve it; a name WASI cannot parse is left to WASI, which
    /// refuses it.
    pub fn check_lookup(&self, name: &str) -> Option<Vec<usize>> {
        let normalized = normalize_host(name);
        let matching: Vec<usize> = (0..self.rules.len())
            .filter(|i| self.rules[*i].allows_name(&normalized))
            .collect();
        if matching.is_empty() {
            self.deny(format!(
                "name lookup of {:?} denied: not in the network allow-list ({})",
                shown(name),
                allow_hint(name, "PORT")
            ));
            return None;
        }
        // Only name rules need to learn addresses; `*` and IP rules match
        // addresses directly.
        Some(
            matching
                .into_iter()
                .filter(|i| {
                    matches!(
                        self.rules[*i].host,
                        HostPattern::Name(_) | HostPattern::Subdomains(_)
                    )
                })
                .collect(),
        )
    }

    /// Checks an outgoing `wasi:http` request to `host` (as its URI names
    /// it) and `port`: allowed when one rule allows both, judged like a
    /// name lookup (a name rule by the normalized name, an IP rule by the
    /// literal, `*` always). The sender then resolves the name itself, so
    /// a name rule allows whatever that name resolves to, as with sockets.
    pub fn check_http(&self, host: &str, port: u16) -> bool {
        let normalized = normalize_host(host);
        // 0.0.0.0 and :: reach this machine's own services; a socket cannot
        // connect to them either.
        if normalized
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_unspecified())
        {
            self.deny(format!(
                "HTTP request to {}:{port} denied: an unspecified address is not a destination",
                shown(host)
            ));
            return false;
        }
        let allowed = self
            .rules
            .iter()
            .any(|rule| rule.port_matches(port) && rule.allows_name(&normalized));
        if !allowed {
            self.deny(format!(
                "HTTP request to {}:{port} denied: not in the network allow-list ({})",
                shown(host),
                allow_hint(host, &port.to_string())
            ));
        }
        allowed
    }

    /// Remembers that WASI's lookup of a name allowed by `rules` answered
    /// `ip`: connections to it are then allowed on those rules' ports.
    pub fn learn(&self, ip: IpAddr, rules: &[usize]) {
        let mut resolved = self.resolved.lock().unwrap_or_else(|e| e.into_inner());
        for i in rules {
            resolved.insert((ip.to_canonical(), *i));
        }
    }

    /// Refuses listening or accepting on `addr`: a plugin is a client
    /// only (a server on an ephemeral port is still a server).
    pub fn deny_listen(&self, addr: SocketAddr) -> bool {
        self.deny(format!(
            "listening on {addr} denied: plugins may not accept connections"
        ));
        false
    }

    /// Checks one socket address the guest binds, connects or sends to.
    pub fn check_addr(&self, addr: SocketAddr, binding: bool) -> bool {
        // An implicit bind before connect uses an ephemeral port (0). An
        // explicit bind to a chosen port would let the plugin offer a server.
        if binding {
            let allowed = addr.port() == 0;
            if !allowed {
                self.deny(format!(
                    "bind to {addr} denied: plugins may not listen on a chosen port"
                ));
            }
            return allowed;
        }
        let resolved = self.resolved.lock().unwrap_or_else(|e| e.into_inner());
        let allowed = self.rules.iter().enumerate().any(|(i, rule)| {
            rule.port_matches(addr.port())
                && match &rule.host {
                    HostPattern::Any => true,
                    HostPattern::Ip(ip) => *ip == addr.ip(),
                    HostPattern::Name(_) | HostPattern::Subdomains(_) => {
                        resolved.contains(&(addr.ip().to_canonical(), i))
                    }
                }
        });
        if !allowed {
            self.deny(format!(
                "connection to {addr} denied: not in the network allow-list ({})",
                allow(match addr {
                    SocketAddr::V6(a) => format!("[{}]:{}", a.ip(), a.port()),
                    SocketAddr::V4(a) => a.to_string(),
                })
            ));
        }
        allowed
    }
}

#[cfg(test)]
mod tests;
