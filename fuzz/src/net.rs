//! Target `net`: `allow-net` rules (`policy/src/net.rs`), one a
//! line, and the guard they make judging the host names a guest asks for
//! (every line, and its host part, as a name lookup and an HTTP request).
//!
//! Invariants: no panic (the denial log cuts long names on a character
//! boundary); a rule's text parses back to the same rule and prints the
//! same, and a bad rule's error names the flag; an HTTP request is allowed
//! only if a lookup of its host is; `0.0.0.0` and `::` are never HTTP
//! destinations; a guard of name and wildcard rules only never allows a
//! name that WASI resolves as an IP literal (`127.1`, `0x7f.0.0.1`,
//! `[::1]`…); no rules allow nothing (no lookup, no HTTP request, no
//! address: an empty list is never "every destination"); a socket address
//! is allowed without a learnt lookup only by a `*` or an IP rule; a bind
//! is allowed only to port 0, and listening never.

use std::net::{IpAddr, SocketAddr};

use lingxi_wasm_policy::net::{NetGuard, NetRule};

use crate::{Violation, ensure};

const TARGET: &str = "net";

/// How a rule names hosts, read from its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Any,
    Ip,
    Name,
}

/// See the module documentation.
pub fn check(data: &[u8]) -> Result<(), Violation> {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    let lines: Vec<&str> = text.split('\n').collect();
    let mut rules = Vec::new();
    let mut kinds = Vec::new();
    for line in &lines {
        match line.parse::<NetRule>() {
            Ok(rule) => {
                kinds.push(round_trip(line, &rule)?);
                rules.push(rule);
            }
            // In the library's own words (a front end's name the flag).
            Err(e) => ensure!(
                e.to_string().starts_with("allow-net = "),
                "error {e} does not name the setting"
            ),
        }
    }
    let guard = NetGuard::new("fuzz", &rules);
    let only_names = !kinds.is_empty() && kinds.iter().all(|k| *k == Kind::Name);
    let addressable = kinds.iter().any(|k| *k != Kind::Name);
    for line in &lines {
        let host = line.rsplit_once(':').map_or(*line, |(host, _)| host);
        for name in [*line, host] {
            check_name(&guard, name, rules.is_empty(), only_names)?;
        }
        if let Some(ip) = ip_literal(host) {
            for port in [0, 80, 443, 65535] {
                let addr = SocketAddr::new(ip, port);
                ensure!(
                    !guard.check_addr(addr, false) || addressable,
                    "{addr} allowed by name rules alone, or by no rule"
                );
                ensure!(
                    guard.check_addr(addr, true) == (port == 0),
                    "bind to {addr} judged wrong"
                );
                ensure!(!guard.deny_listen(addr), "listening on {addr} allowed");
            }
        }
    }
    Ok(())
}

/// The rule's text parses back to it; returns how it names hosts.
fn round_trip(line: &str, rule: &NetRule) -> Result<Kind, Violation> {
    let shown = rule.to_string();
    let again = shown.parse::<NetRule>();
    ensure!(
        again.as_ref() == Ok(rule),
        "{line:?} parsed as {rule:?}, printed as {shown:?}, which parses as {again:?}"
    );
    let printed = again.map(|r| r.to_string()).unwrap_or_default();
    ensure!(printed == shown, "{shown:?} printed again as {printed:?}");
    let host = shown.rsplit_once(':').map_or("", |(host, _)| host);
    Ok(if host == "*" {
        Kind::Any
    } else if ip_literal(host).is_some() {
        Kind::Ip
    } else {
        Kind::Name
    })
}

/// `text` as an IP literal: IPv6 in brackets or not, IPv4 without (as URIs
/// and socket addresses write them: `[0.0.0.0]` is neither).
fn ip_literal(text: &str) -> Option<IpAddr> {
    match text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        Some(v6) => v6.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6),
        None => text.parse().ok(),
    }
}

/// `name` as WASI resolves it, if that is an IP address.
fn resolves_as_ip(name: &str) -> Option<IpAddr> {
    match url::Host::parse(name) {
        Ok(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Ok(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        _ => ip_literal(name),
    }
}

fn check_name(
    guard: &NetGuard,
    name: &str,
    no_rules: bool,
    only_names: bool,
) -> Result<(), Violation> {
    let lookup = guard.check_lookup(name);
    ensure!(
        !no_rules || lookup.is_none(),
        "no rules, yet the lookup of {name:?} was allowed"
    );
    let ip = resolves_as_ip(name);
    if only_names && ip.is_some() {
        ensure!(
            lookup.is_none(),
            "name rules allowed the lookup of the address {name:?}"
        );
    }
    for port in [0, 80, 443, 8080, 65535] {
        let http = guard.check_http(name, port);
        ensure!(
            !http || lookup.is_some(),
            "HTTP to {name:?}:{port} allowed, its lookup denied"
        );
        ensure!(
            !http || !ip.is_some_and(|ip| ip.is_unspecified()),
            "HTTP to the unspecified address {name:?}:{port} allowed"
        );
        ensure!(
            !http || !only_names || ip.is_none(),
            "name rules allowed HTTP to the address {name:?}:{port}"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn literals_as_wasi_reads_them() {
        assert_eq!(
            resolves_as_ip("0x7f.1"),
            Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)))
        );
        assert_eq!(ip_literal("[::1]"), "::1".parse().ok());
        // Found by fuzzing (fuzz/regressions/net/): no URI or socket
        // address reads this as 0.0.0.0, so the guard need not either.
        assert_eq!(ip_literal("[0.0.0.0]"), None);
        assert_eq!(resolves_as_ip("example.com"), None);
    }
}
